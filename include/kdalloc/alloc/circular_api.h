/* circular_api.h - the allocator contract (contract.h) over circular.h, shared
 * by the CMalloc family: cmalloc.h, cfmalloc.h, cmmalloc.h and cfmmalloc.h
 * each set KDA_CIRCULAR_FUSED and KDA_CIRCULAR_MULTI, then include this.
 * The state outside the pool is the allocation offsets; a reset writes
 * every pre-split chunk's header (one item each), then the remainder, the
 * end marker and the offsets. */
#ifndef KDA_CIRCULAR_API_H
#define KDA_CIRCULAR_API_H

#include <stdio.h>

#include "circular.h"
#include "circular_layout.h"
#include "circular_scan.h"

#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_REUSES_HOLES 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL 0
#define KDA_ALLOC_GROWS 1
#define KDA_ALLOC_HAS_CHUNK_LIST 1 /* kda_scan_circular, circular_scan.h */

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    return circ_malloc(h, size, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}
KDA_FN void kda_free(const kda_heap *h, void *p) { circ_free(h, p, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI); }

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_carver c = {block, 0};
    /* the offsets; the multi variants' large-request one; circ_grown_at's */
    h->state.offsets = (uint32_t *)kda_carve(&c, (h->state.n_offsets + KDA_CIRCULAR_MULTI + 1) * sizeof(uint32_t));
    return c.used;
}

/* Sets the pool's units, offsets and pre-split layout (n_sms: the multi
 * variants' offsets, 1 for the others). */
static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    kda_state *s = &h->state;
    const uint64_t most = (uint64_t)UINT32_MAX * KDA_UNIT; /* 32-bit unit offsets */
    if (plan->limit_bytes > most) plan->limit_bytes = most;
    if (bytes / KDA_UNIT > UINT32_MAX) {
        snprintf(err, errlen, "a pool of %.1f GiB exceeds the 64 GiB a circular pool can address",
                 (double)bytes / (1u << 30));
        return -1;
    }
    s->units = (uint32_t)(bytes / KDA_UNIT);
    s->n_offsets = KDA_CIRCULAR_MULTI && n_sms ? n_sms : 1;
    /* A growable pool is laid out as if two units smaller, so that it
     * always has a remainder chunk (circ_grow). */
    uint32_t grow_room = plan->limit_bytes ? 2 : 0;
    if (s->units <= grow_room || kda_layout_compute(s->units - grow_room, s->n_offsets, &s->layout)) {
        snprintf(err, errlen, "a pool of %llu bytes is too small for %u heaps", (unsigned long long)bytes,
                 s->n_offsets);
        return -1;
    }
    s->layout.units = s->units;
    plan->state_bytes = kda_alloc_bind(h, NULL);
    plan->reset_items = (uint64_t)s->layout.n_heaps * s->layout.chunks;
    return 0;
}

/* Every reset makes a new epoch: headers of the last use no longer carry
 * valid tags. */
#define KDA_ALLOC_RESET_HOST 1
static inline void kda_alloc_reset_host(kda_heap *h) { h->state.epoch++; }

KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i)
{
    const kda_layout *l = &h->state.layout;
    circ_init_chunk(h, l, (uint32_t)(i / l->chunks), (uint32_t)(i % l->chunks), KDA_CIRCULAR_FUSED);
}

KDA_FN void kda_alloc_reset_finish(const kda_heap *h)
{
    circ_init_finish(h, &h->state.layout, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}

/* The free chunks' payload, from a walk of a host copy of the pool. */
#define KDA_ALLOC_SPACE_READS_POOL 1
static inline void kda_alloc_space(const kda_heap *view, kda_space *space)
{
    kda_scan scan;
    kda_scan_circular(view->base, view, &scan, NULL, NULL);
    space->free_bytes = scan.free_bytes;
    space->largest_block = scan.largest_free;
    space->known = scan.well_formed;
}

static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes)
{
    h->bytes = bytes;
    h->state.units = (uint32_t)(bytes / KDA_UNIT);
}

KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after)
{
    circ_grow(before, after, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}

#endif
