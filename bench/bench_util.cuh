/* bench_util.cuh - what allocbench.cu and survey.cu share: a failed CUDA
 * call ends kdalloc-allocbench with one line naming it, a 32-bit hash
 * for seeded decisions in kernels, and the -DKDA_DIAG walk statistics. */
#ifndef KDA_BENCH_UTIL_CUH
#define KDA_BENCH_UTIL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kdalloc/kdalloc.h"

#define BENCH_PROGRAM "kdalloc-allocbench"
#include "cuda_die.cuh"

static __device__ __forceinline__ uint32_t bench_hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* Built with -DKDA_DIAG (the allocators with walk statistics, the circular
 * ones and ScatterAlloc): their statistics of the runs since stats_reset,
 * on stderr. */
#if defined(KDA_DIAG) && defined(KDA_ALLOC_HAS_WALK_STATS)
static inline void stats_reset(void) { CUDA(kda_walk_stats_reset(), "resetting the walk statistics"); }
static inline void stats_print(const char *test, uint32_t payload)
{
    char title[64];
    if (payload) snprintf(title, sizeof title, "%s, %s, %u B", test, kda_allocator_name(), payload);
    else snprintf(title, sizeof title, "%s, %s", test, kda_allocator_name()); /* no one size */
    CUDA(kda_walk_stats_print(stderr, title), "reading the walk statistics");
}
#else
static inline void stats_reset(void) {}
static inline void stats_print(const char *test, uint32_t payload) { (void)test, (void)payload; }
#endif

/* Copies the device pool's allocator state (pool->plan.state_bytes) into
 * `state` and makes *view a heap that reads it: for the host-side measure
 * of the blocks an allocator's state describes (kda_alloc_block_bytes). */
static inline void bench_state_view(const kda_pool *pool, unsigned char *state, kda_heap *view)
{
    CUDA(cudaMemcpy(state, pool->state_block, pool->plan.state_bytes, cudaMemcpyDeviceToHost), "copying the state");
    *view = pool->heap;
    kda_alloc_bind(view, state);
}

/* The pool's free bytes and largest block (kda_pool_space), or exit. */
static inline kda_space bench_space(const kda_pool *pool)
{
    kda_space space;
    char err[256];
    if (kda_pool_space(pool, &space, err, sizeof err)) {
        fprintf(stderr, "kdalloc-allocbench: %s\n", err);
        exit(1);
    }
    return space;
}

#endif
