/* circular.h - CMalloc and its variants (Vinkler & Havran 2015, Sec. 5.2-5.4)
 * as ONE implementation with two compile-time parameters:
 *   fused: the free/used flag and the next-chunk offset are one 64-bit word,
 *          read and swapped together (CFMalloc, CFMMalloc); otherwise they
 *          are two 32-bit words, and a chunk is locked by swapping its flag
 *          alone before its size is read (CMalloc, CMMalloc), as published;
 *   multi: one allocation offset (memOffset) per multiprocessor, each
 *          starting in its own heap (CMMalloc, CFMMalloc).
 *
 * Pool.  The pool is a circular singly linked list of chunks, in 16-byte
 * units.  Chunk c spans units [c, next); its 8-byte header is the last half
 * of unit c, so its payload starts at unit c + 1, 16-byte aligned, right
 * behind the header:
 *     byte 16c + 8:  flag  = tag(c) | state      (state 0 = free, 1 = used)
 *     byte 16c + 12: next  = first unit of the following chunk
 * The last unit of the pool holds the end marker: always used, next = 0.
 * Offsets are 32-bit unit numbers, so a pool may be up to 64 GiB.
 *
 * Invariants.
 *   - Unit 0 always starts a chunk: its predecessor is the end marker, which
 *     is never freed, so nothing ever merges unit 0 away.
 *   - Only the thread holding chunk c (flag used) changes c's header, and
 *     only it may merge c's successor into c; so while a thread holds c,
 *     next(c) is a genuine chunk.
 *   - A new header is written and fenced before the link to it is stored.
 *
 * Repairs over the published algorithm (docs/alloc.md):
 *   - Payloads are 16-byte aligned and requests are padded to 16 bytes.
 *   - A walk that has passed one whole circle of the pool returns NULL
 *     instead of spinning.
 *   - Tags.  A thread may read a header position it does not hold while the
 *     owner of the chunk before it frees, merges it away, and the merged
 *     chunk is handed out and overwritten (the paper argues the reader cannot
 *     be stalled that long; host threads can be descheduled for that long).
 *     The flag word therefore carries tag(c), a hash of the chunk's own
 *     position: a stale position fails the tag check (or the tagged CAS)
 *     instead of being trusted, and the walk restarts at unit 0.
 *   - free() fences before releasing the chunk, so the freeing thread's
 *     payload stores cannot land after the next owner's.
 */
#ifndef KDA_CIRCULAR_H
#define KDA_CIRCULAR_H

#include <stddef.h>

#include "heap.h"
#include "port.h"

/* Smallest chunk of the pre-split heaps, in units (256 bytes). */
#define KDA_MIN_CHUNK_UNITS 16u
/* A chunk is split only when it holds at least MAX_FRAG = 5/4 of what the
 * request needs (header included); below that it is handed out whole. */
#define KDA_MAX_FRAG_NUM 5u
#define KDA_MAX_FRAG_DEN 4u
/* Restarts at unit 0 after stale reads before malloc gives up. */
#define KDA_MAX_RESTARTS 64u

#define KDA_STATE_FREE 0u
#define KDA_STATE_USED 1u

KDA_FN uint32_t circ_tag(uint32_t c) { return (c * 0x9E3779B1u ^ 0x5BD1E995u) & ~1u; }

KDA_FN uint32_t *circ_flag(const kda_heap *h, uint32_t c) { return (uint32_t *)(h->base + (uint64_t)c * KDA_UNIT + 8); }
KDA_FN uint32_t *circ_next(const kda_heap *h, uint32_t c) { return (uint32_t *)(h->base + (uint64_t)c * KDA_UNIT + 12); }
KDA_FN uint64_t *circ_word(const kda_heap *h, uint32_t c) { return (uint64_t *)(h->base + (uint64_t)c * KDA_UNIT + 8); }

KDA_FN uint64_t circ_pack(uint32_t c, uint32_t state, uint32_t next)
{
    return (uint64_t)next << 32 | (circ_tag(c) | state);
}

/* Writes a complete header that no other thread can see yet. */
KDA_FN void circ_write_header(const kda_heap *h, uint32_t c, uint32_t state, uint32_t next, int fused)
{
    if (fused) {
        kda_store64(circ_word(h, c), circ_pack(c, state, next));
    } else {
        kda_store32(circ_next(h, c), next);
        kda_store32(circ_flag(h, c), circ_tag(c) | state);
    }
}

KDA_FN uint32_t circ_slot(const kda_heap *h, int multi) { return multi ? kda_sm_id() % h->n_offsets : 0u; }

/* ---- the pre-split layout: one binary heap of chunk sizes per region ----
 * Heap chunk i (0-based) is C(i+1) = R / 2^floor(log2(i+1)) units: level l
 * holds 2^l chunks of R/2^l.  Slot `chunks - 1` is the remainder of the
 * region after the heap, a chunk of its own when it has room for one. */

KDA_FN uint32_t circ_region_start(const kda_layout *l, uint32_t heap) { return heap * l->region_units; }

KDA_FN uint32_t circ_region_end(const kda_layout *l, uint32_t heap)
{
    return heap + 1 == l->n_heaps ? l->units - 1 : (heap + 1) * l->region_units;
}

