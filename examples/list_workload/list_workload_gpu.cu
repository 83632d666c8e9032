/* list_workload_gpu.cu - the workload of workload.h on a GPU: every thread
 * of the grid builds, checks and frees its lists through one of kdalloc's
 * allocators, inside one kernel; timed with CUDA events.
 *
 * Usage: list_workload_gpu [THREADS [ROUNDS [POOL_MIB]]]   (default 16384 4 4096)
 * The default pool holds about all that the workload allocates over its
 * rounds (12.6 million blocks): CountedBump serves a chunk again only once
 * every block in it is freed, and the lists that stay live keep most
 * chunks from that.  On an H200 it runs the default in 160 ms; with
 * 1024 MiB it returns NULL for 13% of the requests while 98% of the pool
 * is free.  CMalloc, Halloc and ScatterAlloc need far less (docs/library.md).
 * Prints the allocations made, the failed ones (NULL: the pool ran out),
 * the blocks found overwritten and the kernel's time; exits 1 on any
 * failure, or when there is no usable GPU. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

#define MAX_LENGTH 256 /* elements of the longest list (2 KiB): many threads share the pool */
#define BLOCK 128

static void check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "list_workload_gpu: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
}

__global__ void workload(kda_heap heap, uint32_t threads, uint32_t rounds, unsigned long long *totals)
{
    uint64_t id = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    lw_counts c = {0, 0, 0};
    if (id < threads) lw_run(&heap, id, rounds, MAX_LENGTH, &c);
    /* FDGMalloc frees a warp's blocks all at once: only once every lane
     * of the warp is done with its own (the others do nothing). */
    __syncwarp();
    kda_warp_done(&heap);
    atomicAdd(&totals[0], (unsigned long long)c.allocations);
    atomicAdd(&totals[1], (unsigned long long)c.failures);
    atomicAdd(&totals[2], (unsigned long long)c.bad_blocks);
}

int main(int argc, char **argv)
{
    if (argc > 4) {
        fprintf(stderr, "usage: list_workload_gpu [THREADS [ROUNDS [POOL_MIB]]]\n");
        return 2;
    }
    uint32_t threads = argc > 1 ? (uint32_t)lw_parse("list_workload_gpu", argv[1], "THREADS", 1, 1u << 22) : 16384;
    uint32_t rounds = argc > 2 ? (uint32_t)lw_parse("list_workload_gpu", argv[2], "ROUNDS", 1, 100000) : 4;
    uint64_t pool_bytes = (uint64_t)(argc > 3 ? lw_parse("list_workload_gpu", argv[3], "POOL_MIB", 1, 1 << 20) : 4096) << 20;
    if (pool_bytes < kda_allocator_min_pool()) pool_bytes = kda_allocator_min_pool();
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fprintf(stderr, "list_workload_gpu: no usable GPU (run list_workload for the host version)\n");
        return 1;
    }

    kda_pool pool;
    char err[256];
    if (kda_pool_create(&pool, pool_bytes, err, sizeof err)) {
        fprintf(stderr, "list_workload_gpu: %s\n", err);
        return 1;
    }
    unsigned long long *totals, host[3];
    check(cudaMalloc(&totals, sizeof host), "cudaMalloc");
    cudaEvent_t t0, t1;
    check(cudaEventCreate(&t0), "cudaEventCreate");
    check(cudaEventCreate(&t1), "cudaEventCreate");
    unsigned blocks = (threads + BLOCK - 1) / BLOCK;
    float ms = 0.0f;
    for (int run = 0; run < 2; run++) { /* the first run warms up; the second is timed */
        check(cudaMemset(totals, 0, sizeof host), "cudaMemset");
        if (run && kda_pool_reset(&pool, err, sizeof err)) {
            fprintf(stderr, "list_workload_gpu: %s\n", err);
            return 1;
        }
        check(cudaEventRecord(t0), "cudaEventRecord");
        workload<<<blocks, BLOCK>>>(pool.heap, threads, rounds, totals);
        check(cudaGetLastError(), "launching the workload");
        check(cudaEventRecord(t1), "cudaEventRecord");
        check(cudaEventSynchronize(t1), "running the workload");
        check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
    }
    check(cudaMemcpy(host, totals, sizeof host, cudaMemcpyDeviceToHost), "reading the counts");
    printf("allocator %s (%s): %u GPU threads x %u rounds, pool %.0f MiB\n", kda_allocator_name(),
           kda_allocator_id(), threads, rounds, (double)pool.heap.bytes / (1 << 20));
    printf("allocations %llu, failures %llu, blocks overwritten %llu, time %.3f ms\n", host[0], host[1], host[2],
           (double)ms);
    kda_space space; /* every list is freed: what the allocator can serve again */
    if (kda_pool_space(&pool, &space, err, sizeof err) == 0 && space.known)
        printf("free after the run: %.1f MiB, largest block %.1f KiB\n", (double)space.free_bytes / (1 << 20),
               (double)space.largest_block / 1024);
    kda_pool_destroy(&pool);
    cudaFree(totals);
    return host[1] == 0 && host[2] == 0 ? 0 : 1;
}
