/* device_pool.cu - pools in device memory for the allocator compiled in:
 * the pool and the allocator's state (cudaMalloc), CUDA's device heap for
 * the allocators that use the system allocator, the reset kernels, and
 * growable pools (CUDA's virtual memory management: an address range
 * reserved once, physical memory mapped at its end as the pool grows).
 *
 * Invariants.  A growable pool's sizes and refusals are grow_plan.h's, the
 * same as a host pool's; only the mapping (cuMemCreate, cuMemMap) is this
 * file's, and a growth that fails leaves the pool as it was. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow_plan.h"
#include "kdalloc/kdalloc.h"

static int cuda_failed(cudaError_t e, const char *what, char *err, size_t errlen)
{
    if (e == cudaSuccess) return 0;
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    return 1;
}

extern "C" int kda_gpu_usable(char *why, size_t why_len)
{
    int count = 0, driver = 0, runtime = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) return 0;
    cudaGetLastError();
    cudaDriverGetVersion(&driver); /* 0 where no driver is installed */
    cudaRuntimeGetVersion(&runtime);
    if (e == cudaErrorInsufficientDriver && driver == 0)
        snprintf(why, why_len, "no usable CUDA device (no CUDA driver is installed)");
    else if (e == cudaErrorInsufficientDriver)
        snprintf(why, why_len, "no usable CUDA device (the CUDA driver, for CUDA %d.%d, is older than this "
                 "program's CUDA runtime %d.%d)", driver / 1000, driver % 1000 / 10, runtime / 1000,
                 runtime % 1000 / 10);
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(why, why_len, "no usable CUDA device (the CUDA driver found no GPU)");
    else
        snprintf(why, why_len, "no usable CUDA device (%s)", cudaGetErrorString(e));
    return -1;
}

__global__ void reset_items(kda_heap heap, uint64_t total)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total; i += (uint64_t)gridDim.x * blockDim.x)
        kda_alloc_reset_item(&heap, i);
}

__global__ void reset_finish(kda_heap heap) { kda_alloc_reset_finish(&heap); }

static int run_reset_items(kda_pool *pool, char *err, size_t errlen)
{
    uint64_t total = pool->plan.reset_items;
    if (!total) return 0;
    unsigned blocks = (unsigned)((total + 255) / 256 < 65536 ? (total + 255) / 256 : 65536);
    reset_items<<<blocks, 256>>>(pool->heap, total);
    return cuda_failed(cudaGetLastError(), "initialising the pool", err, errlen) ? -1 : 0;
}

static int unmap_to(kda_pool *pool, uint64_t bytes, char *err, size_t errlen);

extern "C" int kda_pool_reset(kda_pool *pool, char *err, size_t errlen)
{
    if (pool->plan.limit_bytes && pool->n_maps > 1) { /* a grown pool starts small again */
        if (cuda_failed(cudaDeviceSynchronize(), "resetting the pool", err, errlen) ||
            unmap_to(pool, pool->start_bytes, err, errlen))
            return -1;
        pool->heap.bytes = pool->start_bytes;
        if (kda_alloc_plan(&pool->heap, &pool->plan, pool->start_bytes, pool->n_sms, err, errlen)) return -1;
        kda_alloc_bind(&pool->heap, (unsigned char *)pool->state_block);
    }
    kda_alloc_reset_host(&pool->heap);
#if KDA_ALLOC_DEVICE_OBJECT
    if (kda_alloc_device_renew(&pool->heap, err, errlen)) return -1;
#endif
    if (run_reset_items(pool, err, errlen)) return -1;
    if (pool->plan.clear_bytes &&
        cuda_failed(cudaMemset(pool->state_block, 0, pool->plan.clear_bytes), "resetting the pool", err, errlen))
        return -1;
    reset_finish<<<1, 1>>>(pool->heap);
    if (cuda_failed(cudaGetLastError(), "initialising the pool", err, errlen)) return -1;
    return cuda_failed(cudaDeviceSynchronize(), "initialising the pool", err, errlen) ? -1 : 0;
}

/* CUDA's malloc serves from the driver's device heap: size it.  The size
 * is fixed once a kernel that uses malloc has run; a later pool may then
 * only reuse it, if it is large enough (the driver rounds small heaps up:
 * a heap of 800 bytes is 4 MiB). */
