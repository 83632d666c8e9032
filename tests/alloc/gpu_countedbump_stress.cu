/* gpu_countedbump_stress.cu - CountedBump under thousands of warps on a
 * pool whose slots several SMs share (for test_gpu_countedbump).  Every
 * block's 16-byte units are claimed in a bitmap when it is handed out and
 * given back before it is freed (a unit claimed twice is a block handed
 * out twice, found at once), and every word of it is filled with a pattern
 * that names its owner and checked before the free.  No shared memory, so
 * compute-sanitizer's racecheck has nothing of its own to report; memcheck
 * and synccheck see the allocator's accesses and its warp calls. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "gpu_countedbump_stress.h"

#define CB_STRESS_LIVE 2 /* blocks held at once: by the warp, or by each lane */

typedef struct cb_counters {
    unsigned long long allocations, nulls, corrupt, twice, misaligned, outside;
} cb_counters;

static __device__ uint64_t cb_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* min_size .. max_size, uniform in log2. */
static __device__ uint32_t cb_size(uint64_t r, uint32_t min_size, uint32_t max_size)
{
    uint32_t lo = 31 - __clz(min_size), hi = 31 - __clz(max_size);
    uint32_t bits = lo + (uint32_t)(r % (hi - lo + 1));
    uint32_t size = (1u << bits) + (uint32_t)((r >> 20) % (1u << bits));
    return size < min_size ? min_size : size > max_size ? max_size : size;
}

static __device__ uint32_t cb_pattern(uint64_t key, uint32_t i) { return (uint32_t)cb_mix(key + i); }

/* Claims (or gives back) units [first, first + n) in the bitmap `owner`,
 * words first / 32 + start, + step, ...: how many units were not as
 * expected (held when claimed; free when given back). */
static __device__ unsigned long long cb_units(uint32_t *owner, uint64_t first, uint64_t n, int claim, uint32_t start,
                                              uint32_t step)
{
    unsigned long long wrong = 0;
    uint64_t end = first + n;
    for (uint64_t w = first / 32 + start; w * 32 < end; w += step) {
        uint64_t lo = w * 32 > first ? w * 32 : first, hi = (w + 1) * 32 < end ? (w + 1) * 32 : end;
        uint32_t span = (uint32_t)(hi - lo), shift = (uint32_t)(lo - w * 32);
        uint32_t mask = (span == 32 ? ~0u : (1u << span) - 1) << shift;
        if (claim) wrong += __popc(atomicOr(owner + w, mask) & mask);
        else wrong += __popc(~atomicAnd(owner + w, ~mask) & mask);
    }
    return wrong;
}

__global__ void cb_stress_kernel(kda_heap heap, uint32_t *owner, uint32_t iterations, uint32_t min_size,
                                 uint32_t max_size, int ask, cb_counters *out)
{
    uint32_t lane = threadIdx.x & 31u;
    uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
    int each = ask == CB_ASK_EVERY_LANE || (ask == CB_ASK_MIXED && (warp & 1));
    /* lane 0's blocks are the warp's (every lane fills and checks a part) */
    uint32_t first = each ? 0 : lane, step = each ? 1 : 32;
    uint32_t *block[CB_STRESS_LIVE] = {0};
    uint32_t bytes[CB_STRESS_LIVE] = {0};
    uint64_t key[CB_STRESS_LIVE] = {0};
    cb_counters c = {0, 0, 0, 0, 0, 0};
    for (uint32_t it = 0; it < iterations + CB_STRESS_LIVE; it++) {
        uint32_t s = it % CB_STRESS_LIVE;
        if (block[s]) { /* check, give back and free the oldest */
            uint32_t *p = block[s];
            for (uint32_t i = first; i < bytes[s] / 4; i += step) c.corrupt += p[i] != cb_pattern(key[s], i);
            uint64_t unit = (uint64_t)((unsigned char *)p - heap.base) / KDA_UNIT;
            c.twice += cb_units(owner, unit, (bytes[s] + KDA_UNIT - 1) / KDA_UNIT, 0, first, step);
            __threadfence(); /* the bitmap and the checks before the block is free */
            if (each) {
                kda_free(&heap, p);
            } else {
                __syncwarp();
                if (lane == 0) kda_free(&heap, p);
            }
            block[s] = NULL;
        }
        if (it >= iterations) continue;
        uint64_t r = cb_mix(warp * 0x9e3779b97f4a7c15ull + it * 0x632be59bd9b4e019ull + (each ? lane + 1 : 0));
        uint32_t size = cb_size(r, min_size, max_size);
        uint32_t *p = NULL;
        if (each) {
            __syncwarp(); /* the lanes ask together: one add for the warp, or a CAS each on a shared slot */
            p = (uint32_t *)kda_malloc(&heap, size);
        } else {
            if (lane == 0) p = (uint32_t *)kda_malloc(&heap, size);
            p = (uint32_t *)__shfl_sync(0xffffffffu, (unsigned long long)p, 0);
        }
        if (each || lane == 0) {
            c.allocations++;
            c.nulls += p == NULL;
        }
        if (!p) continue;
        if (each || lane == 0) {
            c.misaligned += ((uintptr_t)p & 15u) != 0;
            c.outside += (unsigned char *)p < heap.base || (unsigned char *)p + size > heap.base + heap.bytes;
        }
        uint64_t unit = (uint64_t)((unsigned char *)p - heap.base) / KDA_UNIT;
        c.twice += cb_units(owner, unit, (size + KDA_UNIT - 1) / KDA_UNIT, 1, first, step);
        block[s] = p;
        bytes[s] = size;
        key[s] = r;
        for (uint32_t i = first; i < size / 4; i += step) p[i] = cb_pattern(r, i);
        __threadfence(); /* before any other thread may get this memory */
        __nanosleep((uint32_t)(r >> 50) & 1023u);
    }
    atomicAdd(&out->allocations, c.allocations);
    atomicAdd(&out->nulls, c.nulls);
    atomicAdd(&out->corrupt, c.corrupt);
    atomicAdd(&out->twice, c.twice);
    atomicAdd(&out->misaligned, c.misaligned);
    atomicAdd(&out->outside, c.outside);
}

