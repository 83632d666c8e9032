/* host_pool.c - pools in host memory, so that CPU threads run the very same
 * allocator code as the GPU (the tests do; the kdalloc binary does not). */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE, madvise */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
    if (pool->limit_bytes && pool->heap.bytes > pool->start_bytes) { /* a grown pool starts small again */
        uint64_t grown = pool->heap.bytes - pool->start_bytes;
        madvise(pool->heap.base + pool->start_bytes, grown, MADV_DONTNEED);
        mprotect(pool->heap.base + pool->start_bytes, grown, PROT_NONE);
        char err[160];
        pool->heap.bytes = pool->start_bytes;
        kda_alloc_plan(pool, pool->start_bytes, pool->n_sms, err, sizeof err); /* planned before: cannot fail */
    }
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
    if (pool->limit_bytes) {
        if (pool->heap.base) munmap(pool->heap.base, pool->limit_bytes);
    } else {
        free(pool->heap.base);
    }
    free(pool->state);
    memset(pool, 0, sizeof *pool);
}

/* A growable host pool: `limit` bytes of addresses reserved without access
 * (mmap), the first `start` opened (mprotect), more opened by each growth,
 * so that blocks never move, as in a growable device pool. */
int kda_host_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, uint32_t n_sms, char *err,
                                  size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    const char *why;
    if (!kda_allocator_grows(&why) || !KDA_ALLOC_HOST) {
        snprintf(err, errlen, "%s cannot grow its pool: %s", KDA_ALLOC_NAME, why ? why : "no host pool");
        return -1;
    }
#if KDA_ALLOC_HOST
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    start = (start + page - 1) / page * page;
    pool->granule = page;
    pool->n_sms = n_sms;
    pool->limit_bytes = limit / page * page < start ? start : limit / page * page;
    pool->heap.bytes = start;
    uint64_t asked = pool->limit_bytes;
    if (kda_alloc_plan(pool, start, n_sms, err, errlen)) {
        memset(pool, 0, sizeof *pool);
        return -1;
    }
    pool->limit_bytes = pool->limit_bytes / page * page;
    pool->limit_by_allocator = pool->limit_bytes < asked;
    if (pool->limit_bytes < start || kda_alloc_plan(pool, start, n_sms, err, errlen)) {
        snprintf(err, errlen, "%s cannot address a pool of %llu bytes", KDA_ALLOC_NAME, (unsigned long long)start);
        pool->limit_bytes = 0;
        return -1;
    }
    pool->start_bytes = start;
    void *range = mmap(NULL, pool->limit_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    pool->state = calloc(1, pool->state_bytes ? pool->state_bytes : 16);
    if (range == MAP_FAILED || !pool->state || mprotect(range, start, PROT_READ | PROT_WRITE)) {
        if (range != MAP_FAILED) munmap(range, pool->limit_bytes);
        free(pool->state);
        memset(pool, 0, sizeof *pool);
        snprintf(err, errlen, "cannot reserve %llu bytes of host addresses for a pool",
                 (unsigned long long)limit);
        return -1;
    }
    pool->heap.base = range;
    pool->heap.meta = pool->state;
    kda_host_pool_reset(pool);
    return 0;
#else
    (void)start, (void)limit, (void)n_sms;
    return -1;
#endif
}

int kda_host_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    if (!pool->limit_bytes) {
        snprintf(err, errlen, "this pool was created at a fixed size and cannot grow");
        return -1;
    }
    uint64_t want = (bytes + pool->granule - 1) / pool->granule * pool->granule;
    if (want > pool->limit_bytes) want = pool->limit_bytes;
    if (want <= pool->heap.bytes) {
        if (pool->heap.bytes >= pool->limit_bytes)
            snprintf(err, errlen, "the pool cannot grow past its limit of %llu bytes (%s)",
                     (unsigned long long)pool->limit_bytes,
                     pool->limit_by_allocator ? "the most " KDA_ALLOC_NAME " addresses"
                                              : "the limit the " KDA_ALLOC_NAME " pool was made with");
        else
            snprintf(err, errlen, "the pool holds %llu bytes already, no less than the %llu asked for",
                     (unsigned long long)pool->heap.bytes, (unsigned long long)bytes);
        return -1;
    }
    if (mprotect(pool->heap.base + pool->heap.bytes, want - pool->heap.bytes, PROT_READ | PROT_WRITE)) {
        snprintf(err, errlen, "cannot open %llu more bytes of the pool", (unsigned long long)(want - pool->heap.bytes));
        return -1;
    }
    kda_heap after = pool->heap;
    kda_alloc_grow_heap(&after, want);
    kda_alloc_grow(&pool->heap, &after);
    pool->heap = after;
    return 0;
}
