/* gpu_kernel.cuh - the persistent build kernel (included by gpu_build.cu).
 *
 * Every warp loops: take an entry from the queue, do it, repeat, until no
 * entry is pending anywhere (state.pending == 0) or an error is flagged.
 * An entry is either
 *   - a node task: one warp does the whole node (SAH, allocation of the two
 *     child arrays by lane 0, scatter, free of the parent's array) and then
 *     carries on with one child itself, pushing the other; or
 *   - a chunk of a big node (more than BIG_NODE references): the node lives
 *     in a slot; its BIN phase and its SCATTER phase are each cut into
 *     chunks that any warps take, and the warp that finishes the last chunk
 *     of a phase moves the node on (SAH and child allocation after BIN;
 *     freeing the parent and pushing the children after SCATTER).
 * Memory ordering: a warp's stores are fenced (__threadfence) before the
 * atomic or queue release that lets another warp see its work, and data
 * written by other warps is read through L2 (__ldcg), never a stale L1.
 * docs/builder.md gives the full picture.
 */
#ifndef KDA_GPU_KERNEL_CUH
#define KDA_GPU_KERNEL_CUH

#include "alloc.h"
#include "gpu_queue.cuh"
#include "gpu_sah.cuh"

#define WARPS_PER_BLOCK 8
#define BIG_NODE 2048    /* nodes with more references are split by many warps */
#define CHUNK 512        /* references per chunk of a big node */
#define EXACT_MAX 32     /* nodes up to this size get the exact SAH */
#define OUT_BATCH 1024   /* leaf references a warp reserves at once */
#define NO_SLOT 0xffffffffu

enum { PHASE_BIN = 0, PHASE_SCATTER = 1 };
enum {
    BUILD_OK = 0,
    BUILD_POOL_EXHAUSTED, /* the allocator returned NULL */
    BUILD_QUEUE_FULL,     /* these three: grow the array and build again */
    BUILD_NODES_FULL,
    BUILD_REFS_FULL,
    BUILD_CORRUPT,        /* a reference out of range: memory was overwritten */
    BUILD_INTERNAL        /* a child's size differs from its count: a bug */
};

/* A queue entry: a node task (slot == NO_SLOT), or chunk `n` of phase
 * `depth` of the big node in slot `slot`. */
typedef struct __align__(16) task {
    float lo[3], hi[3];
    uint32_t *refs;
    uint32_t n;
    uint32_t node;
    uint32_t depth;
    uint32_t slot;
} task;

typedef struct big_slot {
    task t;                     /* the node */
    uint32_t n_chunks, done;    /* chunks in a phase, chunks finished */
    uint32_t axis, k;           /* the split chosen after BIN */
    float split;
    uint32_t n_left, n_right;
    uint32_t left_cursor, right_cursor;
    uint32_t *left, *right;
    uint32_t bins[2][3][GPU_BINS]; /* counts of tri_lo / tri_hi bins per axis */
} big_slot;

/* Counters of one build, zeroed before it. */
typedef struct build_state {
    uint32_t pending;  /* entries pushed and not finished */
    uint32_t error;    /* the first BUILD_* error */
    uint32_t n_nodes;
    uint32_t refs_out; /* reserved length of the output references */
    uint32_t q_head, q_tail, s_head, s_tail;
    unsigned long long n_alloc, alloc_bytes, alloc_sq;
    unsigned long long live_bytes, peak_bytes;
    uint32_t *root_refs;
} build_state;

typedef struct build_params {
    kda_heap heap;
    const float4 *box_lo, *box_hi; /* triangles' bounding boxes */
    build_state *state;
    task *cells;
    ring queue;
    big_slot *slots;
    uint32_t *slot_ids;
    ring slot_ring;
    kdtree_node *nodes;
    uint32_t node_capacity;
    uint32_t *refs_out;
    uint32_t refs_capacity;
    uint32_t n_triangles;
    uint32_t max_depth;
    int collect_stats;
} build_params;

typedef struct warp_smem {
    uint32_t bins[2][3][GPU_BINS];
    task t;
} warp_smem;

/* What a warp carries between entries (lane 0's copy counts). */
typedef struct warp_ctx {
    const build_params *p;
    warp_smem *sm;
    uint32_t lane;
    uint32_t out_pos, out_end; /* leaf references reserved, not yet used */
    unsigned long long n_alloc, alloc_bytes, alloc_sq;
} warp_ctx;

