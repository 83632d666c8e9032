/* alloc.h - device-side dynamic memory allocators behind one C API.
 *
 * The allocator is chosen at compile time: exactly one of
 *   KDA_ALLOCATOR_ATOMIC      AtomicMalloc   one atomicAdd, no reuse
 *   KDA_ALLOCATOR_AWMALLOC    AWMalloc       AtomicMalloc on a ring (overwrites)
 *   KDA_ALLOCATOR_CMALLOC     CMalloc        circular list of chunks
 *   KDA_ALLOCATOR_CFMALLOC    CFMalloc       CMalloc, flag fused into the header word
 *   KDA_ALLOCATOR_CMMALLOC    CMMalloc       CMalloc, one offset per SM
 *   KDA_ALLOCATOR_CFMMALLOC   CFMMalloc      fused and multi
 *   KDA_ALLOCATOR_CUDAMALLOC  CudaMalloc     CUDA's device malloc/free
 * is defined (CMake sets it from KDT_ALLOCATOR).  There is no run-time
 * dispatch: kda_malloc and kda_free below compile to the one algorithm.
 *
 * Host side (any C file):
 *   kda_pool_create   a pool of device memory (cudaMalloc) laid out for the
 *                     allocator; kda_pool_reset frees everything in it again
 *   kda_host_pool_create  the same in host memory, for CPU threads (tests)
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

typedef struct kda_pool {
    kda_heap heap;     /* what kernels and threads allocate from */
    kda_layout layout; /* circular allocators: the pre-split layout */
    int on_device;
    void *state;       /* the counter / offsets allocation */
} kda_pool;

/* Name of the allocator compiled in, as the paper writes it ("CMalloc"). */
const char *kda_allocator_name(void);
/* Whether kda_free makes memory reusable (false for AtomicMalloc/AWMalloc). */
int kda_allocator_frees(void);

/* Device pool of `bytes` (rounded down to 16) on the current CUDA device.
 * For CUDA's malloc this sets the device heap size instead, which must
 * happen before any kernel runs.  Returns 0, or -1 with a message. */
int kda_pool_create(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);
/* Makes the whole pool free again (re-initialises the layout). */
int kda_pool_reset(kda_pool *pool, char *err, size_t errlen);
void kda_pool_destroy(kda_pool *pool);

/* Host pool for CPU threads; `n_sms` plays the number of multiprocessors
 * for the multi variants (each thread says which it is on with
 * kda_host_set_sm).  Not available for CUDA's malloc. */
int kda_host_pool_create(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen);
void kda_host_pool_reset(kda_pool *pool);
void kda_host_pool_destroy(kda_pool *pool);

/* Computes the pre-split layout of a circular pool of `units` units with
 * `n_heaps` heaps; -1 when the pool is too small for them. */
int kda_layout_compute(uint32_t units, uint32_t n_heaps, kda_layout *l);
/* Circular allocators: sets the pool's units, offsets count and layout for
 * a pool of `bytes` (n_sms: the multi variants' offsets, 1 for the others);
 * returns how many allocation offsets to allocate, or 0 with a message. */
uint32_t kda_circular_plan(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen);

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
 * The algorithm compiled in.
 * ------------------------------------------------------------------------ */
#include "port.h"
#if defined(KDA_ALLOCATOR_ATOMIC) || defined(KDA_ALLOCATOR_AWMALLOC)
#include "bump.h"
#else
#include "circular.h"
#endif

#if defined(KDA_ALLOCATOR_ATOMIC)
#define KDA_ALLOCATOR_IS_BUMP 1
KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size) { return atomic_malloc(h, size); }
KDA_FN void kda_free(const kda_heap *h, void *p) { (void)h, (void)p; }
#elif defined(KDA_ALLOCATOR_AWMALLOC)
#define KDA_ALLOCATOR_IS_BUMP 1
KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size) { return aw_malloc(h, size); }
KDA_FN void kda_free(const kda_heap *h, void *p) { (void)h, (void)p; }
#elif defined(KDA_ALLOCATOR_CMALLOC) || defined(KDA_ALLOCATOR_CFMALLOC) || defined(KDA_ALLOCATOR_CMMALLOC) || \
    defined(KDA_ALLOCATOR_CFMMALLOC)
#define KDA_ALLOCATOR_IS_CIRCULAR 1
#if defined(KDA_ALLOCATOR_CFMALLOC) || defined(KDA_ALLOCATOR_CFMMALLOC)
#define KDA_CIRCULAR_FUSED 1
#else
#define KDA_CIRCULAR_FUSED 0
#endif
#if defined(KDA_ALLOCATOR_CMMALLOC) || defined(KDA_ALLOCATOR_CFMMALLOC)
#define KDA_CIRCULAR_MULTI 1
#else
#define KDA_CIRCULAR_MULTI 0
#endif
KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    return circ_malloc(h, size, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}
KDA_FN void kda_free(const kda_heap *h, void *p) { circ_free(h, p, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI); }
#elif defined(KDA_ALLOCATOR_CUDAMALLOC)
#define KDA_ALLOCATOR_IS_CUDA 1
#ifdef __CUDACC__
KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    (void)h;
    return size ? malloc((size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1)) : NULL;
}
KDA_FN void kda_free(const kda_heap *h, void *p)
{
    (void)h;
    free(p);
}
#endif
#else
#error "no allocator selected: define one KDA_ALLOCATOR_* (see alloc.h)"
#endif

#ifdef __CUDACC__
KDA_FN void *kda_malloc_warp(const kda_heap *h, uint64_t size, unsigned lanes)
{
    unsigned lane = threadIdx.x & 31u;
    int leader = __ffs(lanes) - 1;
    uint64_t padded = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
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
#elif !defined(KDA_ALLOCATOR_IS_CUDA)
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
