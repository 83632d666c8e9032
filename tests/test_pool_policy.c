/* test_pool_policy.c - kda_pool_plan_for: the pool a workload gets for
 * every combination of allocator traits (frees, grows, wraps, minimum
 * pool) and of what it asks (grow or fixed, start factor, factor or bytes,
 * limit, the device's free memory and whether the device can grow).
 *
 * Oracle: each expected start, limit and decision is written out by hand
 * from the rules in kdalloc.h (2x or 32x the unit, the minimum pool, 16-byte
 * rounding, the smaller of the limit and free memory), never recomputed
 * with the function's own arithmetic; the fallback's reason is compared as
 * the very string the traits or the ask gave.  Host only: no device. */
#include <criterion/criterion.h>
#include <string.h>

#include "kdalloc/kdalloc.h"

#define MIB (1ull << 20)
#define FREE16G (16ull << 30)
#define UNIT 4000000ull /* the root array of a million triangles */

/* Allocators by their traits alone (the names say whose they resemble). */
static const kda_traits reuses_grows = {1, 1, 0, 64 << 10, NULL};           /* CountedBump */
static const kda_traits never_frees_grows = {0, 1, 0, 0, NULL};             /* AtomicMalloc */
static const kda_traits reuses_fixed_min = {1, 0, 0, 256 * MIB, "layout"};  /* Halloc */
static const kda_traits never_frees_wraps = {0, 0, 1, 0, "ring"};           /* AWMalloc */
static const kda_traits reuses_fixed = {1, 0, 0, 0, "heap"};                /* CudaMalloc */

typedef struct policy_case {
    const char *what;
    const kda_traits *a;
    kda_pool_ask ask;
    kda_pool_sizing want;
} policy_case;

/* ask: unit, factor, bytes, grow, start_factor, limit, free, device_cannot_grow;
 * want: grows, start, limit, raised, fixed_why. */
static const policy_case cases[] = {
    {"reuses: grows from 2x, up to free memory", &reuses_grows,
     {UNIT, 200, 0, 1, 0, 0, FREE16G, NULL}, {1, 8000000, FREE16G, 0, NULL}},
    {"never frees: grows from 32x", &never_frees_grows,
     {UNIT, 200, 0, 1, 0, 0, FREE16G, NULL}, {1, 128000000, FREE16G, 0, NULL}},
    {"a start factor asked for", &reuses_grows,
     {UNIT, 200, 0, 1, 1.0, 0, FREE16G, NULL}, {1, 4000000, FREE16G, 0, NULL}},
    {"a start factor asked for, never frees", &never_frees_grows,
     {UNIT, 200, 0, 1, 3.0, 0, FREE16G, NULL}, {1, 12000000, FREE16G, 0, NULL}},
    {"a limit below free memory", &reuses_grows,
     {UNIT, 200, 0, 1, 0, 12 * MIB, FREE16G, NULL}, {1, 8000000, 12 * MIB, 0, NULL}},
    {"a limit above free memory: free memory", &reuses_grows,
     {UNIT, 200, 0, 1, 0, 32ull << 30, FREE16G, NULL}, {1, 8000000, FREE16G, 0, NULL}},
    {"a limit below the start: the start", &reuses_grows,
     {UNIT, 200, 0, 1, 0, 1 * MIB, FREE16G, NULL}, {1, 8000000, 8000000, 0, NULL}},
    {"no free memory known: the start", &never_frees_grows,
     {UNIT, 200, 0, 1, 0, 0, 0, NULL}, {1, 128000000, 128000000, 0, NULL}},
    {"growable start raised to the minimum, not flagged", &reuses_grows,
     {4, 200, 0, 1, 0, 0, FREE16G, NULL}, {1, 65536, FREE16G, 0, NULL}},
    {"growable start truncated, not rounded", &never_frees_grows,
     {3, 200, 0, 1, 1.5, 0, FREE16G, NULL}, {1, 4, FREE16G, 0, NULL}},
    {"grow asked, bytes ignored", &reuses_grows,
     {UNIT, 200, 64 * MIB, 1, 0, 0, FREE16G, NULL}, {1, 8000000, FREE16G, 0, NULL}},
    {"cannot grow: the factor's fixed pool, the allocator's reason", &reuses_fixed_min,
     {UNIT, 200, 0, 1, 0, 0, FREE16G, NULL}, {0, 800000000, 800000000, 0, "layout"}},
    {"cannot grow, factor below the minimum: raised", &reuses_fixed_min,
     {4, 200, 0, 1, 0, 0, FREE16G, NULL}, {0, 256 * MIB, 256 * MIB, 1, "layout"}},
    {"explicit bytes below the minimum: kept, rounded", &reuses_fixed_min,
     {4, 200, 12345, 0, 0, 0, FREE16G, NULL}, {0, 12352, 12352, 0, NULL}},
    {"wraps: never grows, the ring's reason", &never_frees_wraps,
     {UNIT, 20, 0, 1, 0, 0, FREE16G, NULL}, {0, 80000000, 80000000, 0, "ring"}},
    {"the device cannot grow: its reason", &reuses_grows,
     {UNIT, 200, 0, 1, 0, 0, FREE16G, "no vmm"}, {0, 800000000, 800000000, 0, "no vmm"}},
    {"neither can grow: the allocator's reason first", &reuses_fixed,
     {UNIT, 200, 0, 1, 0, 0, FREE16G, "no vmm"}, {0, 800000000, 800000000, 0, "heap"}},
    {"fixed asked of a grower: no reason", &reuses_grows,
     {UNIT, 1.5, 0, 0, 0, 0, FREE16G, NULL}, {0, 6000000, 6000000, 0, NULL}},
    {"fixed: bytes win over the factor", &never_frees_grows,
     {UNIT, 200, 64 * MIB, 0, 0, 0, 0, NULL}, {0, 64 * MIB, 64 * MIB, 0, NULL}},
    {"fixed: rounded up to 16 bytes", &reuses_fixed,
     {4000012, 1.0, 0, 0, 0, 0, 0, NULL}, {0, 4000016, 4000016, 0, NULL}},
    {"fixed: the product truncated, then rounded", &reuses_fixed,
     {3, 1.5, 0, 0, 0, 0, 0, NULL}, {0, 16, 16, 0, NULL}},
    {"fixed at the minimum exactly: not raised", &reuses_grows,
     {65536, 1.0, 0, 0, 0, 0, 0, NULL}, {0, 65536, 65536, 0, NULL}},
};

