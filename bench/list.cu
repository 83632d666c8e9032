/* list.cu - the list workload of kdalloc-allocbench (`--test list`): the
 * workload of examples/list_workload (workload.h, the same text), every
 * GPU thread building, keeping and freeing growing arrays of 32 B to 2 KiB,
 * every block checked before it is freed.  A pool of 4 GiB unless
 * --pool-bytes names one; --requesters: the threads (default 16,384 and
 * 100,000, one row each); 4 rounds a thread.
 *
 * One warm-up run, then up to 3 timed runs (one where the warm-up took more
 * than 2 s), the pool reset before each; the median.  One row each (CSV):
 *   list,allocator,threads,rounds,allocations,failures,bad_blocks,ms,pool_bytes
 * failures: requests answered NULL; bad_blocks: blocks found overwritten
 * (a block handed out twice). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.cuh"
#include "survey.h"
#include "workload.h"

#define LIST_BLOCK 128
#define LIST_ROUNDS 4
#define LIST_MAX_LENGTH 256 /* elements of the longest list: 2 KiB, as the example's GPU program */

__global__ void list_kernel(kda_heap heap, uint32_t threads, unsigned long long *totals)
{
    uint64_t id = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    lw_counts c = {0, 0, 0};
    if (id < threads) lw_run(&heap, id, LIST_ROUNDS, LIST_MAX_LENGTH, &c);
    __syncwarp(); /* FDGMalloc frees a warp's blocks at once, after every lane is done */
    kda_warp_done(&heap);
    atomicAdd(&totals[0], (unsigned long long)c.allocations);
    atomicAdd(&totals[1], (unsigned long long)c.failures);
    atomicAdd(&totals[2], (unsigned long long)c.bad_blocks);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void list_point(kda_pool *pool, uint32_t threads)
{
    char err[256];
    unsigned long long *totals, host[3] = {0, 0, 0};
    CUDA(cudaMalloc(&totals, sizeof host), "allocating the counts");
    cudaEvent_t t0, t1;
    CUDA(cudaEventCreate(&t0), "cudaEventCreate");
    CUDA(cudaEventCreate(&t1), "cudaEventCreate");
    float ms[3];
    int timed = 0;
    for (int run = 0; run < 4 && timed < 3; run++) {
        if (kda_pool_reset(pool, err, sizeof err)) {
            fprintf(stderr, "kdalloc-allocbench: %s\n", err);
            exit(1);
        }
        CUDA(cudaMemset(totals, 0, sizeof host), "cudaMemset");
        stats_reset(); /* -DKDA_DIAG: the steps of the last run */
        CUDA(cudaEventRecord(t0), "cudaEventRecord");
        list_kernel<<<(threads + LIST_BLOCK - 1) / LIST_BLOCK, LIST_BLOCK>>>(pool->heap, threads, totals);
        CUDA(cudaGetLastError(), "launching the list workload");
        CUDA(cudaEventRecord(t1), "cudaEventRecord");
        CUDA(cudaEventSynchronize(t1), "running the list workload");
        float t;
        CUDA(cudaEventElapsedTime(&t, t0, t1), "cudaEventElapsedTime");
        CUDA(cudaMemcpy(host, totals, sizeof host, cudaMemcpyDeviceToHost), "reading the counts");
        if (run == 0 && t > 2000.0f) run = 2; /* a slow allocator: one timed run */
        if (run > 0) ms[timed++] = t;
    }
    qsort(ms, (size_t)timed, sizeof *ms, cmp_float);
    printf("list,%s,%u,%u,%llu,%llu,%llu,%.3f,%llu\n", kda_allocator_name(), threads, LIST_ROUNDS, host[0], host[1],
           host[2], (double)ms[timed / 2], (unsigned long long)pool->heap.bytes);
    fflush(stdout);
    char title[32];
    snprintf(title, sizeof title, "list, %u threads", threads);
    stats_print(title, 0);
    CUDA(cudaEventDestroy(t0), "cudaEventDestroy");
    CUDA(cudaEventDestroy(t1), "cudaEventDestroy");
    CUDA(cudaFree(totals), "cudaFree");
}

int list_run(kda_pool *pool, uint32_t threads)
{
    if (threads) {
        list_point(pool, threads);
        return 0;
    }
    list_point(pool, 16384);
    list_point(pool, 100000);
    return 0;
}
