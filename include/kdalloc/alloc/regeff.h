/* regeff.h - the seed paper's own allocators (Vinkler & Havran, "Register
 * Efficient Memory Allocator for GPUs", HPG 2014) through an adapter: the
 * authors' code, unchanged, from KDA_PEERS_DIR/regeff/include (CMake's
 * option; ../shared/peers by default), so that our reimplementations
 * (atomic.h, awmalloc.h, the CMalloc family of circular.h) are measured
 * beside it in one harness.  One variant a build, chosen by the header that
 * includes this one (atomic_orig.h .. cfmmalloc_orig.h) through
 * KDA_REGEFF, set up as the allocator survey's harness sets it up:
 * AllocInfo{heapSize = the pool's bytes, payload = 4, maxFrag = 2.0,
 * chunkRatio = 1.0}, the code's own defaults for everything else.
 *
 * The contract over the original code:
 *   pool         the adapter's own device memory (cudaMalloc of the pool's
 *                bytes at the first reset, kept until the pool is
 *                destroyed); under 4 GiB (its offsets are 32-bit), under
 *                2 GiB for the fused variants (the flag is bit 31)
 *   reset        every module's copies of the original's globals set again
 *                (below); the circular variants' chunk list laid out again
 *                by the variant's own Circular...Prepare3 kernel
 *   malloc/free  the original's, per thread (uncoalesced); a request of 0
 *                bytes, or of 4 GiB or more, gets NULL without reaching it
 *   space        not known
 * GPU only, and the pool cannot grow.
 *
 * The pre-split list (the circular variants; the paper's equation 1): the
 * largest binary heap of chunks whose smallest is the original's minimum
 * chunk (its Prepare kernels' minChunkSize: header and payload, times
 * chunkRatio, aligned to 16 bytes) that fits the pool before its end
 * marker, the rest of the pool joined to the last chunk; the per-SM
 * variants one heap an SM of root R' = R / #SM (the paper's Sec. 5.4; R
 * the one heap's root), rounded down to the minimum chunk times a power of
 * two so that every chunk stays aligned, as ours (circular_layout.h).  The
 * harness that came with the code computed these on the host, and is not
 * published with it: this is the adapter's reading of the paper.
 *
 * State.  The original keeps its state in __device__ and __constant__
 * globals (the pool's base, its offset, the per-SM offsets, the lock,
 * AllocInfo), of which each CUDA module (each .cu file compiled) has its
 * own copies.  So every translation unit that includes this header gets
 * the code inside an unnamed namespace (its own copies, and the published
 * kernels renamed per unit: KDA_TU_ID, which CMake defines per source),
 * and registers a function that sets its copies; a reset calls every one
 * registered, so that a kernel of any file finds the same pool.  The walk's
 * starting offset (g_heapOffset) is one a module: blocks allocated from
 * two files' kernels at once start their walks at different chunks (the
 * authors' programs had one module).
 *
 * What the original does and ours does not (docs/peers.md, "The authors'
 * code"): AtomicMalloc answers a request past the pool's end with the
 * pool's base (its NULL offset added to the base), not NULL; the circular
 * variants walk the list until a chunk fits, so a request no chunk can
 * serve never returns.
 *
 * C++ stays in this header, as in gallatin.h: the original is CUDA C++. */
#ifndef KDA_REGEFF_H
#define KDA_REGEFF_H

#include <stdio.h>
#include <string.h>

/* The variants (KDA_REGEFF). */
#define KDA_REGEFF_ATOMIC 1
#define KDA_REGEFF_AWMALLOC 2
#define KDA_REGEFF_CMALLOC 3
#define KDA_REGEFF_CFMALLOC 4
#define KDA_REGEFF_CMMALLOC 5
#define KDA_REGEFF_CFMMALLOC 6
#ifndef KDA_REGEFF
#error "regeff.h: include it through one of atomic_orig.h .. cfmmalloc_orig.h, which set KDA_REGEFF"
#endif
#define KDA_REGEFF_CIRCULAR (KDA_REGEFF >= KDA_REGEFF_CMALLOC)
#define KDA_REGEFF_MULTI (KDA_REGEFF == KDA_REGEFF_CMMALLOC || KDA_REGEFF == KDA_REGEFF_CFMMALLOC)
#define KDA_REGEFF_FUSED (KDA_REGEFF == KDA_REGEFF_CFMALLOC || KDA_REGEFF == KDA_REGEFF_CFMMALLOC)

