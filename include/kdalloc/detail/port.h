/* port.h - the few primitives the allocators use, for CUDA device code and
 * for host threads, so that the very same algorithm text runs on both.
 *
 *   kda_cas32/kda_cas64  compare-and-swap, returning the old value
 *   kda_add64            fetch-and-add, returning the old value
 *   kda_load32/64        a load that sees other threads' stores (device:
 *                        volatile, so it bypasses the incoherent L1)
 *   kda_load32_l1        a load this SM's L1 may serve: fast, and possibly
 *                        stale for as long as the line stays there, so
 *                        only where a stale value costs time, not
 *                        correctness, and the caller falls back to
 *                        kda_load32 in time (host: kda_load32)
 *   kda_store32/64       the matching store
 *   kda_fence            orders this thread's earlier stores before its
 *                        later ones for every observer (__threadfence)
 *   kda_add32/and32/or32 32-bit fetch-and-op, returning the old value
 *   kda_and64            64-bit fetch-and-and
 *   kda_or64_acquire, kda_and32_acquire, kda_cas64_acquire
 *                        the same with acquire semantics (device:
 *                        atom.acquire.gpu; later accesses are not
 *                        performed before it): a taking atomic that needs
 *                        no fence after it
 *   kda_ffs32            1 + the index of the lowest set bit, 0 for none
 *   kda_pause            a short wait in a spin loop
 *   kda_sm_id            the multiprocessor this thread runs on; on the
 *                        host, a per-thread number set by kda_host_set_sm
 *                        (kdalloc.h)
 *   kda_warp_slot        the calling warp's number in the grid; on the
 *                        host, a per-thread number set by kda_host_set_warp
 *   kda_warp_on_sm       the warp's slot on its multiprocessor (%warpid: it
 *                        may change as warps come and go, a hash's input
 *                        only); on the host, kda_warp_slot's number
 *   kda_lane_id          the lane in the warp (0 on the host)
 *   kda_warp_sums        (device) a prefix sum over the calling lanes
 *   kda_active_lanes     the lanes of the warp active here (1 on the host)
 *   kda_group_in         the lanes among `lanes` (active, converged) that
 *                        pass the same key: a group; with
 *                        kda_group_leader, _bcast32, _or and _sync a
 *                        group does one atomic for its lanes.  On the
 *                        host a thread is a group of one (lane 0), so the
 *                        same text runs there
 *   kda_sys_malloc/free  the system's allocator: CUDA's device malloc on the
 *                        GPU, the C library's on the host (the allocators
 *                        that delegate to it as published: Halloc, FDGMalloc)
 *
 * Host atomics are GCC/Clang __atomic builtins: CAS and add are sequentially
 * consistent, loads acquire, stores relaxed, and the fence is a full fence
 * (so a store, a fence, then a store that publishes it, read by a load that
 * then follows the published offset, is ordered on every host).
 */
#ifndef KDA_PORT_H
#define KDA_PORT_H

#include <stdint.h>

#include "check.h" /* KDA_ASSERT */

#ifdef __CUDACC__

#define KDA_FN static __device__ __forceinline__
/* Pure arithmetic (layouts) that host code reading a copy of the state
 * uses too. */
#define KDA_HD static __host__ __device__ __forceinline__

