/* test_alloc_bump.c - what allocators that hand out consecutive blocks
 * (KDA_ALLOC_CONSECUTIVE: the bump allocators) promise: offsets past 4 GiB
 * are exact; without KDA_ALLOC_WRAPS (AtomicMalloc) NULL for good once the
 * pool is used up; with it (AWMalloc) the ring wraps to the start when a
 * block does not fit.
 *
 * Oracles: addresses computed from the request sizes padded to 16 bytes,
 * relative to the pool's base. */
#include "test_alloc.h"

#if KDA_ALLOC_HOST && KDA_ALLOC_CONSECUTIVE

static char err[256];

Test(alloc, pool_larger_than_4_gib)
{
    kda_pool pool;
    uint64_t bytes = 5ull << 30;
    cr_assert_eq(kda_host_pool_create(&pool, bytes, 1, err, sizeof err), 0, "%s", err);
    unsigned char *last = NULL;
    for (int i = 0; i < 9; i++) last = kda_malloc(&pool.heap, 512u << 20);
    cr_assert_not_null(last);
    cr_assert_eq(last - pool.heap.base, 8ll * (512 << 20), "offsets past 4 GiB are exact");
    kda_host_pool_destroy(&pool);
}

#if !KDA_ALLOC_WRAPS
/* Consecutive blocks, then NULL for good (AtomicMalloc). */
Test(alloc, atomic_exhaustion_is_final)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 1u << 20, 1, err, sizeof err), 0, "%s", err);
    unsigned char *prev = NULL;
    int n = 0;
    for (unsigned char *p; (p = kda_malloc(&pool.heap, 1000)) != NULL; n++) {
        if (prev) cr_assert_eq(p, prev + 1008, "blocks are consecutive, padded to 16");
        prev = p;
    }
    cr_assert_eq(n, (1 << 20) / 1008);
    cr_assert_null(kda_malloc(&pool.heap, 16), "after the first failure every request fails");
    kda_free(&pool.heap, prev); /* does nothing */
    cr_assert_null(kda_malloc(&pool.heap, 16));
    kda_host_pool_destroy(&pool);
}
#else
/* The ring wraps to its start when a block does not fit (AWMalloc). */
Test(alloc, awmalloc_wraps_to_the_start)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 10000, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.bytes, 10000);
    unsigned char *base = pool.heap.base;
    cr_assert_eq(kda_malloc(&pool.heap, 4000), base);
    cr_assert_eq(kda_malloc(&pool.heap, 4000), base + 4000);
    cr_assert_eq(kda_malloc(&pool.heap, 4000), base, "the third block wraps to offset 0");
    cr_assert_eq(kda_malloc(&pool.heap, 1000), base + 4000, "and the ring continues after it");
    cr_assert_eq(kda_malloc(&pool.heap, 5000), base, "a block that fits only after wrapping");
    cr_assert_null(kda_malloc(&pool.heap, 10001), "larger than the pool");
    kda_host_pool_destroy(&pool);
}
#endif

#endif
