/* bump_api.h - the kda_ allocator API (alloc.h) over bump.h, shared by
 * atomic.h and awmalloc.h: one 64-bit counter outside the pool, zeroed by
 * every reset; free does nothing. */
#ifndef KDA_BUMP_API_H
#define KDA_BUMP_API_H

#include <stdio.h>

#include "bump.h"

#define KDA_ALLOCATOR_IS_BUMP 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL 0

KDA_FN void kda_free(const kda_heap *h, void *p) { (void)h, (void)p; }

static inline int kda_alloc_plan(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    (void)bytes, (void)n_sms, (void)err, (void)errlen;
    pool->state_bytes = pool->clear_bytes = sizeof(uint64_t);
    return 0;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, const kda_layout *l, uint64_t i) { (void)h, (void)l, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h, const kda_layout *l) { (void)h, (void)l; }


#endif
