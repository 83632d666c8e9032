/* test_alloc.c - the allocators' algorithms on CPU threads: the contract
 * every allocator keeps.
 *
 * test_alloc_<name> is built once per allocator from the test_alloc*.c
 * files, so each binary runs the very code the GPU runs, through the host
 * side of kdalloc/detail/port.h.  What a test expects of the allocator it
 * reads from its capabilities (KDA_ALLOC_*, kdalloc/detail/contract.h),
 * but for the allocator's answers about itself, checked against its
 * documented traits (a table here, from docs/library.md):
 *   test_alloc.c           this contract: documented traits, alignment of
 *                          every size, requests larger than the pool, the
 *                          space query; an allocator that runs on the GPU
 *                          only refuses a host pool;
 *   test_alloc_state.c     the check that the allocator's state is whole
 *                          again, and the allocator's own tests
 *                          (tests/alloc/alloc_<name>.c);
 *   test_alloc_circular.c  allocators with a chunk list (the CMalloc
 *                          family): its layout and walks;
 *   test_alloc_bump.c      allocators that hand out consecutive blocks;
 *   test_alloc_stress.c    many threads: random stress, the soak, the
 *                          survey's protocol;
 *   test_alloc_grow.c      pools that grow in place.
 * Oracles here: docs/library.md's traits of each allocator, written out
 * in a table; a pattern unique to each block's owner, written after
 * allocation and checked before free (two live blocks that overlap break
 * one of the patterns); exact alignment arithmetic; and the allocator's
 * state whole again once everything is freed (expect_all_free). */
#include "test_alloc.h"

/* Each allocator's traits as docs/library.md states them (its table of
 * allocators: frees single blocks, grows, host, min pool; the rows' prose:
 * AWMalloc wraps, FDGMalloc cannot serve the build; ScatterAlloc's name and
 * minimum count its pages: the configured KDA_SCATTERALLOC_PAGE_SIZE, which
 * CMake defines for every target), written out by hand, never from KDA_ALLOC_*. */
#define DOC_STR_(x) #x
#define DOC_STR(x) DOC_STR_(x)
typedef struct documented {
    const char *id, *name;
    int frees, grows, host, wraps, builds;
    uint64_t min_pool;
} documented;
static const documented documented_traits[] = {
    {"atomic", "AtomicMalloc", 0, 1, 1, 0, 1, 0},
    {"awmalloc", "AWMalloc", 0, 0, 1, 1, 1, 0},
    {"cmalloc", "CMalloc", 1, 1, 1, 0, 1, 0},
    {"cfmalloc", "CFMalloc", 1, 1, 1, 0, 1, 0},
    {"cmmalloc", "CMMalloc", 1, 1, 1, 0, 1, 0},
    {"cfmmalloc", "CFMMalloc", 1, 1, 1, 0, 1, 0},
    {"cudamalloc", "CudaMalloc", 1, 0, 0, 0, 1, 0},
    {"scatteralloc", "ScatterAlloc " DOC_STR(KDA_SCATTERALLOC_PAGE_SIZE), 1, 0, 1, 0, 1,
     4ull * KDA_SCATTERALLOC_PAGE_SIZE},
    {"halloc", "Halloc", 1, 0, 1, 0, 1, 256ull << 20},
    {"fdgmalloc", "FDGMalloc", 0, 0, 1, 0, 0, 0},
    {"slabbump", "SlabBump", 1, 1, 1, 0, 1, 64ull << 10},
    {"countedbump", "CountedBump", 1, 1, 1, 0, 1, 64ull << 10},
    {"gallatin", "Gallatin", 1, 0, 0, 0, 1, 1ull << 30}, /* a peer, built with -DKDA_PEERS=ON */
};

/* The allocator's answers about itself (and whether its algorithm runs on
 * host threads) are its row of the documentation; a reason is given exactly
 * where it cannot grow or build. */
Test(alloc, documented_traits)
{
    const documented *d = NULL;
    for (size_t i = 0; i < sizeof documented_traits / sizeof documented_traits[0]; i++)
        if (!strcmp(documented_traits[i].id, kda_allocator_id())) d = &documented_traits[i];
    cr_assert_not_null(d, "%s is not in docs/library.md's table", kda_allocator_id());
    cr_assert(strstr(kda_allocator_list(), d->id), "%s is in the list", d->id);
    cr_assert_str_eq(kda_allocator_name(), d->name);
    const char *grow_why = "unset", *build_why = "unset";
    cr_assert_eq(kda_allocator_frees(), d->frees, "%s frees single blocks: %d", d->name, d->frees);
    cr_assert_eq(kda_allocator_grows(&grow_why), d->grows, "%s grows: %d", d->name, d->grows);
    cr_assert(d->grows ? grow_why == NULL : grow_why && *grow_why, "why it cannot grow: %s",
              grow_why ? grow_why : "(none)");
    cr_assert_eq(kda_allocator_builds(&build_why), d->builds, "%s builds: %d", d->name, d->builds);
    cr_assert(d->builds ? build_why == NULL : build_why && *build_why, "why it cannot build: %s",
              build_why ? build_why : "(none)");
    cr_assert_eq(kda_allocator_min_pool(), d->min_pool, "%s's minimum pool", d->name);
    cr_assert_eq(kda_allocator_traits().wraps, d->wraps, "%s wraps: %d", d->name, d->wraps);
    cr_assert_eq(KDA_ALLOC_HOST, d->host, "%s runs on host threads: %d", d->name, d->host);
}