#define KDA_ALLOC_FREES KDA_REGEFF_CIRCULAR
#define KDA_ALLOC_REUSES_HOLES KDA_REGEFF_CIRCULAR
#define KDA_ALLOC_WRAPS (KDA_REGEFF == KDA_REGEFF_AWMALLOC)
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 0
#define KDA_ALLOC_SPACE_KNOWN 0
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL (1ull << 20)
#define KDA_ALLOC_NO_GROW_WHY "the authors' code keeps its pool's size in constant memory and its list laid out once"
/* The original's offsets are 32-bit byte offsets; the fused variants keep
 * the used flag in bit 31 of the next chunk's offset, so 2 GiB there. */
#define KDA_REGEFF_MAX_POOL (KDA_REGEFF_FUSED ? 1ull << 31 : 1ull << 32)

#include "kdalloc/detail/port.h"

typedef struct kda_state {
    uint32_t *sm_offsets; /* the per-SM variants' g_heapMultiOffset array, in device memory (NULL: none) */
} kda_state;

#include "kdalloc/detail/heap.h"

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    (void)h, (void)block;
    return 0;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    (void)h, (void)plan, (void)n_sms;
    if (bytes >= KDA_REGEFF_MAX_POOL) {
        snprintf(err, errlen, "%s addresses less than %s (asked for %.1f MiB): %s", KDA_ALLOC_NAME,
                 KDA_REGEFF_FUSED ? "2 GiB" : "4 GiB", (double)bytes / (1 << 20),
                 KDA_REGEFF_FUSED ? "its used flag is bit 31 of a 32-bit byte offset" : "its offsets are 32-bit");
        return -1;
    }
    return 0;
}

static inline void kda_alloc_space(const kda_heap *view, kda_space *space)
{
    (void)view;
    space->free_bytes = space->largest_block = 0;
    space->known = 0;
}

/* The pre-split list of a circular variant (the top of this file). */
typedef struct kda_regeff_layout {
    uint32_t chunks;     /* numChunks: of every heap together */
    uint32_t root_bytes; /* rootChunk: a heap's largest chunk */
} kda_regeff_layout;

/* -1 when the pool holds no heap (or, per SM, not one an SM). */
static inline int kda_regeff_layout_compute(uint64_t bytes, uint32_t header, uint32_t n_heaps, kda_regeff_layout *l)
{
    uint64_t min_chunk = ((uint64_t)header + 4u + 15u) & ~(uint64_t)15u; /* (header + payload) * 1.0, aligned */
    if (bytes <= header) return -1;
    uint64_t usable = bytes - header; /* the end marker's header last */
    uint32_t levels = 0;
    while (levels < 31 && (uint64_t)(levels + 1) * (min_chunk << levels) <= usable) levels++;
    if (levels == 0) return -1;
    if (n_heaps > 1) { /* R' = R / #SM, rounded down to min_chunk * 2^k */
        uint64_t share = (min_chunk << (levels - 1)) / n_heaps;
        if (share < min_chunk) return -1;
        levels = 1;
        while ((min_chunk << levels) <= share) levels++;
    }
    l->chunks = n_heaps * ((1u << levels) - 1u);
    l->root_bytes = (uint32_t)(min_chunk << (levels - 1));
    return 0;
}

#ifdef __CUDACC__
/* What the original's headers include, first, so that their include
 * guards keep these out of the unnamed namespace below. */
#include <cstdint>
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#include <device_launch_parameters.h>

/* The published kernels have C linkage, which an unnamed namespace does not
 * make local: each translation unit renames its copies. */
