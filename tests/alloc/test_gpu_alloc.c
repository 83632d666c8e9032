/* test_gpu_alloc.c - the allocator compiled in (test_gpu_alloc_<name>), on
 * the GPU: thousands of warps allocate, fill with owner patterns, check and
 * free (gpu_alloc_stress.cu).  Skips, saying why, without a usable GPU.
 * Oracles: the patterns; 16-byte alignment; blocks inside the pool; and for
 * the circular allocators, a walk of the chunk list afterwards, which must
 * be well formed and entirely free. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "gpu_alloc_stress.h"
#include "gpu_build.h"

static char err[512];

static void require_gpu(void)
{
    char why[256];
    if (gpu_device_check(why, sizeof why)) cr_skip_test("no GPU to test on: %s", why);
}

static void expect_clean(const gpu_stress_result *r, const char *what)
{
    cr_log_info("%s %s: %llu allocations, %llu NULL", kda_allocator_name(), what,
                (unsigned long long)r->allocations, (unsigned long long)r->nulls);
    cr_assert_eq(r->corrupt, 0, "%s: %llu overwritten blocks", what, (unsigned long long)r->corrupt);
    cr_assert_eq(r->misaligned, 0, "%s: %llu misaligned pointers", what, (unsigned long long)r->misaligned);
    cr_assert_eq(r->outside, 0, "%s: %llu blocks outside the pool", what, (unsigned long long)r->outside);
    cr_assert_eq(r->split, 0, "%s: %llu warp requests with NULL for some lanes only", what,
                 (unsigned long long)r->split);
}

#if !defined(KDA_ALLOC_HAS_CHUNK_LIST)
/* Only a chunk list (the circular allocators') can be walked here; the others'
 * host tests read theirs. */
static void expect_all_free(const kda_pool *pool) { (void)pool; }
#else
static void expect_all_free(const kda_pool *pool)
{
    void *copy = malloc(pool->heap.bytes);
    cr_assert_not_null(copy);
    cr_assert_eq(gpu_pool_copy(pool, copy, err, sizeof err), 0, "%s", err);
    kda_scan scan;
    kda_scan_circular(copy, &pool->heap, &scan, NULL, NULL);
    cr_assert(scan.well_formed, "chunk list broken: %s", scan.problem);
    cr_assert_eq(scan.free_chunks, scan.chunks, "%llu chunks still used",
                 (unsigned long long)(scan.chunks - scan.free_chunks));
    free(copy);
}
#endif

/* Pools: the allocators that cannot free single blocks hold every block
 * until the end, so theirs holds them all. */
#define STRESS_POOL (KDA_ALLOC_FREES ? 4ull << 30 : 8ull << 30)

/* KDA_STRESS_WARPS overrides the warp counts (compute-sanitizer runs use
 * fewer: it slows kernels down a hundredfold). */
static uint32_t warps_or_override(uint32_t warps)
{
    const char *env = getenv("KDA_STRESS_WARPS");
    return env && atoi(env) > 0 ? (uint32_t)atoi(env) : warps;
}

static void stress(uint32_t warps, uint32_t iterations, uint32_t max_size, gpu_stress_mode mode, const char *what)
{
    require_gpu();
    warps = warps_or_override(warps);
    kda_pool pool;
    cr_assert_eq(kda_pool_create(&pool, STRESS_POOL, err, sizeof err), 0, "%s", err);
    gpu_stress_result r;
    cr_assert_eq(gpu_alloc_stress(&pool, warps, iterations, max_size, mode, &r, err, sizeof err), 0, "%s", err);
    expect_clean(&r, what);
    cr_assert_eq(r.allocations, (uint64_t)warps * iterations * (mode == GPU_STRESS_LANE0 ? 1 : 32));
#if !KDA_ALLOC_FREES
    cr_assert_eq(r.nulls, 0, "the pool holds everything: no NULL expected");
#else
    cr_assert_lt(r.nulls, r.allocations / 20, "%llu NULLs", (unsigned long long)r.nulls);
#endif
    expect_all_free(&pool);
    kda_pool_destroy(&pool);
}

#if defined(KDA_ALLOC_SERIAL_ABOVE)
/* Requests above KDA_ALLOC_SERIAL_ABOVE are served one at a time
 * (ScatterAlloc's above a page, under a lock, each searching the page
 * table): thousands of warps asking up to 128 KiB take minutes, so they
 * ask at most that, and fewer ask for more. */
Test(gpu_alloc, thousands_of_warps, .timeout = 300)
{
    stress(16384, 16, KDA_ALLOC_SERIAL_ABOVE, GPU_STRESS_LANE0, "lane-0 blocks");
}
Test(gpu_alloc, large_requests, .timeout = 300)
{
    stress(512, 8, 128u << 10, GPU_STRESS_LANE0, "lane-0 blocks up to 128 KiB");
}
#else
Test(gpu_alloc, thousands_of_warps, .timeout = 300)
{
    stress(16384, 16, 128u << 10, GPU_STRESS_LANE0, "lane-0 blocks");
}
#endif
Test(gpu_alloc, warp_coalesced, .timeout = 300) { stress(4096, 8, 1024, GPU_STRESS_WARP, "warp-coalesced blocks"); }
/* Every lane asks for itself at once, one size across the warp or one a
 * lane: the allocators' paths for lanes that ask together (AtomicMalloc's
 * shared add, CountedBump's), each lane's block pattern-checked. */
Test(gpu_alloc, every_lane_at_once, .timeout = 300)
{
    stress(2048, 8, 1024, GPU_STRESS_LANES, "blocks of every lane at once");
}

#if KDA_ALLOC_FREES && KDA_ALLOC_SYS_HEAP != KDA_SYS_HEAP_ALL
/* Exhaustion: NULLs, no corruption, and the pool whole again afterwards
 * (a 64 MiB pool, or the allocator's minimum), twice.  Where every block
 * lies in the pool, each warp holds its blocks until its first NULL, so
 * the NULLs are exact whatever the timing; elsewhere (Halloc's large
 * blocks come from CUDA's heap, Gallatin's from its own memory) no NULL
 * is promised and the stress runs, holding 4 blocks a warp at a time. */
Test(gpu_alloc, exhaustion_then_usable, .timeout = 300)
{
    require_gpu();
    kda_pool pool;
    uint64_t bytes = kda_allocator_min_pool() > (64u << 20) ? kda_allocator_min_pool() : 64u << 20;
    cr_assert_eq(kda_pool_create(&pool, bytes, err, sizeof err), 0, "%s", err);
    for (int round = 0; round < 2; round++) {
        gpu_stress_result r;
        uint32_t warps = warps_or_override(16384);
#if KDA_ALLOC_IN_POOL
        cr_assert_eq(gpu_alloc_fill(&pool, warps, 64u << 10, &r, err, sizeof err), 0, "%s", err);
        expect_clean(&r, "filled pool");
        cr_assert_eq(r.nulls, warps, "%llu NULLs from %u warps that each allocate until their first",
                     (unsigned long long)r.nulls, warps);
        cr_assert_gt(r.allocations, r.nulls, "not one block served before the NULLs");
#else
        cr_assert_eq(gpu_alloc_stress(&pool, warps, 8, 64u << 10, GPU_STRESS_LANE0, &r, err, sizeof err), 0, "%s",
                     err);
        expect_clean(&r, "tight pool");
#endif
        expect_all_free(&pool);
    }
    kda_pool_destroy(&pool);
}
#endif