#if KDA_ALLOC_HOST

static char err[256];

Test(alloc, alignment_of_every_size)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, pool_of(64u << 20), 4, err, sizeof err), 0, "%s", err);
    void *blocks[600];
    int n = 0;
    for (uint64_t size = 1; size <= 600; size++) {
        void *p = kda_malloc(&pool.heap, size);
        cr_assert_not_null(p, "malloc(%llu) failed", (unsigned long long)size);
        check_pointer(&pool, p, size);
        fill(p, size, size);
        blocks[n++] = p;
    }
    for (int i = 0; i < n; i++) cr_assert(intact(blocks[i], (uint64_t)i + 1, (uint64_t)i + 1), "block %d", i);
    for (int i = 0; i < n; i++) kda_free(&pool.heap, blocks[i]);
    kda_warp_done(&pool.heap);
    cr_assert_null(kda_malloc(&pool.heap, 0), "malloc(0) returns NULL");
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

Test(alloc, request_larger_than_pool_is_null)
{
    kda_pool pool;
    uint64_t bytes = pool_of(1u << 20);
    cr_assert_eq(kda_host_pool_create(&pool, bytes, 4, err, sizeof err), 0, "%s", err);
    cr_assert_null(kda_malloc(&pool.heap, bytes + 1));
    cr_assert_null(kda_malloc(&pool.heap, UINT64_MAX / 2));
    for (uint64_t i = 0; i < 2 * KDA_UNIT; i++) /* the padded size wraps past 2^64 to a small one */
        cr_assert_null(kda_malloc(&pool.heap, UINT64_MAX - i), "malloc(2^64 - 1 - %llu)", (unsigned long long)i);
    void *p = kda_malloc(&pool.heap, 4096);
    cr_assert_not_null(p, "a small request still works");
    kda_free(&pool.heap, p);
    kda_warp_done(&pool.heap);
    kda_host_pool_destroy(&pool);
}

/* The space query against the blocks handed out: holding N blocks takes
 * at least their padded bytes from the free bytes; freeing them gives
 * nothing less back (all of it where emptied pages or slabs are retired:
 * KDA_ALLOC_SPACE_RESTORED); once all are freed it reports a largest block,
 * and a block of that size can be had. */
Test(alloc, space_follows_the_blocks)
{
    enum { N = 100, SIZE = 1000, PADDED = 1008 };
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, pool_of(16u << 20), 4, err, sizeof err), 0, "%s", err);
    kda_space fresh;
    cr_assert_eq(kda_host_pool_space(&pool, &fresh), 0);
#if !KDA_ALLOC_SPACE_KNOWN
    cr_assert_eq(fresh.known, 0, "%s cannot tell its free space", kda_allocator_name());
#else
    cr_assert_eq(fresh.known, 1);
    cr_assert_leq(fresh.free_bytes, pool.heap.bytes);
    cr_assert_leq(fresh.largest_block, fresh.free_bytes);
    kda_space held, freed;
    void *blocks[N];
    for (int i = 0; i < N; i++) cr_assert_not_null(blocks[i] = kda_malloc(&pool.heap, SIZE));
    cr_assert_eq(kda_host_pool_space(&pool, &held), 0);
    cr_assert_geq(fresh.free_bytes - held.free_bytes, (uint64_t)N * PADDED, "%llu free, then %llu with %d blocks held",
                  (unsigned long long)fresh.free_bytes, (unsigned long long)held.free_bytes, N);
    for (int i = N - 1; i >= 0; i--) kda_free(&pool.heap, blocks[i]);
    cr_assert_eq(kda_host_pool_space(&pool, &freed), 0);
    cr_assert_geq(freed.free_bytes, held.free_bytes, "a free took free bytes away");
#if KDA_ALLOC_SPACE_RESTORED
    cr_assert_eq(freed.free_bytes, fresh.free_bytes, "every page or slab retired");
#endif
    cr_assert_gt(freed.largest_block, 0, "every block freed, yet no block can be had");
    void *big = kda_malloc(&pool.heap, freed.largest_block);
    cr_assert_not_null(big, "the largest block reported, %llu bytes, can be had", (unsigned long long)freed.largest_block);
    kda_free(&pool.heap, big);
#endif
    kda_warp_done(&pool.heap);
    kda_host_pool_destroy(&pool);
}

#else /* KDA_ALLOC_HOST == 0 */

/* An allocator that runs on the GPU only refuses a host pool, saying why. */
Test(alloc, host_pool_is_refused)
{
    kda_pool pool;
    char why[256] = "";
    cr_assert_eq(kda_host_pool_create(&pool, 1u << 20, 1, why, sizeof why), -1);
    cr_assert(strstr(why, kda_allocator_name()) && strstr(why, "GPU only"), "message: %s", why);
}

#endif
