/* heap.h - the descriptor every allocator works on.
 *
 * A kda_heap is a small value: kernels take it by value, host threads by
 * pointer.  It names the pool and the allocator's shared state, which lives
 * outside the pool (in device memory for a device pool, host memory for a
 * host pool).  Which fields matter depends on the allocator compiled in:
 *   bump allocators (AtomicMalloc, AWMalloc): base, bytes, counter
 *   circular allocators (the CMalloc family):  base, units, offsets, n_offsets
 *   CUDA malloc: none (its heap is the driver's)
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
    uint64_t *counter;   /* bump: the shared allocation offset, in bytes */
    uint32_t *offsets;   /* circular: memOffset per SM, in units */
} kda_heap;

/* The pre-split layout of a circular pool (see circular.h). */
typedef struct kda_layout {
    uint32_t n_heaps;      /* 1, or one heap per SM for the multi variants */
    uint32_t region_units; /* units given to each heap; the last takes the rest */
    uint32_t levels;       /* L: a heap holds 2^l chunks of root/2^l units, l < L */
    uint32_t root_units;   /* R: size of the heap's first chunk, in units */
    uint32_t chunks;       /* chunks per heap, the remainder chunk included */
    uint32_t units;        /* whole pool; the end marker is the last unit */
} kda_layout;

#endif
