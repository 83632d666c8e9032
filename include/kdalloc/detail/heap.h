/* heap.h - the descriptor every allocator works on, and what its plan says
 * a pool needs.
 *
 * Included by an allocator header once it has defined its own
 * `kda_state`: the named fields of that allocator's state (pointers into
 * the state block outside the pool, sizes, counts), and nothing another
 * allocator means by them.  A kda_heap is a small value: kernels take it
 * by value, host threads by pointer.
 */
#ifndef KDA_HEAP_H
#define KDA_HEAP_H

#include <stdint.h>

/* Allocation granularity and alignment: every pointer handed out is a
 * multiple of 16 bytes from the pool base, which is itself 16-aligned. */
#define KDA_UNIT 16u

typedef struct kda_heap {
    unsigned char *base; /* first byte of the pool */
    uint64_t bytes;      /* pool size in bytes (what is mapped now, for a growable pool) */
    kda_state state;     /* the allocator's own descriptor (its header says what it holds) */
} kda_heap;

/* What an allocator's kda_alloc_plan says a pool of it needs; the pool
 * functions (pool/host_pool.c, pool/device_pool.cu) act on it. */
typedef struct kda_plan {
    uint64_t state_bytes;    /* the state block outside the pool (kda_alloc_bind lays it out) */
    uint64_t clear_bytes;    /* how much of its start every reset zeroes */
    uint64_t reset_items;    /* kda_alloc_reset_item calls per reset */
    uint64_t sys_heap_bytes; /* the system allocator's share (CUDA's device heap) */
    /* A growable pool sets limit_bytes (the reserved range) before the
     * plan; the plan lowers it to what the allocator can address and lays
     * its state out for that much.  0 for a fixed pool. */
    uint64_t limit_bytes;
} kda_plan;

/* What kda_pool_space reports (kda_alloc_space computes it). */
typedef struct kda_space {
    uint64_t free_bytes;    /* bytes the allocator could still hand out, summed */
    uint64_t largest_block; /* the largest block one request could get now */
    int known;              /* 0: the allocator cannot tell (both fields are 0 then) */
} kda_space;

/* Lays a state block out in order: each call returns the next `bytes`
 * (rounded up to 16) of `block`, or NULL when block is NULL (the sizing
 * pass of kda_alloc_bind); `used` ends as the block's size. */
typedef struct kda_carver {
    unsigned char *block;
    uint64_t used;
} kda_carver;
static inline void *kda_carve(kda_carver *c, uint64_t bytes)
{
    void *p = c->block ? c->block + c->used : (void *)0;
    c->used += (bytes + 15) & ~(uint64_t)15;
    return p;
}

#endif
