/* kdalloc.h - dynamic memory allocation inside CUDA kernels (and on host
 * threads, with the same code): twelve allocators (and a peer) behind one plain C API.
 *
 * USING IT
 *   find_package(kdalloc) and link one target, kdalloc::<name>; the target
 *   picks the allocator this header compiles in:
 *     atomic        AtomicMalloc   one atomicAdd, never reuses (a lower bound)
 *     awmalloc      AWMalloc       AtomicMalloc on a ring: overwrites old blocks
 *     cmalloc       CMalloc        circular list of chunks (Vinkler & Havran 2015)
 *     cfmalloc      CFMalloc       CMalloc, flag fused into the header word
 *     cmmalloc      CMMalloc       CMalloc, one offset per SM
 *     cfmmalloc     CFMMalloc      fused and multi
 *     cudamalloc    CudaMalloc     CUDA's device malloc/free (GPU only)
 *     scatteralloc  ScatterAlloc   pages of one chunk size, hashed (Steinberger 2012)
 *     halloc        Halloc         slabs of size classes, bitmaps (Adinetz 2014)
 *     fdgmalloc     FDGMalloc      per-warp superblocks, freed all at once (Widmer 2013)
 *     countedbump   CountedBump    per-SM bump in chunks that count their blocks
 *     slabbump      SlabBump       per-SM, per-class bump in chunks whose freed
 *                                  blocks are served again (bitmaps)
 *     gallatin      Gallatin       a peer (McCoy & Pandey 2024), linked from its published
 *                                  headers: GPU only, built with -DKDA_PEERS=ON
 *   docs/library.md says which suits which workload, and each one's limits.
 *   There is no run-time dispatch: kda_malloc compiles to one algorithm.
 *   The library's default (the one a library-only install holds, named by
 *   the package's kdalloc_DEFAULT_ALLOCATOR) is SlabBump; the k-d tree
 *   builder's is CountedBump.
 *
 * WHEN MUCH OF THE POOL IS FREE AND A REQUEST STILL GETS NULL
 *   slabbump      memory freed around live blocks serves only its chunk's
 *                 size class until the chunk empties: a workload that
 *                 moves to other sizes may get NULL with that memory free
 *   countedbump   a chunk is reused only when every block of it is freed:
 *                 with one live block in each chunk, NULL with most of the
 *                 pool free (24% of the list workload's requests at
 *                 100,000 GPU threads)
 *   atomic, awmalloc, fdgmalloc   nothing freed singly is reused (AWMalloc
 *                 wraps around, over blocks still live)
 *   the CMalloc family, scatteralloc, halloc, cudamalloc   free memory is
 *                 found by searching, slowly where many threads ask
 *   gallatin      once its pool has run out, little is served again
 *
 *       #include <kdalloc/kdalloc.h>
 *       __global__ void k(kda_heap h) {          // the heap by value
 *           int *a = (int *)kda_malloc(&h, 64 * sizeof(int));
 *           if (a) { ...; kda_free(&h, a); }
 *       }
 *       kda_pool pool; char err[256];
 *       if (kda_pool_create(&pool, 256u << 20, err, sizeof err)) puts(err);
 *       k<<<blocks, threads>>>(pool.heap);
 *       kda_pool_destroy(&pool);
 *
 * ERRORS
 *   Host functions return 0, or -1 with a sentence in err (errlen bytes)
 *   naming the cause; they never exit or trap.  kda_malloc returns NULL
 *   when the pool cannot serve the request.
 *
 * THREAD-SAFETY
 *   kda_malloc, kda_free, kda_malloc_warp and kda_free_warp may be called
 *   by any number of GPU threads (or host threads, on a host pool) at
 *   once.  The host functions on one pool (create, reset, grow, space,
 *   destroy) must not run while a kernel or thread uses that pool; the
 *   device ones act on the current device and its default stream.
 *
 * LIMITS
 *   Every pointer is 16-byte aligned; requests are padded to 16 bytes.  A
 *   pool is one contiguous range; AtomicMalloc and FDGMalloc do not free
 *   single blocks; CudaMalloc and FDGMalloc take all of their pool, and
 *   Halloc a quarter, from CUDA's device heap, which is sized once per
 *   process (on a host pool, FDGMalloc and Halloc's large requests use the
 *   C library's malloc, which the pool's size does not bound).
 */
#ifndef KDALLOC_KDALLOC_H
#define KDALLOC_KDALLOC_H

#include <stddef.h>
#include <stdint.h>

/* The allocator compiled in, its kda_heap and its device functions. */
#include "kdalloc/detail/contract.h"

/* Mappings a growable device pool may have (doubling, from 2 MiB to the
 * 141 GB of an H200 takes 17). */
#define KDA_POOL_MAX_MAPS 64

/* A pool and the allocator's state.  Kernels get `heap` (by value); the
 * rest is the host's bookkeeping.  Zero-initialised by every create. */
