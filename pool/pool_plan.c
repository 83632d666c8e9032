/* pool_plan.c - how large a pool a workload gets (kda_pool_plan_for):
 * growable or fixed, where it starts, how far it may grow, and why a
 * growable pool that was asked for is fixed.
 *
 * Invariants.  Pure arithmetic on the allocator's traits and the ask: no
 * device, no memory, no allocator macro (so one binary can check every
 * combination of traits).  A fixed pool is a multiple of 16 bytes
 * (KDA_UNIT); a planned size is never below the allocator's minimum pool
 * unless the ask named those bytes itself; a growable pool's limit is
 * never below its start.  The pools round to their own granules after. */
#include "kdalloc/kdalloc.h"

/* Where a growable pool starts, in multiples of the workload's unit, when
 * the ask does not say: an allocator that never frees must hold every
 * request, so it starts large instead of growing five times. */
#define START_FACTOR_FREES 2.0
#define START_FACTOR_NEVER_FREES 32.0

static uint64_t at_least(uint64_t v, uint64_t floor) { return v < floor ? floor : v; }
static uint64_t round_to_unit(uint64_t v) { return (v + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1); }

kda_pool_sizing kda_pool_plan_for(const kda_traits *a, const kda_pool_ask *ask)
{
    kda_pool_sizing s = {0, 0, 0, 0, NULL};
    if (ask->grow && a->grows && !ask->device_cannot_grow) {
        double factor = ask->start_factor > 0 ? ask->start_factor
                        : a->frees            ? START_FACTOR_FREES
                                              : START_FACTOR_NEVER_FREES;
        s.grows = 1;
        s.start = at_least((uint64_t)(factor * (double)ask->unit_bytes), a->min_pool);
        s.limit = at_least(ask->limit && ask->limit < ask->free_bytes ? ask->limit : ask->free_bytes, s.start);
        return s;
    }
    if (ask->grow) s.fixed_why = a->grows ? ask->device_cannot_grow : a->no_grow_why;
    s.start = round_to_unit(ask->bytes ? ask->bytes : (uint64_t)(ask->factor * (double)ask->unit_bytes));
    if (!ask->bytes && s.start < a->min_pool) { /* as the paper did; an explicit size is the caller's */
        s.raised = 1;
        s.start = round_to_unit(a->min_pool);
    }
    s.limit = s.start;
    return s;
}
