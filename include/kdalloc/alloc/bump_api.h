/* bump_api.h - the allocator contract (contract.h) over bump.h, shared by
 * atomic.h and awmalloc.h: one 64-bit counter outside the pool, zeroed by
 * every reset; free does nothing. */
#ifndef KDA_BUMP_API_H
#define KDA_BUMP_API_H

#include <stdio.h>

#include "bump.h"

#define KDA_ALLOC_CONSECUTIVE 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL 0

KDA_FN void kda_free(const kda_heap *h, void *p) { (void)h, (void)p; }

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_carver c = {block, 0};
    h->state.counter = (uint64_t *)kda_carve(&c, sizeof(uint64_t));
    return c.used;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    (void)bytes, (void)n_sms, (void)err, (void)errlen;
    plan->state_bytes = plan->clear_bytes = kda_alloc_bind(h, NULL);
    return 0;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }

/* AtomicMalloc: what lies above the offset.  AWMalloc: the same, though
 * it hands out more by wrapping over the oldest blocks. */
static inline void kda_alloc_space(const kda_heap *view, kda_space *space)
{
    uint64_t used = *view->state.counter;
    space->free_bytes = space->largest_block = used < view->bytes ? view->bytes - used : 0;
    space->known = 1;
}

#endif
