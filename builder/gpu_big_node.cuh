/* gpu_big_node.cuh - nodes of more than p->big_node references, split by many
 * warps (included by gpu_kernel.cuh): a node's slot, its BIN and SCATTER
 * phases cut into chunks, and the warp that finishes a phase's last chunk
 * moving the node on. */
#ifndef KDA_GPU_BIG_NODE_CUH
#define KDA_GPU_BIG_NODE_CUH

#include "gpu_build_types.cuh"
#include "gpu_node_work.cuh"
#include "gpu_tasks.cuh"

/* ---- big nodes ---- */

#define BIN_WORDS (2 * 3 * GPU_BINS)
#define BIN_VECS_PER_LANE (BIN_WORDS / 4 / 32) /* uint4 of a node's bins per lane */

/* Zeroes a node's bins (a slot's or a warp's), 16 bytes a store. */
static __device__ __forceinline__ void zero_bins(uint32_t *bins, uint32_t lane)
{
    uint4 *b = (uint4 *)bins;
#pragma unroll
    for (int j = 0; j < BIN_VECS_PER_LANE; j++) b[lane + 32 * j] = make_uint4(0, 0, 0, 0);
}

/* ---- big-node slots ----
 * The free slots are the bits of a bitmap (state.slot_free), with a count
 * of them beside it.  Lane 0 claims one by reading the count and a word
 * at once and clearing a free bit of the word with atomicAnd: two round
 * trips, unless the bit went to another warp first or the word is full;
 * with no slot free (large scenes have thousands of big nodes at once) the
 * count says so after one.  A slot goes back with an atomicOr behind a
 * fence; its warp waits for the fence alone.  (A ring of free slot ids
 * cost four round trips to claim one and three to give it back, on the
 * critical path of every big-node level.)  Warps start at different
 * words, by their place in the grid, so that two claiming at once seldom
 * race for the same bit. */

#if KDA_BUILD_SLOTS % 32 || KDA_BUILD_SLOTS > 1024
#error "KDA_BUILD_SLOTS: a multiple of 32, at most 1024"
#endif

/* A free slot, or NO_SLOT when none is (lane 0). */
static __device__ uint32_t lane0_claim_slot(const build_params *p)
{
    uint32_t *bits = p->state->slot_free;
    uint32_t w = (blockIdx.x * KDA_BUILD_WARPS_PER_BLOCK + threadIdx.x / 32u) % SLOT_WORDS;
    uint32_t free = ld_relaxed_u32(&p->state->slots_free.v), word = ld_relaxed_u32(&bits[w]);
    if (!free) return NO_SLOT;
    for (uint32_t looks = 0, full = 0; full < SLOT_WORDS && looks < 4 * SLOT_WORDS; looks++) {
        if (!word) { /* full: the next word */
            w = (w + 1) % SLOT_WORDS;
            full++;
            word = ld_relaxed_u32(&bits[w]);
            continue;
        }
        uint32_t i = (uint32_t)__ffs(word) - 1u, bit = 1u << i, had = atom_and_acquire_u32(&bits[w], ~bit);
        if (had & bit) {
            atomicSub(&p->state->slots_free.v, 1u);
            return 32u * w + i;
        }
        word = had & ~bit; /* another warp took that bit first: the word as it was */
    }
    return NO_SLOT; /* every slot in use: one warp splits the node */
}

/* Gives slot `id` back; the warp's lanes are done with it (a __syncwarp
 * came after their last access). */
static __device__ void lane0_release_slot(const build_params *p, uint32_t id)
{
    __threadfence(); /* the slot's reads and writes, before another node has it */
    atomicOr(&p->state->slot_free[id / 32u], 1u << (id % 32u));
    atomicAdd(&p->state->slots_free.v, 1u);
}

/* The chunks of a phase of a big node of n references. */
static __device__ __forceinline__ uint32_t node_chunks(const build_params *p, uint32_t n)
{
    return (n + p->chunk - 1) / p->chunk;
}

/* Puts big node t into slot `id` (its bins zeroed) for its BIN phase; the
 * number of its chunks. */
static __device__ uint32_t warp_fill_slot(warp_ctx *c, uint32_t id, const task *t)
{
    big_slot *s = &c->p->slots[id];
    zero_bins(&s->bins[0][0][0], c->lane);
    uint32_t n_chunks = node_chunks(c->p, t->n);
    if (c->lane == 0) {
        s->t = *t;
        s->n_chunks = n_chunks;
        s->done = 0;
    }
    return n_chunks;
}

