/* awmalloc.h - AWMalloc (Vinkler & Havran 2015, Sec. 5.1): AtomicMalloc on
 * a ring that wraps to the start, reusing memory by overwriting it
 * (bump.h).  It cannot free. */
#ifndef KDA_AWMALLOC_H
#define KDA_AWMALLOC_H

#define KDA_ALLOC_NAME "AWMalloc"
#define KDA_ALLOC_FREES 0
#define KDA_ALLOC_WRAPS 1 /* full, it overwrites the oldest blocks instead of returning NULL */
#define KDA_ALLOC_NO_GROW_WHY "it never runs out: its ring wraps round over the oldest blocks"
#include "bump_api.h"

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size) { return aw_malloc(h, size); }

#endif
