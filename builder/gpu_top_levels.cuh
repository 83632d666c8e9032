/* gpu_top_levels.cuh - the top of the tree, level by level (included by
 * gpu_kernel.cuh): every warp of the grid works on the big nodes of one
 * level at a time, in four steps separated by grid-wide barriers, before
 * it turns to the queue.
 *
 * Why.  Through the queue, each big-node level is a chain of hand-overs:
 * BIN chunks pushed and waited for, the last one's warp choosing the split
 * and pushing SCATTER chunks, those waited for, the last one's warp taking
 * the children (docs/performance.md: about three quarters of a level).
 * Here a level's chunks are listed in a table that every warp reads at
 * once after a barrier; the warp of a chunk is fixed by its index.
 *
 * The steps of level L (its nodes in slots top_slots[L % 2][0 ..), the
 * root's, level 0, in slot 0 and binned by fill_root):
 *   BIN       chunk g of the level's BIN table, by warp g mod W (W warps
 *             in the grid): binned and merged into its node's slot bins;
 *   SPLIT     node j by warp j mod W: the split chosen, the children's
 *             arrays allocated (big_split), its SCATTER chunks listed;
 *             a leaf's list entry becomes NO_SLOT;
 *   SCATTER   chunk g of the SCATTER table, by warp g mod W;
 *   CHILDREN  node j by warp j mod W: the parent's array freed, the inner
 *             node written; a big child goes to a slot and level L + 1
 *             (its BIN chunks listed), every other child to the queue.
 * The same warp does node j in SPLIT and CHILDREN, so the list entry it
 * cleared is seen by it alone.  Each step ends at a barrier, after which
 * every warp sees all the step's writes (read through L2, __ldcg).
 *
 * Invariants.
 *   - While the top levels run, state.pending holds one more entry than
 *     the queue has (root_setup added it), so no warp that reaches the
 *     queue early ends the build; it goes after the last level's pushes.
 *   - Nothing is taken from the queue meanwhile: every warp is here.  What
 *     does not fit a table (a node whose chunks would run past
 *     TOP_CHUNKS) goes to the queue, to be done after the top levels as
 *     any big node is.
 *   - The levels end at the first that is empty, has more than
 *     KDA_BUILD_TOP_NODES nodes, or lies TOP_DEPTH deep, or when the build
 *     failed; the nodes of that level are pushed to the queue's BIN phase.
 *   - Every block's warps all reach every barrier (the grid's blocks are
 *     all resident: gpu_build.cu), and all see the same decision to stop:
 *     the last block to arrive makes it.
 * The allocator's workload is the queue's: each node's two arrays from
 * lane 0 of the warp that splits it, the parent's array freed once its
 * children are written. */
#ifndef KDA_GPU_TOP_LEVELS_CUH
#define KDA_GPU_TOP_LEVELS_CUH

#include "gpu_big_node.cuh"
#include "gpu_build_types.cuh"
#include "gpu_tasks.cuh"

#define TOP_END 0xffffffffu /* a table entry past a node that went to the queue */

/* Every warp of the first `blocks` blocks waits here for all others; 1
 * when the top levels are to end (the build failed), the same answer for
 * every warp. */
static __device__ int grid_barrier(warp_ctx *c, uint32_t blocks)
{
    build_state *st = c->p->state;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t gen = ld_acquire_u32(&st->bar_gen.v);
        __threadfence();
        if (atomicAdd(&st->bar_count.v, 1u) == blocks - 1) {
            st->bar_count.v = 0; /* the next barrier's arrivals come after gen moves on */
            st->bar_stop = build_failed(c->p);
            __threadfence();
            st_release_u32(&st->bar_gen.v, gen + 1);
        } else {
            while (ld_acquire_u32(&st->bar_gen.v) == gen) __nanosleep(32);
        }
        c->bs->stop = (int)__ldcg(&st->bar_stop);
    }
    __syncthreads();
    return c->bs->stop;
}

