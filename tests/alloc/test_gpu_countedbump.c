/* test_gpu_countedbump.c - CountedBump on the GPU with slots that several
 * SMs share: the pool is laid out for fewer slots than the GPU has SMs (as
 * one whose growth limit holds fewer than two chunks an SM is, and as SM
 * ids beyond the planned count make it), so that SM s adds to slot
 * s % slots beside the SMs below it, up to the slot's bound
 * (cb_sharers), and the SMs beyond it take whole chunks.  Thousands of
 * warps allocate, claim their blocks' units, fill, check and free
 * (gpu_countedbump_stress.cu).  Skips, saying why, without a usable GPU.
 *
 * Oracles: a bitmap of the pool's 16-byte units (a unit claimed by two
 * live blocks, or left claimed, fails); every word of every block holds its
 * owner's pattern when it is freed; 16-byte alignment; blocks inside the
 * pool; and the allocator's state, copied back: every chunk free but the
 * slots' current ones, each of whose served requests was freed.
 *
 * Under compute-sanitizer, set KDA_STRESS_WARPS (e.g. 256) to cut the warp
 * counts: it slows kernels down a hundredfold. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "gpu_countedbump_stress.h"

static char err[512];

static void require_gpu(void)
{
    char why[256];
    if (cb_gpu_usable(why, sizeof why)) cr_skip_test("no GPU to test on: %s", why);
}

static uint32_t warps_or_override(uint32_t warps)
{
    const char *env = getenv("KDA_STRESS_WARPS");
    return env && atoi(env) > 0 ? (uint32_t)atoi(env) : warps;
}

/* The state read back from the GPU: every chunk is free but the slots'
 * current ones; an empty slot counts nothing; a current chunk is open and
 * its balance takes back exactly the requests it served. */
static void expect_all_free(const kda_pool *pool)
{
    unsigned char *copy = malloc(pool->plan.state_bytes);
    cr_assert_not_null(copy);
    cr_assert_eq(cb_gpu_state_copy(pool, copy, err, sizeof err), 0, "%s", err);
    kda_heap h = pool->heap;
    kda_alloc_bind(&h, copy);
    uint32_t current = 0, taken = 0;
    for (uint32_t s = 0; s < h.state.n_slots; s++) {
        uint64_t value = *cb_slot(&h, s);
        cr_assert_eq(*cb_fill(&h, s) & 1, 0, "slot %u: a fill still under way", s);
        if (!cb_slot_chunk(value)) {
            cr_assert_eq(value, 0, "slot %u has no chunk but counts %llx", s, (unsigned long long)value);
            continue;
        }
        uint32_t c = cb_slot_chunk(value) - 1;
        current++;
        cr_assert(cb_bits(&h)[c / 64] >> (c % 64) & 1, "slot %u's chunk %u is not taken", s, c);
        cr_assert_leq(cb_slot_bytes(value), h.state.chunk_bytes, "slot %u's chunk is closed", s);
        cr_assert_eq(*cb_balance(&h, c) + (int64_t)cb_slot_count(value), 0, "slot %u's chunk: %u served, balance %d",
                     s, cb_slot_count(value), *cb_balance(&h, c));
    }
    for (uint32_t c = 0; c < h.state.chunks; c++) {
        taken += cb_bits(&h)[c / 64] >> (c % 64) & 1;
        cr_assert_eq(*cb_run(&h, c), 0, "chunk %u still starts a large block", c);
    }
    cr_assert_eq(taken, current, "%u chunks taken, %u of them slots' current chunks", taken, current);
    free(copy);
}

/* A fixed pool of `bytes` laid out with the GPU's slots divided by
 * `share` (at least one). */
static void create_shared(kda_pool *pool, uint64_t bytes, uint32_t share)
{
    cr_assert_eq(kda_pool_create(pool, bytes, err, sizeof err), 0, "%s", err);
    uint32_t sms = pool->heap.state.n_slots, slots = sms / share ? sms / share : 1;
    cr_assert_eq(cb_gpu_set_slots(pool, slots, err, sizeof err), 0, "%s", err);
    cr_log_info("%u SMs on %u slots (at most %u SMs add to one), %u chunks of %u KiB", sms, slots,
                cb_sharers(pool->heap.state.chunk_bytes), pool->heap.state.chunks, pool->heap.state.chunk_bytes >> 10);
}