static int size_device_heap(uint64_t bytes, char *err, size_t errlen)
{
    size_t limit = 0;
    if (cuda_failed(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize), "reading the device malloc heap size",
                    err, errlen))
        return -1;
    if (limit == bytes) return 0;
    if (cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes) != cudaSuccess) {
        cudaGetLastError();
        if (limit >= bytes) return 0; /* the heap the driver made of an earlier request holds this pool */
        snprintf(err, errlen,
                 "CUDA's device malloc heap is fixed at %.1f MiB once a kernel has used it; a pool of %.1f MiB "
                 "needs a new process",
                 (double)limit / (1 << 20), (double)bytes / (1 << 20));
        return -1;
    }
    return 0;
}

/* The allocator's state block (cudaMalloc: 256-byte aligned), zeroed, and
 * the descriptor pointed into it. */
static int new_state_block(kda_pool *pool, const char *what, char *err, size_t errlen)
{
    if (!pool->plan.state_bytes) return 0;
    if (cuda_failed(cudaMalloc(&pool->state_block, pool->plan.state_bytes), what, err, errlen)) {
        pool->state_block = NULL;
        return -1;
    }
    kda_alloc_bind(&pool->heap, (unsigned char *)pool->state_block); /* bound before anything can fail */
    if (cuda_failed(cudaMemset(pool->state_block, 0, pool->plan.state_bytes), what, err, errlen)) return -1;
    return 0;
}

/* A fixed pool; on failure its caller destroys what was made. */
static int create_fixed(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    pool->on_device = 1;
    bytes &= ~(uint64_t)(KDA_UNIT - 1);
    if (bytes < kda_allocator_min_pool()) {
        snprintf(err, errlen, "%s needs a pool of at least %.4g MiB (asked for %.4g MiB)", KDA_ALLOC_NAME,
                 (double)kda_allocator_min_pool() / (1 << 20), (double)bytes / (1 << 20));
        return -1;
    }
    kda_heap *h = &pool->heap;
    h->bytes = bytes;
    int device = 0, sms = 1;
    if (kda_gpu_usable(err, errlen)) return -1;
    if (cuda_failed(cudaGetDevice(&device), "cudaGetDevice", err, errlen) ||
        cuda_failed(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count",
                    err, errlen))
        return -1;
    pool->n_sms = (uint32_t)sms;
    if (kda_alloc_plan(h, &pool->plan, bytes, (uint32_t)sms, err, errlen)) return -1;
    if (pool->plan.sys_heap_bytes && size_device_heap(pool->plan.sys_heap_bytes, err, errlen)) return -1;
    char what[96];
    snprintf(what, sizeof what, "allocating a pool of %.1f MiB on the GPU", (double)bytes / (1 << 20));
    if (new_state_block(pool, what, err, errlen)) return -1;
    /* the part the allocator lays out itself (an allocator with an object
     * of its own takes its memory itself) */
    if (!KDA_ALLOC_DEVICE_OBJECT && pool->plan.sys_heap_bytes < bytes &&
        cuda_failed(cudaMalloc((void **)&h->base, bytes - pool->plan.sys_heap_bytes), what, err, errlen))
        return -1;
    return kda_pool_reset(pool, err, errlen);
}

extern "C" int kda_pool_create(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    int rc = create_fixed(pool, bytes, err, errlen);
    if (rc) kda_pool_destroy(pool); /* frees what was made and zeroes the pool */
    return rc;
}

static void release_range(kda_pool *pool);

extern "C" void kda_pool_destroy(kda_pool *pool)
{
    if (!KDA_ALLOC_IN_POOL && pool->state_block && pool->plan.reset_items) { /* give back what the device heap holds */
        char err[128];
        if (run_reset_items(pool, err, sizeof err) == 0) cudaDeviceSynchronize();
    }
#if KDA_ALLOC_DEVICE_OBJECT
    kda_alloc_device_release(&pool->heap);
#endif
    if (pool->plan.limit_bytes) release_range(pool);
    else if (pool->heap.base) cudaFree(pool->heap.base);
    if (pool->state_block) cudaFree(pool->state_block);
    memset(pool, 0, sizeof *pool);
}

/* ------------------------------------------------------------------------
 * Growable pools.  The driver's virtual memory calls are reached through
 * cudaGetDriverEntryPointByVersion, so that kdalloc needs no link to
 * libcuda (it starts, and says why it cannot use a GPU, where there is no
 * driver).  Each growth step maps one new physical allocation behind the
 * last; the mapping keeps the memory, so the handle is released at once.
 * ------------------------------------------------------------------------ */

typedef struct vmm_api {
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*address_free)(CUdeviceptr, size_t);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    CUresult (*error_string)(CUresult, const char **);
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
} vmm_api;

static vmm_api vmm;