#ifndef KDA_TU_ID
#define KDA_TU_ID main
#endif
#define KDA_REGEFF_CAT2(a, b) a##_##b
#define KDA_REGEFF_CAT(a, b) KDA_REGEFF_CAT2(a, b)
#define CircularMallocPrepare1 KDA_REGEFF_CAT(CircularMallocPrepare1, KDA_TU_ID)
#define CircularMallocPrepare3 KDA_REGEFF_CAT(CircularMallocPrepare3, KDA_TU_ID)
#define CircularFusedMallocPrepare1 KDA_REGEFF_CAT(CircularFusedMallocPrepare1, KDA_TU_ID)
#define CircularFusedMallocPrepare3 KDA_REGEFF_CAT(CircularFusedMallocPrepare3, KDA_TU_ID)
#define CircularMultiMallocPrepare1 KDA_REGEFF_CAT(CircularMultiMallocPrepare1, KDA_TU_ID)
#define CircularMultiMallocPrepare3 KDA_REGEFF_CAT(CircularMultiMallocPrepare3, KDA_TU_ID)
#define CircularFusedMultiMallocPrepare1 KDA_REGEFF_CAT(CircularFusedMultiMallocPrepare1, KDA_TU_ID)
#define CircularFusedMultiMallocPrepare3 KDA_REGEFF_CAT(CircularFusedMultiMallocPrepare3, KDA_TU_ID)
namespace {
#include <gpualloc_impl.cuh>
}

/* What one module's copies of the original's globals are set to. */
struct kda_regeff_setup {
    char *base;
    unsigned long long bytes;
    unsigned int n_sms;
    unsigned int *sm_offsets;
};
typedef int (*kda_regeff_sync_fn)(const kda_regeff_setup *);

/* Every translation unit's function that sets its module's copies (one
 * list for the program: inline variables are merged across units). */
#define KDA_REGEFF_MODULES 64
inline kda_regeff_sync_fn kda_regeff_modules[KDA_REGEFF_MODULES];
inline int kda_regeff_n_modules; /* registered, at most KDA_REGEFF_MODULES; a reset refuses more */

namespace {
/* This module's copies of the original's globals, as the survey's harness
 * sets them; the start offset 0. */
int kda_regeff_sync(const kda_regeff_setup *s)
{
    AllocInfo info;
    info.heapSize = s->bytes;
    info.payload = 4;
    info.maxFrag = 2.0;
    info.chunkRatio = 1.0;
    unsigned int zero = 0;
    if (cudaMemcpyToSymbol(c_alloc, &info, sizeof info) != cudaSuccess ||
        cudaMemcpyToSymbol(g_heapBase, &s->base, sizeof s->base) != cudaSuccess ||
        cudaMemcpyToSymbol(g_heapOffset, &zero, sizeof zero) != cudaSuccess ||
        cudaMemcpyToSymbol(g_heapLock, &zero, sizeof zero) != cudaSuccess ||
        cudaMemcpyToSymbol(g_numSM, &s->n_sms, sizeof s->n_sms) != cudaSuccess ||
        cudaMemcpyToSymbol(g_heapMultiOffset, &s->sm_offsets, sizeof s->sm_offsets) != cudaSuccess)
        return -1;
    return 0;
}

/* Registers kda_regeff_sync when the program starts. */
struct kda_regeff_registration {
    kda_regeff_registration()
    {
        if (kda_regeff_n_modules < KDA_REGEFF_MODULES) kda_regeff_modules[kda_regeff_n_modules] = kda_regeff_sync;
        kda_regeff_n_modules++;
    }
};
kda_regeff_registration kda_regeff_registered;

#if KDA_REGEFF_CIRCULAR
/* The variant's Prepare3 kernel: lays the chunk list out. */
void kda_regeff_prepare(uint32_t chunks, uint32_t root_bytes)
{
    unsigned blocks = (chunks + 255u) / 256u;
#if KDA_REGEFF == KDA_REGEFF_CMALLOC
    CircularMallocPrepare3<<<blocks, 256>>>(chunks, root_bytes);
#elif KDA_REGEFF == KDA_REGEFF_CFMALLOC
    CircularFusedMallocPrepare3<<<blocks, 256>>>(chunks, root_bytes);
#elif KDA_REGEFF == KDA_REGEFF_CMMALLOC
    CircularMultiMallocPrepare3<<<blocks, 256>>>(chunks, root_bytes);
#else
    CircularFusedMultiMallocPrepare3<<<blocks, 256>>>(chunks, root_bytes);
#endif
}
#endif
} /* namespace */

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    (void)h;
    if (size == 0 || size >= (1ull << 32)) return NULL;
