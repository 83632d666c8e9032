/* alloc.h - device-side dynamic memory allocators behind one C API.
 *
 * The allocator is chosen at compile time, one header of alloc/ each:
 *   atomic.h       AtomicMalloc   one atomicAdd, no reuse
 *   awmalloc.h     AWMalloc       AtomicMalloc on a ring (overwrites)
 *   cmalloc.h      CMalloc        circular list of chunks
 *   cfmalloc.h     CFMalloc       CMalloc, flag fused into the header word
 *   cmmalloc.h     CMMalloc       CMalloc, one offset per SM
 *   cfmmalloc.h    CFMMalloc      fused and multi
 *   cudamalloc.h   CudaMalloc     CUDA's device malloc/free
 *   scatteralloc.h ScatterAlloc   pages of one chunk size, hashed (Steinberger 2012)
 *   halloc.h       Halloc         slabs of size classes, bitmaps (Adinetz 2014)
 *   fdgmalloc.h    FDGMalloc      per-warp superblocks, freed all at once (Widmer 2013)
 *   countedbump.h  CountedBump    per-SM bump in chunks that count their blocks (ours)
 * CMake's list KDA_ALLOCATORS names them; KDA_ALLOCATOR picks one, and
 * KDA_ALLOC_HEADER and KDA_ALLOCATOR_<NAME> are defined from it.  There is
 * no run-time dispatch: kda_malloc and kda_free compile to one algorithm.
 *
 * Host side (any C file):
 *   kda_pool_create   a pool of device memory (cudaMalloc) laid out for the
 *                     allocator; kda_pool_reset frees everything in it again
 *   kda_pool_create_growable  a pool that grows in place: an address range
 *                     is reserved, a start is mapped, and kda_pool_grow maps
 *                     more at its end, which the allocator takes in while no
 *                     thread allocates (nothing moves: every block stays put)
 *   kda_host_pool_create(_growable)  the same in host memory, for CPU
 *                     threads (tests)
 *
 * Device side (CUDA files; host threads get the same functions):
 *   void *kda_malloc(const kda_heap *h, uint64_t size)
 *       one thread's request; NULL when the pool cannot serve it
 *   void  kda_free(const kda_heap *h, void *p)
 *       gives back a block from kda_malloc (or from kda_malloc_warp, see
 *       there); NULL is ignored.  Memory that other threads wrote must have
 *       been fenced by them (__threadfence) before it is freed.
 *   void *kda_malloc_warp(const kda_heap *h, uint64_t size, unsigned lanes)
 *       warp-coalesced: called by every lane in the mask `lanes` (as with
 *       __shfl_sync); their requests become one request made by the lowest
 *       of them, and each gets its own 16-byte-aligned part (the lowest
 *       lane's part is the block's start).  NULL for every lane when the
 *       block cannot be had.  (The mask is explicit because __activemask()
 *       need not name every lane that is really there.)
 *   void  kda_free_warp(const kda_heap *h, void *p, unsigned lanes)
 *       frees such a block; called by the same lanes, with their pointers.
 * Every pointer returned is 16-byte aligned; requests are padded to 16.
 */
#ifndef KDA_ALLOC_H
#define KDA_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "heap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mappings a growable device pool may have (the builder doubles it: from
 * 2 MiB to the 141 GB of an H200 in 17 steps). */
#define KDA_POOL_MAX_MAPS 64

typedef struct kda_pool {
    kda_heap heap;     /* what kernels and threads allocate from */
    kda_layout layout; /* circular allocators: the pre-split layout */
    int on_device;
    void *state;       /* the allocator's state outside the pool (heap.meta) */
    uint64_t state_bytes, clear_bytes; /* its size; how much a reset zeroes */
    uint64_t reset_items;              /* kda_alloc_reset_item calls per reset */
    uint64_t sys_heap_bytes;           /* the system allocator's share (CUDA's device heap) */
    /* Growable pools only (limit_bytes != 0): heap.bytes is what is mapped
     * now, start_bytes what every reset maps again, limit_bytes the most
     * it may grow to (the reserved range, or less where the allocator
     * cannot address more). */
    uint64_t start_bytes, limit_bytes;
    uint64_t granule;                  /* the mapping granularity */
    int limit_by_allocator;            /* limit_bytes is the allocator's, not the one asked for */
    uint64_t map_ends[KDA_POOL_MAX_MAPS]; /* device: where each mapping ends */
    uint32_t n_maps;
    uint32_t n_sms;                    /* host: the n_sms it was planned for */
} kda_pool;