static int same_why(const char *x, const char *y) { return x == y || (x && y && !strcmp(x, y)); }

Test(pool_policy, every_trait_combination)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const policy_case *c = &cases[i];
        kda_pool_sizing got = kda_pool_plan_for(c->a, &c->ask);
        cr_expect_eq(got.grows, c->want.grows, "%s: grows %d", c->what, got.grows);
        cr_expect_eq(got.start, c->want.start, "%s: start %llu, want %llu", c->what, (unsigned long long)got.start,
                     (unsigned long long)c->want.start);
        cr_expect_eq(got.limit, c->want.limit, "%s: limit %llu, want %llu", c->what, (unsigned long long)got.limit,
                     (unsigned long long)c->want.limit);
        cr_expect_eq(got.raised, c->want.raised, "%s: raised %d", c->what, got.raised);
        cr_expect(same_why(got.fixed_why, c->want.fixed_why), "%s: why '%s', want '%s'", c->what,
                  got.fixed_why ? got.fixed_why : "(none)", c->want.fixed_why ? c->want.fixed_why : "(none)");
    }
}

/* The allocator compiled in is CountedBump (tests/CMakeLists.txt selects
 * it), and its answers are CountedBump's documented traits (docs/library.md's
 * table, countedbump.h): it frees single blocks, grows (so no reason why
 * not), never wraps, and needs a pool of 64 KiB: reuses_grows above. */
Test(pool_policy, traits_of_the_allocator_compiled_in)
{
    cr_assert_str_eq(kda_allocator_name(), "CountedBump");
    cr_assert_str_eq(kda_allocator_id(), "countedbump");
    const char *why = "unset";
    cr_expect_eq(kda_allocator_frees(), 1);
    cr_expect_eq(kda_allocator_grows(&why), 1);
    cr_expect_null(why, "a grower gives no reason why not: '%s'", why ? why : "");
    cr_expect_eq(kda_allocator_min_pool(), 64 << 10);
    kda_traits t = kda_allocator_traits();
    cr_expect_eq(t.frees, reuses_grows.frees);
    cr_expect_eq(t.grows, reuses_grows.grows);
    cr_expect_eq(t.wraps, reuses_grows.wraps);
    cr_expect_eq(t.min_pool, reuses_grows.min_pool);
    cr_expect_null(t.no_grow_why);
}
