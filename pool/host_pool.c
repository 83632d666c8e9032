/* host_pool.c - pools in host memory, so that CPU threads run the very same
 * allocator code as the GPU (the tests do; the kdalloc binary does not).
 *
 * Invariants.  A host pool is laid out as a device pool of the same size
 * would be (the same kda_alloc_plan, a state block as aligned); a growable
 * one is sized by grow_plan.h, as a device pool is, and only its mapping
 * (mmap, mprotect) is this file's. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE, madvise */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grow_plan.h"
#include "kdalloc/kdalloc.h"

_Thread_local uint32_t kda_host_sm, kda_host_warp;
void kda_host_set_sm(uint32_t id) { kda_host_sm = id; }
void kda_host_set_warp(uint32_t id) { kda_host_warp = id; }

void *kda_sys_malloc(uint64_t size) { return size <= SIZE_MAX / 2 ? malloc((size_t)size) : NULL; }
void kda_sys_free(void *p) { free(p); }

#if KDA_ALLOC_HOST
/* The allocator's state block, zeroed, line-aligned as a device one is
 * (128: CountedBump's slots), and the descriptor pointed into it. */
static void *new_state_block(kda_heap *h, uint64_t bytes)
{
    uint64_t size = bytes ? (bytes + 127) & ~(uint64_t)127 : 128;
    void *block = aligned_alloc(128, size);
    if (!block) return NULL;
    memset(block, 0, size);
    kda_alloc_bind(h, block);
    return block;
}
#endif

int kda_host_pool_create(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    if (!KDA_ALLOC_HOST) {
        snprintf(err, errlen, "%s runs on the GPU only: no host pool", KDA_ALLOC_NAME);
        return -1;
    }
    bytes &= ~(uint64_t)(KDA_UNIT - 1);
    if (bytes < kda_allocator_min_pool()) {
        snprintf(err, errlen, "%s needs a pool of at least %.4g MiB (asked for %.4g MiB)", KDA_ALLOC_NAME,
                 (double)kda_allocator_min_pool() / (1 << 20), (double)bytes / (1 << 20));
        return -1;
    }
    pool->heap.bytes = bytes;
    pool->n_sms = n_sms;
    if (kda_alloc_plan(&pool->heap, &pool->plan, bytes, n_sms, err, errlen)) return -1;
#if KDA_ALLOC_HOST
    uint64_t own = pool->plan.sys_heap_bytes < bytes ? bytes - pool->plan.sys_heap_bytes : 0; /* laid out by the allocator */
    if (!(pool->state_block = new_state_block(&pool->heap, pool->plan.state_bytes))) {
        snprintf(err, errlen, "out of host memory for a pool's state of %llu bytes",
                 (unsigned long long)pool->plan.state_bytes);
        return -1;
    }
    pool->heap.base = aligned_alloc(64, own ? (own + 63) & ~(uint64_t)63 : 64);
    if (!pool->heap.base) {
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
    if (pool->plan.limit_bytes && pool->heap.bytes > pool->start_bytes) { /* a grown pool starts small again */
        uint64_t grown = pool->heap.bytes - pool->start_bytes;
        madvise(pool->heap.base + pool->start_bytes, grown, MADV_DONTNEED);
        mprotect(pool->heap.base + pool->start_bytes, grown, PROT_NONE);
        char err[160];
        KDA_ASSERT(pool->start_bytes <= pool->plan.limit_bytes, "a grown pool's start lies within its limit");
        pool->heap.bytes = pool->start_bytes;
        kda_alloc_plan(&pool->heap, &pool->plan, pool->start_bytes, pool->n_sms, err, sizeof err); /* planned before: cannot fail */
        kda_alloc_bind(&pool->heap, pool->state_block);
    }
    kda_alloc_reset_host(&pool->heap);
    for (uint64_t i = 0; i < pool->plan.reset_items; i++) kda_alloc_reset_item(&pool->heap, i);
    memset(pool->state_block, 0, pool->plan.clear_bytes);
    kda_alloc_reset_finish(&pool->heap);
}
#else
void kda_host_pool_reset(kda_pool *pool) { (void)pool; }
#endif

void kda_host_pool_destroy(kda_pool *pool)
{
#if KDA_ALLOC_HOST && !KDA_ALLOC_IN_POOL
    if (pool->state_block) /* a reset gives back what the system allocator still holds for the pool */
        for (uint64_t i = 0; i < pool->plan.reset_items; i++) kda_alloc_reset_item(&pool->heap, i);
#endif
    if (pool->plan.limit_bytes) {
        if (pool->heap.base) munmap(pool->heap.base, pool->plan.limit_bytes);
    } else {
        free(pool->heap.base);
    }
    free(pool->state_block);
    memset(pool, 0, sizeof *pool);
}

/* A growable host pool: `limit` bytes of addresses reserved without access
 * (mmap), the first `start` opened (mprotect), more opened by each growth,
 * so that blocks never move, as in a growable device pool (grow_plan.h
 * decides the sizes for both). */
int kda_host_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, uint32_t n_sms, char *err,
                                  size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    if (grow_refused(err, errlen)) return -1;
#if KDA_ALLOC_HOST
    pool->granule = (uint64_t)sysconf(_SC_PAGESIZE);
    pool->n_sms = n_sms;
    if (grow_plan_create(pool, start, limit, err, errlen)) {
        memset(pool, 0, sizeof *pool);
        return -1;
    }
    kda_plan *plan = &pool->plan;
    void *range = mmap(NULL, plan->limit_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    pool->state_block = new_state_block(&pool->heap, plan->state_bytes);
    if (range == MAP_FAILED || !pool->state_block || mprotect(range, pool->start_bytes, PROT_READ | PROT_WRITE)) {
        if (range != MAP_FAILED) munmap(range, plan->limit_bytes);
        free(pool->state_block);
        memset(pool, 0, sizeof *pool);
        snprintf(err, errlen, "cannot reserve %llu bytes of host addresses for a pool",
                 (unsigned long long)limit);
        return -1;
    }
    pool->heap.base = range;
    kda_host_pool_reset(pool);
    return 0;
#else
    (void)start, (void)limit, (void)n_sms;
    snprintf(err, errlen, "%s cannot grow its pool: no host pool", KDA_ALLOC_NAME);
    return -1;
#endif
}

int kda_host_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    uint64_t want = grow_target(pool, bytes, "the limit the " KDA_ALLOC_NAME " pool was made with", err, errlen);
    if (!want) return -1;
    if (mprotect(pool->heap.base + pool->heap.bytes, want - pool->heap.bytes, PROT_READ | PROT_WRITE)) {
        snprintf(err, errlen, "cannot open %llu more bytes of the pool", (unsigned long long)(want - pool->heap.bytes));
        return -1;
    }
    kda_heap after = pool->heap;
    kda_alloc_grow_heap(&after, want);
    KDA_ASSERT(after.bytes > pool->heap.bytes && after.bytes <= pool->plan.limit_bytes,
               "a growth moves the pool's end forward, within its limit");
    kda_alloc_grow(&pool->heap, &after);
    pool->heap = after;
    return 0;
}

int kda_host_pool_space(const kda_pool *pool, kda_space *space)
{
    memset(space, 0, sizeof *space);
#if KDA_ALLOC_HOST
    if (!pool->state_block && pool->plan.state_bytes) return -1;
    kda_alloc_space(&pool->heap, space);
    return 0;
#else
    (void)pool;
    return -1;
#endif
}
