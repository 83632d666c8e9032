/* stall.h - StallMalloc, an allocator made to fail, for the build
 * watchdog's test only (test_cli.c, kdalloc-stall; not in the allocator
 * list): AtomicMalloc, except that a request past the pool's first 64 KiB
 * never returns, as if the allocator livelocked. */
#ifndef KDA_STALL_H
#define KDA_STALL_H

#define KDA_ALLOC_NAME "StallMalloc"
#define KDA_ALLOC_FREES 0
#define KDA_ALLOC_NO_GROW_WHY "it is made to stall, not to grow"
#include "kdalloc/alloc/bump_api.h"

#define STALL_AFTER_BYTES (64u << 10)

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    unsigned char *p = (unsigned char *)atomic_malloc(h, size);
    if (p && p - h->base >= STALL_AFTER_BYTES)
        for (;;) kda_pause(); /* the livelock */
    return p;
}

#endif