/* The table of a level's BIN chunks (two, by level parity) or of its
 * SCATTER chunks; an entry is a slot (high 16 bits) and a chunk. */
static __device__ __forceinline__ uint32_t *top_table(const build_params *p, uint32_t level, int scatter)
{
    return p->top_chunks + (scatter ? 2u : level % 2u) * TOP_CHUNKS;
}

/* Lists the n chunks of the node in slot `id` at the end of table `tab`
 * (count: its length); 0 if they do not fit (the entries reserved are
 * marked TOP_END). */
static __device__ int warp_list_chunks(warp_ctx *c, uint32_t *tab, uint32_t *count, uint32_t id, uint32_t n)
{
    uint32_t at = c->lane == 0 ? atomicAdd(count, n) : 0;
    at = broadcast(at);
    int fits = at + n <= TOP_CHUNKS;
    for (uint32_t i = c->lane; i < n && at + i < TOP_CHUNKS; i += 32) tab[at + i] = fits ? id << 16 | i : TOP_END;
    return fits;
}

/* A big child in slot `id` joins level `level`; to the queue's BIN phase
 * when its chunks do not fit that level's table. */
static __device__ void warp_top_join(warp_ctx *c, uint32_t level, uint32_t id, uint32_t n_chunks)
{
    build_state *st = c->p->state;
    if (!warp_list_chunks(c, top_table(c->p, level, 0), &st->top_bin[level], id, n_chunks)) {
        push_chunks(c->p, c->lane, PHASE_BIN, id, n_chunks, NO_SLOT, 0);
        return;
    }
    if (c->lane == 0) {
        uint32_t j = atomicAdd(&st->top_nodes[level], 1u);
        if (j < KDA_BUILD_SLOTS) st->top_slots[level % 2][j] = id;
    }
}

/* The children of a big node of level `level` once it is scattered: as
 * warp_take_children, but a big child joins the next level and every
 * other goes to the queue (no warp's own stack is worked on meanwhile). */
static __device__ void warp_top_children(warp_ctx *c, uint32_t level, const task *t, const split_decision *d,
                                         uint32_t *left, uint32_t *right, uint32_t pair)
{
    uint32_t first = warp_write_inner(c, t, d, pair);
    if (first == UINT32_MAX) return;
#pragma unroll 1
    for (uint32_t s = 0; s < 2; s++) {
        task ch = child_task(t, d->axis, d->pos, (int)s, s ? right : left, s ? d->n_right : d->n_left, first + s);
        uint32_t id = NO_SLOT;
        if (ch.n == 0) {
            if (c->lane == 0) c->p->nodes[ch.node] = kdtree_make_leaf(0, 0);
            continue;
        }
        if (ch.n > c->p->big_node) id = warp_take_slot(c);
        if (id == NO_SLOT) {
            warp_publish(c, &ch);
        } else {
            uint32_t n = warp_fill_slot(c, id, &ch);
            __threadfence(); /* the slot, before the next level's warps read it */
            warp_top_join(c, level + 1, id, n);
        }
    }
}

/* The big node of list entry j of `level`, or NO_SLOT. */
static __device__ __forceinline__ uint32_t top_slot(const build_params *p, uint32_t level, uint32_t j)
{
    return __ldcg(&p->state->top_slots[level % 2][j]);
}

/* The top levels, then the queue: called by every warp of the grid at the
 * start of a fixed pool's build (see the top of this file). */
