/* test_alloc_grow.c - pools that grow in place.
 *
 * A growable pool reserves its limit and maps a start; kda_host_pool_grow
 * maps more at the end while no thread allocates, and the allocator takes
 * it in.  What lies beyond the mapped bytes is PROT_NONE, so a block handed
 * out there faults at its fill.  An allocator that cannot grow refuses a
 * growable pool; a fixed-size pool refuses to grow.  The growers are taken
 * up to their limit by one thread (in steps of half the pool, and page by
 * page) and by many threads between growths.
 *
 * Oracles: every block inside the bytes mapped when it was handed out, no
 * two blocks overlapping (sorted by address) and every owner pattern intact
 * after all the growth (nothing moved), a request that failed served by the
 * growth that makes room for it, exact messages at the limit, and the state
 * whole again once everything is freed (expect_all_free; a chunk list read
 * directly), and after each growth as the allocator's own tests check it
 * (expect_own_grown_state: CountedBump's and SlabBump's chunks). */
#include <pthread.h>
#include <sched.h>

#include "test_alloc.h"

#if KDA_ALLOC_HOST

static char err[256];

/* A fixed-size pool does not grow, whatever the allocator. */
Test(grow, fixed_pool_refuses_to_grow)
{
    kda_pool pool;
    uint64_t bytes = pool_of(1u << 20);
    cr_assert_eq(kda_host_pool_create(&pool, bytes, 4, err, sizeof err), 0, "%s", err);
    err[0] = 0;
    cr_assert_eq(kda_host_pool_grow(&pool, 2 * bytes, err, sizeof err), -1);
    cr_assert(strstr(err, "fixed size"), "message: %s", err);
    cr_assert_eq(pool.heap.bytes, bytes, "the pool kept its size");
    void *p = kda_malloc(&pool.heap, 4096);
    cr_assert_not_null(p, "and still serves");
    kda_free(&pool.heap, p);
    kda_warp_done(&pool.heap);
    kda_host_pool_destroy(&pool);
}

#if KDA_ALLOC_GROWS

#define GROW_START (64u << 10)
#define GROW_LIMIT (64u << 20)
#define GROW_SMS 4

