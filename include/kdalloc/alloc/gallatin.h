/* gallatin.h - Gallatin (McCoy & Pandey, PPoPP 2024) through an adapter:
 * the published headers, unchanged, from KDA_PEERS_DIR/gallatin/include
 * (CMake's option; ../shared/peers by default), configured as the
 * allocator survey's harness does, Gallatin<16 MiB, 16, 4096>: segments of
 * 16 MiB split into blocks of size classes from 16 B to 4 KiB, larger
 * requests served from whole segments.
 *
 * The contract over Gallatin's API:
 *   pool         Gallatin's own: generate_on_device(bytes) takes the pool's
 *                bytes from cudaMalloc and builds its trees and tables; the
 *                object lives in device memory, and kda_state names it
 *   reset        the object freed and generated anew (Gallatin has no reset)
 *   malloc/free  the object's malloc and free, per thread
 *   space        not known (Gallatin keeps no free-byte count)
 * GPU only (no host version), and its pool cannot grow.
 *
 * C++ stays in this header: Gallatin is CUDA C++17, and its headers define
 * functions that are not inline, which two translation units of one program
 * may not both define.  So they are included inside an unnamed namespace
 * (every unit gets its own copies), after the system headers they include,
 * and the object is named by a plain pointer here (docs/peers.md). */
#ifndef KDA_GALLATIN_H
#define KDA_GALLATIN_H

#include <stdio.h>

#define KDA_ALLOC_NAME "Gallatin"
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 0 /* Gallatin allocates its own memory */
#define KDA_ALLOC_HOST 0
#define KDA_ALLOC_SPACE_KNOWN 0
#define KDA_ALLOC_BUILDS 1
/* 64 segments.  Gallatin's start takes blocks for every class before any
 * request (128 of 64 KiB for 16 B, halving to 4 a class: 13 segments, and
 * more where its starting threads race), and a start that finds no segment
 * ends the process (its headers exit on a failed launch): 256 MiB failed
 * at times on the H200, so the pool keeps room for the start and more. */
#define KDA_ALLOC_MIN_POOL (1ull << 30)
#define KDA_ALLOC_NO_GROW_WHY "Gallatin lays its segments out once, over the whole pool"

#include "kdalloc/detail/port.h"

typedef struct kda_state {
    void *gallatin; /* the Gallatin object, in device memory (NULL: none yet) */
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
    (void)h, (void)plan, (void)bytes, (void)n_sms, (void)err, (void)errlen;
    return 0;
}

static inline void kda_alloc_space(const kda_heap *view, kda_space *space)
{
    (void)view;
    space->free_bytes = space->largest_block = 0;
    space->known = 0;
}

#ifdef __CUDACC__
/* What Gallatin's headers include, first, so that their include guards
 * keep these out of the unnamed namespace below. */
#include <assert.h>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cstdio>
#include <cuda.h>
#include <cuda/std/tuple>
#include <cuda_runtime_api.h>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/generate.h>
#include <thrust/sort.h>
#include <vector>
namespace {
#include <gallatin/allocators/gallatin.cuh>
typedef gallatin::allocators::Gallatin<16ull << 20, 16ull, 4096ull> kda_gallatin;
}

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    return size ? ((kda_gallatin *)h->state.gallatin)->malloc((size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1)) : NULL;
}
KDA_FN void kda_free(const kda_heap *h, void *p)
{
    if (p) ((kda_gallatin *)h->state.gallatin)->free(p);
}
KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }

/* The allocator's object in device memory, made anew (a reset) or freed. */
#define KDA_ALLOC_DEVICE_OBJECT 1
static inline void kda_alloc_device_release(kda_heap *h)
{
    if (h->state.gallatin) kda_gallatin::free_on_device((kda_gallatin *)h->state.gallatin);
    h->state.gallatin = NULL;
}
static inline int kda_alloc_device_renew(kda_heap *h, char *err, size_t errlen)
{
    kda_alloc_device_release(h);
    h->state.gallatin = kda_gallatin::generate_on_device(h->bytes, 0x9e3779b9u, false, false);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess || !h->state.gallatin) {
        snprintf(err, errlen, "Gallatin could not lay out a pool of %.1f MiB: %s", (double)h->bytes / (1 << 20),
                 e != cudaSuccess ? cudaGetErrorString(e) : "no object");
        h->state.gallatin = NULL;
        return -1;
    }
    return 0;
}
#endif

#endif
