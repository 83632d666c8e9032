/* test_alloc.h - what the source files of test_alloc_<name> share: the
 * allocator compiled in (kdalloc.h: its capabilities, KDA_ALLOC_*), the
 * owner patterns and random sizes (alloc_test_util.h), pool sizes, pointer
 * checks, the end of a thread's live blocks, and expect_all_free, the check
 * that the allocator's state is whole again (test_alloc_state.c). */
#ifndef KDA_TEST_ALLOC_H
#define KDA_TEST_ALLOC_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdalloc/kdalloc.h"

#if KDA_ALLOC_HOST
#include "alloc_test_util.h"

/* A pool of `bytes`, or the allocator's minimum (Halloc's) if larger. */
static inline uint64_t pool_of(uint64_t bytes)
{
    return bytes > kda_allocator_min_pool() ? bytes : kda_allocator_min_pool();
}

static inline void check_pointer(const kda_pool *pool, const void *p, uint64_t size)
{
    const unsigned char *c = p;
    cr_assert_eq((uintptr_t)c % KDA_UNIT, 0, "pointer %p is not 16-byte aligned", p);
#if KDA_ALLOC_IN_POOL
    cr_assert(c >= pool->heap.base && c + size <= pool->heap.base + pool->heap.bytes, "pointer outside the pool");
#else
    (void)pool, (void)size;
#endif
}

/* The allocator's state says every block is free again: for the circular
 * allocators a walk of the whole chunk list, for those with tests of their
 * own (tests/alloc/alloc_<name>.c) their check, for the bump allocators nothing
 * (they keep no state to check).  Defined in test_alloc_state.c. */
void expect_all_free(const kda_pool *pool);

/* A growable pool's state, once created, grown or reset, as the
 * allocator's own tests check it (alloc_<name>.c, where it defines
 * KDA_TEST_GROWN_STATE as its check); nothing where they do not.  Defined
 * in test_alloc_state.c. */
void expect_own_grown_state(const kda_pool *pool);

/* Threads of the multi-threaded tests, and blocks each holds at most. */
#define THREADS 8
#define LIVE 16

/* A thread's end: every block it still holds must be intact (else the
 * first failure is written to `failure`); all are freed, then the warp's
 * clean-up runs. */
static inline void free_live_blocks(const kda_heap *h, void **block, const uint64_t *size, const uint64_t *key,
                                    int id, char *failure, size_t failure_len)
{
    for (int s = 0; s < LIVE; s++)
        if (block[s]) {
            if (!failure[0] && !intact(block[s], size[s], key[s]))
                snprintf(failure, failure_len, "thread %d: block overwritten by the end", id);
            kda_free(h, block[s]);
        }
    kda_warp_done(h);
}

#endif /* KDA_ALLOC_HOST */
#endif