static __device__ __forceinline__ void set_error(const warp_ctx *c, uint32_t code)
{
    atomicCAS(&c->p->state->error, 0u, code);
}

static __device__ __forceinline__ uint32_t broadcast(uint32_t v) { return __shfl_sync(FULL_MASK, v, 0); }

static __device__ __forceinline__ uint32_t *broadcast_ptr(uint32_t *v)
{
    return (uint32_t *)__shfl_sync(FULL_MASK, (unsigned long long)v, 0);
}

/* A reference out of range can only come from overwritten memory (AWMalloc
 * wraps over live arrays when its pool is too small): flag it, read a
 * valid box instead, and let the build stop. */
static __device__ __forceinline__ void load_box(const build_params *p, uint32_t tri, float lo[3], float hi[3])
{
    if (tri >= p->n_triangles) {
        atomicCAS(&p->state->error, 0u, (uint32_t)BUILD_CORRUPT);
        tri = 0;
    }
    float4 l = __ldg(&p->box_lo[tri]), h = __ldg(&p->box_hi[tri]);
    lo[0] = l.x, lo[1] = l.y, lo[2] = l.z;
    hi[0] = h.x, hi[1] = h.y, hi[2] = h.z;
}

/* ---- allocation (lane 0 allocates, as in the paper's workload) ---- */

static __device__ uint32_t *lane0_alloc(warp_ctx *c, uint32_t count)
{
    if (count == 0) return NULL;
    uint64_t bytes = (uint64_t)count * sizeof(uint32_t);
    uint32_t *p = (uint32_t *)kda_malloc(&c->p->heap, bytes);
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
    kda_free(&c->p->heap, p);
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
        if (!ok) set_error(c, BUILD_POOL_EXHAUSTED);
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
        first = atomicAdd(&c->p->state->n_nodes, 2u);
        if (first + 2 > c->p->node_capacity) {
            set_error(c, BUILD_NODES_FULL);
            first = UINT32_MAX;
        }
    }
    return broadcast(first);
}

/* Copies the node's references to the output and writes the leaf; frees
 * the node's array.  0 on success. */
static __device__ int warp_make_leaf(warp_ctx *c, const task *t)
{
    uint32_t first = 0, ok = 1;
    if (c->lane == 0 && t->n) {
        if (c->out_end - c->out_pos < t->n) {
            uint32_t want = t->n > OUT_BATCH ? t->n : OUT_BATCH;
            c->out_pos = atomicAdd(&c->p->state->refs_out, want);
            c->out_end = c->out_pos + want;
            if (c->out_end > c->p->refs_capacity || c->out_end < c->out_pos) {
                set_error(c, BUILD_REFS_FULL);
                ok = 0;
            }
        }
        first = c->out_pos;
        c->out_pos += t->n;
    }
    if (!broadcast(ok)) return -1;
    first = broadcast(first);
    for (uint32_t i = c->lane; i < t->n; i += 32) c->p->refs_out[first + i] = __ldcg(&t->refs[i]);
    if (c->lane == 0) {
        c->p->nodes[t->node] = kdtree_make_leaf(first, t->n);
        lane0_free(c, t->refs, t->n);
    }
    return 0;
}

/* ---- the queue ---- */

/* Reads a task another warp wrote, through L2. */
static __device__ task load_task(const task *src)
{
    task t;
    const float4 *s = (const float4 *)src;
    float4 *d = (float4 *)&t;
    d[0] = __ldcg(&s[0]);
    d[1] = __ldcg(&s[1]);
    d[2] = __ldcg(&s[2]);
    return t;
}

static __device__ void write_cell(task *cell, const task *t)
{
    const float4 *src = (const float4 *)t;
    float4 *dst = (float4 *)cell;
    dst[0] = src[0];
    dst[1] = src[1];
    dst[2] = src[2];
}

/* Lane 0 pushes one node task.  0 on success. */
static __device__ int lane0_push(warp_ctx *c, const task *t)
{
    const build_params *p = c->p;
    uint32_t pos = ring_reserve(&p->queue, 1);
    if (pos == UINT32_MAX) {
        set_error(c, BUILD_QUEUE_FULL);
        return -1;
    }
    atomicAdd(&p->state->pending, 1u);
    ring_wait_free(&p->queue, pos);
    write_cell(&p->cells[pos & (p->queue.capacity - 1)], t);
    ring_publish(&p->queue, pos);
    return 0;
}

