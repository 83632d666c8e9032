/* atomic.h - AtomicMalloc (Vinkler & Havran 2015, Sec. 4.1): one shared
 * offset advanced with atomicAdd, no reuse (bump.h).  The paper's lower
 * bound for speed; it cannot free. */
#ifndef KDA_ATOMIC_H
#define KDA_ATOMIC_H

#define KDA_ALLOC_NAME "AtomicMalloc"
#define KDA_ALLOC_FREES 0
#include "bump_api.h"

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size) { return atomic_malloc(h, size); }

/* Growth: the offset moves on to the old end.  Requests that ran past the
 * end moved it further without getting memory, and every block handed out
 * lies below the old end. */
#define KDA_ALLOC_GROWS 1
static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes) { h->bytes = bytes; }
KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after)
{
    if (kda_load64(after->state.counter) > before->bytes) kda_store64(after->state.counter, before->bytes);
}

#endif
