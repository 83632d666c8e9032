/* gpu_tasks.cuh - where node tasks wait (included by gpu_kernel.cuh): the
 * global queue (gpu_queue.cuh's ring), a warp's own stack in shared memory,
 * the block's shared tasks, and the donation of tasks to idle warps. */
#ifndef KDA_GPU_TASKS_CUH
#define KDA_GPU_TASKS_CUH

#include "gpu_build_types.cuh"

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

/* The start of a push of chunk entries, for the probe's queue wait
 * (-DKDA_PROBE; 0 otherwise). */
static __device__ __forceinline__ unsigned long long push_stamp(void)
{
#ifdef KDA_PROBE
    return global_ns();
#else
    return 0;
#endif
}

/* The queue entry of chunk `chunk` of phase `phase` of the big node in
 * slot `slot`.  A -DKDA_PROBE build stamps it with the start of its push
 * (`pushed`, in the box a chunk entry does not use), for the probe's
 * queue wait. */
static __device__ __forceinline__ task chunk_entry(uint32_t phase, uint32_t slot, uint32_t chunk,
                                                   unsigned long long pushed)
{
    task e;
    e.lo[0] = e.lo[1] = e.lo[2] = e.hi[0] = e.hi[1] = e.hi[2] = 0.0f;
#ifdef KDA_PROBE
    e.lo[0] = __uint_as_float((uint32_t)pushed);
    e.lo[1] = __uint_as_float((uint32_t)(pushed >> 32));
#else
    (void)pushed;
#endif
    e.refs = NULL;
    e.n = chunk;
    e.node = 0;
    e.level = phase;
    e.slot = slot;
    return e;
}

/* The warp pushes the chunk entries of a big node's phase, all at once
 * (the push is on the critical path of every big-node level): `count`
 * chunks of the node in `slot`, then `count2` of the node in `slot2` (the
 * two big children of a big node start their BIN phases in one push: one
 * reservation and two fences, not two of each).  What the lanes stored
 * before (the nodes' slots) is visible before any entry is:
 * ring_publish_bulk fences, so the callers need no fence of their own
 * (one fewer per phase).  Out of line and given values, not the warp's
 * context: inlined at its call sites, its code costs the small nodes'
 * loops 10% on the Dragon (H200). */
static __device__ __noinline__ void push_chunks(const build_params *p, uint32_t lane, uint32_t phase, uint32_t slot,
                                                uint32_t count, uint32_t slot2, uint32_t count2)
{
    uint32_t pos = 0, total = count + count2;
    unsigned long long pushed = push_stamp(); /* stamped into its entries */
    if (lane == 0) {
        pos = ring_reserve(&p->queue, total);
        if (pos == UINT32_MAX) set_error(p, BUILD_QUEUE_FULL);
        else atomicAdd(&p->state->pending.v, total);
    }
    pos = broadcast(pos);
    if (pos == UINT32_MAX) return;
    /* In batches of at most the queue's capacity: a batch's cells are
     * distinct, and each waits only for entries pushed before it (with
     * tickets taken ahead, a push may be larger than the queue). */
    for (uint32_t first = 0; first < total; first += p->queue.capacity) {
        uint32_t batch = min(total - first, p->queue.capacity);
        if (ring_wait_free_bulk(&p->queue, pos + first, batch, lane, &p->state->error.v)) return; /* the build failed */
#ifdef KDA_PROBE
        if (lane == 0) atomicAdd(&p->state->probe[PROBE_CHECKED_NS], (global_ns() - pushed) * batch);
#endif
#pragma unroll 1
        for (uint32_t i = lane; i < batch; i += 32) {
            uint32_t k = first + i;
            task e = chunk_entry(phase, k < count ? slot : slot2, k < count ? k : k - count, pushed);
            write_cell(&p->cells[(pos + k) & (p->queue.capacity - 1)], &e);
        }
        ring_publish_bulk(&p->queue, pos + first, batch, lane);
#ifdef KDA_PROBE /* every build's own state; the warm-up build's is printed */
        if (lane == 0) atomicAdd(&p->state->probe[PROBE_PUBLISH_NS], (global_ns() - pushed) * batch);
#endif
    }
}

/* ---- the warp's own stack ---- */

static __device__ void local_push(warp_ctx *c, const task *t)
{
    if (c->count == KDA_BUILD_LOCAL_TASKS) { /* full: share it instead */
        warp_publish(c, t);
        return;
    }
    if (c->lane == 0) c->sm->stack[(c->bottom + c->count) % KDA_BUILD_LOCAL_TASKS] = *t;
    __syncwarp();
    c->count++;
}

static __device__ task local_pop(warp_ctx *c)
{
    c->count--;
    return c->sm->stack[(c->bottom + c->count) % KDA_BUILD_LOCAL_TASKS];
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
        } else if (++c->since_check >= KDA_BUILD_GLOBAL_CHECK) {
            where = lane0_queue_hungry(c) ? 2 : 0;
            c->since_check = 0;
        }
    }
    where = broadcast(where);
    if (!where) return;
    task t = c->sm->stack[c->bottom];
    __syncwarp();
    c->bottom = (c->bottom + 1) % KDA_BUILD_LOCAL_TASKS;
    c->count--;
    if (where == 2) {
        warp_publish(c, &t);
        PROBE_COUNT(c, PROBE_DONATES_GLOBAL);
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
    PROBE_COUNT(c, PROBE_DONATES_BLOCK);
}

#endif
