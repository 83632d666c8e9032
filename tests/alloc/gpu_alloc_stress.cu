/* gpu_alloc_stress.cu - thousands of warps allocating, writing, checking
 * and freeing blocks through the allocator compiled in (for
 * test_gpu_alloc_<allocator>).  Every block is filled with a pattern that
 * names its owner and checked before it is freed: two live blocks that
 * overlap break one of the patterns (or, in the fill, one chain's keys). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "gpu_alloc_stress.h"

#define LIVE 4 /* blocks a warp holds at once */

typedef struct stress_counters {
    unsigned long long allocations, nulls, corrupt, misaligned, outside, split;
} stress_counters;

static __device__ uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 16 B .. max_size, uniform in log2. */
static __device__ uint32_t stress_size(uint64_t r, uint32_t max_size)
{
    uint32_t bits = 4 + (uint32_t)(r % 14);
    uint32_t size = (1u << bits) + (uint32_t)((r >> 20) % (1u << bits));
    return size < max_size ? size : max_size;
}

static __device__ uint32_t pattern(uint64_t key, uint32_t i) { return (uint32_t)mix64(key + i); }

/* Where a block of `size` bytes at p may be written: inside the pool
 * (where the allocator promises it) and 16-byte aligned. */
static __device__ int usable(const kda_heap *heap, const void *p, uint32_t size)
{
#if KDA_ALLOC_IN_POOL
    if ((const unsigned char *)p < heap->base || (const unsigned char *)p + size > heap->base + heap->bytes) return 0;
#endif
    (void)heap, (void)size;
    return ((uintptr_t)p & 15u) == 0;
}

/* A block that is not usable, counted by what is wrong with it. */
static __device__ void count_unusable(const void *p, unsigned long long *misaligned, unsigned long long *outside)
{
    if ((uintptr_t)p & 15u) ++*misaligned;
    else ++*outside;
}

__global__ void stress_kernel(kda_heap heap, uint32_t warps, uint32_t iterations, uint32_t max_size,
                              gpu_stress_mode mode, stress_counters *out)
{
    int coalesced = mode == GPU_STRESS_WARP, own = mode == GPU_STRESS_LANES; /* own: each lane its own block */
    uint32_t lane = threadIdx.x & 31u;
    uint32_t first = coalesced || own ? 0 : lane, step = coalesced || own ? 1 : 32; /* a lane's words of a block */
    uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
    if (warp >= warps) return; /* the last block's spare warps, whole */
    uint32_t *block[LIVE] = {0};
    uint32_t words[LIVE] = {0};
    uint64_t key[LIVE] = {0};
    unsigned long long allocations = 0, nulls = 0, corrupt = 0, misaligned = 0, outside = 0, split = 0;
    for (uint32_t it = 0; it < iterations + LIVE; it++) {
        uint32_t s = it % LIVE;
        if (block[s]) { /* check and free the oldest */
            uint32_t *p = block[s];
            uint32_t bad = 0;
            for (uint32_t i = first; i < words[s]; i += step) bad |= p[i] != pattern(key[s], i);
            corrupt += bad;
            if (!own) __syncwarp(); /* the warp's block checked by all before lane 0 frees it */
            if (coalesced) kda_free_warp(&heap, p, 0xffffffffu);
            else if (own || lane == 0) kda_free(&heap, p);
            block[s] = NULL;
        }
        if (it >= iterations) continue;
        uint64_t r = mix64(warp * 0x9e3779b97f4a7c15ull + it * 0x632be59bd9b4e019ull + (coalesced ? lane : 0));
        uint32_t size = stress_size(r, max_size);
        uint32_t *p = NULL;
        if (own) {
            if (it & 1) size = stress_size(mix64(r + lane), max_size); /* else the warp's one size */
            r = mix64(r + 0x9e3779b97f4a7c15ull * (lane + 1)); /* each lane's own pattern */
            p = (uint32_t *)kda_malloc(&heap, size);
        } else if (coalesced) {
            p = (uint32_t *)kda_malloc_warp(&heap, size, 0xffffffffu);
        } else {
            if (lane == 0) p = (uint32_t *)kda_malloc(&heap, size);
            p = (uint32_t *)__shfl_sync(0xffffffffu, (unsigned long long)p, 0);
        }
        if (coalesced || own || lane == 0) {
            allocations++;
            if (!p) nulls++;
        }
        int ok = p && usable(&heap, p, size);
        if (p && !ok && (coalesced || own || lane == 0)) count_unusable(p, &misaligned, &outside);
        if (coalesced) { /* the whole warp decides, before any lane leaves: a block's parts are kept together */
            unsigned got = __ballot_sync(0xffffffffu, p != NULL);
            split += lane == 0 && got != 0 && got != 0xffffffffu; /* NULL is all lanes' or none's */
            ok = __all_sync(0xffffffffu, ok);
        }
        if (!ok) continue; /* NULL, or counted and left alone: neither written nor freed */
        block[s] = p;
        words[s] = size / 4;
        key[s] = r;
        for (uint32_t i = first; i < words[s]; i += step) p[i] = pattern(r, i);
        __threadfence(); /* before any other thread may get this memory */
        __nanosleep((uint32_t)(r >> 50) & 1023u);
    }
    kda_warp_done(&heap); /* FDGMalloc gives the warp's memory back here */
    atomicAdd(&out->allocations, allocations);
    atomicAdd(&out->nulls, nulls);
    atomicAdd(&out->corrupt, corrupt);
    atomicAdd(&out->misaligned, misaligned);
    atomicAdd(&out->outside, outside);
    atomicAdd(&out->split, split);
}

