/* circular_scan.h - walks a host copy of a circular pool: the tests' check
 * that the list is well formed, and the fragmentation figures of the
 * benchmarks.  Included by circular_api.h, after circular.h. */
#ifndef KDA_CIRCULAR_SCAN_H
#define KDA_CIRCULAR_SCAN_H

#include <stdio.h>
#include <string.h>

#include "circular.h"

/* A walk over a circular pool's chunk list (a host copy of the pool). */
typedef struct kda_scan {
    uint64_t chunks, free_chunks;
    uint64_t free_bytes, used_bytes; /* payload bytes */
    uint64_t largest_free;           /* payload bytes of the largest free chunk */
    int well_formed;                 /* 0: `problem` says what is wrong */
    char problem[160];
} kda_scan;

static inline uint32_t circ_read_u32(const unsigned char *pool, uint64_t byte)
{
    uint32_t v;
    memcpy(&v, pool + byte, sizeof v);
    return v;
}

/* Walks the list of the pool described by `h` (its units and epoch) in a
 * host copy of its bytes, from unit 0 to the end marker.  Well formed: every
 * header carries its tag, offsets increase, the chunks tile the pool exactly
 * and the end marker points back to unit 0.  `visit`, when not NULL, is
 * called for each chunk with its unit offset, size in units and state. */
static inline void kda_scan_circular(const void *pool_copy, const kda_heap *h, kda_scan *out,
                                     void (*visit)(void *ctx, uint32_t unit, uint32_t size_units, int used),
                                     void *ctx)
{
    const unsigned char *pool = (const unsigned char *)pool_copy;
    uint32_t units = h->state.units;
    memset(out, 0, sizeof *out);
    uint32_t c = 0;
    for (;;) {
        uint32_t flag = circ_read_u32(pool, (uint64_t)c * KDA_UNIT + 8);
        uint32_t next = circ_read_u32(pool, (uint64_t)c * KDA_UNIT + 12);
        if ((flag & ~1u) != circ_tag(h, c)) {
            snprintf(out->problem, sizeof out->problem, "unit %u: no valid header (flag %08x)", c, flag);
            return;
        }
        if (c == units - 1) {
            if (next != 0 || (flag & 1u) != KDA_STATE_USED)
                snprintf(out->problem, sizeof out->problem, "end marker: next %u, state %u (want 0, used)",
                         next, flag & 1u);
            else
                out->well_formed = 1;
            return;
        }
        if (next <= c || next > units - 1) {
            snprintf(out->problem, sizeof out->problem, "unit %u: next %u does not move forward in the pool", c,
                     next);
            return;
        }
        uint64_t payload = (uint64_t)(next - c - 1) * KDA_UNIT;
        int used = (flag & 1u) == KDA_STATE_USED;
        out->chunks++;
        if (used) {
            out->used_bytes += payload;
        } else {
            out->free_chunks++;
            out->free_bytes += payload;
            if (payload > out->largest_free) out->largest_free = payload;
        }
        if (visit) visit(ctx, c, next - c, used);
        c = next;
    }
}

#endif
