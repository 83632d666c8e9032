/* host_pool.c - pools in host memory, so that CPU threads run the very same
 * allocator code as the GPU (the tests do; the kdalloc binary does not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

_Thread_local uint32_t kda_host_sm;

int kda_host_pool_create(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
#if defined(KDA_ALLOCATOR_IS_CUDA)
    (void)bytes, (void)n_sms;
    snprintf(err, errlen, "CUDA's malloc runs on the GPU only: no host pool");
    return -1;
#else
    bytes &= ~(uint64_t)(KDA_UNIT - 1);
    kda_heap *h = &pool->heap;
    h->bytes = bytes;
#if defined(KDA_ALLOCATOR_IS_CIRCULAR)
    uint32_t n_offsets = kda_circular_plan(pool, bytes, n_sms, err, errlen);
    if (!n_offsets) return -1;
    pool->state = h->offsets = calloc(n_offsets, sizeof *h->offsets);
#else
    (void)n_sms;
    pool->state = h->counter = calloc(1, sizeof *h->counter);
#endif
    h->base = aligned_alloc(64, bytes ? bytes : 64);
    if (!h->base || !pool->state) {
        kda_host_pool_destroy(pool);
        snprintf(err, errlen, "out of host memory for a pool of %llu bytes", (unsigned long long)bytes);
        return -1;
    }
    kda_host_pool_reset(pool);
    return 0;
#endif
}

void kda_host_pool_reset(kda_pool *pool)
{
#if defined(KDA_ALLOCATOR_IS_CIRCULAR)
    const kda_layout *l = &pool->layout;
    pool->heap.epoch++; /* headers of the last use no longer carry valid tags */
    for (uint32_t heap = 0; heap < l->n_heaps; heap++)
        for (uint32_t slot = 0; slot < l->chunks; slot++)
            circ_init_chunk(&pool->heap, l, heap, slot, KDA_CIRCULAR_FUSED);
    circ_init_finish(&pool->heap, l, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
#elif defined(KDA_ALLOCATOR_IS_BUMP)
    *pool->heap.counter = 0;
#else
    (void)pool;
#endif
}

void kda_host_pool_destroy(kda_pool *pool)
{
    free(pool->heap.base);
    free(pool->state);
    memset(pool, 0, sizeof *pool);
}
