/* gpu_kernel.cuh - the persistent build kernel (included by gpu_build.cu).
 *
 * Work.  Every warp loops: take an entry from the global queue, do it, then
 * drain its own stack of node tasks, until no entry is pending anywhere
 * (state.pending == 0) or an error is flagged.  An entry is either
 *   - a node task: one warp does the node (SAH; lane 0 allocates the two
 *     child arrays; scatter; lane 0 frees the parent's array) and keeps the
 *     children on its own stack in shared memory, depth first; or
 *   - a chunk of a big node (more than BIG_NODE references): the node lives
 *     in a slot; its BIN phase and its SCATTER phase are each cut into
 *     CHUNK-reference chunks that any warps take, and the warp that finishes
 *     the last chunk of a phase moves the node on (SAH and child allocation
 *     after BIN; freeing the parent and taking the children after SCATTER).
 * Sharing.  While more warps are idle (state.hungry) than entries are
 * queued, a warp sends every child of at least SHARE_MIN references to
 * the global queue instead of its own stack; and after each node it gives
 * the bottom (oldest, largest) task of its stack to an idle warp of its own
 * block through shared memory, or, every GLOBAL_CHECK nodes, to the global
 * queue.  An idle warp takes work from its block first; one warp per block
 * at a time (the seeker) takes a ticket on the global queue (one atomicAdd,
 * gpu_queue.cuh) and waits for that entry, so idle warps neither flood the
 * queue's cache lines nor fight over its head with failing CASes.  Every
 * entry (global or block) counts in state.pending until the warp that took
 * it has emptied its stack.
 * Memory ordering.  A warp's stores are fenced (__threadfence by every
 * lane) before the atomic or queue release that lets another warp see its
 * work; data other warps wrote is read through L2 (__ldcg), never a stale
 * L1 line.  Tasks a warp keeps for itself need no fence: __syncwarp orders
 * its lanes.  docs/builder.md gives the full picture.
 */
#ifndef KDA_GPU_KERNEL_CUH
#define KDA_GPU_KERNEL_CUH

#include "alloc.h"
#include "gpu_queue.cuh"
#include "gpu_sah.cuh"

/* The tuning constants marked (-D) may be overridden at compile time for
 * experiments; the defaults were measured best on an H200 (docs/RESULTS.md). */
#define WARPS_PER_BLOCK 8
#ifndef BIG_NODE /* (-D) */
#define BIG_NODE 1024    /* nodes with more references are split by many warps */
#endif
#ifndef CHUNK /* (-D) */
#define CHUNK 256        /* references per chunk of a big node */
#endif
#define OUT_BATCH 1024   /* leaf references a warp reserves at once */
#define LOCAL_TASKS 16   /* a warp's own stack of node tasks */
#define BLOCK_TASKS 16   /* tasks the warps of a block hand to each other */
#ifndef GLOBAL_CHECK /* (-D) */
#define GLOBAL_CHECK 16  /* nodes between a busy warp's looks at global counters */
#endif
#ifndef SHARE_MIN /* (-D) */
#define SHARE_MIN 64u   /* a child this large goes to the global queue at once while warps are hungry */
#endif
#define NO_SLOT 0xffffffffu
#define NO_TICKET 0xffffffffu

