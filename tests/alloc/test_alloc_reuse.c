/* test_alloc_reuse.c - memory freed around blocks that stay live, served
 * again?  The reuse test on host threads, for every allocator:
 *   fill the pool with blocks of one size until the first NULL, every
 *   block pattern-checked; free all but one block in every K (of each
 *   SM's blocks: one thread plays four SMs in turn); allocate
 *   again, with the same size and with another, until NULL or until as
 *   many bytes as were freed are served; then check every live block.
 * Reported: the share of the pool the fill took and of the freed bytes the
 * refill served.  Oracles: owner patterns over every byte of every live
 * block (a block handed out twice breaks one); every fill takes more than
 * 70% of the pool (the least by design: Halloc's slabs, three quarters of
 * it; the circular allocators' headers at 64 B, a fifth); the allocators
 * whose design reuses freed blocks of their size (the CMalloc family,
 * ScatterAlloc, Halloc, SlabBump) must serve at least 90% of the freed
 * bytes again at the same size.  CountedBump (chunks, no hole reused)
 * recycles a chunk only when all of its blocks are freed (docs/alloc.md):
 * an SM's blocks follow one another in its slot's chunks, C / size of them
 * a chunk, so where K of them fit a chunk every chunk keeps a live block
 * and nothing is served again, at either size; where fewer fit, some chunks
 * keep none, and those serve. */
#include "test_alloc.h"

#if KDA_ALLOC_HOST && KDA_ALLOC_FREES

static char err[256];

typedef struct reuse_result {
    uint64_t pool_bytes, filled_bytes, freed_bytes, served_bytes, bad, chunk_bytes;
} reuse_result;

/* One thread plays four SMs in turn, so that the per-SM allocators fill
 * every SM's part of the pool; block i is the (i / 4)-th of SM i % 4. */
#define REUSE_SMS 4
static void *take(kda_pool *pool, uint64_t i, uint64_t size)
{
    kda_host_set_sm((uint32_t)(i % REUSE_SMS));
    return kda_malloc(&pool->heap, size);
}

/* Block i stays live: the first of every K of its SM's blocks. */
static int kept(uint64_t i, uint32_t k) { return i / REUSE_SMS % k == 0; }

static reuse_result reuse_run(uint64_t pool_bytes, uint32_t size, uint32_t k, uint32_t refill_size)
{
    reuse_result r = {0};
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, pool_of(pool_bytes), REUSE_SMS, err, sizeof err), 0, "%s", err);
    r.pool_bytes = pool.heap.bytes;
#if KDA_ALLOC_CHUNKS
    r.chunk_bytes = pool.heap.state.chunk_bytes;
#endif
    uint64_t cap = r.pool_bytes / size + 1, n = 0; /* the cap: where the system allocator serves */
    void **blocks = malloc(cap * sizeof *blocks);
    cr_assert_not_null(blocks);
    while (n < cap && (blocks[n] = take(&pool, n, size)) != NULL) fill(blocks[n], size, n), n++;
    r.filled_bytes = n * (uint64_t)size;
    for (uint64_t i = 0; i < n; i++)
        if (!kept(i, k)) {
            r.bad += !intact(blocks[i], size, i);
            kda_free(&pool.heap, blocks[i]);
            blocks[i] = NULL;
            r.freed_bytes += size;
        }
    uint64_t most = r.freed_bytes / refill_size + 1, m = 0;
    void **again = malloc(most * sizeof *again);
    cr_assert_not_null(again);
    while (m < most && r.served_bytes < r.freed_bytes && (again[m] = take(&pool, m, refill_size)) != NULL) {
        fill(again[m], refill_size, ~m);
        r.served_bytes += refill_size;
        m++;
    }
    for (uint64_t i = 0; i < n; i++)
        if (kept(i, k)) r.bad += !intact(blocks[i], size, i);
    for (uint64_t i = 0; i < m; i++) r.bad += !intact(again[i], refill_size, ~i);
    for (uint64_t i = 0; i < n; i++)
        if (kept(i, k)) kda_free(&pool.heap, blocks[i]);
    for (uint64_t i = 0; i < m; i++) kda_free(&pool.heap, again[i]);
    free(blocks);
    free(again);
    kda_host_pool_destroy(&pool);
    return r;
}

static double share(uint64_t part, uint64_t whole) { return whole ? (double)(part < whole ? part : whole) / (double)whole : 0.0; }

/* The sanitized build (KDA_TEST_SHARE above 1, tests/CMakeLists.txt)
 * fills the pool once a size and refill, at one K of the three: each fill
 * costs several times more there, and the plain build runs all three. */
#if KDA_TEST_SHARE > 1
static const uint32_t ks[] = {16};
#else
static const uint32_t ks[] = {2, 16, 64};
#endif

Test(reuse, around_live_blocks, .timeout = 600)
{
    static const uint32_t sizes[] = {64, 1024, 4096};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++)
            for (int other = 0; other < 2; other++) {
                uint32_t size = sizes[s], k = ks[j], refill = other ? (size == 64 ? 1024 : 64) : size;
                reuse_result r = reuse_run(8u << 20, size, k, refill);
                double served = share(r.served_bytes, r.freed_bytes);
                cr_log_info("reuse,%s,%u,%u,%u,fill %.3f,served %.3f", kda_allocator_id(), size, k, refill,
                            share(r.filled_bytes, r.pool_bytes), served);
                cr_assert_eq(r.bad, 0, "%u B, K = %u, refill %u B: %llu blocks overwritten", size, k, refill,
                             (unsigned long long)r.bad);
                cr_assert_gt(share(r.filled_bytes, r.pool_bytes), 0.7, "%u B: the fill took %.1f%% of the pool", size,
                             100 * share(r.filled_bytes, r.pool_bytes));
#if KDA_ALLOC_REUSES_HOLES
                if (!other)
                    cr_assert_geq(served, 0.9, "%u B, K = %u: %.1f%% of the freed bytes served again", size, k,
                                  100 * served);
#elif KDA_ALLOC_CHUNKS
                if (r.chunk_bytes / size >= k)
                    cr_assert_eq(r.served_bytes, 0, "%u B, K = %u, refill %u B: every chunk keeps a live block, yet "
                                 "%llu bytes served", size, k, refill, (unsigned long long)r.served_bytes);
                else
                    cr_assert_gt(r.served_bytes, 0, "%u B, K = %u, refill %u B: chunks with no live block, none served",
                                 size, k, refill);
#endif
            }
}

#else
Test(reuse, around_live_blocks)
{
    cr_skip_test("%s %s", kda_allocator_name(),
                 KDA_ALLOC_HOST ? "frees no single block: nothing to serve again" : "has no host pool");
}
#endif