#if KDA_REGEFF == KDA_REGEFF_ATOMIC
    return mallocAtomicMalloc((uint)size);
#elif KDA_REGEFF == KDA_REGEFF_AWMALLOC
    return mallocAtomicWrapMalloc((uint)size);
#elif KDA_REGEFF == KDA_REGEFF_CMALLOC
    return mallocCircularMalloc((uint)size);
#elif KDA_REGEFF == KDA_REGEFF_CFMALLOC
    return mallocCircularFusedMalloc((uint)size);
#elif KDA_REGEFF == KDA_REGEFF_CMMALLOC
    return mallocCircularMultiMalloc((uint)size);
#else
    return mallocCircularFusedMultiMalloc((uint)size);
#endif
}

KDA_FN void kda_free(const kda_heap *h, void *p)
{
    (void)h;
    if (!p) return;
#if KDA_REGEFF == KDA_REGEFF_CMALLOC
    freeCircularMalloc(p);
#elif KDA_REGEFF == KDA_REGEFF_CFMALLOC
    freeCircularFusedMalloc(p);
#elif KDA_REGEFF == KDA_REGEFF_CMMALLOC
    freeCircularMultiMalloc(p);
#elif KDA_REGEFF == KDA_REGEFF_CFMMALLOC
    freeCircularFusedMultiMalloc(p);
#endif
}
KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }

/* The pool's memory and the per-SM offsets, the adapter's own. */
#define KDA_ALLOC_DEVICE_OBJECT 1
static inline void kda_alloc_device_release(kda_heap *h)
{
    cudaFree(h->base);
    cudaFree(h->state.sm_offsets);
    h->base = NULL;
    h->state.sm_offsets = NULL;
}

/* A reset: the memory at the first, then every module's globals, then the
 * list laid out. */
static inline int kda_alloc_device_renew(kda_heap *h, char *err, size_t errlen)
{
    int device = 0, sms = 1;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess && !h->base) e = cudaMalloc((void **)&h->base, h->bytes);
    if (e == cudaSuccess && KDA_REGEFF_MULTI && !h->state.sm_offsets)
        e = cudaMalloc((void **)&h->state.sm_offsets, (size_t)sms * sizeof(uint32_t));
    if (e != cudaSuccess) {
        snprintf(err, errlen, "%s: a pool of %.1f MiB: %s", KDA_ALLOC_NAME, (double)h->bytes / (1 << 20),
                 cudaGetErrorString(e));
        cudaGetLastError();
        return -1;
    }
    if (kda_regeff_n_modules > KDA_REGEFF_MODULES) { /* a module would keep globals no reset sets */
        snprintf(err, errlen, "%s: %d translation units include it, at most %d can be set up", KDA_ALLOC_NAME,
                 kda_regeff_n_modules, KDA_REGEFF_MODULES);
        return -1;
    }
    kda_regeff_setup s = {(char *)h->base, h->bytes, (unsigned int)sms, h->state.sm_offsets};
    for (int i = 0; i < kda_regeff_n_modules; i++)
        if (kda_regeff_modules[i](&s)) {
            snprintf(err, errlen, "%s: setting a module's globals: %s", KDA_ALLOC_NAME,
                     cudaGetErrorString(cudaGetLastError()));
            return -1;
        }
#if KDA_REGEFF_CIRCULAR
    kda_regeff_layout l;
    uint32_t header = KDA_REGEFF_FUSED ? 4u : (uint32_t)CIRCULAR_MALLOC_HEADER_SIZE;
    if (kda_regeff_layout_compute(h->bytes, header, KDA_REGEFF_MULTI ? (uint32_t)sms : 1u, &l)) {
        snprintf(err, errlen, "%s: a pool of %.1f MiB holds no pre-split heap%s", KDA_ALLOC_NAME,
                 (double)h->bytes / (1 << 20), KDA_REGEFF_MULTI ? " an SM" : "");
        return -1;
    }
    kda_regeff_prepare(l.chunks, l.root_bytes);
#endif
    e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(err, errlen, "%s: laying out a pool of %.1f MiB: %s", KDA_ALLOC_NAME, (double)h->bytes / (1 << 20),
                 cudaGetErrorString(e));
        return -1;
    }
    return 0;
}
#endif

#endif
