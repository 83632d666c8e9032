/* gpu_node_work.cuh - what every node needs, whoever does it (included by
 * gpu_kernel.cuh): the child arrays through the allocator (lane 0, as in
 * the paper's workload), node pairs and leaves in the output tree. */
#ifndef KDA_GPU_NODE_WORK_CUH
#define KDA_GPU_NODE_WORK_CUH

#include "gpu_build_types.cuh"

/* ---- allocation (lane 0 allocates, as in the paper's workload) ---- */

static __device__ uint32_t *lane0_alloc(warp_ctx *c, uint32_t count)
{
    if (count == 0) return NULL;
    uint64_t bytes = (uint64_t)count * sizeof(uint32_t);
    long long t0 = prof_start(c);
    uint32_t *p = (uint32_t *)kda_malloc(&c->p->heap, bytes);
    prof_add(c, PROF_ALLOC, t0);
    if (!p) return NULL;
    c->n_alloc++;
    c->alloc_bytes += bytes;
    c->alloc_sq += bytes * bytes;
    if (c->p->collect_stats) {
        unsigned long long live = atomicAdd(&c->p->state->live_bytes, bytes) + bytes;
        atomicMax(&c->p->state->peak_bytes, live);
    }
    return p;
}

static __device__ void lane0_free(warp_ctx *c, uint32_t *p, uint32_t count)
{
    if (!p) return;
    long long t0 = prof_start(c);
    kda_free(&c->p->heap, p);
    prof_add(c, PROF_FREE, t0);
    if (c->p->collect_stats) atomicAdd(&c->p->state->live_bytes, (unsigned long long)(0 - (uint64_t)count * 4));
}

/* The two child arrays; 0 on success, else the error is set. */
static __device__ int warp_alloc_children(warp_ctx *c, uint32_t nl, uint32_t nr, uint32_t **left, uint32_t **right)
{
    uint32_t *l = NULL, *r = NULL;
    uint32_t ok = 1;
    if (c->lane == 0) {
        l = lane0_alloc(c, nl);
        r = lane0_alloc(c, nr);
        ok = (!nl || l) && (!nr || r);
        if (!ok) set_error(c->p, BUILD_POOL_EXHAUSTED);
    }
    if (!broadcast(ok)) return -1;
    *left = broadcast_ptr(l);
    *right = broadcast_ptr(r);
    return 0;
}

/* ---- nodes and leaves ---- */

static __device__ uint32_t warp_node_pair(warp_ctx *c)
{
    uint32_t first = 0;
    if (c->lane == 0) {
        first = atomicAdd(&c->p->state->n_nodes.v, 2u);
        if (first + 2 > c->p->node_capacity) {
            set_error(c->p, BUILD_NODES_FULL);
            first = UINT32_MAX;
        }
    }
    return broadcast(first);
}

/* Copies the node's references to the output, writes the leaf and frees
 * the node's array. */
static __device__ void warp_make_leaf(warp_ctx *c, const task *t)
{
    uint32_t first = 0, ok = 1;
    if (c->lane == 0 && t->n) {
        if (c->out_end - c->out_pos < t->n) {
            uint32_t want = t->n > OUT_BATCH ? t->n : OUT_BATCH;
            c->out_pos = atomicAdd(&c->p->state->refs_out.v, want);
            c->out_end = c->out_pos + want;
            if (c->out_end > c->p->refs_capacity || c->out_end < c->out_pos) {
                set_error(c->p, BUILD_REFS_FULL);
                c->out_pos = c->out_end = 0; /* never write into a range past the array */
                ok = 0;
            }
        }
        if (ok) {
            first = c->out_pos;
            c->out_pos += t->n;
        }
    }
    if (!broadcast(ok)) return;
    first = broadcast(first);
    for (uint32_t i = c->lane; i < t->n; i += 32) c->p->refs_out[first + i] = __ldcg(&t->refs[i]);
    __syncwarp(); /* every lane has read the array before it is freed */
    if (c->lane == 0) {
        c->p->nodes[t->node] = kdtree_make_leaf(first, t->n);
        lane0_free(c, t->refs, t->n);
    }
}

#endif
