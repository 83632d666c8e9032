/* device_pool.cu - pools in device memory for the allocator compiled in:
 * the pool and the allocator's state (cudaMalloc), CUDA's device heap for
 * the allocators that use the system allocator, and the reset kernels. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

static int cuda_failed(cudaError_t e, const char *what, char *err, size_t errlen)
{
    if (e == cudaSuccess) return 0;
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    return 1;
}

__global__ void reset_items(kda_heap heap, kda_layout layout, uint64_t total)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total; i += (uint64_t)gridDim.x * blockDim.x)
        kda_alloc_reset_item(&heap, &layout, i);
}

__global__ void reset_finish(kda_heap heap, kda_layout layout) { kda_alloc_reset_finish(&heap, &layout); }

static int run_reset_items(kda_pool *pool, char *err, size_t errlen)
{
    uint64_t total = pool->reset_items;
    if (!total) return 0;
    unsigned blocks = (unsigned)((total + 255) / 256 < 65536 ? (total + 255) / 256 : 65536);
    reset_items<<<blocks, 256>>>(pool->heap, pool->layout, total);
    return cuda_failed(cudaGetLastError(), "initialising the pool", err, errlen) ? -1 : 0;
}

extern "C" int kda_pool_reset(kda_pool *pool, char *err, size_t errlen)
{
    pool->heap.epoch++; /* circular: headers of the last use no longer carry valid tags */
    if (run_reset_items(pool, err, errlen)) return -1;
    if (pool->clear_bytes &&
        cuda_failed(cudaMemset(pool->state, 0, pool->clear_bytes), "resetting the pool", err, errlen))
        return -1;
    reset_finish<<<1, 1>>>(pool->heap, pool->layout);
    if (cuda_failed(cudaGetLastError(), "initialising the pool", err, errlen)) return -1;
    return cuda_failed(cudaDeviceSynchronize(), "initialising the pool", err, errlen) ? -1 : 0;
}

/* CUDA's malloc serves from the driver's device heap: size it.  The size
 * is fixed once a kernel that uses malloc has run; a later pool may then
 * only reuse it. */
static int size_device_heap(uint64_t bytes, char *err, size_t errlen)
{
    size_t limit = 0;
    if (cuda_failed(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize), "reading the device malloc heap size",
                    err, errlen))
        return -1;
    if (limit == bytes) return 0;
    if (cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes) != cudaSuccess) {
        cudaGetLastError();
        if (limit >= bytes && limit - bytes < (limit >> 4)) return 0; /* what the driver made of the same request */
        snprintf(err, errlen,
                 "CUDA's device malloc heap is fixed at %.1f MiB once a kernel has used it; a pool of %.1f MiB "
                 "needs a new process",
                 (double)limit / (1 << 20), (double)bytes / (1 << 20));
        return -1;
    }
    return 0;
}

extern "C" int kda_pool_create(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    pool->on_device = 1;
    bytes &= ~(uint64_t)(KDA_UNIT - 1);
    if (bytes < kda_allocator_min_pool()) {
        snprintf(err, errlen, "%s needs a pool of at least %llu MiB (asked for %.1f MiB)", KDA_ALLOC_NAME,
                 (unsigned long long)(kda_allocator_min_pool() >> 20), (double)bytes / (1 << 20));
        return -1;
    }
    kda_heap *h = &pool->heap;
    h->bytes = bytes;
    int device = 0, sms = 1;
    if (cuda_failed(cudaGetDevice(&device), "cudaGetDevice", err, errlen) ||
        cuda_failed(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count",
                    err, errlen))
        return -1;
    if (kda_alloc_plan(pool, bytes, (uint32_t)sms, err, errlen)) return -1;
    if (pool->sys_heap_bytes && size_device_heap(pool->sys_heap_bytes, err, errlen)) return -1;
    char what[96];
    snprintf(what, sizeof what, "allocating a pool of %.1f MiB on the GPU", (double)bytes / (1 << 20));
    if (pool->state_bytes) {
        if (cuda_failed(cudaMalloc(&pool->state, pool->state_bytes), what, err, errlen) ||
            cuda_failed(cudaMemset(pool->state, 0, pool->state_bytes), what, err, errlen))
            return -1;
        h->meta = (unsigned char *)pool->state;
    }
    if (pool->sys_heap_bytes < bytes) { /* the part the allocator lays out itself */
        if (cuda_failed(cudaMalloc((void **)&h->base, bytes - pool->sys_heap_bytes), what, err, errlen)) {
            kda_pool_destroy(pool);
            return -1;
        }
    }
    if (kda_pool_reset(pool, err, errlen)) {
        kda_pool_destroy(pool);
        return -1;
    }
    return 0;
}

extern "C" void kda_pool_destroy(kda_pool *pool)
{
    if (!KDA_ALLOC_IN_POOL && pool->state && pool->reset_items) { /* give back what the device heap holds */
        char err[128];
        if (run_reset_items(pool, err, sizeof err) == 0) cudaDeviceSynchronize();
    }
    if (pool->heap.base) cudaFree(pool->heap.base);
    if (pool->state) cudaFree(pool->state);
    memset(pool, 0, sizeof *pool);
}