/* Writes the initial header of chunk `slot` of heap `heap`. */
KDA_FN void circ_init_chunk(const kda_heap *h, const kda_layout *l, uint32_t heap, uint32_t slot, int fused)
{
    uint32_t start = circ_region_start(l, heap), end = circ_region_end(l, heap);
    uint32_t heap_units = l->levels * l->root_units;
    int has_remainder = end - start - heap_units >= 2;
    uint32_t offset, next;
    if (slot + 1 == l->chunks) { /* the remainder */
        if (!has_remainder) return;
        offset = start + heap_units;
        next = end;
    } else {
        uint32_t level = 0;
        while ((2u << level) <= slot + 1) level++;
        uint32_t size = l->root_units >> level;
        offset = start + level * l->root_units + (slot + 1 - (1u << level)) * size;
        next = offset + size;
        if (slot + 2 == l->chunks && !has_remainder) next = end; /* last heap chunk takes the rest */
    }
    circ_write_header(h, offset, KDA_STATE_FREE, next, fused);
}

/* The end marker and the starting offsets; after every chunk is written. */
KDA_FN void circ_init_finish(const kda_heap *h, const kda_layout *l, int fused)
{
    circ_write_header(h, l->units - 1, KDA_STATE_USED, 0, fused);
    for (uint32_t i = 0; i < h->n_offsets; i++) kda_store32(&h->offsets[i], circ_region_start(l, i % l->n_heaps));
}

/* ---- allocation ---- */

/* Moves the walk from chunk *c to `next`, read from *c's header.  A value
 * that cannot be the following chunk means *c was stale: restart at 0. */
KDA_FN void circ_step(uint32_t units, uint32_t *c, uint32_t next, uint64_t *walked, uint32_t *restarts)
{
    if (next > *c && next < units) {
        *walked += next - *c;
        *c = next;
    } else if (next == 0 && *c == units - 1) { /* past the end marker */
        *walked += 1;
        *c = 0;
    } else {
        (*restarts)++;
        *c = 0;
    }
}

KDA_FN void *circ_malloc(const kda_heap *h, uint64_t size, int fused, int multi)
{
    if (size == 0 || size >= (uint64_t)h->units * KDA_UNIT) return NULL;
    uint32_t need = (uint32_t)((size + KDA_UNIT - 1) / KDA_UNIT) + 1; /* payload + header unit */
    uint32_t slot = circ_slot(h, multi);
    uint32_t c = kda_load32(&h->offsets[slot]);
    uint32_t next, restarts = 0;
    uint64_t walked = 0;
    if (c >= h->units) c = 0;
    for (;;) {
        if (walked >= h->units || restarts > KDA_MAX_RESTARTS) return NULL;
        if (fused) {
            uint64_t w = kda_load64(circ_word(h, c));
            next = (uint32_t)(w >> 32);
            if (((uint32_t)w & ~1u) != circ_tag(c)) { /* not a header (any more) */
                restarts++;
                c = 0;
                continue;
            }
            if ((w & 1u) == KDA_STATE_FREE && next > c && next - c >= need) {
                if (kda_cas64(circ_word(h, c), w, w | KDA_STATE_USED) == w) break;
                continue; /* it changed under us: look again */
            }
        } else {
            uint32_t free_flag = circ_tag(c) | KDA_STATE_FREE;
            uint32_t old = kda_cas32(circ_flag(h, c), free_flag, free_flag | KDA_STATE_USED);
            if ((old & ~1u) != circ_tag(c)) {
                restarts++;
                c = 0;
                continue;
            }
            next = kda_load32(circ_next(h, c));
            if (old == free_flag) { /* locked it */
                if (next > c && next - c >= need) break;
                kda_store32(circ_flag(h, c), free_flag); /* too small: let go */
            }
        }
        circ_step(h->units, &c, next, &walked, &restarts);
    }
    /* Chunk c is ours and spans [c, next). */
    uint32_t end = next;
    uint32_t size_units = next - c;
    if (size_units >= need + 2 && (uint64_t)size_units * KDA_MAX_FRAG_DEN >= (uint64_t)need * KDA_MAX_FRAG_NUM) {
        end = c + need;
        circ_write_header(h, end, KDA_STATE_FREE, next, fused); /* the rest, a new free chunk */
        kda_fence();
        if (fused) kda_store64(circ_word(h, c), circ_pack(c, KDA_STATE_USED, end));
        else kda_store32(circ_next(h, c), end);
    }
    kda_store32(&h->offsets[slot], end);
    return h->base + (uint64_t)(c + 1) * KDA_UNIT;
}

KDA_FN void circ_free(const kda_heap *h, void *ptr, int fused, int multi)
{
    if (!ptr) return;
    uint32_t c = (uint32_t)(((unsigned char *)ptr - h->base) / KDA_UNIT) - 1;
    uint32_t slot = circ_slot(h, multi);
    kda_fence(); /* our payload stores land before the chunk is free */
    if (fused) {
        uint32_t next = (uint32_t)(kda_load64(circ_word(h, c)) >> 32);
        uint64_t w = kda_load64(circ_word(h, next));
        if ((uint32_t)w == (circ_tag(next) | KDA_STATE_FREE) &&
            kda_cas64(circ_word(h, next), w, w | KDA_STATE_USED) == w) {
            next = (uint32_t)(w >> 32); /* merge the free successor into c */
            kda_store32(&h->offsets[slot], next);
        }
        /* One store publishes the new end and the free state together. */
        kda_store64(circ_word(h, c), circ_pack(c, KDA_STATE_FREE, next));
    } else {
        uint32_t next = kda_load32(circ_next(h, c));
        uint32_t free_flag = circ_tag(next) | KDA_STATE_FREE;
        if (kda_cas32(circ_flag(h, next), free_flag, free_flag | KDA_STATE_USED) == free_flag) {
            next = kda_load32(circ_next(h, next)); /* merge the free successor into c */
            kda_store32(circ_next(h, c), next);
            kda_store32(&h->offsets[slot], next);
            kda_fence();
        }
        kda_store32(circ_flag(h, c), circ_tag(c) | KDA_STATE_FREE);
    }
}

#endif