static void run(kda_pool *pool, uint32_t warps, uint32_t iterations, uint32_t min_size, uint32_t max_size, int ask,
                const char *what, int pool_holds_them)
{
    warps = warps_or_override(warps);
    cb_stress_result r;
    cr_assert_eq(cb_gpu_stress(pool, warps, iterations, min_size, max_size, ask, &r, err, sizeof err), 0, "%s", err);
    cr_log_info("%s: %llu allocations, %llu NULL", what, (unsigned long long)r.allocations,
                (unsigned long long)r.nulls);
    cr_assert_eq(r.twice, 0, "%s: %llu units held by two blocks at once (or never given back)", what,
                 (unsigned long long)r.twice);
    cr_assert_eq(r.corrupt, 0, "%s: %llu words overwritten", what, (unsigned long long)r.corrupt);
    cr_assert_eq(r.misaligned, 0, "%s: %llu misaligned pointers", what, (unsigned long long)r.misaligned);
    cr_assert_eq(r.outside, 0, "%s: %llu blocks outside the pool", what, (unsigned long long)r.outside);
    /* lane 0 asks once a warp, every lane 32 times; mixed: the odd warps' lanes */
    uint64_t per_warp_lanes = ask == CB_ASK_LANE0 ? 0 : ask == CB_ASK_MIXED ? warps / 2 : warps;
    uint64_t asked = (uint64_t)iterations * (per_warp_lanes * 32 + (warps - per_warp_lanes));
    cr_assert_eq(r.allocations, asked, "%s: %llu requests counted, %llu made", what,
                 (unsigned long long)r.allocations, (unsigned long long)asked);
    if (pool_holds_them)
        cr_assert_lt(r.nulls, r.allocations / 20 + 1, "%s: %llu NULLs", what, (unsigned long long)r.nulls);
    expect_all_free(pool);
}

/* 1 GiB: chunks of 256 KiB on 132 SMs, whose slots admit 7 SMs each. */
#define SHARED_POOL (1ull << 30)

/* Four SMs to a slot; lane 0 of each warp asks for the warp, up to a
 * quarter chunk (the largest request a slot serves). */
Test(gpu_countedbump, four_sms_a_slot_lane_blocks, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    create_shared(&pool, SHARED_POOL, 4);
    run(&pool, 16384, 8, 16, pool.heap.state.chunk_bytes / 4, CB_ASK_LANE0, "lane 0 asks, 16 B to C/4", 1);
    kda_pool_destroy(&pool);
}

/* Every lane asks for its own small block: the lanes of a warp share one
 * add on their slot, whether the slot is their SM's own or shared. */
Test(gpu_countedbump, four_sms_a_slot_every_lane, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    create_shared(&pool, SHARED_POOL, 4);
    run(&pool, 4096, 8, 16, 4096, CB_ASK_EVERY_LANE, "every lane asks, 16 B to 4 KiB", 1);
    kda_pool_destroy(&pool);
}

/* Every lane asks for C/8 .. C/4 at once, so that a warp's one add is
 * several chunks' worth, and the four SMs' 256 warps on a slot may all add
 * to one closed value (up to 512 MiB of bytes).  The pool cannot hold them
 * all: many NULLs, no block handed out twice. */
Test(gpu_countedbump, four_sms_a_slot_large_lane_blocks, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    create_shared(&pool, SHARED_POOL, 4);
    uint32_t C = pool.heap.state.chunk_bytes;
    run(&pool, 8448, 2, C / 8, C / 4, CB_ASK_EVERY_LANE, "every lane asks, C/8 to C/4", 0);
    kda_pool_destroy(&pool);
}

/* Sixteen SMs to a slot, more than its bound (7 with 256 KiB chunks):
 * SMs 0 .. 7 x slots - 1 add, the others take a whole chunk a request.
 * Lane 0 asks, few enough warps that the pool holds their chunks (a run
 * that finds none searches under the runs' lock, one at a time). */
Test(gpu_countedbump, sms_beyond_a_slots_bound_take_chunks, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    create_shared(&pool, SHARED_POOL, 16);
    run(&pool, 2048, 8, 16, pool.heap.state.chunk_bytes / 4, CB_ASK_LANE0, "16 SMs a slot, lane 0", 1);
    kda_pool_destroy(&pool);
}

/* One slot for the whole GPU, with 16 KiB chunks (a 64 MiB pool): SMs 0 ..
 * 62 add to it, the others take whole chunks; lane 0 asks. */
Test(gpu_countedbump, one_slot_for_every_sm, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    create_shared(&pool, 64u << 20, 1u << 30);
    run(&pool, 1024, 8, 16, 1024, CB_ASK_LANE0, "one slot, lane 0", 1);
    kda_pool_destroy(&pool);
}

/* A tight pool with shared slots: the slots run dry and are filled again
 * under contention (one filler at a time): lane 0 asking up to 64 KiB
 * (runs of chunks too), then every lane of half the warps asking up to a
 * quarter chunk (slots only: a failing run takes the runs' lock, one lane
 * at a time).  NULLs, but no block handed out twice, and every chunk free
 * again after each round. */
Test(gpu_countedbump, tight_pool_shared_slots, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    create_shared(&pool, 64u << 20, 4);
    run(&pool, 16384, 8, 16, 64u << 10, CB_ASK_LANE0, "tight, lane 0", 0);
    run(&pool, 16384, 8, 16, pool.heap.state.chunk_bytes / 4, CB_ASK_MIXED, "tight, mixed", 0);
    kda_pool_destroy(&pool);
}
