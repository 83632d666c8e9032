/* cuda_die.cuh - how the benchmark programs report a failed CUDA call:
 * CUDA(call, what) ends the program with one line, "PROGRAM: what: CUDA's
 * message", and exit status 1.  The including file defines BENCH_PROGRAM
 * (its executable's name) first. */
#ifndef KDA_CUDA_DIE_CUH
#define KDA_CUDA_DIE_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static inline void bench_die(const char *what, cudaError_t e)
{
    fprintf(stderr, "%s: %s: %s\n", BENCH_PROGRAM, what, cudaGetErrorString(e));
    exit(1);
}

#define CUDA(call, what)                              \
    do {                                              \
        cudaError_t e_ = (call);                      \
        if (e_ != cudaSuccess) bench_die((what), e_); \
    } while (0)

#endif
