/* host_pool.c - pools in host memory, so that CPU threads run the very same
 * allocator code as the GPU (the tests do; the kdalloc binary does not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

_Thread_local uint32_t kda_host_sm, kda_host_warp;

void *kda_sys_malloc(uint64_t size) { return size <= SIZE_MAX / 2 ? malloc((size_t)size) : NULL; }
void kda_sys_free(void *p) { free(p); }

int kda_host_pool_create(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    if (!KDA_ALLOC_HOST) {
        snprintf(err, errlen, "%s runs on the GPU only: no host pool", KDA_ALLOC_NAME);
        return -1;
    }
    bytes &= ~(uint64_t)(KDA_UNIT - 1);
    if (bytes < kda_allocator_min_pool()) {
        snprintf(err, errlen, "%s needs a pool of at least %llu MiB (asked for %.1f MiB)", KDA_ALLOC_NAME,
                 (unsigned long long)(kda_allocator_min_pool() >> 20), (double)bytes / (1 << 20));
        return -1;
    }
    pool->heap.bytes = bytes;
    if (kda_alloc_plan(pool, bytes, n_sms, err, errlen)) return -1;
#if KDA_ALLOC_HOST
    uint64_t own = pool->sys_heap_bytes < bytes ? bytes - pool->sys_heap_bytes : 0; /* laid out by the allocator */
    pool->state = calloc(1, pool->state_bytes ? pool->state_bytes : 16);
    pool->heap.meta = pool->state;
    pool->heap.base = aligned_alloc(64, own ? (own + 63) & ~(uint64_t)63 : 64);
    if (!pool->heap.base || !pool->state) {
        kda_host_pool_destroy(pool);
        snprintf(err, errlen, "out of host memory for a pool of %llu bytes", (unsigned long long)bytes);
        return -1;
    }
    kda_host_pool_reset(pool);
#endif
    return 0;
}

#if KDA_ALLOC_HOST
void kda_host_pool_reset(kda_pool *pool)
{
    pool->heap.epoch++; /* circular: headers of the last use no longer carry valid tags */
    for (uint64_t i = 0; i < pool->reset_items; i++) kda_alloc_reset_item(&pool->heap, &pool->layout, i);
    memset(pool->state, 0, pool->clear_bytes);
    kda_alloc_reset_finish(&pool->heap, &pool->layout);
}
#else
void kda_host_pool_reset(kda_pool *pool) { (void)pool; }
#endif

void kda_host_pool_destroy(kda_pool *pool)
{
#if KDA_ALLOC_HOST && !KDA_ALLOC_IN_POOL
    if (pool->state) /* a reset gives back what the system allocator still holds for the pool */
        for (uint64_t i = 0; i < pool->reset_items; i++) kda_alloc_reset_item(&pool->heap, &pool->layout, i);
#endif
    free(pool->heap.base);
    free(pool->state);
    memset(pool, 0, sizeof *pool);
}
