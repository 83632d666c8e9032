/* gpu_kernel.cuh - the persistent build kernel (included by gpu_build.cu).
 *
 * Work.  Every warp loops: take an entry from the global queue, do it, then
 * drain its own stack of node tasks, until no entry is pending anywhere
 * (state.pending == 0) or an error is flagged.  An entry is either
 *   - a node task: one warp does the node (SAH; lane 0 allocates the two
 *     child arrays; scatter; lane 0 frees the parent's array) and keeps the
 *     children on its own stack in shared memory, depth first; or
 *   - a chunk of a big node (more than p->big_node references): the node lives
 *     in a slot; its BIN phase and its SCATTER phase are each cut into
 *     chunks of p->chunk references that any warps take, and the warp that finishes
 *     the last chunk of a phase moves the node on (SAH and child allocation
 *     after BIN; freeing the parent and taking the children after SCATTER).
 * Sharing.  While more warps are idle (state.hungry) than entries are
 * queued, a warp sends every child of at least KDA_BUILD_SHARE_MIN
 * references to the global queue instead of its own stack; and after each
 * node it gives the bottom (oldest, largest) task of its stack to an idle
 * warp of its own block through shared memory, or, every
 * KDA_BUILD_GLOBAL_CHECK nodes, to the global queue.  An idle warp takes
 * work from its block first; one warp per block at a time (the seeker)
 * takes a ticket on the global queue (one atomicAdd, gpu_queue.cuh) and
 * waits for that entry, so idle warps neither flood the queue's cache lines
 * nor fight over its head with failing CASes.  Every entry (global or
 * block) counts in state.pending until the warp that took it has emptied
 * its stack.
 * Parking.  When a growable pool runs out, the node that found it empty and
 * then every node task a warp would start are spilled, big nodes in flight
 * are finished, and the kernel ends; the host grows the pool and launches
 * it again on the spilled tasks (gpu_node_work.cuh).
 * Memory ordering.  A warp's stores are fenced (__threadfence by every
 * lane) before the atomic or queue release that lets another warp see its
 * work; data other warps wrote is read through L2 (__ldcg), never a stale
 * L1 line.  Tasks a warp keeps for itself need no fence: __syncwarp orders
 * its lanes.  docs/builder.md gives the full picture.
 * The parts: gpu_build_types.cuh (data), gpu_node_work.cuh (allocation,
 * nodes, leaves), gpu_tasks.cuh (queue, stacks, sharing), gpu_big_node.cuh
 * (chunked big nodes); this file: the node done by one warp, finding work,
 * and the kernel.
 */
#ifndef KDA_GPU_KERNEL_CUH
#define KDA_GPU_KERNEL_CUH

#include "gpu_big_node.cuh"
#include "gpu_build_types.cuh"
#include "gpu_node_work.cuh"
#include "gpu_tasks.cuh"

/* ---- nodes done by one warp ---- */

#ifdef KDA_PROBE
/* How many of an exact split's 6n candidate planes lie inside the node's
 * box (only those are costed), and the passes of 32 that all of them and
 * those inside would take. */
static __device__ void probe_candidates(warp_ctx *c, const task *t, const lane_box box[2])
{
    uint32_t inside = 0;
    for (uint32_t s = 0; s < 2; s++)
        for (int a = 0; a < 3; a++) {
            float lo = s ? box[1].lo[a] : box[0].lo[a], hi = s ? box[1].hi[a] : box[0].hi[a];
            int here = c->lane + 32u * s < t->n;
            inside += __popc(__ballot_sync(FULL_MASK, here && lo > t->lo[a] && lo < t->hi[a]));
            inside += __popc(__ballot_sync(FULL_MASK, here && hi > t->lo[a] && hi < t->hi[a]));
        }
    probe_add(c, PROBE_CANDIDATES, 6ull * t->n);
    probe_add(c, PROBE_CANDIDATES_INSIDE, inside);
    probe_add(c, PROBE_PASSES, (6ull * t->n + 31) / 32);
    probe_add(c, PROBE_PASSES_INSIDE, (inside + 31ull) / 32);
}
#endif

