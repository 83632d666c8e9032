/* gpu_build_buffers.cuh - the device arrays of a build besides the
 * allocator's pool (included by gpu_build.cu): the triangles' boxes, the
 * build state, the task queue and its spill array, the big-node slots, and
 * the output nodes and leaf references; how they are allocated, freed and
 * grown.
 *
 * Invariants.  Every array is sized before the build that uses it and
 * never during one: the kernel reports an overflow (BUILD_QUEUE_FULL,
 * BUILD_NODES_FULL, BUILD_REFS_FULL), grow_full_array doubles that array
 * (freeing it), alloc_buffers allocates it anew, and the whole build runs
 * again, at most MAX_ATTEMPTS times.  The queue's capacity is a power of
 * two (its positions are taken modulo it), at most 2^30 (compared as
 * int32_t); node and reference counts stay within the tree layout's limits
 * (kdtree.h).  A freed array's pointer is NULL, which is what
 * alloc_buffers looks at. */
#ifndef KDA_GPU_BUILD_BUFFERS_CUH
#define KDA_GPU_BUILD_BUFFERS_CUH

#include "cuda_check.cuh"
#include "gpu_kernel.cuh"
#include "gpu_nodes.cuh"

#define MAX_ATTEMPTS 8 /* builds rerun after growing an array */

typedef struct build_buffers {
    tri_box *boxes;
    build_state *state;
    task *cells, *spill;
    uint2 *out_left; /* one per warp of the grid */
    uint32_t warps;
    uint32_t *queue_seq;
    big_slot *slots;
    kdtree_node *nodes;
    uint32_t *refs_out;
    uint32_t queue_capacity, node_capacity, refs_capacity;
} build_buffers;

static void free_buffers(build_buffers *b)
{
    cudaFree(b->boxes);
    cudaFree(b->state);
    cudaFree(b->cells);
    cudaFree(b->spill);
    cudaFree(b->out_left);
    cudaFree(b->queue_seq);
    cudaFree(b->slots);
    gpu_nodes_free(b->nodes);
    cudaFree(b->refs_out);
    memset(b, 0, sizeof *b);
}

/* (Re)allocates what a capacity change invalidated; everything on first use. */
static int alloc_buffers(build_buffers *b, uint32_t n, char *err, size_t errlen)
{
    if (!b->boxes) {
        CHECK(cudaMalloc(&b->boxes, (size_t)n * sizeof(tri_box)), "allocating triangle boxes on the GPU");
        CHECK(cudaMalloc(&b->state, sizeof(build_state)), "allocating the build state");
        CHECK(cudaMalloc(&b->slots, KDA_BUILD_SLOTS * sizeof(big_slot)), "allocating big-node slots");
        CHECK(cudaMalloc(&b->out_left, (size_t)b->warps * sizeof(uint2)), "allocating the build state");
    }
    if (!b->cells) {
        CHECK(cudaMalloc(&b->cells, (size_t)b->queue_capacity * sizeof(task)), "allocating the task queue");
        CHECK(cudaMalloc(&b->spill, (size_t)b->queue_capacity * sizeof(task)), "allocating the task queue");
        CHECK(cudaMalloc(&b->queue_seq, (size_t)b->queue_capacity * sizeof(uint32_t)), "allocating the task queue");
    }
    if (!b->nodes) CHECK(gpu_nodes_alloc(&b->nodes, b->node_capacity), "allocating the node array");
    if (!b->refs_out)
        CHECK(cudaMalloc(&b->refs_out, (size_t)b->refs_capacity * sizeof(uint32_t)), "allocating the leaf references");
    return 0;
fail:
    return -1;
}

static uint32_t pow2_at_least(uint64_t v)
{
    uint32_t p = 1;
    while (p < v && p < (1u << 31)) p <<= 1;
    return p;
}

static uint32_t grow(uint32_t cap, uint32_t limit) { return cap >= limit / 2 ? limit : cap * 2; }

/* Grows the array whose overflow stopped a build (its buffer is freed, and
 * alloc_buffers allocates it anew at the larger size); 0 when the build
 * stopped for another reason. */
static int grow_full_array(build_buffers *b, uint32_t error)
{
    switch (error) {
    case BUILD_QUEUE_FULL:
        b->queue_capacity = grow(b->queue_capacity, 1u << 30); /* positions are compared as int32_t */
        cudaFree(b->cells), cudaFree(b->spill), cudaFree(b->queue_seq);
        b->cells = NULL, b->spill = NULL, b->queue_seq = NULL;
        return 1;
    case BUILD_NODES_FULL:
        b->node_capacity = grow(b->node_capacity, KDTREE_MAX_COUNT);
        gpu_nodes_free(b->nodes);
        b->nodes = NULL;
        return 1;
    case BUILD_REFS_FULL:
        b->refs_capacity = grow(b->refs_capacity, UINT32_MAX);
        cudaFree(b->refs_out);
        b->refs_out = NULL;
        return 1;
    default:
        return 0;
    }
}

#endif
