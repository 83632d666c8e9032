/* layout.c - the pre-split layout of a circular pool, computed on the host
 * and written chunk by chunk (circ_init_chunk) by host or device threads.
 *
 * One heap (CMalloc, CFMalloc): the largest heap of L levels, L * R units
 * with R = MIN_CHUNK * 2^(L-1), that fits the pool; the rest of the pool is
 * the remainder chunk.  Per-SM heaps (CMMalloc, CFMMalloc): as many heaps
 * of root R / #SM (rounded down to MIN_CHUNK times a power of two), so they
 * take less room than the one heap would and the remainder is larger. */
#include <stdio.h>

#include "alloc.h"
#include "circular.h"

static uint32_t largest_levels(uint64_t units)
{
    uint32_t levels = 0;
    while (levels < 31 && (uint64_t)(levels + 1) * KDA_MIN_CHUNK_UNITS * ((uint64_t)1 << levels) <= units) levels++;
    return levels;
}

int kda_layout_compute(uint32_t units, uint32_t n_heaps, kda_layout *l)
{
    if (units < 3 || n_heaps == 0) return -1;
    uint32_t usable = units - 1; /* the last unit is the end marker */
    uint32_t levels = largest_levels(usable);
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

#if defined(KDA_ALLOCATOR_IS_CIRCULAR)
uint32_t kda_circular_plan(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    kda_heap *h = &pool->heap;
    if (bytes / KDA_UNIT > UINT32_MAX) {
        snprintf(err, errlen, "a pool of %.1f GiB exceeds the 64 GiB a circular pool can address",
                 (double)bytes / (1u << 30));
        return 0;
    }
    h->units = (uint32_t)(bytes / KDA_UNIT);
    h->n_offsets = KDA_CIRCULAR_MULTI && n_sms ? n_sms : 1;
    if (kda_layout_compute(h->units, h->n_offsets, &pool->layout)) {
        snprintf(err, errlen, "a pool of %llu bytes is too small for %u heaps", (unsigned long long)bytes,
                 h->n_offsets);
        return 0;
    }
    h->n_heaps = pool->layout.n_heaps;
    h->heap_units = pool->layout.heap_units;
    h->root_units = pool->layout.root_units;
    return h->n_offsets + KDA_CIRCULAR_MULTI; /* the multi variants' large-request offset */
}
#endif
