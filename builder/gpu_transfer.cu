/* gpu_transfer.cu - the scene and trees between host and device memory:
 * gpu_scene_upload, gpu_tree_upload, gpu_tree_download and their frees
 * (gpu_build.h).
 *
 * Host code only, with no kernel and no allocator: one object serves the
 * builders of every allocator (kda_gputransfer).  Each function either
 * succeeds whole or frees what it allocated and zeroes its output, so a
 * failed transfer leaves nothing to clean up; a free of a zeroed struct is
 * a no-op.  A tree goes up only in the layout the ray caster reads pairs
 * in (left children at odd indices: gpu_nodes.cuh). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "gpu_build.h"
#include "gpu_nodes.cuh"

extern "C" int gpu_scene_upload(const scene *s, gpu_scene *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    size_t vbytes = (size_t)s->n_vertices * 3 * sizeof(float), tbytes = (size_t)s->n_triangles * 3 * sizeof(uint32_t);
    CHECK(cudaMalloc(&g->positions, vbytes ? vbytes : 4), "allocating the scene on the GPU");
    CHECK(cudaMalloc(&g->triangles, tbytes ? tbytes : 4), "allocating the scene on the GPU");
    CHECK(cudaMemcpy(g->positions, s->positions, vbytes, cudaMemcpyHostToDevice), "uploading the scene");
    CHECK(cudaMemcpy(g->triangles, s->triangles, tbytes, cudaMemcpyHostToDevice), "uploading the scene");
    g->n_vertices = s->n_vertices;
    g->n_triangles = s->n_triangles;
    memcpy(g->lo, s->lo, sizeof g->lo);
    memcpy(g->hi, s->hi, sizeof g->hi);
    return 0;
fail:
    gpu_scene_free(g);
    return -1;
}

extern "C" void gpu_scene_free(gpu_scene *g)
{
    cudaFree(g->positions);
    cudaFree(g->triangles);
    memset(g, 0, sizeof *g);
}

extern "C" int gpu_tree_download(const gpu_tree *g, kdtree *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->nodes = (kdtree_node *)malloc((size_t)g->n_nodes * sizeof *t->nodes + 1);
    t->refs = (uint32_t *)malloc((size_t)g->n_refs * sizeof *t->refs + 1);
    if (!t->nodes || !t->refs) {
        kdtree_free(t);
        snprintf(err, errlen, "out of host memory for a tree of %u nodes", g->n_nodes);
        return -1;
    }
    CHECK(cudaMemcpy(t->nodes, g->nodes, (size_t)g->n_nodes * sizeof *t->nodes, cudaMemcpyDeviceToHost),
          "downloading the tree");
    CHECK(cudaMemcpy(t->refs, g->refs, (size_t)g->n_refs * sizeof *t->refs, cudaMemcpyDeviceToHost),
          "downloading the tree");
    t->n_nodes = g->n_nodes;
    t->n_refs = g->n_refs;
    memcpy(t->lo, g->lo, sizeof t->lo);
    memcpy(t->hi, g->hi, sizeof t->hi);
    return 0;
fail:
    kdtree_free(t);
    return -1;
}

extern "C" int gpu_tree_upload(const kdtree *t, gpu_tree *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    for (uint32_t i = 0; i < t->n_nodes; i++)
        if (!kdtree_is_leaf(t->nodes[i]) && kdtree_left(t->nodes[i]) % 2 == 0) {
            snprintf(err, errlen, "node %u: left child %u has an even index (kdtree.h layout)", i,
                     kdtree_left(t->nodes[i]));
            return -1;
        }
    CHECK(gpu_nodes_alloc(&g->nodes, t->n_nodes), "allocating the tree on the GPU");
    CHECK(cudaMalloc(&g->refs, (size_t)t->n_refs * sizeof *g->refs + 1), "allocating the tree on the GPU");
    CHECK(cudaMemcpy(g->nodes, t->nodes, (size_t)t->n_nodes * sizeof *g->nodes, cudaMemcpyHostToDevice),
          "uploading the tree");
    CHECK(cudaMemcpy(g->refs, t->refs, (size_t)t->n_refs * sizeof *g->refs, cudaMemcpyHostToDevice),
          "uploading the tree");
    g->n_nodes = t->n_nodes;
    g->n_refs = t->n_refs;
    memcpy(g->lo, t->lo, sizeof g->lo);
    memcpy(g->hi, t->hi, sizeof g->hi);
    return 0;
fail:
    gpu_tree_free(g);
    return -1;
}

extern "C" void gpu_tree_free(gpu_tree *g)
{
    gpu_nodes_free(g->nodes);
    cudaFree(g->refs);
    memset(g, 0, sizeof *g);
}
