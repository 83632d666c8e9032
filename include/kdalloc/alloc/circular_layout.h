/* circular_layout.h - the pre-split layout of a circular pool, computed on
 * the host and written chunk by chunk (circ_init_chunk) by host or device
 * threads.  Included by circular_api.h, after circular.h.
 *
 * One heap (CMalloc, CFMalloc): the largest heap of L levels, L * R units
 * with R = MIN_CHUNK * 2^(L-1), that fits the pool; the rest of the pool is
 * the remainder chunk.  Per-SM heaps (CMMalloc, CFMMalloc): as many heaps
 * of root R / #SM (rounded down to MIN_CHUNK times a power of two), so they
 * take less room than the one heap would and the remainder is larger. */
#ifndef KDA_CIRCULAR_LAYOUT_H
#define KDA_CIRCULAR_LAYOUT_H

#include "circular.h"

static inline uint32_t circ_largest_levels(uint64_t units)
{
    uint32_t levels = 0;
    while (levels < 31 && (uint64_t)(levels + 1) * KDA_MIN_CHUNK_UNITS * ((uint64_t)1 << levels) <= units) levels++;
    return levels;
}

/* Computes the pre-split layout of a circular pool of `units` units with
 * `n_heaps` heaps; -1 when the pool is too small for them. */
static inline int kda_layout_compute(uint32_t units, uint32_t n_heaps, kda_layout *l)
{
    if (units < 3 || n_heaps == 0) return -1;
    uint32_t usable = units - 1; /* the last unit is the end marker */
    uint32_t levels = circ_largest_levels(usable);
    uint64_t root = levels ? (uint64_t)KDA_MIN_CHUNK_UNITS << (levels - 1) : 0;
    if (n_heaps > 1) {
        uint64_t share = root / n_heaps;
        if (share < KDA_MIN_CHUNK_UNITS) { /* a small pool: fewer, smallest heaps */
            n_heaps = (uint32_t)(root / KDA_MIN_CHUNK_UNITS);
            share = KDA_MIN_CHUNK_UNITS;
        }
        if (n_heaps <= 1) {
            n_heaps = 1;
        } else {
            levels = 1;
            while ((uint64_t)KDA_MIN_CHUNK_UNITS << levels <= share) levels++;
            root = (uint64_t)KDA_MIN_CHUNK_UNITS << (levels - 1);
        }
    }
    l->n_heaps = n_heaps;
    l->levels = levels;
    l->root_units = (uint32_t)root;
    l->heap_units = levels * (uint32_t)root;
    l->chunks = (1u << levels) - 1;
    l->units = units;
    return 0;
}

#endif