KDA_FN uint32_t kda_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    return atomicCAS((unsigned int *)p, expected, desired);
}
KDA_FN uint64_t kda_cas64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return atomicCAS((unsigned long long *)p, (unsigned long long)expected, (unsigned long long)desired);
}
KDA_FN uint64_t kda_add64(uint64_t *p, uint64_t v) { return atomicAdd((unsigned long long *)p, (unsigned long long)v); }
KDA_FN uint32_t kda_add32(uint32_t *p, uint32_t v) { return atomicAdd((unsigned int *)p, v); }
KDA_FN uint32_t kda_and32(uint32_t *p, uint32_t v) { return atomicAnd((unsigned int *)p, v); }
KDA_FN uint32_t kda_or32(uint32_t *p, uint32_t v) { return atomicOr((unsigned int *)p, v); }
KDA_FN uint64_t kda_and64(uint64_t *p, uint64_t v) { return atomicAnd((unsigned long long *)p, (unsigned long long)v); }
KDA_FN uint64_t kda_or64(uint64_t *p, uint64_t v) { return atomicOr((unsigned long long *)p, (unsigned long long)v); }
KDA_FN uint64_t kda_or64_acquire(uint64_t *p, uint64_t v)
{
    uint64_t old;
    asm volatile("atom.acquire.gpu.or.b64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
KDA_FN uint32_t kda_and32_acquire(uint32_t *p, uint32_t v)
{
    uint32_t old;
    asm volatile("atom.acquire.gpu.and.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
KDA_FN uint64_t kda_cas64_acquire(uint64_t *p, uint64_t expected, uint64_t desired)
{
    uint64_t old;
    asm volatile("atom.acquire.gpu.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(expected), "l"(desired)
                 : "memory");
    return old;
}
KDA_FN int kda_ffs32(uint32_t v) { return __ffs(v); }
KDA_FN int kda_clz64(uint64_t v) { return __clzll((long long)v); }
KDA_FN void kda_pause(void) { __nanosleep(64); }
KDA_FN uint32_t kda_load32(const uint32_t *p) { return *(const volatile uint32_t *)p; }
KDA_FN uint64_t kda_load64(const uint64_t *p) { return *(const volatile uint64_t *)p; }
KDA_FN uint32_t kda_load32_l1(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p)); /* volatile asm: issued here, every time */
    return v;
}
KDA_FN void kda_store32(uint32_t *p, uint32_t v) { *(volatile uint32_t *)p = v; }
KDA_FN void kda_store64(uint64_t *p, uint64_t v) { *(volatile uint64_t *)p = v; }
KDA_FN void kda_fence(void) { __threadfence(); }
KDA_FN uint32_t kda_sm_id(void)
{
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}
KDA_FN uint32_t kda_warp_slot(void)
{
    uint64_t block = blockIdx.x + (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
    uint32_t t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return (uint32_t)((block * blockDim.x * blockDim.y * blockDim.z + t) >> 5);
}
KDA_FN uint32_t kda_warp_on_sm(void)
{
    uint32_t id;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(id));
    return id;
}
KDA_FN uint32_t kda_lane_id(void) { return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u; }
KDA_FN uint32_t kda_active_lanes(void) { return __activemask(); }
KDA_FN uint32_t kda_group_in(uint32_t lanes, uint32_t key) { return __match_any_sync(lanes, key); }
KDA_FN uint32_t kda_group_leader(uint32_t lanes) { return (uint32_t)__ffs(lanes) - 1; }
KDA_FN uint32_t kda_group_bcast32(uint32_t lanes, uint32_t v, uint32_t src) { return __shfl_sync(lanes, v, (int)src); }
/* The OR of `v` over `lanes`: one redux instruction from sm_80 on; before it
 * (Turing, sm_75) a shuffle from each lane in turn. */
KDA_FN uint32_t kda_group_or(uint32_t lanes, uint32_t v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_or_sync(lanes, v);
#else
    uint32_t all = 0;
    for (uint32_t m = lanes; m; m &= m - 1) all |= __shfl_sync(lanes, v, __ffs((int)m) - 1);
    return all;
#endif
}
KDA_FN void kda_group_sync(uint32_t lanes) { __syncwarp(lanes); }
KDA_FN void *kda_sys_malloc(uint64_t size) { return malloc(size); }
KDA_FN void kda_sys_free(void *p) { free(p); }
/* Over the lanes in `lanes` (all calling): the sum of `v` of the lower
 * lanes and of all of them. */
KDA_FN void kda_warp_sums(unsigned lanes, uint64_t v, uint64_t *below, uint64_t *total)
{
    unsigned lane = kda_lane_id();
    *below = *total = 0;
    for (unsigned m = lanes; m; m &= m - 1) {
        unsigned src = (unsigned)__ffs(m) - 1;
        uint64_t x = __shfl_sync(lanes, v, (int)src);
        *total += x;
        if (src < lane) *below += x;
    }
}

#else /* host threads */

#define KDA_FN static inline
#define KDA_HD static inline

#include <sched.h>

#ifdef __cplusplus
extern "C" {
extern thread_local uint32_t kda_host_sm, kda_host_warp;
#else
extern _Thread_local uint32_t kda_host_sm, kda_host_warp;
#endif

KDA_FN uint32_t kda_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected; /* the old value, whether or not the swap happened */
}
KDA_FN uint64_t kda_cas64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}
KDA_FN uint64_t kda_add64(uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
KDA_FN uint32_t kda_add32(uint32_t *p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
KDA_FN uint32_t kda_and32(uint32_t *p, uint32_t v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
KDA_FN uint32_t kda_or32(uint32_t *p, uint32_t v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
KDA_FN uint64_t kda_and64(uint64_t *p, uint64_t v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
KDA_FN uint64_t kda_or64(uint64_t *p, uint64_t v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
KDA_FN uint64_t kda_or64_acquire(uint64_t *p, uint64_t v) { return kda_or64(p, v); }
KDA_FN uint32_t kda_and32_acquire(uint32_t *p, uint32_t v) { return kda_and32(p, v); }
KDA_FN uint64_t kda_cas64_acquire(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return kda_cas64(p, expected, desired);
}
KDA_FN int kda_ffs32(uint32_t v) { return __builtin_ffs((int)v); }
KDA_FN int kda_clz64(uint64_t v) { return v ? __builtin_clzll(v) : 64; }
KDA_FN void kda_pause(void) { sched_yield(); }
KDA_FN uint32_t kda_load32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
KDA_FN uint64_t kda_load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
KDA_FN uint32_t kda_load32_l1(const uint32_t *p) { return kda_load32(p); }
KDA_FN void kda_store32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
KDA_FN void kda_store64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
KDA_FN void kda_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
KDA_FN uint32_t kda_sm_id(void) { return kda_host_sm; }
KDA_FN uint32_t kda_warp_slot(void) { return kda_host_warp; }
KDA_FN uint32_t kda_warp_on_sm(void) { return kda_host_warp; }
KDA_FN uint32_t kda_lane_id(void) { return 0; }
KDA_FN uint32_t kda_active_lanes(void) { return 1u; }
KDA_FN uint32_t kda_group_in(uint32_t lanes, uint32_t key) { return (void)key, lanes; }
KDA_FN uint32_t kda_group_leader(uint32_t lanes) { return (void)lanes, 0u; }
KDA_FN uint32_t kda_group_bcast32(uint32_t lanes, uint32_t v, uint32_t src) { return (void)lanes, (void)src, v; }
KDA_FN uint32_t kda_group_or(uint32_t lanes, uint32_t v) { return (void)lanes, v; }
KDA_FN void kda_group_sync(uint32_t lanes) { (void)lanes; }
/* The C library's malloc and free, behind a call (host_pool.c). */
void *kda_sys_malloc(uint64_t size);
void kda_sys_free(void *p);
#ifdef __cplusplus
}
#endif

#endif
#endif