/* A slot for a big node: the warp's spare one if it holds one (a big
 * parent's, whose chunks are all done: taking it saves claiming one, on
 * the critical path of every big-node level), else a free one; NO_SLOT
 * when none is free. */
static __device__ uint32_t warp_take_slot(warp_ctx *c)
{
    uint32_t id = NO_SLOT;
    if (c->lane == 0) {
        id = c->sm->spare_slot;
        c->sm->spare_slot = NO_SLOT;
        if (id == NO_SLOT) id = lane0_claim_slot(c->p);
    }
    return broadcast(id);
}

/* Moves a node into a slot and pushes its BIN chunks; 0 when no slot is
 * free (the node is then split by one warp).  A parking build spills the
 * node instead (1: it is taken care of). */
static __device__ int warp_start_big(warp_ctx *c, const task *t)
{
    if (warp_parked(c)) {
        if (c->lane == 0) lane0_spill(c, t);
        __syncwarp();
        return 1;
    }
    uint32_t id = warp_take_slot(c);
    if (id == NO_SLOT) return 0;
    uint32_t n_chunks = warp_fill_slot(c, id, t);
    push_chunks(c->p, c->lane, PHASE_BIN, id, n_chunks, NO_SLOT, 0); /* its fence orders the slot before the chunks */
    return 1;
}

static __device__ void clear_bins(warp_smem *sm, uint32_t lane)
{
    zero_bins(&sm->bins[0][0][0], lane);
    __syncwarp();
}

/* Counts one reference's box in a node's bins ([side][axis][bin]; an axis
 * without extent has scale 0: bin 0, never costed).  The BIN chunks and
 * fill_root (the root's bins, gpu_setup_kernels.cuh) both bin through it, so that
 * they make the same bins. */
static __device__ __forceinline__ void bin_box(uint32_t (*bins)[3][GPU_BINS], const float tlo[3], const float thi[3],
                                               const float lo[3], const float scale[3])
{
#pragma unroll
    for (int a = 0; a < 3; a++) {
        atomicAdd(&bins[0][a][bin_of(tlo[a], lo[a], scale[a])], 1u);
        atomicAdd(&bins[1][a][bin_of(thi[a], lo[a], scale[a])], 1u);
    }
}

/* Zeroes the warp's shared bins and bins references [begin, end) of a
 * node into them.  The loads are pipelined (the loop over steps is not
 * unrolled: the kernel's code must stay small, see docs/builder.md): while
 * a step is binned, the next step's box and the reference of the step
 * after it are on their way, so neither of the two dependent round trips
 * (reference, then box) is waited for in the loop; the first ones are
 * issued before the bins are zeroed.  The loads of big nodes' chunks are
 * on the build's critical path.  The three axes are unrolled: since a bin
 * is one rounded estimate that is six short copies, and every build gained
 * 1.5-3% (H100, docs/experiments/builder.md#build-kernel). */
static __device__ void bin_range(warp_ctx *c, const uint32_t *refs, uint32_t begin, uint32_t end, const float lo[3],
                                 const float scale[3])
{
    float tlo[3], thi[3], nlo[3], nhi[3];
    uint32_t i = begin + c->lane, ahead = 0;
    if (i < end) load_box(c->p, __ldcg(&refs[i]), nlo, nhi);
    if (i + 32 < end) ahead = __ldcg(&refs[i + 32]);
    clear_bins(c->sm, c->lane);
#pragma unroll 1
    for (; i < end; i += 32) {
        for (int a = 0; a < 3; a++) {
            tlo[a] = nlo[a];
            thi[a] = nhi[a];
        }
        if (i + 32 < end) load_box(c->p, ahead, nlo, nhi);
        if (i + 64 < end) ahead = __ldcg(&refs[i + 64]);
        bin_box(c->sm->bins, tlo, thi, lo, scale);
    }
    __syncwarp();
}

static __device__ void box_setup(const task *t, float extent[3], float *inv_area)
{
    for (int a = 0; a < 3; a++) extent[a] = t->hi[a] - t->lo[a];
    float area = kdtree_box_area(extent);
    *inv_area = area > 0.0f ? 1.0f / area : 0.0f;
}

/* Bins per unit length on each axis (binned splits only: three divisions). */
static __device__ void bin_scales(const float extent[3], float scale[3])
{
#pragma unroll 1
    for (int a = 0; a < 3; a++) scale[a] = extent[a] > 0.0f ? __fdiv_rn((float)GPU_BINS, extent[a]) : 0.0f;
}

