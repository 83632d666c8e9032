/* binbench.cu - kdalloc-binbench: where a big node's BIN chunk spends its
 * cycles.  A BIN chunk (builder/gpu_big_node.cuh) bins 128 references into
 * its warp's shared-memory bins: per step of 32, each lane loads a
 * reference and its box, and on each axis computes bin_of (gpu_sah.cuh) of
 * both sides and adds 1 to two bins.  This program times the same loop on a
 * synthetic, spatially coherent scene (a strip of small triangles in file
 * order, as OBJ files store them), with one part taken away at a time:
 *
 *   as the builder      the loop of bin_range, loads pipelined two steps
 *                       deep, the three axes unrolled
 *   planes checked      each bin checked against its two planes and mended,
 *                       as the builder once did
 *   no bin atomics      the bins summed into a register instead
 *   boxes computed      each box computed from its index instead of loaded
 *   loads only          the references and boxes loaded, nothing binned
 *   axes rolled         one axis at a time, picked with selects, as the
 *                       builder once did
 *
 * Each warp times its chunks with clock64 on a second pass over the scene
 * (the first warms the caches), with 1 warp an SM (as during the big-node
 * levels of a small scene) and 24 (every warp of the build kernel busy).
 * docs/experiments/builder.md#build-kernel gives what it measured. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KDA_VERSION
#define KDA_VERSION "unknown"
#endif

#define BENCH_PROGRAM "kdalloc-binbench"
#include "cuda_die.cuh"
#include "gpu_sah.cuh"
#include "stdout_status.h"

#define CHUNK 128
#define BENCH_WARPS 8 /* warps a block, as the build kernel's (KDA_BUILD_WARPS_PER_BLOCK) */
#define N_REFS 66560 /* Sponza's size: 520 chunks */

enum { AS_BUILDER, PLANES_CHECKED, NO_ATOMICS, BOXES_COMPUTED, LOADS_ONLY, AXES_ROLLED, N_MODES };
static const char *mode_name[N_MODES] = {"as the builder", "planes checked", "no bin atomics", "boxes computed",
                                         "loads only",     "axes rolled"};

typedef struct bench_params {
    const float4 *boxes; /* triangle i's box: lo at 2i, hi at 2i + 1 (one 32-byte sector, as the builder's tri_box) */
    const uint32_t *refs;
    uint32_t n;
    float lo[3], extent[3], scale[3];
    unsigned long long *cycles, *chunks; /* sums over all warps */
    uint32_t *sink;                      /* keeps the register sums alive */
} bench_params;

static __device__ __forceinline__ void box_of(const bench_params *p, int mode, uint32_t ref, uint32_t i, float lo[3],
                                              float hi[3])
{
    if (mode == BOXES_COMPUTED) {
        float t = (float)i * (1.0f / N_REFS);
        for (int a = 0; a < 3; a++) {
            lo[a] = p->lo[a] + t * p->extent[a];
            hi[a] = lo[a] + 1e-3f;
        }
        return;
    }
    float4 l = __ldg(&p->boxes[2 * ref]), h = __ldg(&p->boxes[2 * ref + 1]);
    lo[0] = l.x, lo[1] = l.y, lo[2] = l.z;
    hi[0] = h.x, hi[1] = h.y, hi[2] = h.z;
}

/* The bin of x checked against the planes lo + extent * b / GPU_BINS
 * below and above it, and mended when rounding put it next door: the
 * builder's former bin_of. */
static __device__ __forceinline__ uint32_t bin_checked(float x, float lo, float extent, float scale)
{
    int b = (int)bin_of(x, lo, scale);
    float below = bin_plane(lo, extent, (uint32_t)b), above = bin_plane(lo, extent, (uint32_t)b + 1);
    if ((b > 0 && x < below) || (b < GPU_BINS - 1 && x >= above)) {
        while (b > 0 && x < bin_plane(lo, extent, (uint32_t)b)) b--;
        while (b < GPU_BINS - 1 && x >= bin_plane(lo, extent, (uint32_t)b + 1)) b++;
    }
    return (uint32_t)b;
}

