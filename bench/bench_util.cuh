/* bench_util.cuh - what allocbench.cu and survey.cu share: a failed CUDA
 * call ends kdalloc-allocbench with one line naming it, and a 32-bit hash
 * for seeded decisions in kernels. */
#ifndef KDA_BENCH_UTIL_CUH
#define KDA_BENCH_UTIL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline void bench_die(const char *what, cudaError_t e)
{
    fprintf(stderr, "kdalloc-allocbench: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
}

#define CUDA(call, what)                              \
    do {                                              \
        cudaError_t e_ = (call);                      \
        if (e_ != cudaSuccess) bench_die((what), e_); \
    } while (0)

static __device__ __forceinline__ uint32_t bench_hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

#endif