/* The key of the j-th block a warp chains in the fill (its size and pattern). */
static __device__ uint64_t fill_key(uint64_t warp, uint64_t j)
{
    return mix64(warp * 0x9e3779b97f4a7c15ull + j * 0x632be59bd9b4e019ull);
}

/* Lane 0 of each of `warps` warps allocates blocks of 16 B .. max_size until
 * its first NULL, chaining them through their first two words (the block
 * before) with the block's key in the next two, then walks the chain back,
 * checking each block against the key its place in the chain gives (not
 * the one written in it: a block handed to two owners carries one owner's
 * key, so the other finds a stranger's), and frees it.  A warp's blocks are
 * all live at once and each takes at least 16 B of the pool, so when every
 * block lies in the pool a warp meets a NULL within pool/16 + 1 requests
 * (`most`), whatever the other warps do.  A block outside the pool or
 * misaligned is counted and left alone; a broken chain is counted and not
 * followed further. */
__global__ void fill_kernel(kda_heap heap, uint32_t warps, uint64_t most, uint32_t max_size, stress_counters *out)
{
    uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
    if (warp >= warps) return; /* the last block's spare warps, whole */
    unsigned long long allocations = 0, nulls = 0, corrupt = 0, misaligned = 0, outside = 0;
    if ((threadIdx.x & 31u) == 0) {
        uint32_t *chain = NULL;
        uint64_t held = 0;
        for (uint64_t i = 0; i < most; i++) {
            uint64_t key = fill_key(warp, held);
            uint32_t size = stress_size(key, max_size);
            uint32_t *p = (uint32_t *)kda_malloc(&heap, size);
            allocations++;
            if (!p) {
                nulls++;
                break;
            }
            if (!usable(&heap, p, size)) {
                count_unusable(p, &misaligned, &outside);
                continue;
            }
            p[0] = (uint32_t)(uintptr_t)chain;
            p[1] = (uint32_t)((uint64_t)(uintptr_t)chain >> 32);
            p[2] = (uint32_t)key;
            p[3] = (uint32_t)(key >> 32);
            for (uint32_t w = 4; w < size / 4; w++) p[w] = pattern(key, w);
            chain = p;
            held++;
        }
        __threadfence(); /* before any other thread may get this memory */
        for (uint64_t j = held; j-- > 0;) {
            uint32_t *p = chain;
            uint64_t key = fill_key(warp, j);
            if ((p[2] | (uint64_t)p[3] << 32) != key) { /* another owner's block, or overwritten */
                corrupt++;
                break;
            }
            uint32_t bad = 0, size = stress_size(key, max_size);
            for (uint32_t w = 4; w < size / 4; w++) bad |= p[w] != pattern(key, w);
            corrupt += bad;
            chain = (uint32_t *)(uintptr_t)(p[0] | (uint64_t)p[1] << 32);
            kda_free(&heap, p);
            if (j > 0 && (!chain || !usable(&heap, chain, 16))) {
                corrupt++;
                break;
            }
        }
    }
    __syncwarp();
    kda_warp_done(&heap);
    atomicAdd(&out->allocations, allocations);
    atomicAdd(&out->nulls, nulls);
    atomicAdd(&out->corrupt, corrupt);
    atomicAdd(&out->misaligned, misaligned);
    atomicAdd(&out->outside, outside);
}

/* The counters a kernel adds into, zeroed in device memory. */
static cudaError_t counters_new(stress_counters **d)
{
    cudaError_t e = cudaMalloc(d, sizeof **d);
    return e == cudaSuccess ? cudaMemset(*d, 0, sizeof **d) : e;
}

/* Waits for the kernel just launched (e: how its setup went), copies its
 * counters into *res and frees them. */
static int counters_take(stress_counters *d, cudaError_t e, gpu_stress_result *res, const char *kernel, char *err,
                         size_t errlen)
{
    stress_counters h;
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "%s kernel: %s", kernel, cudaGetErrorString(e));
        return -1;
    }
    res->allocations = h.allocations;
    res->nulls = h.nulls;
    res->corrupt = h.corrupt;
    res->misaligned = h.misaligned;
    res->outside = h.outside;
    res->split = h.split;
    return 0;
}

extern "C" int gpu_alloc_stress(kda_pool *pool, uint32_t warps, uint32_t iterations, uint32_t max_size,
                                gpu_stress_mode mode, gpu_stress_result *res, char *err, size_t errlen)
{
    stress_counters *d = NULL;
    cudaError_t e = counters_new(&d);
    if (e == cudaSuccess) stress_kernel<<<(warps + 7) / 8, 256>>>(pool->heap, warps, iterations, max_size, mode, d);
    return counters_take(d, e, res, "stress", err, errlen);
}

extern "C" int gpu_alloc_fill(kda_pool *pool, uint32_t warps, uint32_t max_size, gpu_stress_result *res, char *err,
                              size_t errlen)
{
    stress_counters *d = NULL;
    cudaError_t e = counters_new(&d);
    if (e == cudaSuccess)
        fill_kernel<<<(warps + 7) / 8, 256>>>(pool->heap, warps, pool->heap.bytes / 16 + 1, max_size, d);
    return counters_take(d, e, res, "fill", err, errlen);
}

extern "C" int gpu_pool_copy(const kda_pool *pool, void *host, char *err, size_t errlen)
{
    cudaError_t e = cudaMemcpy(host, pool->heap.base, pool->heap.bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "copying the pool: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}
