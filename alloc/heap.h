/* heap.h - the descriptor every allocator works on.
 *
 * A kda_heap is a small value: kernels take it by value, host threads by
 * pointer.  It names the pool and the allocator's shared state, which lives
 * outside the pool (in device memory for a device pool, host memory for a
 * host pool).  Which fields matter depends on the allocator compiled in:
 *   bump allocators (AtomicMalloc, AWMalloc): base, bytes, counter
 *   circular allocators (the CMalloc family):  base, units, offsets, n_offsets
 *   CUDA malloc: none (its heap is the driver's)
 *   the others (ScatterAlloc, Halloc, FDGMalloc): base, bytes, meta and
 *   the cells/cell_bytes/groups their own header describes
 */
#ifndef KDA_HEAP_H
#define KDA_HEAP_H

#include <stdint.h>

/* Allocation granularity and alignment: every pointer handed out is a
 * multiple of 16 bytes from the pool base, which is itself 16-aligned. */
#define KDA_UNIT 16u

typedef struct kda_heap {
    unsigned char *base; /* first byte of the pool */
    uint64_t bytes;      /* pool size in bytes */
    uint32_t units;      /* pool size in 16-byte units (circular allocators) */
    uint32_t n_offsets;  /* circular: 1, or one allocation offset per SM */
    uint32_t epoch;      /* circular: bumped by every reset, part of each header's tag */
    uint32_t n_heaps, heap_units, root_units; /* circular: the pre-split heaps (kda_layout) */
    union { /* the allocator's state outside the pool (kda_pool.state), as: */
        uint64_t *counter;   /* bump: the shared allocation offset, in bytes */
        uint32_t *offsets;   /* circular: memOffset per SM, in units; multi variants
                              * have one more, offsets[n_offsets], for requests
                              * larger than a heap's root chunk (circ_slot); the
                              * last entry is circ_grow's, where its chunk starts */
        unsigned char *meta; /* the others: laid out as their header says */
    };
    uint32_t cells;      /* pages (ScatterAlloc), slabs (Halloc), warp slots (FDGMalloc),
                          * chunks in the pool (CountedBump) */
    uint32_t cells_max;  /* CountedBump: the chunks its state is laid out for (more than
                          * `cells` in a growable pool: those of its limit) */
    uint32_t cell_bytes; /* the size of one page or slab */
    uint32_t groups;     /* super blocks (ScatterAlloc) */
} kda_heap;

/* The pre-split layout of a circular pool (see circular.h): n_heaps heaps
 * side by side from unit 0, each a binary heap of chunk sizes, then one
 * remainder chunk, then the end marker in the last unit. */
typedef struct kda_layout {
    uint32_t n_heaps;    /* 1, or one per SM for the multi variants (fewer if the pool is small) */
    uint32_t levels;     /* L: a heap holds 2^l chunks of root / 2^l units for l < L */
    uint32_t root_units; /* R: a heap's first, largest chunk */
    uint32_t heap_units; /* L * R: heap h starts at unit h * heap_units */
    uint32_t chunks;     /* chunks per heap: 2^L - 1 */
    uint32_t units;      /* the whole pool */
} kda_layout;

#endif
