/* gpu_node_work.cuh - what every node needs, whoever does it (included by
 * gpu_kernel.cuh): the child arrays through the allocator (lane 0, as in
 * the paper's workload), parking when a growable pool runs out, node pairs
 * and leaves in the output tree. */
#ifndef KDA_GPU_NODE_WORK_CUH
#define KDA_GPU_NODE_WORK_CUH

#include "gpu_build_types.cuh"

/* ---- allocation (lane 0 allocates, as in the paper's workload) ---- */

static __device__ uint32_t *lane0_alloc(warp_ctx *c, uint32_t count)
{
    if (count == 0) return NULL;
    long long t0 = prof_start(c);
    uint32_t *p = (uint32_t *)kda_malloc(&c->p->heap, (uint64_t)count * sizeof(uint32_t));
    prof_add(c, PROF_ALLOC, t0);
    return p;
}

/* Counts an array of `count` references in the statistics, once its node
 * has all it asked for (a node that parks gives back what it got and asks
 * again later, so its first requests are not counted). */
static __device__ void lane0_count_array(warp_ctx *c, uint32_t count)
{
    if (count == 0) return;
    uint64_t bytes = (uint64_t)count * sizeof(uint32_t);
    c->sm->alloc_stats[0] += 1; /* lane 0 alone touches its warp's statistics: no atomics */
    c->sm->alloc_stats[1] += bytes;
    c->sm->alloc_stats[2] += bytes * bytes;
    if (c->stats) {
        unsigned long long live = atomicAdd(&c->p->state->live_bytes, bytes) + bytes;
        atomicMax(&c->p->state->peak_bytes, live);
    }
}

static __device__ void lane0_free(warp_ctx *c, uint32_t *p, uint32_t count)
{
    if (!p) return;
    long long t0 = prof_start(c);
    kda_free(&c->p->heap, p);
    prof_add(c, PROF_FREE, t0);
    if (c->stats) atomicAdd(&c->p->state->live_bytes, (unsigned long long)(0 - (uint64_t)count * 4));
}

/* ---- parking (a growable pool that ran out) ----
 * When the allocator returns NULL and the pool can grow (build_kernel_parking), the
 * build does not fail.  The node whose child arrays could not be had is
 * spilled whole (its own array still live) to the spill array, and
 * state.park is set.  From then on warps spill every node task they would
 * start instead of doing it, while the chunks of big nodes already in
 * flight are finished; so the queue drains, state.pending falls to zero
 * and the kernel ends as after a whole build.  The host then grows the
 * pool and launches the kernel again with the spilled tasks as the queue's
 * entries (gpu_build_run.cuh, gpu_setup_kernels.cuh): nothing is copied or done twice. */

/* The parking paths are out of line, and take values, not the warp's
 * context: they run at most once per node and launch, and inlined (or
 * given the address of the kernel's locals) they cost the hot loops
 * registers and local memory with every allocator. */

/* Keeps node task t for the next launch. */
static __device__ __noinline__ void spill_task(build_state *st, task *spill, uint32_t capacity, task t)
{
    uint32_t at = atomicAdd(&st->spilled.v, 1u);
    if (at >= capacity) { /* the next launch could not queue them all */
        atomicCAS(&st->error.v, 0u, (uint32_t)BUILD_QUEUE_FULL);
        return;
    }
    spill[at] = t;
}

static __device__ __forceinline__ void lane0_spill(warp_ctx *c, const task *t)
{
    spill_task(c->p->state, c->p->spill, c->p->queue.capacity, *t);
}

/* Spills `count` tasks of a warp's stack (a ring in shared memory). */
static __device__ __noinline__ void spill_stack(build_state *st, task *spill, uint32_t capacity, const task *stack,
                                                uint32_t bottom, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        spill_task(st, spill, capacity, stack[(bottom + i) % KDA_BUILD_LOCAL_TASKS]);
}

/* The pool had no room for node t's child arrays: the arrays had (l or r,
 * either may be NULL; not yet counted in the statistics) are given back,
 * the build parks and t is spilled. */
static __device__ __noinline__ void park_node(kda_heap heap, build_state *st, task *spill, uint32_t capacity,
                                              task t, uint32_t *l, uint32_t *r)
{
    kda_free(&heap, l); /* NULL is ignored */
    kda_free(&heap, r);
    atomicExch(&st->park.v, 1u);
    spill_task(st, spill, capacity, t);
}

/* Whether the build is parking (every lane gets the answer). */
static __device__ int warp_parked(const warp_ctx *c)
{
    return c->can_park && (int)broadcast(c->lane == 0 && ld_relaxed_u32(&c->p->state->park.v) != 0);
}

/* The two child arrays of node t; 0 on success.  Else the build parks (t
 * is spilled, a child array already had is given back) or fails. */
static __device__ int warp_alloc_children(warp_ctx *c, const task *t, uint32_t nl, uint32_t nr, uint32_t **left,
                                          uint32_t **right)
{
    uint32_t *l = NULL, *r = NULL;
    uint32_t ok = 1;
    if (c->lane == 0) {
        l = lane0_alloc(c, nl);
        r = lane0_alloc(c, nr);
        ok = (!nl || l) && (!nr || r);
        if (ok) {
            lane0_count_array(c, nl);
            lane0_count_array(c, nr);
        } else if (!c->can_park) {
            set_error(c->p, BUILD_POOL_EXHAUSTED);
        } else {
            const build_params *p = c->p;
            park_node(p->heap, p->state, p->spill, p->queue.capacity, *t, l, r);
        }
    }
    if (!broadcast(ok)) return -1;
    *left = broadcast_ptr(l);
    *right = broadcast_ptr(r);
    return 0;
}

/* ---- nodes and leaves ---- */

/* Lane 0 reserves the two nodes of a split node's children.  Issued once
 * the node's arrays are had, its round trip overlaps the scatter: the value
 * is first needed when the children are taken. */
static __device__ __forceinline__ uint32_t lane0_reserve_pair(warp_ctx *c)
{
    return atomicAdd(&c->p->state->n_nodes.v, 2u);
}

/* The first node of the pair lane 0 reserved, for every lane; UINT32_MAX
 * (the build fails) when the node array is full. */
static __device__ uint32_t warp_node_pair(warp_ctx *c, uint32_t reserved)
{
    uint32_t first = 0;
    if (c->lane == 0) {
        first = reserved;
        if (first + 2 > c->p->node_capacity) {
            set_error(c->p, BUILD_NODES_FULL);
            first = UINT32_MAX;
        }
    }
    return broadcast(first);
}

/* Copies the node's references to the output, writes the leaf and frees
 * the node's array.  held: the lanes hold the references already (a node
 * of at most KDA_BUILD_EXACT_MAX: lane l has reference l in held0, l + 32
 * in held1), so they are not read again. */
static __device__ void warp_make_leaf(warp_ctx *c, const task *t, int held, uint32_t held0, uint32_t held1)
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
    if (held) {
        if (c->lane < t->n) c->p->refs_out[first + c->lane] = held0;
        if (c->lane + 32 < t->n) c->p->refs_out[first + c->lane + 32] = held1;
    } else {
        for (uint32_t i = c->lane; i < t->n; i += 32) c->p->refs_out[first + i] = __ldcg(&t->refs[i]);
    }
    __syncwarp(); /* every lane has read the array before it is freed */
    if (c->lane == 0) {
        c->p->nodes[t->node] = kdtree_make_leaf(first, t->n);
        lane0_free(c, t->refs, t->n);
    }
}

#endif
