/* contract.h - what an allocator header of kdalloc/alloc/ implements, and the
 * allocator compiled in.
 *
 * kdalloc.h (the public API) includes this file; nothing else needs to.
 * It includes port.h, then the header named by KDA_ALLOC_HEADER (CMake's
 * target kdalloc::<name> defines it as kdalloc/alloc/<name>.h), then gives
 * the defaults for what that header left out.  There is no run-time
 * dispatch: kda_malloc and kda_free compile to one algorithm.
 *
 * Macro prefixes (one meaning each):
 *   KDA_ALLOCATOR_*  which allocator the build selected, by name: CMake's
 *                    definitions of its id and the build's list (pool/name.c
 *                    returns them).  No code switches on a name: it asks
 *                    what the allocator does, the capabilities below.
 *   KDA_ALLOC_*      what the allocator compiled in does: its capabilities
 *                    (always defined: the header's value or the default
 *                    here) and its optional hooks (KDA_ALLOC_HAS_<HOOK> and
 *                    the few named below: defined only where the header
 *                    defines the hook's functions).
 *   KDA_<FAMILY>_*   a family's own parameters, read by its own code alone
 *                    (KDA_CIRCULAR_FUSED and _MULTI, KDA_SCATTERALLOC_PAGE_SIZE).
 *   KDA_SYS_HEAP_*   the values of KDA_ALLOC_SYS_HEAP.
 *
 * An allocator header kdalloc/alloc/<name>.h
 *   - defines `kda_state`, the named fields of its descriptor (pointers into
 *     its state block, sizes), then includes heap.h, which wraps it in
 *     kda_heap next to the pool's base and size;
 *   - defines the capabilities
 *       KDA_ALLOC_NAME      the name as its paper writes it ("CMalloc")
 *       KDA_ALLOC_FREES     1 when kda_free makes a single block reusable
 *       KDA_ALLOC_IN_POOL   1 when every block lies in [base, base + bytes);
 *                           0 when some come from the system's allocator
 *                           (KDA_ALLOC_SYS_HEAP) or its own memory
 *       KDA_ALLOC_HOST      1 when the algorithm runs on host threads too
 *       KDA_ALLOC_BUILDS    1 when it can serve the k-d tree build; 0 with
 *                           KDA_ALLOC_NO_BUILD_WHY, a phrase saying why not
 *                           (kdalloc says it)
 *       KDA_ALLOC_MIN_POOL  the smallest pool it accepts, in bytes (0: any)
 *     and, where the default (0, or as said) is not what it does:
 *       KDA_ALLOC_SYS_HEAP  how much of its pool the system's heap serves
 *                           (plan.sys_heap_bytes; on the GPU CUDA's device
 *                           heap, sized once a process before the first
 *                           kernel that uses it; on host threads the C
 *                           library's malloc, which the pool does not
 *                           bound): 0 none, KDA_SYS_HEAP_SOME (Halloc's
 *                           large requests), KDA_SYS_HEAP_ALL (CudaMalloc,
 *                           FDGMalloc)
 *       KDA_ALLOC_CONSECUTIVE  1 when one thread's blocks follow each other
 *                           in the pool, each at the last one's end padded
 *                           to 16 bytes (one shared offset: AtomicMalloc,
 *                           AWMalloc)
 *       KDA_ALLOC_WRAPS     1 when it never says NULL for a request that
 *                           fits the pool: it wraps round and serves the
 *                           oldest blocks' memory again, live or not (AWMalloc)
 *       KDA_ALLOC_CHUNKS    1 when the pool is cut into chunks of
 *                           h->state.chunk_bytes: a request of up to a
 *                           quarter chunk needs one for its slot, a larger
 *                           one a run of whole chunks (CountedBump, SlabBump)
 *       KDA_ALLOC_REUSES_HOLES  1 when a freed block is served again while
 *                           the blocks around it stay live (not only once
 *                           a whole chunk or page is free)
 *       KDA_ALLOC_SPACE_KNOWN  1 (default) when kda_alloc_space knows the
 *                           free bytes; 0 when it cannot tell (space->known)
 *       KDA_ALLOC_SPACE_RESTORED  1 when freeing every block gives back all
 *                           the free bytes of a fresh pool (emptied pages or
 *                           slabs are retired whole)
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
 *   - optionally, the hooks:
 *       KDA_ALLOC_GROWS 1, with kda_alloc_grow_heap(h, bytes) (host: the
 *           descriptor of the same pool grown to `bytes`) and
 *           kda_alloc_grow(before, after) (KDA_FN, one thread while no other
 *           uses the allocator: takes the memory between the sizes in);
 *           otherwise KDA_ALLOC_NO_GROW_WHY, a phrase saying why not;
 *       KDA_ALLOC_RESET_HOST, with kda_alloc_reset_host(h) (host: the
 *           descriptor's part of a reset, before the items run);
 *       KDA_ALLOC_WARP_DONE, with kda_warp_done(h) (below): it frees a
 *           warp's blocks all at once there (FDGMalloc);
 *       KDA_ALLOC_DEVICE_OBJECT (CUDA only), with kda_alloc_device_renew(h,
 *           err, errlen) and kda_alloc_device_release(h): an allocator whose
 *           state is an object it makes itself in device memory (a peer
 *           through its adapter): every reset of a device pool makes it anew,
 *           the pool's destruction frees it;
 *       KDA_ALLOC_HAS_BLOCK_BYTES, with kda_alloc_block_bytes(view, offset):
 *           the bytes that serve the block at `offset` (the benchmarks'
 *           fragmentation figures);
 *       KDA_ALLOC_HAS_CHUNK_LIST, with kda_scan_circular(copy, h, scan,
 *           visit, ctx) (circular_scan.h): its blocks are chunks of one list
 *           that tiles the pool, walked in a host copy of it (the tests'
 *           check that it is well formed, the benchmarks' fragmentation and
 *           soak figures);
 *       KDA_ALLOC_HAS_WALK_STATS (CUDA, built with -DKDA_DIAG), with
 *           kda_walk_stats_reset() and kda_walk_stats_print(f, title): the
 *           steps its mallocs took, counted on the device;
 *       KDA_ALLOC_SERIAL_ABOVE, a size in bytes: requests above it are
 *           served one thread at a time (ScatterAlloc's above a page, under
 *           a lock, each searching the page table): stress tests keep to it.
 * Adding an allocator is its header and its name in CMake's list
 * KDA_ALLOCATORS.
 */
