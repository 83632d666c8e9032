/* circular_api.h - the kda_ allocator API (alloc.h) over circular.h, shared
 * by the CMalloc family: cmalloc.h, cfmalloc.h, cmmalloc.h and cfmmalloc.h
 * each set KDA_CIRCULAR_FUSED and KDA_CIRCULAR_MULTI, then include this.
 * The state outside the pool is the allocation offsets; a reset writes
 * every pre-split chunk's header (one item each), then the remainder, the
 * end marker and the offsets. */
#ifndef KDA_CIRCULAR_API_H
#define KDA_CIRCULAR_API_H

#include <stdio.h>

#include "circular.h"

#define KDA_ALLOCATOR_IS_CIRCULAR 1
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL 0
#define KDA_ALLOC_GROWS 1

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    return circ_malloc(h, size, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}
KDA_FN void kda_free(const kda_heap *h, void *p) { circ_free(h, p, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI); }

/* Sets the pool's units, offsets and pre-split layout (n_sms: the multi
 * variants' offsets, 1 for the others). */
static inline int kda_alloc_plan(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    kda_heap *h = &pool->heap;
    const uint64_t most = (uint64_t)UINT32_MAX * KDA_UNIT; /* 32-bit unit offsets */
    if (pool->limit_bytes > most) pool->limit_bytes = most;
    if (bytes / KDA_UNIT > UINT32_MAX) {
        snprintf(err, errlen, "a pool of %.1f GiB exceeds the 64 GiB a circular pool can address",
                 (double)bytes / (1u << 30));
        return -1;
    }
    h->units = (uint32_t)(bytes / KDA_UNIT);
    h->n_offsets = KDA_CIRCULAR_MULTI && n_sms ? n_sms : 1;
    /* A growable pool is laid out as if two units smaller, so that it
     * always has a remainder chunk (circ_grow). */
    uint32_t grow_room = pool->limit_bytes ? 2 : 0;
    if (h->units <= grow_room || kda_layout_compute(h->units - grow_room, h->n_offsets, &pool->layout)) {
        snprintf(err, errlen, "a pool of %llu bytes is too small for %u heaps", (unsigned long long)bytes,
                 h->n_offsets);
        return -1;
    }
    pool->layout.units = h->units;
    h->n_heaps = pool->layout.n_heaps;
    h->heap_units = pool->layout.heap_units;
    h->root_units = pool->layout.root_units;
    /* the multi variants have one more offset, for large requests; then
     * where the last growth's chunk starts (circ_grow) */
    pool->state_bytes = (h->n_offsets + KDA_CIRCULAR_MULTI + 1) * sizeof(uint32_t);
    pool->reset_items = (uint64_t)pool->layout.n_heaps * pool->layout.chunks;
    return 0;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, const kda_layout *l, uint64_t i)
{
    circ_init_chunk(h, l, (uint32_t)(i / l->chunks), (uint32_t)(i % l->chunks), KDA_CIRCULAR_FUSED);
}

KDA_FN void kda_alloc_reset_finish(const kda_heap *h, const kda_layout *l)
{
    circ_init_finish(h, l, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}

static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes)
{
    h->bytes = bytes;
    h->units = (uint32_t)(bytes / KDA_UNIT);
}

KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after)
{
    circ_grow(before, after, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}

#endif