static int vmm_load(char *err, size_t errlen)
{
    if (vmm.set_access) return 0;
    struct {
        const char *name;
        void **fn;
    } want[] = {{"cuMemAddressReserve", (void **)&vmm.reserve}, {"cuMemAddressFree", (void **)&vmm.address_free},
                {"cuMemCreate", (void **)&vmm.create},          {"cuMemRelease", (void **)&vmm.release},
                {"cuMemMap", (void **)&vmm.map},                {"cuMemUnmap", (void **)&vmm.unmap},
                {"cuMemGetAllocationGranularity", (void **)&vmm.granularity},
                {"cuGetErrorString", (void **)&vmm.error_string},
                {"cuDeviceGetAttribute", (void **)&vmm.attribute}, {"cuMemSetAccess", (void **)&vmm.set_access}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion(want[i].name, want[i].fn, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess || !*want[i].fn) {
            cudaGetLastError();
            memset(&vmm, 0, sizeof vmm);
            snprintf(err, errlen, "the CUDA driver has no %s: a growable pool needs CUDA's virtual memory calls "
                                  "(use a fixed pool)", want[i].name);
            return -1;
        }
    }
    return 0;
}

extern "C" int kda_pool_growth_supported(const char **why)
{
    char err[256];
    int device = 0, supported = 0;
    if (vmm_load(err, sizeof err)) {
        if (why) *why = "the CUDA driver has no virtual memory calls";
        return 0;
    }
    cudaGetDevice(&device);
    if (vmm.attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, (CUdevice)device) !=
            CUDA_SUCCESS ||
        !supported) {
        if (why) *why = "this GPU or its driver has no virtual memory management";
        return 0;
    }
    if (why) *why = NULL;
    return 1;
}

static int vmm_failed(CUresult r, const char *what, char *err, size_t errlen)
{
    if (r == CUDA_SUCCESS) return 0;
    const char *s = NULL;
    if (vmm.error_string) vmm.error_string(r, &s);
    snprintf(err, errlen, "%s: %s", what, s ? s : "CUDA driver error");
    return 1;
}

static CUmemAllocationProp vmm_prop(void)
{
    int device = 0;
    cudaGetDevice(&device);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
}

/* Maps [heap.bytes, bytes) of the reserved range to new device memory. */
static int map_more(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    if (pool->n_maps == KDA_POOL_MAX_MAPS) {
        snprintf(err, errlen, "the pool has grown %d times already, the most it may", KDA_POOL_MAX_MAPS);
        return -1;
    }
    uint64_t from = pool->n_maps ? pool->map_ends[pool->n_maps - 1] : 0;
    CUdeviceptr at = (CUdeviceptr)(uintptr_t)pool->heap.base + from;
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle handle;
    char what[160];
    snprintf(what, sizeof what, "mapping %.1f MiB more of GPU memory for the pool (%.1f MiB mapped)",
             (double)(bytes - from) / (1 << 20), (double)from / (1 << 20));
    if (vmm_failed(vmm.create(&handle, bytes - from, &prop, 0), what, err, errlen)) return -1;
    if (vmm_failed(vmm.map(at, bytes - from, 0, handle, 0), what, err, errlen)) {
        vmm.release(handle);
        return -1;
    }
    vmm.release(handle); /* the mapping holds the memory */
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (vmm_failed(vmm.set_access(at, bytes - from, &access, 1), what, err, errlen)) {
        vmm.unmap(at, bytes - from);
        return -1;
    }
    pool->map_ends[pool->n_maps++] = bytes;
    return 0;
}

/* Unmaps every mapping past `bytes` (a mapping's end). */
static int unmap_to(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    while (pool->n_maps && pool->map_ends[pool->n_maps - 1] > bytes) {
        uint64_t end = pool->map_ends[pool->n_maps - 1];
        uint64_t from = pool->n_maps > 1 ? pool->map_ends[pool->n_maps - 2] : 0;
        if (vmm_failed(vmm.unmap((CUdeviceptr)(uintptr_t)pool->heap.base + from, end - from),
                       "unmapping the pool's growth", err, errlen))
            return -1;
        pool->n_maps--;
    }
    return 0;
}

static void release_range(kda_pool *pool)
{
    char err[160];
    cudaDeviceSynchronize(); /* no kernel may still use the range */
    if (pool->heap.base) {
        unmap_to(pool, 0, err, sizeof err);
        vmm.address_free((CUdeviceptr)(uintptr_t)pool->heap.base, pool->plan.limit_bytes);
    }
}

/* A growable pool (its sizes as grow_plan.h decides them, as a host
 * pool's); on failure its caller destroys what was made. */