static __device__ void warp_top_levels(warp_ctx *c)
{
    const build_params *p = c->p;
    build_state *st = p->state;
    if (!p->top_levels || __ldcg(&st->top_nodes[0]) == 0) return; /* a small root: no big-node levels */
    /* The top levels' blocks: the others take the queue's entries meanwhile. */
    const uint32_t blocks = gridDim.x / KDA_BUILD_TOP_SHARE > 0 ? gridDim.x / KDA_BUILD_TOP_SHARE : 1;
    if (blockIdx.x >= blocks) return;
    const uint32_t warps = blocks * KDA_BUILD_WARPS_PER_BLOCK;
    const uint32_t me = blockIdx.x * KDA_BUILD_WARPS_PER_BLOCK + threadIdx.x / 32u;
    uint32_t level = 0, nodes = 1;
    for (;;) {
        if (level > 0) { /* BIN (the root's bins are fill_root's) */
            const uint32_t *tab = top_table(p, level, 0);
            uint32_t n = min(__ldcg(&st->top_bin[level]), TOP_CHUNKS);
#pragma unroll 1
            for (uint32_t g = me; g < n; g += warps) {
                uint32_t e = __ldcg(&tab[g]);
                if (e == TOP_END) continue;
                big_slot *s = &p->slots[e >> 16];
                task t = load_task(&s->t);
                float extent[3], scale[3], inv_area;
                box_setup(&t, extent, &inv_area);
                bin_scales(extent, scale);
                big_bin_part(c, s, &t, e & 0xffffu, scale);
            }
            if (grid_barrier(c, blocks)) break;
        }
#pragma unroll 1
        for (uint32_t j = me; j < nodes; j += warps) { /* SPLIT */
            uint32_t id = top_slot(p, level, j);
            task t = load_task(&p->slots[id].t);
            float extent[3], scale[3], inv_area;
            box_setup(&t, extent, &inv_area);
            bin_scales(extent, scale);
            uint32_t n = big_split(c, id, &t, scale, inv_area);
            if (n && !warp_list_chunks(c, top_table(p, level, 1), &st->top_scatter[level], id, n)) {
                push_chunks(p, c->lane, PHASE_SCATTER, id, n, NO_SLOT, 0); /* finished through the queue */
                n = 0;
            }
            if (!n && c->lane == 0) st->top_slots[level % 2][j] = NO_SLOT;
            __syncwarp();
        }
        if (grid_barrier(c, blocks)) break;
        { /* SCATTER */
            const uint32_t *tab = top_table(p, level, 1);
            uint32_t n = min(__ldcg(&st->top_scatter[level]), TOP_CHUNKS);
#pragma unroll 1
            for (uint32_t g = me; g < n; g += warps) {
                uint32_t e = __ldcg(&tab[g]);
                if (e == TOP_END) continue;
                big_slot *s = &p->slots[e >> 16];
                task t = load_task(&s->t);
                big_scatter_part(c, s, &t, e & 0xffffu);
            }
        }
        if (grid_barrier(c, blocks)) break;
#pragma unroll 1
        for (uint32_t j = me; j < nodes; j += warps) { /* CHILDREN */
            uint32_t id = top_slot(p, level, j);
            if (id == NO_SLOT) continue;
            task t = load_task(&p->slots[id].t);
            split_decision d;
            uint32_t *left, *right, pair;
            big_unslot(c, id, &t, &d, &left, &right, &pair);
            warp_top_children(c, level, &t, &d, left, right, pair);
            release_spare(c);
        }
        if (grid_barrier(c, blocks)) break;
        level++;
        nodes = __ldcg(&st->top_nodes[level]);
        if (nodes == 0) break;
        if (nodes > KDA_BUILD_TOP_NODES || level + 1 >= TOP_DEPTH) { /* the queue takes this level */
#pragma unroll 1
            for (uint32_t j = me; j < min(nodes, KDA_BUILD_SLOTS); j += warps) {
                uint32_t id = top_slot(p, level, j);
                push_chunks(p, c->lane, PHASE_BIN, id, node_chunks(p, __ldcg(&p->slots[id].t.n)), NO_SLOT, 0);
            }
            grid_barrier(c, blocks);
            break;
        }
    }
    if (me == 0 && c->lane == 0) atomicSub(&st->pending.v, 1u); /* every push of the top levels is counted */
    __syncwarp();
}

#endif