/* A node stays a leaf when it is empty, at the depth limit, or without
 * area (flat in two axes); or when no split beats the leaf cost. */
static __device__ __forceinline__ int may_split(const build_params *p, const task *t, float inv_area)
{
    return t->n > 0 && kdtree_level_depth(t->level) < p->max_depth && inv_area > 0.0f;
}

/* Whether node t is split by d: a split was found, it beats the leaf
 * cost, and the node's reference budget allows it (kdtree.h). */
static __device__ __forceinline__ int split_taken(const task *t, const split_decision *d)
{
    return d->axis >= 0 && d->cost < kdtree_leaf_cost(t->n) && kdtree_budget_allows(t->level, t->n, d->n_left, d->n_right);
}

/* The task of child `right` (0: left, 1: right) of node t split by d; the
 * box is cut with selects, as a run-time index into it would put the task
 * in local memory. */
static __device__ __forceinline__ task child_task(const task *t, const split_decision *d, int right, uint32_t *refs,
                                                  uint32_t node)
{
    task ch = *t;
#pragma unroll
    for (int a = 0; a < 3; a++) {
        ch.lo[a] = right && a == d->axis ? d->pos : t->lo[a];
        ch.hi[a] = !right && a == d->axis ? d->pos : t->hi[a];
    }
    ch.refs = refs;
    ch.n = right ? d->n_right : d->n_left;
    ch.node = node;
    ch.level = kdtree_level_child(t->level, t->n, d->n_left, d->n_right);
    ch.slot = NO_SLOT;
    return ch;
}

/* Keeps child ch, which no other warp splits: to the global queue while
 * warps are hungry and it is large, else onto the warp's own stack. */
static __device__ void warp_keep_child(warp_ctx *c, const task *ch)
{
    if (ch->n >= KDA_BUILD_SHARE_MIN && broadcast(c->lane == 0 && lane0_queue_hungry(c))) warp_publish(c, ch);
    else local_push(c, ch);
}

/* Writes node t as the inner node of split d, whose children are the node
 * pair lane 0 reserved (lane0_reserve_pair); returns the pair's first
 * node, or UINT32_MAX when the node array is full (the build fails). */
static __device__ uint32_t warp_write_inner(warp_ctx *c, const task *t, const split_decision *d, uint32_t pair)
{
    uint32_t first = warp_node_pair(c, pair);
    if (first != UINT32_MAX && c->lane == 0) c->p->nodes[t->node] = kdtree_make_inner((uint32_t)d->axis, d->pos, first);
    return first;
}

/* Writes the inner node and takes its children: empty ones become leaves,
 * big ones go to slots, the rest onto this warp's stack (the larger first,
 * so the smaller is done next and the larger stays to be shared).  pair:
 * the node pair lane 0 reserved (lane0_reserve_pair). */
static __device__ void warp_take_children(warp_ctx *c, const task *t, const split_decision *d, uint32_t *left,
                                          uint32_t *right, uint32_t pair)
{
    uint32_t first = warp_write_inner(c, t, d, pair);
    if (first == UINT32_MAX) return;
    int larger = d->n_right > d->n_left;
    for (int i = 0; i < 2; i++) {
        int s = i == 0 ? larger : !larger;
        task ch = child_task(t, d, s, s ? right : left, first + (uint32_t)s);
        if (ch.n == 0) {
            if (c->lane == 0) c->p->nodes[ch.node] = kdtree_make_leaf(0, 0);
        } else if (ch.n <= c->p->big_node || !warp_start_big(c, &ch)) {
            warp_keep_child(c, &ch);
        }
    }
}

/* The children of a big node, taken by the warp that finished its last
 * SCATTER chunk (which holds the node's slot as its spare): two big
 * children start their BIN phases in one push, one reservation and two
 * fences, not two of each.  Otherwise, and in the kernels for a growable
 * pool (whose registers the second slot's bookkeeping would spill), as
 * warp_take_children. */