/* Name of the allocator compiled in, as the paper writes it ("CMalloc"). */
const char *kda_allocator_name(void);
/* Whether kda_free makes memory reusable (false for AtomicMalloc/AWMalloc,
 * FDGMalloc). */
int kda_allocator_frees(void);
/* Whether it can serve the k-d tree build; if not, *why says why. */
int kda_allocator_builds(const char **why);
/* The smallest pool it accepts, in bytes (0: any). */
uint64_t kda_allocator_min_pool(void);
/* Whether its pool can grow in place (kda_pool_create_growable); if not,
 * *why says why. */
int kda_allocator_grows(const char **why);
/* Every allocator of this build's list (CMake's KDA_ALLOCATORS), as
 * "atomic awmalloc ..."; the one compiled in is kda_allocator_id(). */
const char *kda_allocator_list(void);
const char *kda_allocator_id(void);

/* Device pool of `bytes` (rounded down to 16) on the current CUDA device.
 * For CUDA's malloc this sets the device heap size instead, which must
 * happen before any kernel runs.  Returns 0, or -1 with a message. */
int kda_pool_create(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);
/* Makes the whole pool free again (re-initialises the layout). */
int kda_pool_reset(kda_pool *pool, char *err, size_t errlen);
void kda_pool_destroy(kda_pool *pool);

/* A growable device pool: `limit` bytes of addresses are reserved (less
 * where the allocator addresses less: pool->limit_bytes says), `start`
 * bytes mapped (rounded up to the mapping granularity).  kda_pool_reset
 * unmaps what grew and lays the start out again.  -1 with a message where
 * the allocator cannot grow (kda_allocator_grows) or the driver refuses. */
int kda_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, char *err, size_t errlen);
/* Maps the pool up to at least `bytes` (rounded up to the granularity,
 * capped at limit_bytes) and has the allocator take the new memory in.
 * No kernel may use the pool meanwhile (the allocator takes the memory in
 * on the default stream, before the kernels launched after the call).
 * -1 with a message when the limit
 * is reached or the GPU has no memory left (nothing changed then). */
int kda_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);
/* Whether this GPU and driver can back a growable pool; if not, *why. */
int kda_pool_growth_supported(const char **why);

/* Host pool for CPU threads; `n_sms` plays the number of multiprocessors
 * for the multi variants (each thread says which it is on with
 * kda_host_set_sm, and which warp it plays with kda_host_set_warp).  Not
 * available where KDA_ALLOC_HOST is 0 (CUDA's malloc): -1 with a message. */
int kda_host_pool_create(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen);
void kda_host_pool_reset(kda_pool *pool);
void kda_host_pool_destroy(kda_pool *pool);
/* The same growth in host memory: the range is reserved with mmap and
 * opened page by page with mprotect. */
int kda_host_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, uint32_t n_sms, char *err,
                                  size_t errlen);
int kda_host_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);

/* Computes the pre-split layout of a circular pool of `units` units with
 * `n_heaps` heaps; -1 when the pool is too small for them. */
int kda_layout_compute(uint32_t units, uint32_t n_heaps, kda_layout *l);

/* A walk over a circular pool's chunk list (a host copy of the pool). */
typedef struct kda_scan {
    uint64_t chunks, free_chunks;
    uint64_t free_bytes, used_bytes;  /* payload bytes */
    uint64_t largest_free;            /* payload bytes of the largest free chunk */
    int well_formed;                  /* 0: `problem` says what is wrong */
    char problem[160];
} kda_scan;

/* Walks the list of the pool described by `h` (its units and epoch) in a
 * host copy of its bytes, from unit 0 to the end marker.  Well formed: every
 * header carries its tag, offsets increase, the chunks tile the pool exactly
 * and the end marker points back to unit 0.  `visit`, when not NULL, is
 * called for each chunk with its unit offset, size in units and state. */