/* One chunk, references [begin, end), into bins; returns a register sum. */
static __device__ __forceinline__ uint32_t bin_chunk(const bench_params *p, const int mode, uint32_t (*bins)[3][GPU_BINS],
                                                     uint32_t lane, uint32_t begin, uint32_t end)
{
    float tlo[3], thi[3], nlo[3], nhi[3];
    uint32_t i = begin + lane, ahead = 0, sum = 0;
    int load_refs = mode != BOXES_COMPUTED;
    if (i < end) box_of(p, mode, load_refs ? __ldcg(&p->refs[i]) : 0, i, nlo, nhi);
    if (i + 32 < end && load_refs) ahead = __ldcg(&p->refs[i + 32]);
#pragma unroll 1
    for (; i < end; i += 32) {
        for (int a = 0; a < 3; a++) {
            tlo[a] = nlo[a];
            thi[a] = nhi[a];
        }
        if (i + 32 < end) box_of(p, mode, ahead, i + 32, nlo, nhi);
        if (i + 64 < end && load_refs) ahead = __ldcg(&p->refs[i + 64]);
        if (mode == LOADS_ONLY) {
            sum += __float_as_uint(tlo[0]) ^ __float_as_uint(thi[1]) ^ __float_as_uint(tlo[2]);
        } else if (mode == AXES_ROLLED) {
#pragma unroll 1
            for (int a = 0; a < 3; a++) {
                float alo = kdtree_pick(p->lo, a), ext = kdtree_pick(p->extent, a), sc = kdtree_pick(p->scale, a);
                if (!(ext > 0.0f)) continue;
                atomicAdd(&bins[0][a][bin_of(kdtree_pick(tlo, a), alo, sc)], 1u);
                atomicAdd(&bins[1][a][bin_of(kdtree_pick(thi, a), alo, sc)], 1u);
            }
        } else {
#pragma unroll
            for (int a = 0; a < 3; a++) {
                uint32_t b0, b1;
                if (mode == PLANES_CHECKED) {
                    b0 = bin_checked(tlo[a], p->lo[a], p->extent[a], p->scale[a]);
                    b1 = bin_checked(thi[a], p->lo[a], p->extent[a], p->scale[a]);
                } else {
                    b0 = bin_of(tlo[a], p->lo[a], p->scale[a]);
                    b1 = bin_of(thi[a], p->lo[a], p->scale[a]);
                }
                if (mode == NO_ATOMICS) {
                    sum += b0 * 3u + b1;
                } else {
                    atomicAdd(&bins[0][a][b0], 1u);
                    atomicAdd(&bins[1][a][b1], 1u);
                }
            }
        }
    }
    return sum;
}

static __device__ __forceinline__ void bench_warps(const bench_params *p, const int mode)
{
    __shared__ uint32_t bins[BENCH_WARPS][2][3][GPU_BINS];
    uint32_t lane = threadIdx.x & 31u, w = threadIdx.x / 32;
    uint32_t warp = blockIdx.x * (blockDim.x / 32) + w, warps = gridDim.x * (blockDim.x / 32);
    uint32_t sum = 0;
    unsigned long long cycles = 0, chunks = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t c = warp; c * CHUNK < p->n; c += warps) {
            long long t0 = clock64();
            for (uint32_t j = lane; j < 2 * 3 * GPU_BINS; j += 32) (&bins[w][0][0][0])[j] = 0;
            __syncwarp();
            sum += bin_chunk(p, mode, bins[w], lane, c * CHUNK, min(p->n, c * CHUNK + CHUNK));
            __syncwarp();
            sum += bins[w][0][0][lane];
            if (pass) {
                cycles += (unsigned long long)(clock64() - t0);
                chunks++;
            }
        }
    if (lane == 0) {
        atomicAdd(p->cycles, cycles);
        atomicAdd(p->chunks, chunks);
    }
    if (sum == 0x9e3779b9u) *p->sink = sum;
}

__global__ void bench_as_builder(const __grid_constant__ bench_params p) { bench_warps(&p, AS_BUILDER); }
__global__ void bench_planes_checked(const __grid_constant__ bench_params p) { bench_warps(&p, PLANES_CHECKED); }
__global__ void bench_no_atomics(const __grid_constant__ bench_params p) { bench_warps(&p, NO_ATOMICS); }
__global__ void bench_boxes_computed(const __grid_constant__ bench_params p) { bench_warps(&p, BOXES_COMPUTED); }
__global__ void bench_loads_only(const __grid_constant__ bench_params p) { bench_warps(&p, LOADS_ONLY); }
__global__ void bench_axes_rolled(const __grid_constant__ bench_params p) { bench_warps(&p, AXES_ROLLED); }