/* Units still claimed once every block was freed. */
__global__ void cb_count_held(const uint32_t *owner, uint64_t words, unsigned long long *held)
{
    unsigned long long n = 0;
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < words; w += (uint64_t)gridDim.x * blockDim.x)
        n += __popc(owner[w]);
    if (n) atomicAdd(held, n);
}

static int cb_failed(cudaError_t e, const char *what, char *err, size_t errlen)
{
    if (e == cudaSuccess) return 0;
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    return 1;
}

extern "C" int cb_gpu_usable(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(why, whylen, "%s", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
        cudaGetLastError();
        return -1;
    }
    int device = 0, major = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (major < 7) { /* the allocator's waits need independent thread scheduling */
        snprintf(why, whylen, "compute capability %d.x: CountedBump needs 7.0 or later", major);
        return -1;
    }
    return 0;
}

extern "C" int cb_gpu_set_slots(kda_pool *pool, uint32_t slots, char *err, size_t errlen)
{
    if (pool->plan.limit_bytes || slots == 0 || slots > pool->heap.state.n_slots) {
        snprintf(err, errlen, "%u slots: a fixed pool of at most %u slots", slots, pool->heap.state.n_slots);
        return -1;
    }
    /* fewer slots lay the state out again within the bytes planned for
     * more; the reset clears all of them and starts the slots again */
    pool->heap.state.n_slots = slots;
    kda_alloc_bind(&pool->heap, (unsigned char *)pool->state_block);
    return kda_pool_reset(pool, err, errlen);
}

extern "C" int cb_gpu_stress(kda_pool *pool, uint32_t warps, uint32_t iterations, uint32_t min_size,
                             uint32_t max_size, int ask, cb_stress_result *res, char *err, size_t errlen)
{
    cb_counters *d = NULL, h;
    uint32_t *owner = NULL;
    unsigned long long *held = NULL, held_h = 0;
    uint64_t words = (pool->heap.bytes / KDA_UNIT + 31) / 32;
    if (min_size < 16) min_size = 16;
    if (max_size < min_size) max_size = min_size;
    cudaError_t e = cudaMalloc(&d, sizeof *d);
    if (e == cudaSuccess) e = cudaMalloc(&owner, words * 4);
    if (e == cudaSuccess) e = cudaMalloc(&held, sizeof *held);
    if (e == cudaSuccess) e = cudaMemset(d, 0, sizeof *d);
    if (e == cudaSuccess) e = cudaMemset(owner, 0, words * 4);
    if (e == cudaSuccess) e = cudaMemset(held, 0, sizeof *held);
    if (e == cudaSuccess) {
        cb_stress_kernel<<<(warps + 7) / 8, 256>>>(pool->heap, owner, iterations, min_size, max_size, ask, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) {
        cb_count_held<<<1024, 256>>>(owner, words, held);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(&held_h, held, sizeof held_h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    cudaFree(owner);
    cudaFree(held);
    if (cb_failed(e, "stress kernel", err, errlen)) return -1;
    res->allocations = h.allocations;
    res->nulls = h.nulls;
    res->corrupt = h.corrupt;
    res->twice = h.twice + held_h; /* units never given back count too */
    res->misaligned = h.misaligned;
    res->outside = h.outside;
    return 0;
}

extern "C" int cb_gpu_state_copy(const kda_pool *pool, void *host, char *err, size_t errlen)
{
    return cb_failed(cudaMemcpy(host, pool->state_block, pool->plan.state_bytes, cudaMemcpyDeviceToHost), "copying the state", err,
                     errlen)
               ? -1
               : 0;
}
