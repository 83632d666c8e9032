/* grow_plan.h - what growable pools decide alike on either side (host_pool.c
 * maps with mprotect, device_pool.cu with cuMemMap): whether the allocator
 * can grow, the start and limit of a new pool in granules, and how far one
 * growth goes, with the messages for each refusal.  Private to pool/.
 *
 * Invariants.  Nothing here maps memory or touches the device: each
 * function only reads or fills the pool's bookkeeping (pool->granule and
 * pool->n_sms set by the caller first), so that a refusal changes nothing
 * mapped.  A pool's start and limit are whole granules, its start at
 * least the allocator's minimum pool, its limit at least its start and at
 * most what the allocator can address. */
#ifndef KDA_GROW_PLAN_H
#define KDA_GROW_PLAN_H

#include <stdio.h>

#include "kdalloc/kdalloc.h"

static inline uint64_t grow_round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
static inline double grow_mib(uint64_t bytes) { return (double)bytes / (1 << 20); }

/* 0 where the allocator compiled in can grow its pool; else -1, saying why. */
static inline int grow_refused(char *err, size_t errlen)
{
    const char *why;
    if (kda_allocator_grows(&why)) return 0;
    snprintf(err, errlen, "%s cannot grow its pool: %s", KDA_ALLOC_NAME, why);
    return -1;
}

/* Plans a growable pool of `start` bytes mapped and `limit` reserved
 * (pool->granule and pool->n_sms set): start raised to the allocator's
 * minimum pool (as a fixed pool needs) and rounded up to granules, the
 * limit rounded down and then lowered to what the allocator addresses
 * (pool->limit_by_allocator says so), and the allocator's plan for the
 * start.  Sets plan, heap.bytes and start_bytes; -1 with a message where
 * the allocator cannot address the start. */
static inline int grow_plan_create(kda_pool *pool, uint64_t start, uint64_t limit, char *err, size_t errlen)
{
    uint64_t g = pool->granule;
    kda_plan *plan = &pool->plan;
    if (start < kda_allocator_min_pool()) start = kda_allocator_min_pool();
    start = grow_round_up(start ? start : 1, g);
    plan->limit_bytes = limit / g * g < start ? start : limit / g * g;
    uint64_t asked = plan->limit_bytes;
    pool->heap.bytes = start;
    if (kda_alloc_plan(&pool->heap, plan, start, pool->n_sms, err, errlen)) return -1;
    plan->limit_bytes = plan->limit_bytes / g * g; /* what the allocator can address, in granules */
    pool->limit_by_allocator = plan->limit_bytes < asked;
    if (plan->limit_bytes < start) {
        snprintf(err, errlen, "%s cannot address a pool of %.4g MiB", KDA_ALLOC_NAME, grow_mib(start));
        return -1;
    }
    if (kda_alloc_plan(&pool->heap, plan, start, pool->n_sms, err, errlen)) return -1;
    KDA_ASSERT(start % g == 0 && plan->limit_bytes % g == 0, "a growable pool's start and limit are whole granules");
    KDA_ASSERT(kda_allocator_min_pool() <= start && start <= plan->limit_bytes,
               "a growable pool starts at the minimum pool or more, and at its limit or less");
    pool->start_bytes = start;
    return 0;
}

/* The size a growth of the pool to at least `bytes` maps it to: rounded
 * up to granules, capped at the limit.  0, saying why, where it cannot
 * grow: a fixed pool, one at its limit (`given` names a limit the
 * allocator did not set), or one that holds that much already. */
static inline uint64_t grow_target(const kda_pool *pool, uint64_t bytes, const char *given, char *err,
                                   size_t errlen)
{
    uint64_t limit = pool->plan.limit_bytes;
    if (!limit) {
        snprintf(err, errlen, "this pool was created at a fixed size and cannot grow");
        return 0;
    }
    uint64_t want = grow_round_up(bytes, pool->granule);
    if (want > limit) want = limit;
    if (want > pool->heap.bytes) {
        KDA_ASSERT(want % pool->granule == 0 && want <= limit, "a growth maps whole granules, up to the limit");
        return want;
    }
    if (pool->heap.bytes >= limit)
        snprintf(err, errlen, "the pool cannot grow past its limit of %.4g MiB (%s)", grow_mib(limit),
                 pool->limit_by_allocator ? "the most " KDA_ALLOC_NAME " addresses" : given);
    else
        snprintf(err, errlen, "the pool holds %.4g MiB already, no less than the %.4g MiB asked for",
                 grow_mib(pool->heap.bytes), grow_mib(bytes));
    return 0;
}

#endif