static void create_growable(kda_pool *pool, uint64_t start, uint64_t limit)
{
    cr_assert_eq(kda_host_pool_create_growable(pool, start, limit, GROW_SMS, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool->heap.bytes, start, "the start is mapped (a multiple of the page)");
    cr_assert_eq(pool->start_bytes, start);
    cr_assert_eq(pool->plan.limit_bytes, limit, "every grower addresses %llu bytes", (unsigned long long)limit);
}

/* Grows the pool to `bytes` (the limit where that is more), which must work. */
static void grow_to(kda_pool *pool, uint64_t bytes)
{
    uint64_t want = (bytes + pool->granule - 1) / pool->granule * pool->granule;
    if (want > pool->plan.limit_bytes) want = pool->plan.limit_bytes;
    cr_assert_eq(kda_host_pool_grow(pool, bytes, err, sizeof err), 0, "growing to %llu: %s",
                 (unsigned long long)bytes, err);
    cr_assert_eq(pool->heap.bytes, want, "grown to %llu, want %llu", (unsigned long long)pool->heap.bytes,
                 (unsigned long long)want);
}

/* Whether the memory the last growth added (from `before` to the pool's
 * size) holds a request of `size` on its own. */
static int growth_holds(const kda_pool *pool, uint64_t before, uint64_t size)
{
#if KDA_ALLOC_CHUNKS
    /* new whole chunks; a small request needs one for its slot, a large
     * one a run of them */
    uint64_t chunk = pool->heap.state.chunk_bytes, fresh = pool->heap.bytes / chunk - before / chunk;
    uint64_t need = size > chunk / 4 ? (size + chunk - 1) / chunk : 1;
    return need <= fresh;
#elif defined(KDA_ALLOC_HAS_CHUNK_LIST)
    /* the old end marker becomes a free chunk up to the new one: payload
     * and header */
    return (size + KDA_UNIT - 1) / KDA_UNIT + 1 <= (pool->heap.bytes - before) / KDA_UNIT;
#else
    return bump_padded(size) <= pool->heap.bytes - before;
#endif
}

#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
static void note_chunk_start(void *ctx, uint32_t unit, uint32_t size_units, int used)
{
    (void)size_units, (void)used;
    uint32_t *want = ctx;
    if (unit == want[0]) want[1] = 1;
}

/* Whether a chunk starts at `unit`, in a list that must be well formed. */
static int starts_a_chunk(const kda_pool *pool, uint32_t unit)
{
    uint32_t want[2] = {unit, 0};
    kda_scan scan;
    kda_scan_circular(pool->heap.base, &pool->heap, &scan, note_chunk_start, want);
    cr_assert(scan.well_formed, "%s", scan.problem);
    return want[1];
}

#if KDA_CIRCULAR_MULTI
/* The large requests' home (circ_home of the extra offset) starts a chunk. */
static void expect_large_home_is_a_chunk(const kda_pool *pool)
{
    uint32_t home = circ_home(&pool->heap, pool->heap.state.n_offsets);
    cr_assert(starts_a_chunk(pool, home), "the large requests' home, unit %u, no longer starts a chunk", home);
}
#endif
#endif

typedef struct grow_block {
    unsigned char *p;
    uint64_t size, key;
} grow_block;

static int by_address(const void *a, const void *b)
{
    const grow_block *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

/* Exact: sorted by address, each block ends before the next begins. */
static void expect_disjoint(grow_block *b, int n)
{
    qsort(b, (size_t)n, sizeof *b, by_address);
    for (int i = 0; i + 1 < n; i++)
        cr_assert(b[i].p + b[i].size <= b[i + 1].p, "blocks at %p (%llu B) and %p overlap", (void *)b[i].p,
                  (unsigned long long)b[i].size, (void *)b[i + 1].p);
}

/* Mixed sizes: random_size's 16 B .. 128 KiB (the upper ones larger than
 * the start pool, and for CountedBump above a quarter chunk, its runs),
 * and every 16th 192 KiB .. 1.2 MiB. */
static uint64_t grow_size(uint64_t *rng, int i)
{
    uint64_t size = random_size(rng);
    return i % 16 == 15 ? (192u << 10) + mix(*rng) % (1u << 20) : size;
}

/* A request of `size` (larger than the start) is served from the grown
 * memory beside block p (1000 bytes filled with `key`), both stay intact,
 * and once both are freed the state is whole; the pool is destroyed. */
static void expect_grown_memory_serves(kda_pool *pool, unsigned char *p, int key, uint64_t size)
{
    unsigned char *q = kda_malloc(&pool->heap, size);
    cr_assert_not_null(q, "%llu bytes from the grown memory", (unsigned long long)size);
    check_pointer(pool, q, size);
    fill(q, size, key + 1);
    cr_assert(intact(p, 1000, key) && intact(q, size, key + 1));
    kda_free(&pool->heap, q);
    kda_free(&pool->heap, p);
    expect_all_free(pool);
    kda_host_pool_destroy(pool);
}

/* After a growth: the allocator's own state agrees with the grown pool
 * (its own tests' check; the multi variants' large-request home is still
 * a chunk). */
static void expect_grown_state(const kda_pool *pool)
{
    expect_own_grown_state(pool);
#if defined(KDA_ALLOC_HAS_CHUNK_LIST) && KDA_CIRCULAR_MULTI
    expect_large_home_is_a_chunk(pool);
#endif
}

/* One thread allocates until NULL, the pool grows by half, the request
 * that failed is served where the new memory holds it (else it is asked
 * again after the next growth), over every step up to the limit; nothing
 * handed out moves or overlaps, and each block lies in the memory mapped
 * when it came.  At the limit growth fails, saying so, and changes
 * nothing; freed, the state is whole (the chunks tile the grown pool);
 * reset, the pool is back at its start and grows again. */
Test(grow, single_thread_up_to_the_limit, .timeout = 120)
{
    kda_pool pool;
    create_growable(&pool, GROW_START, GROW_LIMIT);
    expect_own_grown_state(&pool);
#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
    cr_assert_eq(pool.heap.state.units, GROW_START / KDA_UNIT);
#endif
    enum { MAX = 8192 };
    static grow_block b[MAX];
    uint64_t rng = 7, size = grow_size(&rng, 0), live = 0;
    int n = 0, growths = 0, retried = 0, beyond_start = 0, larger_than_start = 0;
    for (;;) {
        cr_assert_lt(n, MAX);
        kda_host_set_sm((uint32_t)n % GROW_SMS);
        unsigned char *p = kda_malloc(&pool.heap, size);
        if (!p) {
            uint64_t before = pool.heap.bytes;
            if (before == pool.plan.limit_bytes) break;
            grow_to(&pool, before + before / 2);
            growths++;
            expect_grown_state(&pool);
            p = kda_malloc(&pool.heap, size);
            if (growth_holds(&pool, before, size))
                cr_assert_not_null(p, "growth %d: %llu -> %llu bytes, the request of %llu B that failed still fails",
                                   growths, (unsigned long long)before, (unsigned long long)pool.heap.bytes,
                                   (unsigned long long)size);
            if (!p) {
                retried++;
                continue; /* the same request again, after the next growth */
            }
#if KDA_ALLOC_CONSECUTIVE
            cr_assert_eq(p, pool.heap.base + before, "the offset moves back to the old end");
#endif
        }
        check_pointer(&pool, p, size);
        b[n] = (grow_block){p, size, mix((uint64_t)n + 1)};
        fill(p, size, b[n].key);
        beyond_start += p >= pool.heap.base + GROW_START;
        larger_than_start += size > GROW_START;
        live += size;
        size = grow_size(&rng, ++n);
    }
    kda_host_set_sm(0);
    cr_log_info("%s: %d growths, %d blocks (%d larger than the start), %.1f MiB of %u MiB live, %d requests "
                "asked again after a growth too small for them",
                kda_allocator_name(), growths, n, larger_than_start, (double)live / (1 << 20), GROW_LIMIT >> 20,
                retried);
    cr_assert_geq(growths, 10);
    cr_assert_eq(pool.heap.bytes, pool.plan.limit_bytes, "grew up to the limit");
    cr_assert_gt(beyond_start, n / 2, "%d of %d blocks in the grown memory", beyond_start, n);
    cr_assert_gt(larger_than_start, 10);
    cr_assert_gt(live, GROW_LIMIT / 2, "only %llu bytes handed out of %u", (unsigned long long)live, GROW_LIMIT);
    /* at the limit: growth fails, saying why, and changes nothing */
    err[0] = 0;
    cr_assert_eq(kda_host_pool_grow(&pool, pool.plan.limit_bytes + (1u << 20), err, sizeof err), -1);
    cr_assert(strstr(err, "cannot grow past"), "message: %s", err);
    cr_assert_eq(pool.heap.bytes, pool.plan.limit_bytes);
    for (int i = 0; i < n; i++) cr_assert(intact(b[i].p, b[i].size, b[i].key), "block %d overwritten", i);
    expect_disjoint(b, n);
#if KDA_ALLOC_FREES
    /* still usable: what a block held is served again once it is freed */
    kda_free(&pool.heap, b[n - 1].p);
    b[n - 1].p = kda_malloc(&pool.heap, b[n - 1].size);
    cr_assert_not_null(b[n - 1].p, "a freed block's %llu bytes are not served again",
                       (unsigned long long)b[n - 1].size);
    fill(b[n - 1].p, b[n - 1].size, b[n - 1].key);
    for (int i = 0; i < n; i++) {
        cr_assert(intact(b[i].p, b[i].size, b[i].key), "block %d overwritten", i);
        kda_free(&pool.heap, b[i].p);
    }
    expect_all_free(&pool); /* circular: the chunks tile the grown pool */
#if defined(KDA_ALLOC_HAS_CHUNK_LIST) && KDA_CIRCULAR_MULTI
    expect_large_home_is_a_chunk(&pool);
#endif
#endif
    /* a reset shrinks the pool back to its start */
    kda_host_pool_reset(&pool);
    cr_assert_eq(pool.heap.bytes, GROW_START);
    cr_assert_eq(pool.plan.limit_bytes, GROW_LIMIT);
    expect_own_grown_state(&pool);
#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
    cr_assert_eq(pool.heap.state.units, GROW_START / KDA_UNIT);
#endif
    expect_all_free(&pool); /* circular: the chunks tile the start again */
    unsigned char *p = kda_malloc(&pool.heap, 1000);
    cr_assert_not_null(p, "the reset pool serves");
    check_pointer(&pool, p, 1000);
#if KDA_ALLOC_CONSECUTIVE
    cr_assert_eq(p, pool.heap.base, "the offset starts over at the base");
#endif
    fill(p, 1000, 1);
    /* and grows again, in one step to the limit */
    cr_assert_null(kda_malloc(&pool.heap, 4 * GROW_START), "larger than the start");
    grow_to(&pool, GROW_LIMIT);
    expect_grown_memory_serves(&pool, p, 1, 4 * GROW_START);
}

/* The smallest steps: from one page (or the allocator's smallest pool), a
 * page at a time, up to 1 MiB, with
 * requests of up to 8 KiB (several steps for some); every block in the
 * memory mapped when it came, none overlapping, all intact, and the state
 * whole once they are freed. */
Test(grow, page_by_page, .timeout = 60)
{
    kda_pool pool;
    uint64_t page = 4096, limit = 1u << 20;
    cr_assert_eq(kda_host_pool_create_growable(&pool, page, limit, GROW_SMS, err, sizeof err), 0, "%s", err);
    page = pool.granule;
    /* one page, or the allocator's smallest pool (CountedBump's 64 KiB) */
    uint64_t least = kda_allocator_min_pool() > page ? kda_allocator_min_pool() : page;
    cr_assert_eq(pool.heap.bytes, (least + page - 1) / page * page);
    enum { MAX = 4096 };
    static grow_block b[MAX];
    uint64_t rng = 11, size = 16 + mix(rng) % 8192;
    int n = 0, growths = 0;
    for (;;) {
        cr_assert_lt(n, MAX);
        kda_host_set_sm((uint32_t)n % GROW_SMS);
        unsigned char *p = kda_malloc(&pool.heap, size);
        if (!p) {
            if (pool.heap.bytes == pool.plan.limit_bytes) break;
            grow_to(&pool, pool.heap.bytes + page);
            growths++;
            expect_grown_state(&pool);
            continue;
        }
        check_pointer(&pool, p, size);
        b[n] = (grow_block){p, size, mix((uint64_t)n + 1000)};
        fill(p, size, b[n].key);
        n++;
        rng = mix(rng);
        size = 16 + rng % 8192;
    }
    kda_host_set_sm(0);
    cr_assert_eq(growths, (int)((limit - (least + page - 1) / page * page) / page), "a step a page");
    for (int i = 0; i < n; i++) cr_assert(intact(b[i].p, b[i].size, b[i].key), "block %d overwritten", i);
    expect_disjoint(b, n);
    for (int i = 0; i < n; i++) kda_free(&pool.heap, b[i].p);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A request for more than the limit is capped at it; past the limit, or
 * below the pool's size, growth fails with a message and leaves the pool
 * as it was. */
Test(grow, capped_at_the_limit)
{
    kda_pool pool;
    create_growable(&pool, GROW_START, 4 * GROW_START);
    unsigned char *p = kda_malloc(&pool.heap, 1000);
    cr_assert_not_null(p);
    fill(p, 1000, 3);
    grow_to(&pool, 1ull << 40);
    cr_assert_eq(pool.heap.bytes, 4 * GROW_START, "capped at the limit");
    err[0] = 0;
    cr_assert_eq(kda_host_pool_grow(&pool, 8 * GROW_START, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot grow past") && strstr(err, kda_allocator_name()), "message: %s", err);
    err[0] = 0;
    cr_assert_eq(kda_host_pool_grow(&pool, GROW_START, err, sizeof err), -1, "smaller than it is");
    cr_assert(err[0], "no message");
    cr_assert_eq(pool.heap.bytes, 4 * GROW_START);
    expect_grown_memory_serves(&pool, p, 3, 2 * GROW_START);
}

/* ---- growth between rounds of many threads ---- */

#define GROW_ROUND_ITERATIONS 1500

typedef struct grow_args {
    kda_pool *pool;
    int id;
    pthread_barrier_t *round; /* THREADS + the main thread, twice a round */
    const int *done;
    uint64_t nulls, allocations, beyond_start;
    char failure[160];
} grow_args;

static void *grow_thread(void *arg)
{
    grow_args *a = arg;
    kda_host_set_sm((uint32_t)a->id % GROW_SMS);
    kda_host_set_warp((uint32_t)a->id);
    uint64_t rng = mix((uint64_t)a->id + 100);
    void *block[LIVE] = {0};
    uint64_t size[LIVE] = {0}, key[LIVE] = {0};
    for (int round = 0;; round++) {
        pthread_barrier_wait(a->round);
        if (*a->done) break;
        const kda_heap *h = &a->pool->heap; /* grows only while every thread waits */
        for (int it = 0; it < GROW_ROUND_ITERATIONS && !a->failure[0]; it++) {
            int slot = (int)(mix(rng + (uint64_t)it) % LIVE);
            if (block[slot]) {
                if (!intact(block[slot], size[slot], key[slot])) {
                    snprintf(a->failure, sizeof a->failure, "thread %d, round %d: block of %llu B overwritten", a->id,
                             round, (unsigned long long)size[slot]);
                    break;
                }
                kda_free(h, block[slot]);
                block[slot] = NULL;
                continue;
            }
            size[slot] = random_size(&rng);
            key[slot] = mix(((uint64_t)a->id << 40) ^ ((uint64_t)round << 20) ^ (uint64_t)it);
            block[slot] = kda_malloc(h, size[slot]);
            a->allocations++;
            if (!block[slot]) {
                a->nulls++;
                break; /* this thread's round ends at its NULL */
            }
            unsigned char *c = block[slot];
            if ((uintptr_t)c % KDA_UNIT || c < h->base || c + size[slot] > h->base + h->bytes) {
                snprintf(a->failure, sizeof a->failure, "thread %d, round %d: %p outside the %llu mapped bytes",
                         a->id, round, (void *)c, (unsigned long long)h->bytes);
                block[slot] = NULL;
                break;
            }
            a->beyond_start += c >= h->base + a->pool->start_bytes;
            fill(c, size[slot], key[slot]);
            if (it % 64 == 0) sched_yield();
        }
        pthread_barrier_wait(a->round);
    }
    free_live_blocks(&a->pool->heap, block, size, key, a->id, a->failure, sizeof a->failure);
    return NULL;
}

/* Rounds: THREADS threads allocate and free random sizes until each sees
 * NULL (or a round's budget); at a barrier the main thread doubles the pool
 * while none allocates; they go on, their blocks kept across the rounds.
 * Every block stays intact and inside the memory mapped when it came; the
 * grown memory serves; freed, the state is whole. */
Test(grow, threads_between_growths, .timeout = 120)
{
    kda_pool pool;
    create_growable(&pool, GROW_START, GROW_LIMIT);
    pthread_barrier_t round;
    pthread_barrier_init(&round, NULL, THREADS + 1);
    int done = 0, growths = 0, rounds = 0;
    pthread_t th[THREADS];
    grow_args args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (grow_args){&pool, i, &round, &done, 0, 0, 0, {0}};
        cr_assert_eq(pthread_create(&th[i], NULL, grow_thread, &args[i]), 0);
    }
    uint64_t nulls_before_limit = 0;
    for (;; rounds++) {
        int at_limit = pool.heap.bytes == pool.plan.limit_bytes;
        pthread_barrier_wait(&round); /* they allocate */
        pthread_barrier_wait(&round); /* they wait */
        uint64_t nulls = 0;
        for (int i = 0; i < THREADS; i++) nulls += args[i].nulls;
        if (!at_limit) nulls_before_limit = nulls;
        if (at_limit) break; /* one round at the limit */
        grow_to(&pool, 2 * pool.heap.bytes);
        growths++;
        expect_own_grown_state(&pool);
    }
    done = 1;
    pthread_barrier_wait(&round);
    uint64_t nulls = 0, allocations = 0, beyond_start = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].failure[0], 0, "%s", args[i].failure);
        nulls += args[i].nulls;
        allocations += args[i].allocations;
        beyond_start += args[i].beyond_start;
    }
    pthread_barrier_destroy(&round);
    cr_log_info("%s: %d rounds, %d growths, %llu allocations, %llu NULL (%llu before the limit), %llu beyond the "
                "start", kda_allocator_name(), rounds + 1, growths, (unsigned long long)allocations,
                (unsigned long long)nulls, (unsigned long long)nulls_before_limit,
                (unsigned long long)beyond_start);
    cr_assert_geq(growths, 10);
    cr_assert_gt(nulls_before_limit, 0, "the threads never ran out of the growing pool");
    cr_assert_gt(beyond_start, allocations / 2, "%llu of %llu blocks from the grown memory",
                 (unsigned long long)beyond_start, (unsigned long long)allocations);
#if KDA_ALLOC_FREES
    expect_all_free(&pool);
#if defined(KDA_ALLOC_HAS_CHUNK_LIST) && KDA_CIRCULAR_MULTI
    expect_large_home_is_a_chunk(&pool);
#endif
#endif
    kda_host_pool_destroy(&pool);
}

#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
/* Successive growths add up to one chunk while the last growth's chunk is
 * free and reaches the end: a request larger than the start pool and than
 * each step (64 KiB) is served once three steps hold it, right behind the
 * old end marker.  Once that chunk is used, the next growth makes a chunk
 * of its own; freed, everything tiles the pool. */
Test(grow, circular_growths_add_up)
{
    kda_pool pool;
    create_growable(&pool, GROW_START, GROW_LIMIT);
    uint64_t big = 2 * GROW_START + GROW_START / 2;
    uint32_t start_end = pool.heap.state.units - 1;
    kda_host_set_sm(1);
    cr_assert_null(kda_malloc(&pool.heap, big));
    for (int step = 1; step <= 2; step++) {
        grow_to(&pool, pool.heap.bytes + GROW_START);
        cr_assert_null(kda_malloc(&pool.heap, big), "step %d: %llu bytes hold %llu B?", step,
                       (unsigned long long)pool.heap.bytes, (unsigned long long)big);
    }
    grow_to(&pool, pool.heap.bytes + GROW_START);
    unsigned char *p = kda_malloc(&pool.heap, big);
    cr_assert_eq(p, pool.heap.base + (uint64_t)(start_end + 1) * KDA_UNIT,
                 "the three steps' chunk starts at the start's end marker");
    fill(p, big, 5);
    uint32_t grown_end = pool.heap.state.units - 1;
    grow_to(&pool, pool.heap.bytes + GROW_START);
    cr_assert(starts_a_chunk(&pool, grown_end), "the last end marker starts a chunk of its own");
#if KDA_CIRCULAR_MULTI
    expect_large_home_is_a_chunk(&pool);
#endif
    cr_assert(intact(p, big, 5));
    kda_free(&pool.heap, p);
    kda_host_set_sm(0);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

#if KDA_CIRCULAR_MULTI
/* The large requests' home stays where it was, and a chunk start, through
 * growths with large blocks all over the grown memory, and when the chunk
 * before it (the last heap's) is freed while the home's chunk is free. */
Test(grow, large_requests_home_survives_growth)
{
    kda_pool pool;
    create_growable(&pool, GROW_START, GROW_LIMIT);
    const kda_heap *h = &pool.heap;
    uint32_t home = circ_home(h, h->state.n_offsets);
    cr_assert_eq(home, h->state.layout.n_heaps * h->state.layout.heap_units, "the remainder's start");
    cr_assert_eq(pool.heap.state.offsets[h->state.n_offsets], home);
    kda_host_set_sm(h->state.layout.n_heaps - 1);
    /* the last heap's last chunk, before the home */
    pool.heap.state.offsets[h->state.layout.n_heaps - 1] = h->state.layout.n_heaps * h->state.layout.heap_units - KDA_MIN_CHUNK_UNITS;
    unsigned char *before_home = kda_malloc(&pool.heap, (KDA_MIN_CHUNK_UNITS - 1) * KDA_UNIT);
    cr_assert_eq(before_home, h->base + (uint64_t)(home - KDA_MIN_CHUNK_UNITS + 1) * KDA_UNIT);
    enum { MAX = 4096 };
    static grow_block b[MAX];
    uint64_t large = (uint64_t)h->state.layout.root_units * KDA_UNIT + 1000; /* more than a heap's root */
    int n = 0;
    for (int growth = 0; growth < 6; growth++) {
        while (n < MAX && (b[n].p = kda_malloc(&pool.heap, large)) != NULL) {
            check_pointer(&pool, b[n].p, large);
            b[n].size = large;
            b[n].key = (uint64_t)n;
            fill(b[n].p, large, b[n].key);
            n++;
        }
        cr_assert_eq(circ_home(h, h->state.n_offsets), home, "growth %d moved the home", growth);
        expect_large_home_is_a_chunk(&pool);
        grow_to(&pool, 2 * pool.heap.bytes);
        expect_large_home_is_a_chunk(&pool);
    }
    cr_assert_lt(n, MAX);
    cr_assert_eq(b[0].p, h->base + (uint64_t)(home + 1) * KDA_UNIT, "the first large block is at the home");
    for (int i = 0; i < n; i++) {
        cr_assert(intact(b[i].p, b[i].size, b[i].key), "block %d overwritten", i);
        kda_free(&pool.heap, b[i].p);
    }
    kda_free(&pool.heap, before_home); /* its successor, the home's chunk, is free: not merged */
    expect_large_home_is_a_chunk(&pool);
    kda_host_set_sm(0);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}
#endif
#endif

#endif /* KDA_ALLOC_GROWS */

#endif /* KDA_ALLOC_HOST */

#if !KDA_ALLOC_GROWS
/* An allocator that cannot grow (whether it grows is its documented trait,
 * test_alloc.c) refuses a growable pool with a message naming it, saying it
 * cannot grow and the reason it gives. */
Test(grow, fixed_allocator_refuses_a_growable_pool)
{
    const char *why = "unset";
    kda_allocator_grows(&why);
    cr_assert(why && *why, "no reason given");
    kda_pool pool;
    char msg[256] = "";
    cr_assert_eq(kda_host_pool_create_growable(&pool, 1u << 20, 64u << 20, 4, msg, sizeof msg), -1);
    cr_assert(strstr(msg, kda_allocator_name()) && strstr(msg, "cannot grow") && strstr(msg, why), "message: %s",
              msg);
}
#endif
