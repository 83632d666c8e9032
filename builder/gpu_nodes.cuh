/* gpu_nodes.cuh - where a device tree's node array lives.
 *
 * Invariant: `nodes + 1` is 16-byte aligned.  A left child's index is odd
 * (kdtree.h), so every pair of children starts at a 16-byte boundary and
 * the ray caster reads both with one load (render/traverse.h).  The array
 * is allocated from GPU_NODES_PAD nodes before `nodes` (cudaMalloc's
 * 256-byte alignment puts node 1 on a 16-byte boundary); only these two
 * functions know it. */
#ifndef KDA_GPU_NODES_CUH
#define KDA_GPU_NODES_CUH

#include <cuda_runtime.h>

#include "kdtree.h"

#define GPU_NODES_PAD 1
static_assert(sizeof(kdtree_node) == 8 && GPU_NODES_PAD * sizeof(kdtree_node) % 16 == 8,
              "a pair of nodes is one 16-byte load: node 1 must sit at a 16-byte boundary");

/* Room for `count` nodes at *nodes; *nodes is NULL on failure. */
static inline cudaError_t gpu_nodes_alloc(kdtree_node **nodes, size_t count)
{
    kdtree_node *block = NULL;
    cudaError_t e = cudaMalloc(&block, (GPU_NODES_PAD + count) * sizeof *block);
    *nodes = e == cudaSuccess ? block + GPU_NODES_PAD : NULL;
    return e;
}

/* Frees what gpu_nodes_alloc gave; NULL is a no-op. */
static inline void gpu_nodes_free(kdtree_node *nodes)
{
    if (nodes) cudaFree(nodes - GPU_NODES_PAD);
}

#endif