typedef struct kda_pool {
    kda_heap heap;       /* what kernels and threads allocate from */
    kda_plan plan;       /* what the allocator said the pool needs */
    int on_device;       /* 1: device memory; 0: a host pool */
    void *state_block;   /* the allocator's state outside the pool */
    /* Growable pools only (plan.limit_bytes != 0): heap.bytes is what is
     * mapped now, start_bytes what every reset maps again. */
    uint64_t start_bytes;
    uint64_t granule;        /* the mapping granularity */
    int limit_by_allocator;  /* plan.limit_bytes is the allocator's most, not the one asked for */
    uint64_t map_ends[KDA_POOL_MAX_MAPS]; /* device: where each mapping ends */
    uint32_t n_maps;
    uint32_t n_sms;          /* the multiprocessors it was planned for */
} kda_pool;

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the allocator compiled in (no GPU needed; cost: none) ---- */

/* Its name as its paper writes it ("CountedBump", "ScatterAlloc 4096"). */
const char *kda_allocator_name(void);
/* Its CMake name ("countedbump"), and every name this build has, as
 * "atomic awmalloc ...". */
const char *kda_allocator_id(void);
const char *kda_allocator_list(void);
/* Whether kda_free makes memory reusable (0 for AtomicMalloc, AWMalloc,
 * FDGMalloc). */
int kda_allocator_frees(void);
/* Whether its pool can grow in place; if not, *why says why. */
int kda_allocator_grows(const char **why);
/* Whether it can serve the k-d tree build; if not, *why says why. */
int kda_allocator_builds(const char **why);
/* The smallest pool it accepts, in bytes (0: any). */
uint64_t kda_allocator_min_pool(void);

/* What an allocator is, as far as sizing its pool goes: the answers of
 * the functions above, and whether, full, it overwrites its oldest blocks
 * instead of returning NULL (AWMalloc's ring: a workload that asked for
 * more than the pool holds may have lost live blocks). */
typedef struct kda_traits {
    int frees;               /* kda_allocator_frees() */
    int grows;               /* kda_allocator_grows(&no_grow_why) */
    int wraps;               /* full, it overwrites instead of failing */
    uint64_t min_pool;       /* kda_allocator_min_pool() */
    const char *no_grow_why; /* grows == 0: why not */
} kda_traits;
/* The allocator compiled in. */
kda_traits kda_allocator_traits(void);

/* ---- sizing a pool for a workload (no GPU needed; cost: none) ---- */

/* What a workload asks of its pool.  Sizes are in multiples of
 * `unit_bytes`, the workload's own measure (the k-d tree build's is its
 * root array, 4 bytes a triangle). */
typedef struct kda_pool_ask {
    uint64_t unit_bytes;
    double factor;        /* a fixed pool of factor x unit_bytes ... */
    uint64_t bytes;       /* ... or of these bytes (non-zero: wins) */
    int grow;             /* a pool that grows instead, where it can */
    double start_factor;  /* grow: map this x unit_bytes first (0: the default) */
    uint64_t limit;       /* grow: grow to at most this (0: free_bytes) */
    uint64_t free_bytes;  /* grow: the device's free memory */
    const char *device_cannot_grow; /* grow: why the device cannot back a
                                     * growable pool (kda_pool_growth_supported), or NULL */
} kda_pool_ask;

/* The pool to make: kda_pool_create(start), or with grows
 * kda_pool_create_growable(start, limit). */
typedef struct kda_pool_sizing {
    int grows;
    uint64_t start;        /* fixed: the pool; grows: what it maps first */
    uint64_t limit;        /* grows: the most it may map; fixed: start */
    int raised;            /* fixed: the factor asked for less than the
                            * allocator's minimum pool, taken instead */
    const char *fixed_why; /* grow asked, a fixed pool planned: why */
} kda_pool_sizing;

/* Sizes the pool of a workload `ask` for an allocator `a` (usually
 * kda_allocator_traits()).  Pure arithmetic: no device, no memory.  Rules:
 *   - a pool grows where ask->grow, a->grows and no device_cannot_grow; it
 *     starts at start_factor x unit_bytes (default 2, or 32 where the
 *     allocator never frees: such a pool must hold every request, 38-70x
 *     the k-d tree build's root array, and each growth step costs the
 *     workload a relaunch), raised to a->min_pool; its limit is the
 *     smaller of ask->limit (where non-zero) and free_bytes, and never
 *     below start;
 *   - otherwise the pool is fixed: ask->bytes, or else factor x
 *     unit_bytes, rounded up to 16 bytes; a factor's pool below
 *     a->min_pool is raised to it (`raised` says so; an explicit size
 *     below the minimum is kept, and kda_pool_create refuses it); where
 *     growth was asked, fixed_why gives the allocator's reason, else the
 *     device's.
 * Fractional products are truncated before any rounding. */
kda_pool_sizing kda_pool_plan_for(const kda_traits *a, const kda_pool_ask *ask);