void kda_scan_circular(const void *pool_copy, const kda_heap *h, kda_scan *out,
                       void (*visit)(void *ctx, uint32_t unit, uint32_t size_units, int used), void *ctx);

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------
 * The algorithm compiled in: alloc/<name>.h, named by KDA_ALLOC_HEADER
 * (CMake sets it, and KDA_ALLOCATOR_<NAME>, from its one list of
 * allocators).  Each such header defines
 *   KDA_ALLOC_NAME      the name as the paper writes it ("CMalloc")
 *   KDA_ALLOC_FREES     1 when kda_free makes memory reusable
 *   KDA_ALLOC_IN_POOL   1 when every block lies in [base, base + bytes);
 *                       0 when some come from the system's allocator
 *   KDA_ALLOC_HOST      1 when the algorithm runs on host threads too
 *   KDA_ALLOC_BUILDS    1 when it can serve the k-d tree build (0: its
 *                       frees are not single blocks; kdalloc says so)
 *   KDA_ALLOC_MIN_POOL  the smallest pool it accepts, in bytes (0: any)
 * and the functions
 *   kda_malloc, kda_free                           (KDA_FN: device and host)
 *   int  kda_alloc_plan(pool, bytes, n_sms, err, errlen)      (host)
 *        fills pool->heap's fields and says what the pool needs:
 *        pool->state_bytes of state outside the pool, the first
 *        clear_bytes of it zeroed at every reset, reset_items items for
 *        kda_alloc_reset_item, sys_heap_bytes for the system allocator
 *        (CUDA's device malloc heap); -1 with a message when it cannot.
 *   void kda_alloc_reset_item(h, layout, i)        (KDA_FN)
 *   void kda_alloc_reset_finish(h, layout)         (KDA_FN)
 *        a reset runs item i = 0 .. reset_items-1 (in parallel on the
 *        GPU), then zeroes the state's first clear_bytes, then finish.
 *        For a growable pool (pool->limit_bytes set before the call) it
 *        lowers limit_bytes to what the allocator can address, and lays
 *        its state out for that much.
 * An allocator whose pool can grow in place defines KDA_ALLOC_GROWS 1 and
 *   void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes)       (host)
 *        the descriptor of the same pool grown to `bytes`;
 *   void kda_alloc_grow(const kda_heap *before, const kda_heap *after)  (KDA_FN)
 *        run by one thread while no other uses the allocator: takes the
 *        memory between the two sizes in (a free chunk, a higher limit).
 * The others may define KDA_ALLOC_NO_GROW_WHY, a phrase saying why not.
 * An allocator with a per-warp clean-up also defines KDA_ALLOC_WARP_DONE
 * and kda_warp_done (below); the others get the empty one.
 * ------------------------------------------------------------------------ */
#include "port.h"
#ifndef KDA_ALLOC_HEADER
#error "no allocator selected: define KDA_ALLOC_HEADER and KDA_ALLOCATOR_<NAME> (CMake does; see alloc/)"
#endif
#include KDA_ALLOC_HEADER

#ifndef KDA_ALLOC_WARP_DONE
/* kda_warp_done: the calling warp (its lane 0, or the lanes that allocate)
 * is done with every block it allocated in this kernel; FDGMalloc frees
 * them all at once here (its "tidy up"), every other allocator does
 * nothing.  Benchmarks call it where the paper's FDGMalloc tests did. */
KDA_FN void kda_warp_done(const kda_heap *h) { (void)h; }
#endif

#ifndef KDA_ALLOC_GROWS
#define KDA_ALLOC_GROWS 0
#ifndef KDA_ALLOC_NO_GROW_WHY
#define KDA_ALLOC_NO_GROW_WHY "it has no growth step (KDA_ALLOC_GROWS)"
#endif
KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after) { (void)before, (void)after; }
static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes) { (void)h, (void)bytes; }
#endif

#ifdef __CUDACC__
KDA_FN void *kda_malloc_warp(const kda_heap *h, uint64_t size, unsigned lanes)
{
    unsigned lane = threadIdx.x & 31u;
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
    if ((int)(threadIdx.x & 31u) == __ffs(lanes) - 1) kda_free(h, p);
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
