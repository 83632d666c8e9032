/* gpu_build.h - the single-kernel GPU k-d tree builder (host API).
 *
 * The scene is uploaded once (gpu_scene); gpu_build then builds the SAH
 * tree on the device in one persistent kernel launch, allocating every
 * node's triangle-reference array through the allocator compiled in
 * (kdalloc/kdalloc.h), and leaves the tree in device memory in the layout of
 * kdtree.h, ready for the GPU ray caster.  docs/builder.md describes the
 * kernel: its task states, queue, memory ordering and termination.
 */
#ifndef KDA_GPU_BUILD_H
#define KDA_GPU_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "kdtree.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks that a CUDA device is present and that this binary has code for
 * it.  Returns 0, or -1 with the reason in `why` (no device, driver too
 * old, device of another architecture than the binary was built for). */
int gpu_device_check(char *why, size_t why_len);

/* One line naming the device, e.g. "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)". */
void gpu_device_name(char *out, size_t len);

/* The scene in device memory. */
typedef struct gpu_scene {
    float *positions;
    uint32_t *triangles;
    uint32_t n_vertices, n_triangles;
    float lo[3], hi[3];
} gpu_scene;

int gpu_scene_upload(const scene *s, gpu_scene *out, char *err, size_t errlen);
void gpu_scene_free(gpu_scene *g);

/* A tree in device memory (kdtree.h layout).  `refs` may hold gaps between
 * leaves: n_refs is the length of the array, not the number of references.
 * `nodes + 1` is 16-byte aligned, so that every pair of children is one
 * 16-byte load for the ray caster (builder/gpu_nodes.cuh). */
typedef struct gpu_tree {
    kdtree_node *nodes;
    uint32_t *refs;
    uint32_t n_nodes, n_refs;
    float lo[3], hi[3];
} gpu_tree;

/* The pool is what kda_pool_plan_for (kdalloc.h) sizes for these numbers,
 * the root array's bytes its unit and the GPU's free memory its cap. */
typedef struct gpu_build_options {
    double pool_factor;   /* fixed pool = factor x the root array's bytes ... */
    uint64_t pool_bytes;  /* ... unless this is non-zero */
    int pool_auto;        /* a pool that grows instead (where the allocator can:
                           * else the fixed pool above, and stats say why) */
    double pool_start;    /* pool_auto: it starts at this factor x the root array
                           * (0: kda_pool_plan_for's default), rounded up to
                           * the GPU's mapping granule */
    uint64_t pool_step;   /* pool_auto: grow by this much (0: double; tests) */
    uint64_t pool_limit;  /* pool_auto: grow to at most this much (0: the GPU's free memory) */
    uint32_t repeat;      /* timed builds after the warm-up (>= 1) */
    uint32_t queue_capacity; /* first size of the task queue (grown on overflow); 0: from the scene */
    double watchdog_s;    /* a build that makes no progress this long is stuck; 0: 10 s; < 0: no watchdog */
} gpu_build_options;

/* What a build that failed ran short of (gpu_build_stats.pool_short), for
 * the caller to advise on: the builder names causes and sizes, never the
 * caller's options. */
typedef enum gpu_pool_short {
    GPU_POOL_ENOUGH = 0,  /* the build did not fail for want of pool */
    GPU_POOL_EXHAUSTED,   /* the fixed pool could not serve a request */
    GPU_POOL_OVERWRITTEN, /* the allocator reused live arrays of its fixed pool
                           * (a ring that wrapped), and the build read them */
    GPU_POOL_WRAPPED,     /* a timed build differed from the warm-up build
                           * because the ring wrapped (pool_wrapped) */
    GPU_POOL_AT_LIMIT     /* a growable pool could grow no further: its limit,
                           * or the GPU's memory (the message says which) */
} gpu_pool_short;

typedef struct gpu_build_stats {
    kdtree_stats tree;          /* build_ms = median of the timed builds */
    double ms_min, ms_max;
    uint32_t builds_timed;
    uint64_t n_alloc;           /* allocations during one build */
    double alloc_mean, alloc_sigma; /* allocation sizes, bytes */
    uint64_t peak_pool_bytes;   /* most bytes live at once (requested sizes) */
    uint64_t pool_bytes;        /* the pool at the end of the build (growable: mapped) */
    double pool_factor;         /* pool over the root array's bytes */
    int pool_grows;             /* the pool grew as needed (--pool auto) */
    const char *pool_fixed_why; /* --pool auto with an allocator that cannot grow: why */
    uint64_t pool_start_bytes;  /* growable: mapped at the start of each build */
    uint32_t grow_steps;        /* growable: growth steps in the last timed build */
    double grow_ms;             /* ... and the host time they took */
    int pool_raised;            /* the factor asked for less than the allocator's
                                 * minimum pool, which was taken instead */
    int pool_wrapped;           /* an allocator that wraps (kda_traits.wraps,
                                   AWMalloc) was asked for more than the pool
                                   holds, so it overwrote old blocks: the
                                   tree must be checked before use */
    gpu_pool_short pool_short;  /* a failed build: what it ran short of; then
                                   pool_bytes is the pool it had and n_alloc
                                   its allocations so far */
    int registers;              /* per thread of the build kernel */
    /* Where the warps' cycles went in the warm-up build: waiting for work,
     * nodes done by one warp (of which allocating and freeing), chunks of
     * big nodes; and how many nodes, chunks, queue pops and shared tasks. */
    double cycles_idle, cycles_node, cycles_alloc, cycles_free, cycles_chunk;
    uint64_t nodes_by_warps, chunks, queue_pops, tasks_shared;
    uint32_t blocks, threads_per_block;
    const char *allocator;
} gpu_build_stats;

/* Builds the tree.  On failure returns -1 with a message: the pool is
 * exhausted ("pool exhausted after K allocations (CountedBump pool of M
 * MiB)"; a growable pool: its limit or the GPU's memory is), and
 * stats->pool_short says so; or device memory ran out, or a CUDA call
 * failed.  Queue, node and
 * reference arrays that turn out too small are grown and the build rerun.
 * Returns GPU_BUILD_STALLED, with the allocator and the build's state in
 * the message, when the build kernel made no progress for
 * opt->watchdog_s: it still runs (an allocator that livelocks, a bug), and
 * only the end of the process stops it, so the caller must exit without
 * further CUDA calls. */
#define GPU_BUILD_STALLED (-2)
int gpu_build(const gpu_scene *scene, const gpu_build_options *opt, gpu_tree *out, gpu_build_stats *stats,
              char *err, size_t errlen);

/* Copies a host tree (e.g. the CPU builder's) to the device. */
int gpu_tree_upload(const kdtree *t, gpu_tree *out, char *err, size_t errlen);

/* Copies a device tree to host memory (kdtree, freed with kdtree_free). */
int gpu_tree_download(const gpu_tree *g, kdtree *out, char *err, size_t errlen);
void gpu_tree_free(gpu_tree *g);

#ifdef __cplusplus
}
#endif
#endif