/* The warp pushes `count` chunk entries of a big node's phase. */
static __device__ int warp_push_chunks(warp_ctx *c, uint32_t slot, uint32_t phase, uint32_t count)
{
    const build_params *p = c->p;
    uint32_t pos = 0;
    if (c->lane == 0) {
        pos = ring_reserve(&p->queue, count);
        if (pos == UINT32_MAX) set_error(c, BUILD_QUEUE_FULL);
        else atomicAdd(&p->state->pending, count);
    }
    pos = broadcast(pos);
    if (pos == UINT32_MAX) return -1;
    for (uint32_t i = c->lane; i < count; i += 32) {
        task e;
        e.lo[0] = e.lo[1] = e.lo[2] = e.hi[0] = e.hi[1] = e.hi[2] = 0.0f;
        e.refs = NULL;
        e.n = i;
        e.node = 0;
        e.depth = phase;
        e.slot = slot;
        ring_wait_free(&p->queue, pos + i);
        write_cell(&p->cells[(pos + i) & (p->queue.capacity - 1)], &e);
        ring_publish(&p->queue, pos + i);
    }
    return 0;
}

/* Takes an entry into c->sm->t; 0 when the queue is empty. */
static __device__ int warp_pop(warp_ctx *c)
{
    const build_params *p = c->p;
    uint32_t got = 0;
    if (c->lane == 0) {
        uint32_t pos = ring_claim(&p->queue);
        if (pos != UINT32_MAX) {
            c->sm->t = load_task(&p->cells[pos & (p->queue.capacity - 1)]);
            ring_release(&p->queue, pos);
            got = 1;
        }
    }
    __syncwarp();
    return broadcast(got);
}

/* ---- big nodes ---- */

/* Moves a node into a free slot and pushes its BIN chunks; 0 when no slot
 * is free (the caller then splits it alone). */
static __device__ int warp_start_big(warp_ctx *c, const task *t)
{
    const build_params *p = c->p;
    uint32_t id = NO_SLOT;
    if (c->lane == 0) {
        uint32_t pos = ring_claim(&p->slot_ring);
        if (pos != UINT32_MAX) {
            id = __ldcg(&p->slot_ids[pos & (p->slot_ring.capacity - 1)]);
            ring_release(&p->slot_ring, pos);
        }
    }
    id = broadcast(id);
    if (id == NO_SLOT) return 0;
    big_slot *s = &p->slots[id];
    uint32_t *bins = &s->bins[0][0][0];
    for (uint32_t i = c->lane; i < 2 * 3 * GPU_BINS; i += 32) bins[i] = 0;
    uint32_t n_chunks = (t->n + CHUNK - 1) / CHUNK;
    if (c->lane == 0) {
        s->t = *t;
        s->n_chunks = n_chunks;
        s->done = 0;
    }
    __threadfence();
    __syncwarp();
    warp_push_chunks(c, id, PHASE_BIN, n_chunks);
    return 1;
}

static __device__ void lane0_release_slot(warp_ctx *c, uint32_t id)
{
    const build_params *p = c->p;
    uint32_t pos = ring_reserve(&p->slot_ring, 1); /* cannot overflow: one cell per slot */
    ring_wait_free(&p->slot_ring, pos);
    p->slot_ids[pos & (p->slot_ring.capacity - 1)] = id;
    ring_publish(&p->slot_ring, pos);
}

static __device__ void clear_bins(warp_smem *sm, uint32_t lane)
{
    uint32_t *b = &sm->bins[0][0][0];
    for (uint32_t i = lane; i < 2 * 3 * GPU_BINS; i += 32) b[i] = 0;
    __syncwarp();
}

/* Bins references [begin, end) of a node into the warp's shared bins. */
static __device__ void bin_range(warp_ctx *c, const uint32_t *refs, uint32_t begin, uint32_t end, const float lo[3],
                                 const float extent[3], const float scale[3])
{
#pragma unroll 4
    for (uint32_t i = begin + c->lane; i < end; i += 32) {
        float tlo[3], thi[3];
        load_box(c->p, __ldcg(&refs[i]), tlo, thi);
        for (int a = 0; a < 3; a++) {
            if (!(extent[a] > 0.0f)) continue;
            atomicAdd(&c->sm->bins[0][a][bin_of(tlo[a], lo[a], extent[a], scale[a])], 1u);
            atomicAdd(&c->sm->bins[1][a][bin_of(thi[a], lo[a], extent[a], scale[a])], 1u);
        }
    }
    __syncwarp();
}