enum { PHASE_BIN = 0, PHASE_SCATTER = 1 };
enum {
    BUILD_OK = 0,
    BUILD_POOL_EXHAUSTED, /* the allocator returned NULL */
    BUILD_QUEUE_FULL,     /* these three: grow the array and build again */
    BUILD_NODES_FULL,
    BUILD_REFS_FULL,
    BUILD_CORRUPT,        /* a reference out of range, or a child of the wrong
                             size: memory was overwritten (AWMalloc's wrap) */
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

/* A counter alone in its 128-byte line: the hot ones are hit by atomics
 * from every warp, and must not also slow down each other's readers. */
typedef struct __align__(128) line_u32 {
    uint32_t v;
} line_u32;

/* Where the warps' time goes (the warm-up build only; --profile). */
enum {
    PROF_IDLE,    /* cycles waiting for work */
    PROF_NODE,    /* cycles in nodes done by one warp, allocation included */
    PROF_ALLOC,   /* cycles in kda_malloc */
    PROF_FREE,    /* cycles in kda_free */
    PROF_CHUNK,   /* cycles in chunks of big nodes */
    PROF_NODES,   /* nodes done by one warp */
    PROF_CHUNKS,  /* chunks done */
    PROF_POPS,    /* entries taken from the global queue */
    PROF_SHARED,  /* node tasks given to the global queue */
    PROF_COUNT
};

/* Counters of one build, zeroed before it. */
typedef struct build_state {
    line_u32 pending;  /* entries pushed and not finished */
    line_u32 hungry;   /* warps that found the queue empty */
    line_u32 error;    /* the first BUILD_* error */
    line_u32 n_nodes;
    line_u32 refs_out; /* reserved length of the output references */
    line_u32 q_head, q_tail, s_head, s_tail;
    unsigned long long n_alloc, alloc_bytes, alloc_sq;
    unsigned long long live_bytes, peak_bytes;
    unsigned long long profile[PROF_COUNT];
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
    task popped;
    task stack[LOCAL_TASKS]; /* a ring: tasks bottom .. bottom + count - 1 */
    unsigned long long profile[PROF_COUNT]; /* when collecting statistics */
} warp_smem;

/* What the warps of a block share: tasks handed over, guarded by a lock. */
typedef struct block_smem {
    task tasks[BLOCK_TASKS];
    int count;
    int lock;
    int idle;   /* warps of this block without work */
    int seeker; /* one warp of the block polls the global queue */
    int done;   /* the build is over (or failed) */
} block_smem;

/* What a warp carries (counters: lane 0's copy counts). */
typedef struct warp_ctx {
    const build_params *p;
    warp_smem *sm;
    block_smem *bs;
    uint32_t lane;
    uint32_t since_check; /* nodes since the last look at global counters */
    uint32_t bottom, count;    /* the local stack */
    uint32_t out_pos, out_end; /* leaf references reserved, not yet used */
    uint32_t ticket;           /* the block's seeker: its queue position, or NO_TICKET */
    unsigned long long n_alloc, alloc_bytes, alloc_sq;
} warp_ctx;

static __device__ __forceinline__ long long prof_start(const warp_ctx *c)
{
    return c->p->collect_stats ? clock64() : 0;
}

static __device__ __forceinline__ void prof_add(warp_ctx *c, int what, long long start)
{
    if (c->p->collect_stats && c->lane == 0) c->sm->profile[what] += (unsigned long long)(clock64() - start);
}

static __device__ __forceinline__ void prof_count(warp_ctx *c, int what)
{
    if (c->p->collect_stats && c->lane == 0) c->sm->profile[what]++;
}

static __device__ __forceinline__ void set_error(const build_params *p, uint32_t code)
{
    atomicCAS(&p->state->error.v, 0u, code);
}

static __device__ __forceinline__ uint32_t broadcast(uint32_t v) { return __shfl_sync(FULL_MASK, v, 0); }

static __device__ __forceinline__ uint32_t *broadcast_ptr(uint32_t *v)
{
    return (uint32_t *)__shfl_sync(FULL_MASK, (unsigned long long)v, 0);
}

static __device__ __forceinline__ int build_failed(const build_params *p)
{
    return ld_relaxed_u32(&p->state->error.v) != 0;
}

/* A reference out of range can only come from overwritten memory: flag it,
 * read a valid box instead, and let the build stop. */
static __device__ __forceinline__ void load_box(const build_params *p, uint32_t tri, float lo[3], float hi[3])
{
    if (tri >= p->n_triangles) {
        set_error(p, BUILD_CORRUPT);
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

/* ---- the global queue ---- */

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

/* Lane 0 publishes one entry.  0 on success. */
static __device__ int lane0_push(warp_ctx *c, const task *t)
{
    const build_params *p = c->p;
    uint32_t pos = ring_reserve(&p->queue, 1);
    if (pos == UINT32_MAX) {
        set_error(p, BUILD_QUEUE_FULL);
        return -1;
    }
    atomicAdd(&p->state->pending.v, 1u);
    if (ring_wait_free(&p->queue, pos, &p->state->error.v)) return -1; /* the build failed meanwhile */
    write_cell(&p->cells[pos & (p->queue.capacity - 1)], t);
    ring_publish(&p->queue, pos);
    return 0;
}

/* Publishes a node task whose array this warp wrote: fenced first. */
static __device__ void warp_publish(warp_ctx *c, const task *t)
{
    __threadfence();
    __syncwarp();
    if (c->lane == 0) {
        lane0_push(c, t);
        prof_count(c, PROF_SHARED);
    }
    __syncwarp();
}

/* The warp pushes `count` chunk entries of a big node's phase. */
static __device__ void warp_push_chunks(warp_ctx *c, uint32_t slot, uint32_t phase, uint32_t count)
{
    const build_params *p = c->p;
    uint32_t pos = 0;
    if (c->lane == 0) {
        pos = ring_reserve(&p->queue, count);
        if (pos == UINT32_MAX) set_error(p, BUILD_QUEUE_FULL);
        else atomicAdd(&p->state->pending.v, count);
    }
    pos = broadcast(pos);
    if (pos == UINT32_MAX) return;
    for (uint32_t i = c->lane; i < count; i += 32) {
        task e;
        e.lo[0] = e.lo[1] = e.lo[2] = e.hi[0] = e.hi[1] = e.hi[2] = 0.0f;
        e.refs = NULL;
        e.n = i;
        e.node = 0;
        e.depth = phase;
        e.slot = slot;
        if (ring_wait_free(&p->queue, pos + i, &p->state->error.v)) continue; /* the build failed meanwhile */
        write_cell(&p->cells[(pos + i) & (p->queue.capacity - 1)], &e);
        ring_publish(&p->queue, pos + i);
    }
}

/* ---- the warp's own stack ---- */

static __device__ void local_push(warp_ctx *c, const task *t)
{
    if (c->count == LOCAL_TASKS) { /* full: share it instead */
        warp_publish(c, t);
        return;
    }
    if (c->lane == 0) c->sm->stack[(c->bottom + c->count) % LOCAL_TASKS] = *t;
    __syncwarp();
    c->count++;
}

static __device__ task local_pop(warp_ctx *c)
{
    c->count--;
    return c->sm->stack[(c->bottom + c->count) % LOCAL_TASKS];
}

/* ---- the block's shared tasks (lane 0 only) ----
 * Every access to block_smem that another warp may make at the same time
 * is an atomic, the task copies included: a spin lock orders them, and
 * racecheck sees shared memory used only through atomics. */

static __device__ __forceinline__ int shared_read(int *p) { return atomicOr(p, 0); }

static __device__ void block_lock(block_smem *b)
{
    while (atomicCAS(&b->lock, 0, 1) != 0) __nanosleep(16);
    __threadfence_block();
}

static __device__ void block_unlock(block_smem *b)
{
    __threadfence_block();
    atomicExch(&b->lock, 0);
}

#define TASK_WORDS (sizeof(task) / sizeof(unsigned))

/* 0 when the block's tasks are full. */
static __device__ int lane0_block_push(block_smem *b, const task *t)
{
    int ok = 0;
    block_lock(b);
    int n = shared_read(&b->count);
    if (n < BLOCK_TASKS) {
        const unsigned *src = (const unsigned *)t;
        unsigned *dst = (unsigned *)&b->tasks[n];
        for (unsigned i = 0; i < TASK_WORDS; i++) atomicExch(&dst[i], src[i]);
        atomicExch(&b->count, n + 1);
        ok = 1;
    }
    block_unlock(b);
    return ok;
}

static __device__ int lane0_block_pop(block_smem *b, task *t)
{
    int ok = 0;
    if (shared_read(&b->count) == 0) return 0; /* the common case, without the lock */
    block_lock(b);
    int n = shared_read(&b->count);
    if (n > 0) {
        unsigned *src = (unsigned *)&b->tasks[n - 1];
        unsigned *dst = (unsigned *)t;
        for (unsigned i = 0; i < TASK_WORDS; i++) dst[i] = atomicOr(&src[i], 0u);
        atomicExch(&b->count, n - 1);
        ok = 1;
    }
    block_unlock(b);
    return ok;
}

/* Whether more warps wait for work than entries are queued (lane 0). */
static __device__ int lane0_queue_hungry(const warp_ctx *c)
{
    const build_state *st = c->p->state;
    /* Negative while seekers hold tickets for entries not yet pushed. */
    int32_t queued = (int32_t)(ld_relaxed_u32(&st->q_tail.v) - ld_relaxed_u32(&st->q_head.v));
    return (int32_t)ld_relaxed_u32(&st->hungry.v) > queued;
}

/* Gives the bottom task of the stack to an idle warp of the block, or now
 * and then to the global queue while idle warps outnumber queued entries. */
static __device__ void maybe_donate(warp_ctx *c)
{
    if (c->count == 0) return;
    uint32_t where = 0; /* 1: the block, 2: the global queue */
    if (c->lane == 0) {
        block_smem *b = c->bs;
        if (shared_read(&b->idle) > shared_read(&b->count)) {
            where = 1;
        } else if (++c->since_check >= GLOBAL_CHECK) {
            where = lane0_queue_hungry(c) ? 2 : 0;
            c->since_check = 0;
        }
    }
    where = broadcast(where);
    if (!where) return;
    task t = c->sm->stack[c->bottom];
    __syncwarp();
    c->bottom = (c->bottom + 1) % LOCAL_TASKS;
    c->count--;
    if (where == 2) {
        warp_publish(c, &t);
        return;
    }
    __threadfence(); /* the task's array, before another warp reads it through L2 */
    __syncwarp();
    if (c->lane == 0) {
        atomicAdd(&c->p->state->pending.v, 1u); /* before any warp can take it */
        if (lane0_block_push(c->bs, &t)) {
            prof_count(c, PROF_SHARED);
        } else { /* the block is full after all: share globally (which counts it) */
            atomicSub(&c->p->state->pending.v, 1u);
            lane0_push(c, &t);
        }
    }
    __syncwarp();
}

/* ---- big nodes ---- */

/* Moves a node into a free slot and pushes its BIN chunks; 0 when no slot
 * is free (the node is then split by one warp). */
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
    __threadfence(); /* the node's array and the slot, before the chunks */
    __syncwarp();
    warp_push_chunks(c, id, PHASE_BIN, n_chunks);
    return 1;
}

static __device__ void lane0_release_slot(warp_ctx *c, uint32_t id)
{
    const build_params *p = c->p;
    uint32_t pos = ring_reserve(&p->slot_ring, 1); /* cannot overflow: one cell per slot */
    if (ring_wait_free(&p->slot_ring, pos, &p->state->error.v)) return;
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

/* A node stays a leaf when it is empty, at the depth limit, or without
 * area (flat in two axes); or when no split beats the leaf cost. */
static __device__ __forceinline__ int may_split(const build_params *p, const task *t, float inv_area)
{
    return t->n > 0 && t->depth < p->max_depth && inv_area > 0.0f;
}

/* Writes the inner node and takes its children: empty ones become leaves,
 * big ones go to slots, the rest onto this warp's stack (the larger first,
 * so the smaller is done next and the larger stays to be shared). */
static __device__ void warp_take_children(warp_ctx *c, const task *t, const split_decision *d, uint32_t *left,
                                          uint32_t *right)
{
    uint32_t first = warp_node_pair(c);
    if (first == UINT32_MAX) return;
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
    if (c->lane == 0) c->p->nodes[t->node] = kdtree_make_inner((uint32_t)d->axis, d->pos, first);
    int larger = child[1].n > child[0].n;
    for (int i = 0; i < 2; i++) {
        const task *ch = &child[i == 0 ? larger : !larger];
        if (ch->n == 0) {
            if (c->lane == 0) c->p->nodes[ch->node] = kdtree_make_leaf(0, 0);
        } else if (ch->n <= BIG_NODE || !warp_start_big(c, ch)) {
            if (ch->n >= SHARE_MIN && broadcast(c->lane == 0 && lane0_queue_hungry(c))) warp_publish(c, ch);
            else local_push(c, ch);
        }
    }
}

/* Counts this warp's chunk as done (its stores fenced first); 1 for the
 * warp that finished the phase's last chunk, which then sees every other
 * chunk's work (fenced again before it reads). */
static __device__ int warp_finished_last_chunk(warp_ctx *c, big_slot *s, uint32_t n_chunks)
{
    __threadfence();
    __syncwarp();
    uint32_t last = 0;
    if (c->lane == 0) last = atomicAdd(&s->done, 1u) == n_chunks - 1;
    if (!broadcast(last)) return 0;
    __threadfence();
    return 1;
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
    if (!warp_finished_last_chunk(c, s, n_chunks)) return;
    for (uint32_t i = c->lane; i < 2 * 3 * GPU_BINS; i += 32) mine[i] = __ldcg(&shared[i]);
    __syncwarp();
    split_decision d = binned_split(c->sm->bins, t.n, t.lo, t.hi, inv_area);
    if (!may_split(p, &t, inv_area) || d.axis < 0 || !(d.cost < kdtree_leaf_cost(t.n))) {
        warp_make_leaf(c, &t);
        if (c->lane == 0) lane0_release_slot(c, id);
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
    uint32_t at_l = 0, at_r = 0, n_left = __ldcg(&s->n_left), n_right = __ldcg(&s->n_right);
    if (c->lane == 0) {
        at_l = atomicAdd(&s->left_cursor, nl);
        at_r = atomicAdd(&s->right_cursor, nr);
        if (at_l + nl > n_left || at_r + nr > n_right) set_error(p, BUILD_CORRUPT);
    }
    at_l = broadcast(at_l);
    at_r = broadcast(at_r);
    if (at_l + nl > n_left || at_r + nr > n_right) return; /* never write past the arrays */
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
    if (!warp_finished_last_chunk(c, s, n_chunks)) return;
    split_decision d;
    d.axis = (int)axis;
    d.pos = __ldcg(&s->split);
    d.n_left = n_left;
    d.n_right = n_right;
    if (c->lane == 0) {
        if (__ldcg(&s->left_cursor) != n_left || __ldcg(&s->right_cursor) != n_right) set_error(p, BUILD_CORRUPT);
        lane0_free(c, t.refs, t.n);
        lane0_release_slot(c, id);
    }
    warp_take_children(c, &t, &d, left, right);
}

/* ---- nodes done by one warp ---- */

/* Splits node t (or makes it a leaf); its children land on the stack. */
static __device__ void warp_node(warp_ctx *c, const task *t)
{
    const build_params *p = c->p;
    if (t->n > BIG_NODE && warp_start_big(c, t)) return;
    float extent[3], scale[3], inv_area;
    box_setup(t, extent, scale, &inv_area);
    split_decision d = no_split(0);
    /* Small nodes: two references per lane, kept in registers. */
    uint32_t tri[2] = {0, 0};
    lane_box box[2];
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 3; a++) box[s].lo[a] = box[s].hi[a] = 0.0f;
    if (may_split(p, t, inv_area)) {
        if (t->n <= EXACT_MAX) {
            for (int s = 0; s < 2; s++)
                if (c->lane + 32u * (uint32_t)s < t->n) {
                    tri[s] = __ldcg(&t->refs[c->lane + 32u * (uint32_t)s]);
                    load_box(p, tri[s], box[s].lo, box[s].hi);
                }
            d = exact_split(t->n, box, t->lo, t->hi, inv_area);
        } else {
            clear_bins(c->sm, c->lane);
            bin_range(c, t->refs, 0, t->n, t->lo, extent, scale);
            d = binned_split(c->sm->bins, t->n, t->lo, t->hi, inv_area);
        }
    }
    if (d.axis < 0 || !(d.cost < kdtree_leaf_cost(t->n))) {
        warp_make_leaf(c, t);
        return;
    }
    uint32_t *left, *right;
    if (warp_alloc_children(c, d.n_left, d.n_right, &left, &right)) return;

    uint32_t lanes_below = (1u << c->lane) - 1, at_l = 0, at_r = 0;
    float lo = t->lo[d.axis];
    for (uint32_t base = 0; base < t->n; base += 32) {
        uint32_t i = base + c->lane, sides = 0, ref = 0;
        if (i < t->n) {
            if (d.exact) {
                int s = base ? 1 : 0;
                ref = tri[s];
                sides = exact_sides(&d, box[s].lo[d.axis], box[s].hi[d.axis]);
            } else {
                float tlo[3], thi[3];
                ref = __ldcg(&t->refs[i]);
                load_box(p, ref, tlo, thi);
                sides = binned_sides(d.k, tlo[d.axis], thi[d.axis], lo, extent[d.axis], scale[d.axis]);
            }
        }
        uint32_t goes_l = __ballot_sync(FULL_MASK, sides & 1u), goes_r = __ballot_sync(FULL_MASK, sides & 2u);
        if (at_l + __popc(goes_l) > d.n_left || at_r + __popc(goes_r) > d.n_right) {
            if (c->lane == 0) set_error(p, BUILD_CORRUPT); /* the array changed under us */
            return;
        }
        if (sides & 1u) left[at_l + __popc(goes_l & lanes_below)] = ref;
        if (sides & 2u) right[at_r + __popc(goes_r & lanes_below)] = ref;
        at_l += __popc(goes_l);
        at_r += __popc(goes_r);
    }
    __syncwarp(); /* every lane has read the parent's array */
    if (c->lane == 0) lane0_free(c, t->refs, t->n);
    warp_take_children(c, t, &d, left, right);
}

/* Finds the warp's next entry: from the block's shared tasks, else from
 * the global queue, through the block's seeker: one idle warp per block
 * takes a ticket and waits for nothing but that entry (a ticket cannot be
 * given back, so the entry must not wait for a busy warp).  1: got one in
 * sm->popped; 0: none yet; -1: the build is over. */
static __device__ int warp_find_work(warp_ctx *c)
{
    const build_params *p = c->p;
    int got = 0;
    if (c->lane == 0) {
        block_smem *b = c->bs;
        if (c->ticket == NO_TICKET) {
            if (lane0_block_pop(b, &c->sm->popped)) got = 1;
            else if (atomicCAS(&b->seeker, 0, 1) == 0) c->ticket = ring_ticket(&p->queue);
        }
        if (c->ticket != NO_TICKET) {
            if (ring_ready(&p->queue, c->ticket)) {
                c->sm->popped = load_task(&p->cells[c->ticket & (p->queue.capacity - 1)]);
                ring_release(&p->queue, c->ticket);
                c->ticket = NO_TICKET;
                atomicExch(&b->seeker, 0);
                got = 1;
            } else if (ld_acquire_u32(&p->state->pending.v) == 0 || build_failed(p)) {
                atomicExch(&b->done, 1); /* no entry will come: the ticket is void */
            }
        }
        if (!got && shared_read(&b->done)) got = -1;
    }
    __syncwarp();
    return (int)broadcast((uint32_t)got);
}

/* At least 3 blocks (24 warps) an SM with every allocator: the kernel is
 * latency-bound, and an allocator whose rare paths are long (CountedBump's
 * bitmap search, ScatterAlloc's) must not cost the builder a third of its
 * warps.  ptxas then keeps 80 registers, what most allocators need anyway. */
extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * 32, 3) build_kernel(build_params p)
{
    __shared__ warp_smem smem[WARPS_PER_BLOCK];
    __shared__ block_smem block;
    if (threadIdx.x == 0) {
        block.count = block.lock = block.idle = block.seeker = block.done = 0;
    }
    __syncthreads();
    warp_ctx c;
    c.p = &p;
    c.sm = &smem[threadIdx.x / 32];
    c.bs = &block;
    c.lane = threadIdx.x & 31u;
    c.since_check = 0;
    c.bottom = c.count = 0;
    c.out_pos = c.out_end = 0;
    c.ticket = NO_TICKET;
    c.n_alloc = c.alloc_bytes = c.alloc_sq = 0;
    if (c.lane < PROF_COUNT) c.sm->profile[c.lane] = 0;
    __syncwarp();
    uint32_t idle = 0;
    long long idle_since = prof_start(&c);
    for (;;) {
        int found = warp_find_work(&c);
        if (found < 0) break;
        if (found == 0) {
            if (idle == 0 && c.lane == 0) {
                atomicAdd(&block.idle, 1);
                atomicAdd(&p.state->hungry.v, 1u);
            }
            __nanosleep(idle < 4 ? 32u << idle : 512u);
            idle++;
            continue;
        }
        if (idle && c.lane == 0) {
            atomicSub(&block.idle, 1);
            atomicSub(&p.state->hungry.v, 1u);
        }
        idle = 0;
        prof_add(&c, PROF_IDLE, idle_since);
        prof_count(&c, PROF_POPS);
        task t = c.sm->popped;
        __syncwarp();
        if (t.slot != NO_SLOT) {
            long long t0 = prof_start(&c);
            if (t.depth == PHASE_BIN) big_bin_chunk(&c, t.slot, t.n);
            else big_scatter_chunk(&c, t.slot, t.n);
            prof_add(&c, PROF_CHUNK, t0);
            prof_count(&c, PROF_CHUNKS);
        } else {
            local_push(&c, &t);
        }
        uint32_t nodes = 0;
        while (c.count > 0) {
            if (++nodes % GLOBAL_CHECK == 0 && broadcast(c.lane == 0 && build_failed(&p))) {
                c.count = 0; /* abandon the stack */
                break;
            }
            task next = local_pop(&c);
            __syncwarp();
            long long t0 = prof_start(&c);
            warp_node(&c, &next);
            prof_add(&c, PROF_NODE, t0);
            prof_count(&c, PROF_NODES);
            maybe_donate(&c);
        }
        idle_since = prof_start(&c);
        if (c.lane == 0) atomicSub(&p.state->pending.v, 1u);
        __syncwarp();
    }
    if (c.lane == 0) {
        atomicAdd(&p.state->n_alloc, c.n_alloc);
        atomicAdd(&p.state->alloc_bytes, c.alloc_bytes);
        atomicAdd(&p.state->alloc_sq, c.alloc_sq);
        if (p.collect_stats) {
            prof_add(&c, PROF_IDLE, idle_since);
            for (int i = 0; i < PROF_COUNT; i++) atomicAdd(&p.state->profile[i], c.sm->profile[i]);
        }
    }
}

#endif