/* ---- device pools (CUDA builds; the current device) ---- */

/* 0 when a CUDA device is there to use; else -1 and, in `why`, what is
 * missing: a driver, a driver as new as this program's CUDA runtime, or a
 * GPU.  kda_pool_create and kda_pool_create_growable say the same when
 * they cannot start.  Cost: two driver queries. */
int kda_gpu_usable(char *why, size_t why_len);

/* A pool of `bytes` (rounded down to 16) of device memory, laid out and
 * ready.  CudaMalloc, FDGMalloc and Halloc size CUDA's device heap instead
 * (all of it, or a quarter), which must happen before any kernel uses
 * device malloc; Gallatin lays out memory of its own.  Cost: two
 * cudaMallocs and a reset. */
int kda_pool_create(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);
/* A pool that grows in place: `limit` bytes of addresses reserved (less
 * where the allocator addresses less: pool->plan.limit_bytes says),
 * `start` bytes mapped (rounded up to the mapping granularity).  -1 where
 * the allocator cannot grow (kda_allocator_grows) or the driver cannot
 * (kda_pool_growth_supported). */
int kda_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, char *err, size_t errlen);
/* Maps the pool up to at least `bytes` (rounded up to the granularity,
 * capped at the limit) and has the allocator take the new memory in; no
 * block moves.  Runs on the default stream: kernels launched after it see
 * the grown pool.  -1 when the limit is reached, the GPU is out of memory
 * or the pool has grown KDA_POOL_MAX_MAPS times (nothing changed then).
 * Cost: one mapping and a 1-thread kernel. */
int kda_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);
/* Whether this GPU and driver can back a growable pool; if not, *why. */
int kda_pool_growth_supported(const char **why);
/* Frees every block at once: the pool is as created (a grown pool shrinks
 * to its start).  Not the blocks that Halloc (above 3 KiB) and CudaMalloc
 * took from CUDA's device heap: free those first.  Cost: a kernel over the
 * allocator's layout, synchronises. */
int kda_pool_reset(kda_pool *pool, char *err, size_t errlen);
/* Free bytes and the largest block a request could get now.  Cost: copies
 * the allocator's state (and, for the CMalloc family, the pool) to the
 * host and walks it; synchronises.  space->known is 0 where the allocator
 * cannot tell: CudaMalloc, FDGMalloc, Gallatin, a malformed CMalloc list. */
int kda_pool_space(const kda_pool *pool, kda_space *space, char *err, size_t errlen);
void kda_pool_destroy(kda_pool *pool);

/* ---- host pools: the same algorithms on CPU threads ----
 * `n_sms` plays the number of multiprocessors: each thread says which it
 * runs on with kda_host_set_sm(id) and which warp it plays with
 * kda_host_set_warp(id) (below); a host thread is a warp of one.  -1 for
 * CudaMalloc, which has no host side (KDA_ALLOC_HOST is 0). */
int kda_host_pool_create(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen);
/* Reserved with mmap, opened page by page with mprotect as it grows. */
int kda_host_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, uint32_t n_sms, char *err,
                                  size_t errlen);
int kda_host_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);
void kda_host_pool_reset(kda_pool *pool);
/* Walks the state in place (no copy). */
int kda_host_pool_space(const kda_pool *pool, kda_space *space);
void kda_host_pool_destroy(kda_pool *pool);
/* The calling thread's multiprocessor and warp, as the allocators on a
 * host pool see them (0 until set). */
void kda_host_set_sm(uint32_t id);
void kda_host_set_warp(uint32_t id);

#ifdef __cplusplus
}
#endif

/* ---- allocating (device code, and host threads on a host pool) ----
 * Defined by the allocator's header, inline, so they compile into the
 * caller's kernels:
 *   void *kda_malloc(const kda_heap *h, uint64_t size)
 *       one thread's request; NULL when the pool cannot serve it.  A
 *       request of 0 bytes returns NULL, with every allocator, and takes
 *       nothing from the pool (so a NULL is not always a full pool).
 *   void  kda_free(const kda_heap *h, void *p)
 *       gives back a block of kda_malloc (NULL is ignored).  Stores that
 *       other threads made to it must have been fenced by them
 *       (__threadfence) first.
 *   void *kda_malloc_warp(const kda_heap *h, uint64_t size, unsigned lanes)
 *       warp-coalesced: called by every lane in the mask `lanes` (as with
 *       __shfl_sync); one request of their sum, made by the lowest lane;
 *       each gets its own 16-byte-aligned part (the lowest lane's part is
 *       the block's start), or every lane NULL.
 *   void  kda_free_warp(const kda_heap *h, void *p, unsigned lanes)
 *       frees such a block; called by the same lanes, with their pointers.
 *   void  kda_warp_done(const kda_heap *h)
 *       the warp is done with what it allocated in this kernel (FDGMalloc
 *       frees it all here; the others do nothing).
 */

#endif