static __device__ void big_take_children(warp_ctx *c, const task *t, const split_decision *d, uint32_t *left,
                                         uint32_t *right, uint32_t pair)
{
    const build_params *p = c->p;
    if (d->n_left <= p->big_node || d->n_right <= p->big_node || c->can_park) {
        warp_take_children(c, t, d, left, right, pair);
        return;
    }
    uint32_t first = warp_write_inner(c, t, d, pair);
    if (first == UINT32_MAX) return;
    int larger = d->n_right > d->n_left; /* takes the spare slot: if no other is free, the smaller waits */
    uint32_t id_big = warp_take_slot(c), id_small = warp_take_slot(c), n_l = 0, n_r = 0;
    uint32_t id_l = larger ? id_small : id_big, id_r = larger ? id_big : id_small;
#pragma unroll 1
    for (uint32_t s = 0; s < 2; s++) { /* one child's task at a time: two would spill */
        uint32_t id = s ? id_r : id_l;
        task ch = child_task(t, d, (int)s, s ? right : left, first + s);
        if (id == NO_SLOT) {
            warp_keep_child(c, &ch); /* no free slot: one warp splits it */
        } else {
            uint32_t n = warp_fill_slot(c, id, &ch);
            n_l = s ? n_l : n;
            n_r = s ? n : n_r;
        }
    }
    if (n_l + n_r) push_chunks(p, c->lane, PHASE_BIN, id_l, n_l, id_r, n_r); /* its fence orders the slots first */
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
    PROBE_START;
    const build_params *p = c->p;
    big_slot *s = &p->slots[id];
    task t = load_task(&s->t); /* written before the chunks were published */
    uint32_t n_chunks = __ldcg(&s->n_chunks);
    float extent[3], scale[3], inv_area;
    box_setup(&t, extent, &inv_area);
    bin_scales(extent, scale);
    uint32_t begin = chunk * p->chunk, end = min(t.n, begin + p->chunk);
    PROBE_MARK(c, PROBE_BIN_SETUP);
    bin_range(c, t.refs, begin, end, t.lo, scale);
    PROBE_MARK(c, PROBE_BIN_BINNING);
    /* Merged into the slot's bins, only the bins this chunk touched: lane
     * l takes words l, l + 32, ..., so that each atomic instruction of the
     * warp covers one 128-byte line (four words a lane, each lane's own
     * line, made the 10M-triangle build 4% slower), and the shared-memory
     * reads of six steps are issued together. */
    uint32_t *mine = &c->sm->bins[0][0][0], *shared = &s->bins[0][0][0];
#pragma unroll 6
    for (uint32_t j = 0; j < BIN_WORDS / 32; j++) {
        uint32_t i = c->lane + 32 * j, v = mine[i];
        if (v) atomicAdd(&shared[i], v);
    }
    PROBE_MARK(c, PROBE_BIN_MERGE);
    PROBE_COUNT(c, PROBE_BIN_CHUNKS);
    int last = warp_finished_last_chunk(c, s, n_chunks);
    PROBE_MARK(c, PROBE_BIN_HANDOVER);
    if (!last) return;
    /* The merged bins, every load of a lane in flight at once: this read
     * is on the critical path of every big-node level. */
#pragma unroll
    for (int j = 0; j < BIN_VECS_PER_LANE; j++)
        ((uint4 *)mine)[c->lane + 32 * j] = __ldcg(&((const uint4 *)shared)[c->lane + 32 * j]);
    __syncwarp();
    split_decision d = binned_split(c->sm->bins, t.n, t.lo, t.hi, scale, inv_area);
    if (!may_split(p, &t, inv_area) || !split_taken(&t, &d)) {
        warp_make_leaf(c, &t, 0, 0, 0);
        __syncwarp();
        if (c->lane == 0) lane0_release_slot(p, id);
        return;
    }
    PROBE_MARK(c, PROBE_SPLIT_CHOOSE);
    uint32_t *left, *right;
    if (warp_alloc_children(c, &t, d.n_left, d.n_right, &left, &right)) {
        __syncwarp();
        if (c->lane == 0) lane0_release_slot(p, id); /* the node was spilled, or the build failed */
        return;
    }
    PROBE_MARK(c, PROBE_SPLIT_ALLOC);
    uint32_t n_scatter = node_chunks(p, t.n); /* n_chunks, but the root's BIN phase is one (root_setup) */
    if (c->lane == 0) {
        s->n_chunks = n_scatter;
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
    push_chunks(p, c->lane, PHASE_SCATTER, id, n_scatter, NO_SLOT, 0); /* its fence orders the slot before the chunks */
    PROBE_MARK(c, PROBE_BIN_SPLIT);
    PROBE_COUNT(c, PROBE_BIG_SPLITS);
}

/* SCATTER chunk of a big node; the last one finishes the node. */
static __device__ void big_scatter_chunk(warp_ctx *c, uint32_t id, uint32_t chunk)
{
    PROBE_START;
    const build_params *p = c->p;
    big_slot *s = &p->slots[id];
    task t = load_task(&s->t);
    uint32_t n_chunks = __ldcg(&s->n_chunks);
    uint32_t axis = __ldcg(&s->axis), k = __ldcg(&s->k);
    uint32_t *left = (uint32_t *)__ldcg((const unsigned long long *)&s->left);
    uint32_t *right = (uint32_t *)__ldcg((const unsigned long long *)&s->right);
    float lo = kdtree_pick(t.lo, (int)axis), extent = kdtree_pick(t.hi, (int)axis) - lo;
    float scale = __fdiv_rn((float)GPU_BINS, extent);
    uint32_t begin = chunk * p->chunk, end = min(t.n, begin + p->chunk);
    uint32_t lanes_below = (1u << c->lane) - 1;

    /* Count this chunk's sides (kept, two bits a step, for the writes),
     * with the loads pipelined (axis_pipe); the references are kept in the warp's shared memory (each
     * lane reads back only what it wrote), so the writes need not load
     * them again.  Then reserve room once, and write. */
    uint32_t nl = 0, nr = 0, kept = 0, step = 0;
    uint32_t *staged = c->sm->staged;
    axis_pipe q;
    PROBE_MARK(c, PROBE_SCATTER_SETUP);
    axis_pipe_start(&q, p, t.refs, begin + c->lane, end, (int)axis);
#pragma unroll 1
    for (uint32_t i = begin + c->lane; i < end; i += 32, step++) {
        float tlo, thi;
        staged[i - begin] = axis_pipe_step(&q, p, t.refs, i, end, (int)axis, &tlo, &thi);
        uint32_t sides = binned_sides(k, tlo, thi, lo, scale);
        kept |= sides << (2 * step);
        nl += sides & 1u;
        nr += sides >> 1;
    }
    for (int off = 16; off > 0; off >>= 1) {
        nl += __shfl_xor_sync(FULL_MASK, nl, off);
        nr += __shfl_xor_sync(FULL_MASK, nr, off);
    }
    PROBE_MARK(c, PROBE_SCATTER_CLASSIFY);
    uint32_t at_l = 0, at_r = 0, n_left = __ldcg(&s->n_left), n_right = __ldcg(&s->n_right);
    if (c->lane == 0) {
        at_l = atomicAdd(&s->left_cursor, nl);
        at_r = atomicAdd(&s->right_cursor, nr);
        if (at_l + nl > n_left || at_r + nr > n_right) set_error(p, BUILD_CORRUPT);
    }
    at_l = broadcast(at_l);
    at_r = broadcast(at_r);
    if (at_l + nl > n_left || at_r + nr > n_right) return; /* never write past the arrays */
    PROBE_MARK(c, PROBE_SCATTER_RESERVE);
    step = 0;
#pragma unroll 1
    for (uint32_t base = begin; base < end; base += 32, step++) {
        uint32_t i = base + c->lane, tri = 0, sides = 0;
        if (i < end) {
            tri = staged[i - begin];
            sides = kept >> (2 * step) & 3u;
        }
        uint32_t goes_l = __ballot_sync(FULL_MASK, sides & 1u), goes_r = __ballot_sync(FULL_MASK, sides & 2u);
        if (sides & 1u) left[at_l + __popc(goes_l & lanes_below)] = tri;
        if (sides & 2u) right[at_r + __popc(goes_r & lanes_below)] = tri;
        at_l += __popc(goes_l);
        at_r += __popc(goes_r);
    }
    PROBE_MARK(c, PROBE_SCATTER_WRITE);
    PROBE_COUNT(c, PROBE_SCATTER_CHUNKS);
    int last = warp_finished_last_chunk(c, s, n_chunks);
    PROBE_MARK(c, PROBE_SCATTER_HANDOVER);
    if (!last) return;
    split_decision d;
    d.axis = (int)axis;
    d.pos = __ldcg(&s->split);
    d.n_left = n_left;
    d.n_right = n_right;
    uint32_t pair = 0;
    if (c->lane == 0) {
        pair = lane0_reserve_pair(c);
        if (__ldcg(&s->left_cursor) != n_left || __ldcg(&s->right_cursor) != n_right) set_error(p, BUILD_CORRUPT);
        lane0_free(c, t.refs, t.n);
        c->sm->spare_slot = id; /* every chunk is done: a big child takes the slot */
    }
    big_take_children(c, &t, &d, left, right, pair);
    __syncwarp();
    if (c->lane == 0 && c->sm->spare_slot != NO_SLOT) { /* no child did */
        lane0_release_slot(p, c->sm->spare_slot);
        c->sm->spare_slot = NO_SLOT;
    }
    PROBE_MARK(c, PROBE_SCATTER_CHILDREN);
}

#endif