static int create_growable(kda_pool *pool, uint64_t start, uint64_t limit, char *err, size_t errlen)
{
    memset(pool, 0, sizeof *pool);
    if (grow_refused(err, errlen) || kda_gpu_usable(err, errlen) || vmm_load(err, errlen)) return -1;
    CUmemAllocationProp prop = vmm_prop();
    size_t granule = 0;
    if (vmm_failed(vmm.granularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                   "reading the GPU's mapping granularity", err, errlen))
        return -1;
    int device = 0, sms = 1;
    if (cuda_failed(cudaGetDevice(&device), "cudaGetDevice", err, errlen) ||
        cuda_failed(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count",
                    err, errlen))
        return -1;
    pool->on_device = 1;
    pool->granule = granule;
    pool->n_sms = (uint32_t)sms;
    if (grow_plan_create(pool, start, limit, err, errlen)) return -1;
    kda_plan *plan = &pool->plan;
    CUdeviceptr va = 0;
    char what[96];
    snprintf(what, sizeof what, "reserving %.1f GiB of GPU addresses for the pool",
             (double)plan->limit_bytes / (1u << 30));
    if (vmm_failed(vmm.reserve(&va, plan->limit_bytes, granule, 0, 0), what, err, errlen)) {
        plan->limit_bytes = 0;
        return -1;
    }
    pool->heap.base = (unsigned char *)(uintptr_t)va;
    snprintf(what, sizeof what, "allocating the state of a pool of %.1f MiB on the GPU",
             grow_mib(pool->start_bytes));
    if (map_more(pool, pool->start_bytes, err, errlen) || new_state_block(pool, what, err, errlen)) return -1;
    return kda_pool_reset(pool, err, errlen);
}

extern "C" int kda_pool_create_growable(kda_pool *pool, uint64_t start, uint64_t limit, char *err, size_t errlen)
{
    int rc = create_growable(pool, start, limit, err, errlen);
    if (rc) kda_pool_destroy(pool); /* frees what was made and zeroes the pool */
    return rc;
}

__global__ void grow_pool(kda_heap before, kda_heap after) { kda_alloc_grow(&before, &after); }

extern "C" int kda_pool_grow(kda_pool *pool, uint64_t bytes, char *err, size_t errlen)
{
    uint64_t want = grow_target(pool, bytes, "what the GPU had free when the pool was made", err, errlen);
    if (!want) return -1;
    if (map_more(pool, want, err, errlen)) return -1;
    kda_heap after = pool->heap;
    kda_alloc_grow_heap(&after, want);
    grow_pool<<<1, 1>>>(pool->heap, after); /* kernels after it on the stream see the grown pool */
    if (cuda_failed(cudaGetLastError(), "growing the pool", err, errlen)) {
        char ignored[128];
        unmap_to(pool, pool->heap.bytes, ignored, sizeof ignored); /* the pool stays as it was */
        return -1;
    }
    pool->heap = after;
    return 0;
}

/* A host copy of the state (and, where the allocator reads it, of the
 * pool), walked by the allocator's kda_alloc_space. */
extern "C" int kda_pool_space(const kda_pool *pool, kda_space *space, char *err, size_t errlen)
{
    memset(space, 0, sizeof *space);
    kda_heap view = pool->heap;
    unsigned char *state = NULL, *bytes = NULL;
    if (pool->plan.state_bytes) {
        if (!(state = (unsigned char *)malloc(pool->plan.state_bytes))) {
            snprintf(err, errlen, "out of host memory for a copy of the pool's state");
            return -1;
        }
        if (cuda_failed(cudaMemcpy(state, pool->state_block, pool->plan.state_bytes, cudaMemcpyDeviceToHost),
                        "reading the pool's state", err, errlen)) {
            free(state);
            return -1;
        }
        kda_alloc_bind(&view, state);
    }
    if (KDA_ALLOC_SPACE_READS_POOL) {
        if (!(bytes = (unsigned char *)malloc(pool->heap.bytes))) {
            snprintf(err, errlen, "out of host memory for a copy of the pool (%.1f MiB)",
                     (double)pool->heap.bytes / (1 << 20));
            free(state);
            return -1;
        }
        if (cuda_failed(cudaMemcpy(bytes, pool->heap.base, pool->heap.bytes, cudaMemcpyDeviceToHost),
                        "reading the pool", err, errlen)) {
            free(state);
            free(bytes);
            return -1;
        }
        view.base = bytes;
    }
    kda_alloc_space(&view, space);
    free(state);
    free(bytes);
    return 0;
}
