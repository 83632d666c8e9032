/* scan.c - walks a host copy of a circular pool: the tests' check that the
 * list is well formed, and the fragmentation figures of the benchmarks. */
#include <stdio.h>
#include <string.h>

#include "kdalloc/alloc/circular.h"

static uint32_t read_u32(const unsigned char *pool, uint64_t byte)
{
    uint32_t v;
    memcpy(&v, pool + byte, sizeof v);
    return v;
}

void kda_scan_circular(const void *pool_copy, const kda_heap *h, kda_scan *out,
                       void (*visit)(void *ctx, uint32_t unit, uint32_t size_units, int used), void *ctx)
{
    const unsigned char *pool = pool_copy;
    uint32_t units = h->state.units;
    memset(out, 0, sizeof *out);
    uint32_t c = 0;
    for (;;) {
        uint32_t flag = read_u32(pool, (uint64_t)c * KDA_UNIT + 8);
        uint32_t next = read_u32(pool, (uint64_t)c * KDA_UNIT + 12);
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
