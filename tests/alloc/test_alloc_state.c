/* test_alloc_state.c - whether the allocator's state is whole again
 * (expect_all_free, which every test_alloc_*.c calls once its blocks are
 * freed), expect_own_grown_state (the grow tests'), and the allocator's
 * own tests.
 *
 * Allocators with a chunk list (KDA_ALLOC_HAS_CHUNK_LIST, the CMalloc
 * family): a walk of the whole list (kda_scan_circular) that must
 * be well formed, every chunk free, the chunk sizes adding up to the pool.
 * Allocators with tests of their own (tests/alloc/alloc_<name>.c, named by
 * KDA_ALLOC_TESTS and included here): their check, read from their own
 * state, and their tests, each with its own oracle (see that file).  The
 * others (the bump allocators) keep no state to check. */
#include "test_alloc.h"

#if KDA_ALLOC_HOST

#if defined(KDA_ALLOC_TESTS)
static char err[256]; /* for the allocator's own tests */

/* alloc_<name>.c defines a static expect_all_free for its own tests; it is
 * renamed on its way in, so that the one declared in test_alloc.h, which
 * the other files call, can hand over to it. */
#define expect_all_free own_expect_all_free
#include KDA_ALLOC_TESTS
#undef expect_all_free

void expect_all_free(const kda_pool *pool) { own_expect_all_free(pool); }

#elif defined(KDA_ALLOC_HAS_CHUNK_LIST)
static void sum_chunk(void *ctx, uint32_t unit, uint32_t size_units, int used)
{
    (void)unit, (void)used;
    *(uint64_t *)ctx += size_units;
}

/* The whole list is well formed and every chunk is free again. */
void expect_all_free(const kda_pool *pool)
{
    kda_scan scan;
    uint64_t units = 0;
    kda_scan_circular(pool->heap.base, &pool->heap, &scan, sum_chunk, &units);
    cr_assert(scan.well_formed, "chunk list broken: %s", scan.problem);
    cr_assert_eq(scan.free_chunks, scan.chunks, "%llu of %llu chunks still used",
                 (unsigned long long)(scan.chunks - scan.free_chunks), (unsigned long long)scan.chunks);
    cr_assert_eq(units, (uint64_t)pool->heap.state.units - 1, "chunks cover %llu of %u units",
                 (unsigned long long)units, pool->heap.state.units - 1);
}

#else
/* The others (the bump allocators) keep no state to check. */
void expect_all_free(const kda_pool *pool) { (void)pool; }
#endif

#ifdef KDA_TEST_GROWN_STATE
void expect_own_grown_state(const kda_pool *pool) { KDA_TEST_GROWN_STATE(pool); }
#else
void expect_own_grown_state(const kda_pool *pool) { (void)pool; }
#endif

#endif /* KDA_ALLOC_HOST */