static __device__ void box_setup(const task *t, float extent[3], float scale[3], float *inv_area)
{
    for (int a = 0; a < 3; a++) {
        extent[a] = t->hi[a] - t->lo[a];
        scale[a] = extent[a] > 0.0f ? __fdiv_rn((float)GPU_BINS, extent[a]) : 0.0f;
    }
    float area = kdtree_box_area(extent);
    *inv_area = area > 0.0f ? 1.0f / area : 0.0f;
}

/* A node stays a leaf when it is empty, at the depth limit, flat in two
 * axes (no area), or when no split beats the leaf cost. */
static __device__ __forceinline__ int may_split(const build_params *p, const task *t, float inv_area)
{
    return t->n > 0 && t->depth < p->max_depth && inv_area > 0.0f;
}

/* The children of a split node: pushes non-empty ones and writes empty
 * leaves; returns the child the warp should continue with (n == 0: none). */
static __device__ int warp_finish_split(warp_ctx *c, const task *t, const split_decision *d, uint32_t *left,
                                        uint32_t *right, task *next, int keep_one)
{
    uint32_t first = warp_node_pair(c);
    if (first == UINT32_MAX) return -1;
    task child[2];
    for (int s = 0; s < 2; s++) {
        child[s] = *t;
        child[s].node = first + (uint32_t)s;
        child[s].depth = t->depth + 1;
        child[s].slot = NO_SLOT;
    }
    child[0].hi[d->axis] = d->pos;
    child[1].lo[d->axis] = d->pos;
    child[0].refs = left;
    child[0].n = d->n_left;
    child[1].refs = right;
    child[1].n = d->n_right;
    /* Carry on with the larger child that one warp should do itself. */
    int keep = -1;
    if (keep_one) {
        for (int s = 0; s < 2; s++)
            if (child[s].n > 0 && child[s].n <= BIG_NODE && (keep < 0 || child[s].n > child[keep].n)) keep = s;
    }
    int rc = 0;
    if (c->lane == 0) {
        c->p->nodes[t->node] = kdtree_make_inner((uint32_t)d->axis, d->pos, first);
        for (int s = 0; s < 2; s++) {
            if (child[s].n == 0) c->p->nodes[child[s].node] = kdtree_make_leaf(0, 0);
            else if (s != keep && lane0_push(c, &child[s])) rc = -1;
        }
    }
    if (broadcast((uint32_t)rc)) return -1;
    next->n = 0;
    if (keep >= 0) *next = child[keep];
    return 0;
}

/* BIN chunk of a big node; the last one chooses the split. */
static __device__ void big_bin_chunk(warp_ctx *c, uint32_t id, uint32_t chunk)
{
    const build_params *p = c->p;
    big_slot *s = &p->slots[id];
    task t = load_task(&s->t); /* written before the chunks were published */
    uint32_t n_chunks = __ldcg(&s->n_chunks);
    float extent[3], scale[3], inv_area;
    box_setup(&t, extent, scale, &inv_area);
    uint32_t begin = chunk * CHUNK, end = min(t.n, begin + CHUNK);
    clear_bins(c->sm, c->lane);
    bin_range(c, t.refs, begin, end, t.lo, extent, scale);
    uint32_t *mine = &c->sm->bins[0][0][0], *shared = &s->bins[0][0][0];
    for (uint32_t i = c->lane; i < 2 * 3 * GPU_BINS; i += 32)
        if (mine[i]) atomicAdd(&shared[i], mine[i]);
    __threadfence();
    __syncwarp();
    uint32_t last = 0;
    if (c->lane == 0) last = atomicAdd(&s->done, 1u) == n_chunks - 1;
    if (!broadcast(last)) return;

    __threadfence();
    for (uint32_t i = c->lane; i < 2 * 3 * GPU_BINS; i += 32) mine[i] = __ldcg(&shared[i]);
    __syncwarp();
    split_decision d = binned_split(c->sm->bins, t.n, t.lo, t.hi, inv_area);
    if (!may_split(p, &t, inv_area) || d.axis < 0 || !(d.cost < kdtree_leaf_cost(t.n))) {
        if (warp_make_leaf(c, &t) == 0 && c->lane == 0) lane0_release_slot(c, id);
        return;
    }
    uint32_t *left, *right;
    if (warp_alloc_children(c, d.n_left, d.n_right, &left, &right)) return;
    if (c->lane == 0) {
        s->axis = (uint32_t)d.axis;
        s->k = d.k;
        s->split = d.pos;
        s->n_left = d.n_left;
        s->n_right = d.n_right;
        s->left_cursor = s->right_cursor = 0;
        s->left = left;
        s->right = right;
        s->done = 0;
    }
    __threadfence();
    __syncwarp();
    warp_push_chunks(c, id, PHASE_SCATTER, n_chunks);
}