typedef void (*bench_kernel)(const bench_params);
static const bench_kernel kernels[N_MODES] = {bench_as_builder,     bench_planes_checked, bench_no_atomics,
                                              bench_boxes_computed, bench_loads_only,     bench_axes_rolled};

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: kdalloc-binbench\n\n"
               "Times a big node's BIN chunk of %d references on the GPU, as the builder bins\n"
               "it and with one part taken away at a time (docs/experiments/builder.md#build-kernel):\n"
               "cycles a chunk with 1 warp an SM and with 24.  Needs a CUDA GPU.\n\n"
               "  -h, --help          this help\n"
               "  --version           print the version\n",
               CHUNK);
        return stdout_status("kdalloc-binbench", 0);
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("kdalloc-binbench %s\n", KDA_VERSION);
        return stdout_status("kdalloc-binbench", 0);
    }
    if (argc > 1) {
        fprintf(stderr, "kdalloc-binbench: unknown argument '%s' (see kdalloc-binbench --help)\n", argv[1]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* each row as it is measured, into a pipe too */
    int device = 0, sms = 0;
    CUDA(cudaGetDevice(&device), "no usable CUDA device");
    CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    /* A strip surface in file order: triangle i lies next to i - 1. */
    float4 *boxes = (float4 *)malloc(2 * N_REFS * sizeof(float4));
    uint32_t *refs = (uint32_t *)malloc(N_REFS * sizeof(uint32_t));
    if (!boxes || !refs) {
        fprintf(stderr, "kdalloc-binbench: out of host memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < N_REFS; i++) {
        float x = (float)(i % 256) / 256.0f, y = (float)(i / 256) / 260.0f;
        float z = 0.5f + 0.1f * sinf(7.0f * x) * cosf(5.0f * y);
        boxes[2 * i] = make_float4(x, y, z, 0.0f);
        boxes[2 * i + 1] = make_float4(x + 1.0f / 256.0f, y + 1.0f / 260.0f, z + 0.002f, 0.0f);
        refs[i] = i;
    }
    bench_params p;
    float4 *d_boxes;
    uint32_t *d_refs, *d_sink;
    unsigned long long *d_counts;
    CUDA(cudaMalloc((void **)&d_boxes, 2 * N_REFS * sizeof(float4)), "cudaMalloc");
    CUDA(cudaMalloc((void **)&d_refs, N_REFS * sizeof(uint32_t)), "cudaMalloc");
    CUDA(cudaMalloc((void **)&d_sink, sizeof(uint32_t)), "cudaMalloc");
    CUDA(cudaMalloc((void **)&d_counts, 2 * sizeof(unsigned long long)), "cudaMalloc");
    CUDA(cudaMemcpy(d_boxes, boxes, 2 * N_REFS * sizeof(float4), cudaMemcpyHostToDevice), "copying the boxes");
    CUDA(cudaMemcpy(d_refs, refs, N_REFS * sizeof(uint32_t), cudaMemcpyHostToDevice), "copying the references");
    p.boxes = d_boxes;
    p.refs = d_refs;
    p.n = N_REFS;
    const float node_lo[3] = {0.0f, 0.0f, 0.3f}, node_extent[3] = {1.01f, 1.01f, 0.4f};
    for (int a = 0; a < 3; a++) {
        p.lo[a] = node_lo[a];
        p.extent[a] = node_extent[a];
        p.scale[a] = (float)GPU_BINS / node_extent[a];
    }
    p.cycles = d_counts;
    p.chunks = d_counts + 1;
    p.sink = d_sink;
    printf("cycles a BIN chunk of %d references (clock64, mean over chunks; %d SMs)\n", CHUNK, sms);
    printf("%-16s %14s %14s\n", "", "1 warp an SM", "24 warps an SM");
    for (int m = 0; m < N_MODES; m++) {
        double per_chunk[2];
        for (int shape = 0; shape < 2; shape++) {
            unsigned blocks = shape ? 3u * (unsigned)sms : (unsigned)sms, threads = shape ? 32u * BENCH_WARPS : 32u;
            unsigned long long counts[2];
            CUDA(cudaMemset(d_counts, 0, sizeof counts), "cudaMemset");
            kernels[m]<<<blocks, threads>>>(p);
            CUDA(cudaGetLastError(), "launching the benchmark");
            CUDA(cudaDeviceSynchronize(), "running the benchmark");
            CUDA(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost), "reading the counts");
            per_chunk[shape] = counts[1] ? (double)counts[0] / (double)counts[1] : 0.0;
        }
        printf("%-16s %14.0f %14.0f\n", mode_name[m], per_chunk[0], per_chunk[1]);
    }
    free(boxes);
    free(refs);
    return 0;
}
