/* cudamalloc.h - CUDA's own device malloc and free.  The pool is the
 * driver's device heap, sized by kda_pool_create; no host version. */
#ifndef KDA_CUDAMALLOC_H
#define KDA_CUDAMALLOC_H

#define KDA_ALLOC_NAME "CudaMalloc"
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 0
#define KDA_ALLOC_SYS_HEAP KDA_SYS_HEAP_ALL
#define KDA_ALLOC_SPACE_KNOWN 0
#define KDA_ALLOC_HOST 0
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL 0
#define KDA_ALLOC_NO_GROW_WHY "CUDA's device heap is sized once, before the first kernel that uses it"

#include "kdalloc/detail/port.h"

/* No state: the heap is the driver's.  (C wants a member.) */
typedef struct kda_state {
    uint64_t device_heap_bytes; /* the size asked of the driver */
} kda_state;

#include "kdalloc/detail/heap.h"

#ifdef __CUDACC__
KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    (void)h;
    return size ? malloc((size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1)) : NULL;
}
KDA_FN void kda_free(const kda_heap *h, void *p)
{
    (void)h;
    free(p);
}
KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }
#endif

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    (void)h, (void)block;
    return 0;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    (void)n_sms, (void)err, (void)errlen;
    h->state.device_heap_bytes = plan->sys_heap_bytes = bytes;
    return 0;
}

/* CUDA has no query of its device heap's free space. */
static inline void kda_alloc_space(const kda_heap *view, kda_space *space)
{
    (void)view;
    space->free_bytes = space->largest_block = 0;
    space->known = 0;
}

#endif