/* SCATTER chunk of a big node; the last one finishes the node. */
static __device__ void big_scatter_chunk(warp_ctx *c, uint32_t id, uint32_t chunk)
{
    const build_params *p = c->p;
    big_slot *s = &p->slots[id];
    task t = load_task(&s->t);
    uint32_t n_chunks = __ldcg(&s->n_chunks);
    uint32_t axis = __ldcg(&s->axis), k = __ldcg(&s->k);
    uint32_t *left = (uint32_t *)__ldcg((const unsigned long long *)&s->left);
    uint32_t *right = (uint32_t *)__ldcg((const unsigned long long *)&s->right);
    float lo = t.lo[axis], extent = t.hi[axis] - t.lo[axis];
    float scale = __fdiv_rn((float)GPU_BINS, extent);
    uint32_t begin = chunk * CHUNK, end = min(t.n, begin + CHUNK);
    uint32_t lanes_below = (1u << c->lane) - 1;

    /* Count this chunk's sides, reserve room once, then write. */
    uint32_t nl = 0, nr = 0;
    for (uint32_t i = begin + c->lane; i < end; i += 32) {
        float tlo[3], thi[3];
        load_box(p, __ldcg(&t.refs[i]), tlo, thi);
        uint32_t sides = binned_sides(k, tlo[axis], thi[axis], lo, extent, scale);
        nl += sides & 1u;
        nr += sides >> 1;
    }
    for (int off = 16; off > 0; off >>= 1) {
        nl += __shfl_xor_sync(FULL_MASK, nl, off);
        nr += __shfl_xor_sync(FULL_MASK, nr, off);
    }
    uint32_t at_l = 0, at_r = 0;
    if (c->lane == 0) {
        at_l = atomicAdd(&s->left_cursor, nl);
        at_r = atomicAdd(&s->right_cursor, nr);
    }
    at_l = broadcast(at_l);
    at_r = broadcast(at_r);
    for (uint32_t base = begin; base < end; base += 32) {
        uint32_t i = base + c->lane, tri = 0, sides = 0;
        if (i < end) {
            float tlo[3], thi[3];
            tri = __ldcg(&t.refs[i]);
            load_box(p, tri, tlo, thi);
            sides = binned_sides(k, tlo[axis], thi[axis], lo, extent, scale);
        }
        uint32_t goes_l = __ballot_sync(FULL_MASK, sides & 1u), goes_r = __ballot_sync(FULL_MASK, sides & 2u);
        if (sides & 1u) left[at_l + __popc(goes_l & lanes_below)] = tri;
        if (sides & 2u) right[at_r + __popc(goes_r & lanes_below)] = tri;
        at_l += __popc(goes_l);
        at_r += __popc(goes_r);
    }
    __threadfence();
    __syncwarp();
    uint32_t last = 0;
    if (c->lane == 0) last = atomicAdd(&s->done, 1u) == n_chunks - 1;
    if (!broadcast(last)) return;

    __threadfence();
    split_decision d;
    d.axis = (int)axis;
    d.pos = __ldcg(&s->split);
    d.n_left = __ldcg(&s->n_left);
    d.n_right = __ldcg(&s->n_right);
    if (c->lane == 0) {
        if (__ldcg(&s->left_cursor) != d.n_left || __ldcg(&s->right_cursor) != d.n_right)
            set_error(c, BUILD_INTERNAL);
        lane0_free(c, t.refs, t.n);
    }
    task unused;
    warp_finish_split(c, &t, &d, left, right, &unused, 0);
    if (c->lane == 0) lane0_release_slot(c, id);
}

/* ---- nodes done by one warp ---- */

/* Splits node t or makes it a leaf.  Returns 1 with *next set to the child
 * to continue with, 0 when done with this chain (or on error). */
