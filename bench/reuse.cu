/* reuse.cu - the reuse test of kdalloc-allocbench (`--test reuse`), on the
 * GPU: is memory freed around blocks that stay live served again?
 *
 *   fill     lane 0 of each warp allocates blocks of S bytes until its first
 *            NULL (or until the list holds the pool's worth); every block
 *            gets a pattern
 *   thin     every block of the list but one in every K is freed (the list
 *            is in the order the blocks were handed out, every SM's mixed)
 *   refill   the same, with blocks of S2 bytes, until the first NULL or
 *            until as many bytes as were freed are served; patterns
 *   check    every live block, kept or new: a block handed out twice (over
 *            a kept one) breaks a pattern
 * then everything is freed.  For S in 16 B .. 4 KiB, K in 2, 4, 16, 64,
 * S2 = S and S2 = 64 B (1 KiB where S is 64 B).  One row each (CSV):
 *   reuse,allocator,size,k,refill_size,filled,served,mismatches,pool_bytes
 * filled: the share of the pool the fill took; served: of the freed bytes,
 * the share served again. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "kdalloc/kdalloc.h"
#include "bench_util.cuh"
#include "survey.h"

#define THREADS 256

/* Lane 0 of each warp: blocks of `size` until NULL, or until `capacity`
 * are in the list. */
__global__ void ru_fill(kda_heap h, uint32_t size, void **list, unsigned long long capacity,
                        unsigned long long *count)
{
    if (threadIdx.x & 31u) return;
    for (;;) {
        void *p = kda_malloc(&h, size);
        if (!p) return;
        unsigned long long at = atomicAdd(count, 1ull);
        if (at >= capacity) { /* the list ends the fill (AWMalloc never says NULL) */
            kda_free(&h, p);
            return;
        }
        list[at] = p;
    }
}

/* Writes (check 0) or checks the pattern of `seed` into blocks r of the
 * list with r % k == 0 when `kept_only`, else into all of them; a warp a
 * block. */
__global__ void ru_pattern(unsigned long long n, void *const *list, uint32_t size, uint32_t seed, uint32_t k,
                           int kept_only, int check, unsigned long long *bad)
{
    uint32_t lane = threadIdx.x & 31u;
    uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
    unsigned long long wrong = 0;
    for (uint64_t r = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
        if (kept_only && r % k) continue;
        uint32_t *p = (uint32_t *)list[r];
        for (uint32_t i = lane; i < size / 4; i += 32) {
            uint32_t want = bench_hash32(seed ^ ((uint32_t)r * 2654435761u) ^ i);
            if (check) wrong += p[i] != want;
            else p[i] = want;
        }
    }
    if (wrong) atomicAdd(bad, wrong);
}

/* Frees blocks of the list: every one (k 0), the kept ones (r % k == 0:
 * `kept`), or all others (the thinning). */
__global__ void ru_free(kda_heap h, unsigned long long n, void *const *list, uint32_t k, int kept)
{
    for (uint64_t r = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; r < n; r += (uint64_t)gridDim.x * blockDim.x)
        if (k == 0 || (kept ? r % k == 0 : r % k != 0)) kda_free(&h, list[r]);
}

__global__ void ru_warps_done(kda_heap h) { kda_warp_done(&h); }

typedef struct reuse_lists {
    void **first, **again;
    unsigned long long *counters; /* [0] count, [1] mismatches */
    unsigned long long capacity;
    unsigned blocks;
} reuse_lists;

/* The blocks a fill of at most `most` put in its list: its count, less
 * the warps that counted past `most` and freed their block (an allocator
 * that never says NULL, AWMalloc, ends there). */
static unsigned long long ru_count(reuse_lists *l, unsigned long long most)
{
    unsigned long long n;
    CUDA(cudaMemcpy(&n, l->counters, sizeof n, cudaMemcpyDeviceToHost), "reading the count");
    return n < most ? n : most;
}