#ifndef KDA_CONTRACT_H
#define KDA_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "port.h"

#ifndef KDA_ALLOC_HEADER
#error "no allocator selected: link kdalloc::<name>, or define KDA_ALLOC_HEADER (see pool/CMakeLists.txt)"
#endif
/* KDA_ALLOC_SYS_HEAP's values beside 0. */
#define KDA_SYS_HEAP_SOME 1
#define KDA_SYS_HEAP_ALL 2

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

/* The capabilities' defaults (above). */
#ifndef KDA_ALLOC_SYS_HEAP
#define KDA_ALLOC_SYS_HEAP 0
#endif
#ifndef KDA_ALLOC_CONSECUTIVE
#define KDA_ALLOC_CONSECUTIVE 0
#endif
#ifndef KDA_ALLOC_WRAPS
#define KDA_ALLOC_WRAPS 0
#endif
#ifndef KDA_ALLOC_CHUNKS
#define KDA_ALLOC_CHUNKS 0
#endif
#ifndef KDA_ALLOC_REUSES_HOLES
#define KDA_ALLOC_REUSES_HOLES 0
#endif
#ifndef KDA_ALLOC_SPACE_KNOWN
#define KDA_ALLOC_SPACE_KNOWN 1
#endif
#ifndef KDA_ALLOC_SPACE_RESTORED
#define KDA_ALLOC_SPACE_RESTORED 0
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
