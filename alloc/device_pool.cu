/* device_pool.cu - pools in device memory for the allocator compiled in. */
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

#if defined(KDA_ALLOCATOR_IS_CIRCULAR)
__global__ void init_chunks(kda_heap heap, kda_layout layout)
{
    uint64_t total = (uint64_t)layout.n_heaps * layout.chunks;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total; i += (uint64_t)gridDim.x * blockDim.x)
        circ_init_chunk(&heap, &layout, (uint32_t)(i / layout.chunks), (uint32_t)(i % layout.chunks),
                        KDA_CIRCULAR_FUSED);
}

__global__ void init_finish(kda_heap heap, kda_layout layout)
{
    circ_init_finish(&heap, &layout, KDA_CIRCULAR_FUSED, KDA_CIRCULAR_MULTI);
}
#endif

extern "C" int kda_pool_reset(kda_pool *pool, char *err, size_t errlen)
{
#if defined(KDA_ALLOCATOR_IS_CIRCULAR)
    pool->heap.epoch++; /* headers of the last use no longer carry valid tags */
    uint64_t total = (uint64_t)pool->layout.n_heaps * pool->layout.chunks;
    if (total) { /* a pool smaller than the smallest chunk has no heap, only the remainder */
        unsigned blocks = (unsigned)((total + 255) / 256 < 65536 ? (total + 255) / 256 : 65536);
        init_chunks<<<blocks, 256>>>(pool->heap, pool->layout);
        if (cuda_failed(cudaGetLastError(), "initialising the pool", err, errlen)) return -1;
    }
    init_finish<<<1, 1>>>(pool->heap, pool->layout);
    if (cuda_failed(cudaGetLastError(), "initialising the pool", err, errlen)) return -1;
#elif defined(KDA_ALLOCATOR_IS_BUMP)
    if (cuda_failed(cudaMemset(pool->heap.counter, 0, sizeof *pool->heap.counter), "resetting the pool", err,
                    errlen))
        return -1;
#else
    (void)pool;
#endif
    return cuda_failed(cudaDeviceSynchronize(), "initialising the pool", err, errlen) ? -1 : 0;
}

extern "C" int kda_pool_create(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    pool->on_device = 1;
    bytes &= ~(uint64_t)(KDA_UNIT - 1);
    kda_heap *h = &pool->heap;
    h->bytes = bytes;
#if defined(KDA_ALLOCATOR_IS_CUDA)
    /* CUDA's malloc serves from the driver's device heap: size it instead.
     * The size is fixed once a kernel that uses malloc has run; a later pool
     * may then only reuse it. */
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
#else
    char what[96];
    snprintf(what, sizeof what, "allocating a pool of %.1f MiB on the GPU", (double)bytes / (1 << 20));
#if defined(KDA_ALLOCATOR_IS_CIRCULAR)
    int device = 0, sms = 1;
    if (cuda_failed(cudaGetDevice(&device), "cudaGetDevice", err, errlen) ||
        cuda_failed(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count",
                    err, errlen))
        return -1;
    uint32_t n_offsets = kda_circular_plan(pool, bytes, (uint32_t)sms, err, errlen);
    if (!n_offsets || cuda_failed(cudaMalloc(&pool->state, n_offsets * sizeof *h->offsets), what, err, errlen))
        return -1;
    h->offsets = (uint32_t *)pool->state;
#else
    if (cuda_failed(cudaMalloc(&pool->state, sizeof *h->counter), what, err, errlen)) return -1;
    h->counter = (uint64_t *)pool->state;
#endif
    if (cuda_failed(cudaMalloc((void **)&h->base, bytes ? bytes : KDA_UNIT), what, err, errlen)) {
        kda_pool_destroy(pool);
        return -1;
    }
    if (kda_pool_reset(pool, err, errlen)) {
        kda_pool_destroy(pool);
        return -1;
    }
    return 0;
#endif
}

extern "C" void kda_pool_destroy(kda_pool *pool)
{
    if (pool->heap.base) cudaFree(pool->heap.base);
    if (pool->state) cudaFree(pool->state);
    memset(pool, 0, sizeof *pool);
}