static void reuse_one(kda_pool *pool, reuse_lists *l, uint32_t size, uint32_t k, uint32_t refill)
{
    char err[256];
    if (kda_pool_reset(pool, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", BENCH_PROGRAM, err);
        exit(1);
    }
    const kda_heap h = pool->heap;
    CUDA(cudaMemset(l->counters, 0, 2 * sizeof *l->counters), "cudaMemset");
    ru_fill<<<l->blocks, THREADS>>>(h, size, l->first, pool->heap.bytes / size, l->counters);
    CUDA(cudaGetLastError(), "launching the fill");
    CUDA(cudaDeviceSynchronize(), "filling the pool");
    unsigned long long n = ru_count(l, pool->heap.bytes / size);
    ru_pattern<<<l->blocks, THREADS>>>(n, l->first, size, 1, k, 0, 0, l->counters + 1);
    ru_free<<<l->blocks, THREADS>>>(h, n, l->first, k, 0);
    CUDA(cudaGetLastError(), "launching the thinning");
    CUDA(cudaDeviceSynchronize(), "thinning the blocks");
    unsigned long long freed = (n - (n + k - 1) / k) * size, most = freed / refill;
    CUDA(cudaMemset(l->counters, 0, sizeof *l->counters), "cudaMemset");
    if (most) ru_fill<<<l->blocks, THREADS>>>(h, refill, l->again, most, l->counters);
    CUDA(cudaGetLastError(), "launching the refill");
    CUDA(cudaDeviceSynchronize(), "refilling the pool");
    unsigned long long m = most ? ru_count(l, most) : 0;
    ru_pattern<<<l->blocks, THREADS>>>(m, l->again, refill, 2, 1, 0, 0, l->counters + 1);
    ru_pattern<<<l->blocks, THREADS>>>(n, l->first, size, 1, k, 1, 1, l->counters + 1);
    ru_pattern<<<l->blocks, THREADS>>>(m, l->again, refill, 2, 1, 0, 1, l->counters + 1);
    unsigned long long c[2];
    CUDA(cudaGetLastError(), "launching the checks");
    CUDA(cudaMemcpy(c, l->counters, sizeof c, cudaMemcpyDeviceToHost), "reading the mismatches");
    ru_free<<<l->blocks, THREADS>>>(h, n, l->first, k, 1);
    if (m) ru_free<<<l->blocks, THREADS>>>(h, m, l->again, 0, 0);
    ru_warps_done<<<l->blocks, THREADS>>>(h);
    CUDA(cudaGetLastError(), "launching the frees");
    CUDA(cudaDeviceSynchronize(), "freeing the blocks");
    double filled = (double)n * size / (double)pool->heap.bytes;
    double served = freed ? (double)(m * refill < freed ? m * refill : freed) / (double)freed : 0.0;
    printf("reuse,%s,%u,%u,%u,%.4f,%.4f,%llu,%llu\n", kda_allocator_name(), size, k, refill, filled, served, c[1],
           (unsigned long long)pool->heap.bytes);
    fflush(stdout);
}

int reuse_run(kda_pool *pool, uint32_t size)
{
    static const uint32_t all_sizes[] = {16, 64, 256, 1024, 4096}, ks[] = {2, 4, 16, 64};
    const uint32_t *sizes = size ? &size : all_sizes;
    size_t n_sizes = size ? 1 : sizeof all_sizes / sizeof all_sizes[0];
    reuse_lists l;
    int device = 0, sms = 0;
    CUDA(cudaGetDevice(&device), "cudaGetDevice");
    CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    l.blocks = (unsigned)sms * 8;
    l.capacity = pool->heap.bytes / 16 + 1;
    CUDA(cudaMalloc(&l.first, l.capacity * sizeof *l.first), "allocating the block lists");
    CUDA(cudaMalloc(&l.again, l.capacity * sizeof *l.again), "allocating the block lists");
    CUDA(cudaMalloc(&l.counters, 2 * sizeof *l.counters), "cudaMalloc");
    for (size_t s = 0; s < n_sizes; s++) {
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            reuse_one(pool, &l, sizes[s], ks[j], sizes[s]);
            reuse_one(pool, &l, sizes[s], ks[j], sizes[s] == 64 ? 1024 : 64);
        }
    }
    cudaFree(l.first);
    cudaFree(l.again);
    cudaFree(l.counters);
    return 0;
}
