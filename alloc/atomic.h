/* atomic.h - AtomicMalloc (Vinkler & Havran 2015, Sec. 4.1): one shared
 * offset advanced with atomicAdd, no reuse (bump.h).  The paper's lower
 * bound for speed; it cannot free. */
#ifndef KDA_ATOMIC_H
#define KDA_ATOMIC_H

#define KDA_ALLOC_NAME "AtomicMalloc"
#define KDA_ALLOC_FREES 0
#include "bump_api.h"

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size) { return atomic_malloc(h, size); }

#endif
