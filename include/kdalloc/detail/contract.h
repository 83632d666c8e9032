/* contract.h - what an allocator header of kdalloc/alloc/ implements, and the
 * allocator compiled in.
 *
 * kdalloc.h (the public API) includes this file; nothing else needs to.
 * It includes port.h, then the header named by KDA_ALLOC_HEADER (CMake's
 * target kdalloc::<name> defines it as kdalloc/alloc/<name>.h, and
 * KDA_ALLOCATOR_<NAME>), then gives the defaults for what that header left
 * out.  There is no run-time
 * dispatch: kda_malloc and kda_free compile to one algorithm.
 *
 * An allocator header kdalloc/alloc/<name>.h
 *   - defines `kda_state`, the named fields of its descriptor (pointers into
 *     its state block, sizes), then includes heap.h, which wraps it in
 *     kda_heap next to the pool's base and size;
 *   - defines the macros
 *       KDA_ALLOC_NAME      the name as its paper writes it ("CMalloc")
 *       KDA_ALLOC_FREES     1 when kda_free makes memory reusable
 *       KDA_ALLOC_IN_POOL   1 when every block lies in [base, base + bytes);
 *                           0 when some come from the system's allocator
 *       KDA_ALLOC_HOST      1 when the algorithm runs on host threads too
 *       KDA_ALLOC_BUILDS    1 when it can serve the k-d tree build (0: its
 *                           frees are not single blocks; kdalloc says so)
 *       KDA_ALLOC_MIN_POOL  the smallest pool it accepts, in bytes (0: any)
 *   - and the functions
 *       kda_malloc, kda_free                         (KDA_FN: device and host)
 *       int kda_alloc_plan(h, plan, bytes, n_sms, err, errlen)     (host)
 *           sets h->state's sizes for a pool of `bytes` (n_sms: the
 *           multiprocessors, for allocators with per-SM parts) and fills
 *           `plan` (heap.h); -1 with a message when it cannot.
 *       uint64_t kda_alloc_bind(h, block)                           (host)
 *           points h->state's pointers into a state block of
 *           plan.state_bytes at `block` (device or host memory, or a host
 *           copy of it); with block NULL only sizes it.  Returns its size.
 *       void kda_alloc_reset_item(h, i)              (KDA_FN)
 *       void kda_alloc_reset_finish(h)               (KDA_FN)
 *           a reset runs item i = 0 .. reset_items-1 (in parallel on the
 *           GPU), then zeroes the block's first clear_bytes, then finish.
 *       void kda_alloc_space(view, space)                           (host)
 *           the free bytes and largest block, from `view`: the heap bound
 *           to a host copy of the state block, and, where the header
 *           defines KDA_ALLOC_SPACE_READS_POOL 1, its base a host copy of
 *           the pool.  space->known = 0 where it cannot tell.
 *   - optionally:
 *       KDA_ALLOC_GROWS 1, with kda_alloc_grow_heap(h, bytes) (host: the
 *           descriptor of the same pool grown to `bytes`) and
 *           kda_alloc_grow(before, after) (KDA_FN, one thread while no other
 *           uses the allocator: takes the memory between the sizes in);
 *           otherwise KDA_ALLOC_NO_GROW_WHY, a phrase saying why not;
 *       KDA_ALLOC_RESET_HOST, with kda_alloc_reset_host(h) (host: the
 *           descriptor's part of a reset, before the items run);
 *       KDA_ALLOC_WARP_DONE, with kda_warp_done(h) (below);
       KDA_ALLOC_DEVICE_OBJECT (CUDA only), with kda_alloc_device_renew(h,
           err, errlen) and kda_alloc_device_release(h): an allocator whose
           state is an object it makes itself in device memory (a peer
           through its adapter): every reset of a device pool makes it anew,
           the pool's destruction frees it;
 *       KDA_ALLOC_HAS_BLOCK_BYTES, with kda_alloc_block_bytes(view, offset):
 *           the bytes that serve the block at `offset` (the benchmarks'
 *           fragmentation figures).
 * Adding an allocator is its header and its name in CMake's list
 * KDA_ALLOCATORS.
 */
#ifndef KDA_CONTRACT_H
#define KDA_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "port.h"

#ifndef KDA_ALLOC_HEADER
#error "no allocator selected: link kdalloc::<name>, or define KDA_ALLOC_HEADER and KDA_ALLOCATOR_<NAME> (see pool/CMakeLists.txt)"
#endif
#include KDA_ALLOC_HEADER

#ifndef KDA_ALLOC_WARP_DONE
/* kda_warp_done: the calling warp (its lane 0, or the lanes that allocate)
 * is done with every block it allocated in this kernel; FDGMalloc frees
 * them all at once here (its "tidy up"), every other allocator does
 * nothing.  Benchmarks call it where the paper's FDGMalloc tests did. */
KDA_FN void kda_warp_done(const kda_heap *h) { (void)h; }
#endif

#ifndef KDA_ALLOC_RESET_HOST
static inline void kda_alloc_reset_host(kda_heap *h) { (void)h; }
#endif

#ifndef KDA_ALLOC_SPACE_READS_POOL
#define KDA_ALLOC_SPACE_READS_POOL 0
#endif

#ifndef KDA_ALLOC_DEVICE_OBJECT
#define KDA_ALLOC_DEVICE_OBJECT 0
#endif

#ifndef KDA_ALLOC_GROWS
#define KDA_ALLOC_GROWS 0
#ifndef KDA_ALLOC_NO_GROW_WHY
#define KDA_ALLOC_NO_GROW_WHY "it has no growth step (KDA_ALLOC_GROWS)"
#endif
KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after) { (void)before, (void)after; }
static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes) { (void)h, (void)bytes; }
#endif

/* The warp-coalesced pair, the same for every allocator (kdalloc.h says
 * what they do). */
#ifdef __CUDACC__
/* The hardware lane (threadIdx.x & 31 is one only in 1-D blocks). */
KDA_FN unsigned kda_hw_lane(void)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
KDA_FN void *kda_malloc_warp(const kda_heap *h, uint64_t size, unsigned lanes)
{
    unsigned lane = kda_hw_lane();
    int leader = __ffs(lanes) - 1;
    uint64_t padded = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    /* Kept inline, not kda_warp_sums: the call cost the coalesced kernels
     * of Table 1 two registers (CMalloc 32 -> 34). */
    uint64_t before = 0, total = 0; /* bytes of the lower lanes, of all lanes */
    for (unsigned m = lanes; m; m &= m - 1) {
        unsigned src = (unsigned)__ffs(m) - 1;
        uint64_t v = __shfl_sync(lanes, padded, (int)src);
        total += v;
        if (src < lane) before += v;
    }
    unsigned char *block = NULL;
    if ((int)lane == leader) block = (unsigned char *)kda_malloc(h, total);
    block = (unsigned char *)__shfl_sync(lanes, (unsigned long long)block, leader);
    return block ? block + before : NULL;
}
KDA_FN void kda_free_warp(const kda_heap *h, void *p, unsigned lanes)
{
    if ((int)kda_hw_lane() == __ffs(lanes) - 1) kda_free(h, p);
}
#elif KDA_ALLOC_HOST
/* A host thread is a warp of one. */
KDA_FN void *kda_malloc_warp(const kda_heap *h, uint64_t size, unsigned lanes)
{
    (void)lanes;
    return kda_malloc(h, size);
}
KDA_FN void kda_free_warp(const kda_heap *h, void *p, unsigned lanes)
{
    (void)lanes;
    kda_free(h, p);
}
#endif

#endif