/* Splits node t (or makes it a leaf); its children land on the stack. */
static __device__ void warp_node(warp_ctx *c, const task *t)
{
    const build_params *p = c->p;
    if (t->n > p->big_node && warp_start_big(c, t)) return;
    PROBE_COUNT(c, PROBE_NODES);
    float extent[3], scale[3] = {0.0f, 0.0f, 0.0f}, inv_area;
    box_setup(t, extent, &inv_area);
    split_decision d = no_split(0);
    /* Small nodes: two references per lane, kept in registers. */
    uint32_t tri[2] = {0, 0};
    lane_box box[2];
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 3; a++) box[s].lo[a] = box[s].hi[a] = 0.0f;
    int exact = t->n <= KDA_BUILD_EXACT_MAX;
    if (exact) /* both references' loads in flight (a leaf copies them from here) */
        for (int s = 0; s < 2; s++)
            if (c->lane + 32u * (uint32_t)s < t->n) tri[s] = __ldcg(&t->refs[c->lane + 32u * (uint32_t)s]);
    if (may_split(p, t, inv_area)) {
        if (exact) { /* then both boxes' */
            for (int s = 0; s < 2; s++)
                if (c->lane + 32u * (uint32_t)s < t->n) load_box(p, tri[s], box[s].lo, box[s].hi);
            exact_boxes_store(&c->sm->exact, t->n, box);
#ifdef KDA_PROBE
            probe_candidates(c, t, box);
#endif
            PROBE_START;
            d = exact_split(t->n, box, &c->sm->exact, t->lo, t->hi, inv_area);
            PROBE_EXACT(c, t->n);
        } else {
            bin_scales(extent, scale);
            bin_range(c, t->refs, 0, t->n, t->lo, scale);
            d = binned_split(c->sm->bins, t->n, t->lo, t->hi, scale, inv_area);
        }
    }
    if (!split_taken(t, &d)) {
        warp_make_leaf(c, t, exact, tri[0], tri[1]);
        return;
    }
    uint32_t *left, *right;
    if (warp_alloc_children(c, t, d.n_left, d.n_right, &left, &right)) return;
    uint32_t pair = c->lane == 0 ? lane0_reserve_pair(c) : 0;

    /* The scatter.  Exact: the boxes are in registers (picked with
     * selects: an indexed register array would live in local memory).
     * Binned: a pipeline of loads, on the split's axis alone: while a
     * step is classified and written, the next step's box and the
     * reference of the step after it are on their way, so neither of the
     * two dependent round trips (reference, then box) is waited for in
     * the loop (measured on an H100: Dragon 2%, 10M triangles 5% faster). */
    uint32_t lanes_below = (1u << c->lane) - 1, at_l = 0, at_r = 0;
    float lo = kdtree_pick(t->lo, d.axis), sc = kdtree_pick(scale, d.axis);
    axis_pipe q = {0, 0, 0.0f, 0.0f};
    if (!d.exact) axis_pipe_start(&q, p, t->refs, c->lane, t->n, d.axis);
    for (uint32_t base = 0; base < t->n; base += 32) {
        uint32_t i = base + c->lane, sides = 0, ref = 0;
        if (d.exact) {
            if (i < t->n) {
                ref = base ? tri[1] : tri[0];
                float blo = base ? kdtree_pick(box[1].lo, d.axis) : kdtree_pick(box[0].lo, d.axis);
                float bhi = base ? kdtree_pick(box[1].hi, d.axis) : kdtree_pick(box[0].hi, d.axis);
                sides = exact_sides(&d, blo, bhi);
            }
        } else {
            float tlo, thi;
            ref = axis_pipe_step(&q, p, t->refs, i, t->n, d.axis, &tlo, &thi);
            if (i < t->n) sides = binned_sides(d.k, tlo, thi, lo, sc);
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
    warp_take_children(c, t, &d, left, right, pair);
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

/* The persistent kernel's body.  `can_park` and `stats` are constants in
 * each of the four kernels below, so the parking paths (gpu_node_work.cuh)
 * are compiled only into the kernels for growable pools, and the profile's
 * clocks and counters only into the warm-up build's: present, the parking
 * paths cost a fixed pool's builds 5-8% (code and registers in the hot
 * loops, measured on an H200) although they never run there, and the
 * profile's code cost the timed builds 3-9% (H100;
 * docs/experiments/builder.md#build-kernel). */
static __device__ __forceinline__ void build_warps(const build_params *p, const int can_park, const int stats)
{
    __shared__ warp_smem smem[KDA_BUILD_WARPS_PER_BLOCK];
    __shared__ block_smem block;
    if (threadIdx.x == 0) {
        block.count = block.lock = block.idle = block.seeker = block.done = 0;
    }
    __syncthreads();
    warp_ctx c;
    c.p = p;
    c.can_park = can_park;
    c.stats = stats;
    c.sm = &smem[threadIdx.x / 32];
    c.bs = &block;
    c.lane = threadIdx.x & 31u;
    c.since_check = 0;
    c.bottom = c.count = 0;
    c.out_pos = c.out_end = 0;
    uint32_t warp_id = blockIdx.x * KDA_BUILD_WARPS_PER_BLOCK + threadIdx.x / 32;
    if (can_park && c.lane == 0) { /* a resumed launch goes on with what its warp had reserved */
        uint2 left = p->out_left[warp_id];
        c.out_pos = left.x;
        c.out_end = left.y;
    }
    c.ticket = NO_TICKET;
    if (c.lane < 3) c.sm->alloc_stats[c.lane] = 0;
    if (c.lane == 0) c.sm->spare_slot = NO_SLOT;
#ifdef KDA_TIMELINE
    if (c.lane == 0) {
        unsigned long long now = global_ns(), first = atomicCAS(&p->state->t0, 0ull, now);
        c.t0 = first ? first : now;
    }
#endif
    if (c.lane < PROF_COUNT) c.sm->profile[c.lane] = 0;
    __syncwarp();
    uint32_t idle = 0, worked = 0; /* worked: the warp has had work (the timeline) */
    long long idle_since = prof_start(&c);
    for (;;) {
        int found = warp_find_work(&c);
        if (found < 0) break;
        if (found == 0) {
            if (idle == 0 && c.lane == 0) {
                atomicAdd(&block.idle, 1);
                atomicAdd(&p->state->hungry.v, 1u);
                if (worked) TIMELINE_ADD(&c, TL_BUSY, -1);
            }
            __nanosleep(32u << (idle < KDA_BUILD_IDLE_SLEEP_STEPS ? idle : KDA_BUILD_IDLE_SLEEP_STEPS));
            idle++;
            continue;
        }
        if (idle && c.lane == 0) {
            atomicSub(&block.idle, 1);
            atomicSub(&p->state->hungry.v, 1u);
        }
        if (idle || !worked) TIMELINE_ADD(&c, TL_BUSY, 1);
        worked = 1;
        idle = 0;
        prof_add(&c, PROF_IDLE, idle_since);
        prof_count(&c, PROF_POPS);
        task t = c.sm->popped;
        __syncwarp();
#ifdef KDA_PROBE
        if (t.slot != NO_SLOT) {
            unsigned long long pushed = __float_as_uint(t.lo[0]) | (unsigned long long)__float_as_uint(t.lo[1]) << 32;
            probe_add(&c, PROBE_QUEUE_NS, global_ns() - pushed);
            probe_count(&c, PROBE_QUEUED);
        }
#endif
        if (t.slot != NO_SLOT) {
            long long t0 = prof_start(&c);
            if (t.level == PHASE_BIN) big_bin_chunk(&c, t.slot, t.n);
            else big_scatter_chunk(&c, t.slot, t.n);
            prof_add(&c, PROF_CHUNK, t0);
            prof_count(&c, PROF_CHUNKS);
            TIMELINE_ADD(&c, TL_CHUNKS, 1);
        } else if (warp_parked(&c)) {
            if (c.lane == 0) lane0_spill(&c, &t);
        } else {
            local_push(&c, &t);
        }
        uint32_t nodes = 0;
        while (c.count > 0) {
            if (++nodes % KDA_BUILD_GLOBAL_CHECK == 0) {
                if (broadcast(c.lane == 0 && build_failed(p))) {
                    c.count = 0; /* abandon the stack */
                    break;
                }
                if (warp_parked(&c)) {
                    if (c.lane == 0) spill_stack(p->state, p->spill, p->queue.capacity, c.sm->stack, c.bottom, c.count);
                    __syncwarp();
                    c.count = 0;
                    break;
                }
            }
            task next = local_pop(&c);
            __syncwarp();
            long long t0 = prof_start(&c);
            warp_node(&c, &next);
            prof_add(&c, PROF_NODE, t0);
            prof_count(&c, PROF_NODES);
            TIMELINE_ADD(&c, TL_NODES, 1);
            maybe_donate(&c);
        }
        idle_since = prof_start(&c);
        if (c.lane == 0) atomicSub(&p->state->pending.v, 1u);
        __syncwarp();
    }
    if (can_park && c.lane == 0) p->out_left[warp_id] = make_uint2(c.out_pos, c.out_end);
    __syncwarp();
    if (c.lane == 0) {
        atomicAdd(&p->state->n_alloc, c.sm->alloc_stats[0]);
        atomicAdd(&p->state->alloc_bytes, c.sm->alloc_stats[1]);
        atomicAdd(&p->state->alloc_sq, c.sm->alloc_stats[2]);
        if (stats) {
            prof_add(&c, PROF_IDLE, idle_since);
            for (int i = 0; i < PROF_COUNT; i++) atomicAdd(&p->state->profile[i], c.sm->profile[i]);
        }
    }
}

/* Blocks an SM at least (a tunable, as those of gpu_build_types.cuh): 3
 * keeps 80 registers. */
#ifndef KDA_BUILD_MIN_BLOCKS
#define KDA_BUILD_MIN_BLOCKS 3
#endif
#define BUILD_LAUNCH_BOUNDS __launch_bounds__(KDA_BUILD_WARPS_PER_BLOCK * 32, KDA_BUILD_MIN_BLOCKS)

/* At least 3 blocks (24 warps) an SM with every allocator: the kernel is
 * latency-bound, and an allocator whose rare paths are long (CountedBump's
 * bitmap search, ScatterAlloc's) must not cost the builder a third of its
 * warps.  ptxas then keeps 80 registers, what most allocators need anyway.
 * The timed builds run build_kernel (a fixed pool) or build_kernel_parking
 * (a growable one); the warm-up build runs the same with `_stats`. */
extern "C" __global__ void BUILD_LAUNCH_BOUNDS build_kernel(const __grid_constant__ build_params p)
{
    build_warps(&p, 0, 0);
}

/* The same for a growable pool: parks when the pool runs out. */
extern "C" __global__ void BUILD_LAUNCH_BOUNDS build_kernel_parking(const __grid_constant__ build_params p)
{
    build_warps(&p, 1, 0);
}

/* The warm-up build's kernels: the same build, profiled. */
extern "C" __global__ void BUILD_LAUNCH_BOUNDS build_kernel_stats(const __grid_constant__ build_params p)
{
    build_warps(&p, 0, 1);
}

extern "C" __global__ void BUILD_LAUNCH_BOUNDS build_kernel_parking_stats(const __grid_constant__ build_params p)
{
    build_warps(&p, 1, 1);
}

#endif