static __device__ int warp_node(warp_ctx *c, const task *t, task *next)
{
    const build_params *p = c->p;
    if (t->n > BIG_NODE && warp_start_big(c, t)) return 0;
    float extent[3], scale[3], inv_area;
    box_setup(t, extent, scale, &inv_area);
    split_decision d;
    d.axis = -1;
    /* Small nodes: one reference per lane, kept in registers. */
    uint32_t tri = 0;
    float tlo[3] = {0, 0, 0}, thi[3] = {0, 0, 0};
    if (may_split(p, t, inv_area)) {
        if (t->n <= EXACT_MAX) {
            if (c->lane < t->n) {
                tri = __ldcg(&t->refs[c->lane]);
                load_box(p, tri, tlo, thi);
            }
            d = exact_split(t->n, tlo, thi, t->lo, t->hi, inv_area);
        } else {
            clear_bins(c->sm, c->lane);
            bin_range(c, t->refs, 0, t->n, t->lo, extent, scale);
            d = binned_split(c->sm->bins, t->n, t->lo, t->hi, inv_area);
        }
    }
    if (d.axis < 0 || !(d.cost < kdtree_leaf_cost(t->n))) {
        warp_make_leaf(c, t);
        return 0;
    }
    uint32_t *left, *right;
    if (warp_alloc_children(c, d.n_left, d.n_right, &left, &right)) return 0;

    uint32_t lanes_below = (1u << c->lane) - 1, at_l = 0, at_r = 0;
    float lo = t->lo[d.axis];
    for (uint32_t base = 0; base < t->n; base += 32) {
        uint32_t i = base + c->lane, sides = 0;
        if (i < t->n) {
            if (!d.exact) {
                tri = __ldcg(&t->refs[i]);
                load_box(p, tri, tlo, thi);
                sides = binned_sides(d.k, tlo[d.axis], thi[d.axis], lo, extent[d.axis], scale[d.axis]);
            } else {
                sides = exact_sides(&d, tlo[d.axis], thi[d.axis]);
            }
        }
        uint32_t goes_l = __ballot_sync(FULL_MASK, sides & 1u), goes_r = __ballot_sync(FULL_MASK, sides & 2u);
        if (at_l + __popc(goes_l) > d.n_left || at_r + __popc(goes_r) > d.n_right) { /* cannot happen */
            if (c->lane == 0) set_error(c, BUILD_INTERNAL);
            return 0;
        }
        if (sides & 1u) left[at_l + __popc(goes_l & lanes_below)] = tri;
        if (sides & 2u) right[at_r + __popc(goes_r & lanes_below)] = tri;
        at_l += __popc(goes_l);
        at_r += __popc(goes_r);
    }
    __threadfence();
    __syncwarp();
    if (c->lane == 0) lane0_free(c, t->refs, t->n);
    if (warp_finish_split(c, t, &d, left, right, next, 1)) return 0;
    return next->n > 0;
}

static __device__ int build_failed(const build_params *p)
{
    return ld_relaxed_u32(&p->state->error) != 0;
}

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) build_kernel(build_params p)
{
    __shared__ warp_smem smem[WARPS_PER_BLOCK];
    warp_ctx c;
    c.p = &p;
    c.sm = &smem[threadIdx.x / 32];
    c.lane = threadIdx.x & 31u;
    c.out_pos = c.out_end = 0;
    c.n_alloc = c.alloc_bytes = c.alloc_sq = 0;
    uint32_t idle = 0;
    for (;;) {
        if (!warp_pop(&c)) {
            uint32_t stop = 0;
            if (c.lane == 0) stop = ld_acquire_u32(&p.state->pending) == 0 || build_failed(&p);
            if (broadcast(stop)) break;
            __nanosleep(idle < 6 ? 64u << idle : 4096u);
            idle++;
            continue;
        }
        idle = 0;
        task t = c.sm->t;
        __syncwarp();
        if (t.slot != NO_SLOT) {
            if (t.depth == PHASE_BIN) big_bin_chunk(&c, t.slot, t.n);
            else big_scatter_chunk(&c, t.slot, t.n);
        } else {
            task next;
            while (warp_node(&c, &t, &next)) t = next;
        }
        uint32_t failed = 0;
        if (c.lane == 0) {
            atomicSub(&p.state->pending, 1u);
            failed = build_failed(&p);
        }
        if (broadcast(failed)) break;
    }
    if (c.lane == 0) {
        atomicAdd(&p.state->n_alloc, c.n_alloc);
        atomicAdd(&p.state->alloc_bytes, c.alloc_bytes);
        atomicAdd(&p.state->alloc_sq, c.alloc_sq);
    }
}

#endif
