/* gpu_subtree.cuh - a small subtree built by one warp (included by
 * gpu_kernel.cuh): the small-node stage of Zhou et al. 2008 ("Real-time
 * KD-tree construction on graphics hardware") with the exact SAH of
 * gpu_sah.cuh.
 *
 * A node task of 1 .. KDA_BUILD_SUBTREE_MAX (32) references is the root of
 * a subtree that its warp goes on splitting, depth first, without loading a
 * reference or a box again.  Lane l holds the root's reference l and its
 * box in registers, and the boxes are in shared memory (exact_boxes).  Each
 * of the root's 6n candidate planes (per axis: the references' low sides,
 * then their high sides) gets two masks over the root's references, once
 * (subtree_masks): L, those with tri_lo < plane, and R, those with tri_hi >
 * plane.  A node of the subtree is a mask M of the root's references, and
 * its counts at a candidate are popcounts:
 *     n_l = |M & L|,   n_r = |M & R|,   n_p = |M| - |M & (L | R)|,
 * n_p being the references lying in the plane (a box with lo >= p and
 * hi <= p lies in p: boxes are finite, lo <= hi).  A node's candidates are
 * its own references' sides strictly inside its box, costed by
 * cost_candidate and chosen by warp_best, as exact_split chooses for the
 * node alone: the same planes, counts, costs and tie-breaks, so the same
 * split and the same tree; no plane is counted again against every
 * reference.  A split's children's masks are ballots of exact_sides over
 * the lanes' boxes.
 * The allocator workload is warp_node's, unchanged: a split node's lane 0
 * requests the left child array, then the right (none for an empty child),
 * the lanes write the children's references (from registers: nothing is
 * read back), lane 0 frees the node's array; a leaf copies its references
 * to the output and frees its array.
 * Sharing.  The walk's pending nodes (a ring of SUBTREE_STACK in shared
 * memory, each with its array written) are node tasks like any other: the
 * bottom one goes to an idle warp as maybe_donate gives the warp's own
 * stack's, and a child that finds the ring full goes onto the warp's stack.
 * So do the pending nodes when a node's child arrays cannot be had (the
 * build fails or parks).
 */
#ifndef KDA_GPU_SUBTREE_CUH
#define KDA_GPU_SUBTREE_CUH

#include "gpu_big_node.cuh"
#include "gpu_build_types.cuh"
#include "gpu_node_work.cuh"
#include "gpu_sah.cuh"
#include "gpu_tasks.cuh"

/* The L and R masks of the root's 6n candidates (n references, their
 * boxes in sb->ex): lane-parallel over the candidates, two references a
 * step (one 16-byte read, as count_sides). */
static __device__ void subtree_masks(subtree_smem *sb, uint32_t n)
{
    uint32_t lane = threadIdx.x & 31u, padded = (n + 1u) & ~1u;
#pragma unroll 1
    for (uint32_t base = 0; base < 6 * n; base += 32) {
        uint32_t i = base + lane;
        int a = i >= 4 * n ? 2 : i >= 2 * n ? 1 : 0;
        uint32_t j = i - 2 * n * (uint32_t)a, r = j < n ? j : j - n;
        const float2 *e = sb->ex.r[a];
        float2 mine = e[r < n ? r : 0];
        float cand = j < n ? mine.x : mine.y;
        const float4 *pairs = (const float4 *)e;
        uint32_t left = 0, right = 0, bit = 1;
#pragma unroll 2
        for (uint32_t k = 0; k < padded / 2; k++, bit <<= 2) {
            float4 v = pairs[k]; /* lo, hi of reference 2k, then of 2k + 1 */
            left |= (v.x < cand ? bit : 0u) | (v.z < cand ? bit << 1 : 0u);
            right |= (cand < v.y ? bit : 0u) | (cand < v.w ? bit << 1 : 0u);
        }
        if (i < 6 * n) sb->sides[i] = make_uint2(left, right);
    }
    __syncwarp();
}

/* The exact SAH split of the subtree's node `mask` (of the root's n_root
 * references; box lo..hi), from the masks: candidate i of the node's 6 |M|
 * is its member's candidate in the root's numbering.  sb->member must hold
 * the node's references by rank. */
static __device__ split_decision subtree_split(const subtree_smem *sb, uint32_t n_root, uint32_t mask,
                                               const float lo[3], const float hi[3], float inv_area)
{
    uint32_t lane = threadIdx.x & 31u, n = __popc(mask);
    split_decision best = no_split(1);
    uint64_t best_key = UINT64_MAX;
#pragma unroll 1
    for (uint32_t base = 0; base < 6 * n; base += 32) {
        uint32_t i = base + lane;
        int a = i >= 4 * n ? 2 : i >= 2 * n ? 1 : 0;
        uint32_t j = i - 2 * n * (uint32_t)a, high = j >= n, k = high ? j - n : j;
        uint32_t r = sb->member[k < n ? k : 0];
        float2 e = sb->ex.r[a][r];
        uint2 m = sb->sides[(2u * (uint32_t)a + high) * n_root + r];
        float cand = high ? e.y : e.x, alo = pick3(lo, a), ahi = pick3(hi, a);
        uint32_t nl = __popc(mask & m.x), nr = __popc(mask & m.y), np = n - __popc(mask & (m.x | m.y));
        if (i < 6 * n && cand > alo && cand < ahi)
            cost_candidate(a, cand, nl, nr, np, lo, hi, alo, ahi, inv_area, &best, &best_key);
    }
    return warp_best(best, best_key);
}

/* Which children this lane's reference goes to under a split of node
 * `mask` (bit 0 left, bit 1 right; 0 when it is not in the node); its box
 * on the split's axis read from shared memory, where a copy in registers
 * would cost the kernel's loops spills. */
static __device__ __forceinline__ uint32_t subtree_sides(const subtree_smem *sb, uint32_t mask,
                                                         const split_decision *d)
{
    uint32_t lane = threadIdx.x & 31u;
    if (!(mask >> lane & 1u)) return 0;
    float2 e = sb->ex.r[d->axis][lane];
    return exact_sides(d, e.x, e.y);
}

/* The node's references to the output, in the order of its array (the
 * root's order), the leaf written and the node's array freed. */
static __device__ void subtree_leaf(warp_ctx *c, const task *t, uint32_t mask, uint32_t tri)
{
    uint32_t first = warp_out_range(c, t->n);
    if (first == UINT32_MAX) return;
    if (mask >> c->lane & 1u) c->p->refs_out[first + __popc(mask & ((1u << c->lane) - 1u))] = tri;
    if (c->lane == 0) {
        c->p->nodes[t->node] = kdtree_make_leaf(first, t->n);
        lane0_free(c, t->refs, t->n);
    }
}

/* The walk's pending nodes: a ring in sb->stack, entries bottom .. bottom
 * + count - 1, the top one next. */
typedef struct subtree_ring {
    uint32_t bottom, count;
} subtree_ring;

/* Lane 0 puts node t with its mask on top of the ring; a full ring sends
 * it to the warp's stack instead, as a task of its own. */
static __device__ void subtree_push(warp_ctx *c, subtree_smem *sb, subtree_ring *r, const task *t, uint32_t mask)
{
    if (r->count == SUBTREE_STACK) {
        local_push(c, t);
        return;
    }
    if (c->lane == 0) {
        uint32_t at = (r->bottom + r->count) % SUBTREE_STACK;
        sb->stack[at] = *t;
        sb->stack_mask[at] = mask;
    }
    r->count++;
}

/* The ring's pending nodes onto the warp's stack. */
static __device__ void subtree_leave_pending(warp_ctx *c, subtree_smem *sb, subtree_ring *r)
{
    for (; r->count > 0; r->count--) {
        task t = sb->stack[r->bottom];
        __syncwarp();
        r->bottom = (r->bottom + 1) % SUBTREE_STACK;
        local_push(c, &t);
    }
}

/* Splits node t (`mask` of the root's n_root references) or makes it a
 * leaf; its children go onto the ring.  -1: the walk stops (the build
 * failed or parks). */
static __device__ int subtree_node(warp_ctx *c, subtree_smem *sb, subtree_ring *r, uint32_t n_root, const task *t,
                                   uint32_t mask, uint32_t tri)
{
    uint32_t below = (1u << c->lane) - 1u;
    float extent[3], inv_area;
    box_setup(t, extent, &inv_area);
    split_decision d = no_split(1);
    PROBE_START;
    if (may_split(c->p, t, inv_area)) {
        if (mask >> c->lane & 1u) sb->member[__popc(mask & below)] = (uint8_t)c->lane;
        __syncwarp();
        d = subtree_split(sb, n_root, mask, t->lo, t->hi, inv_area);
    }
    PROBE_MARK(c, PROBE_SUB_SPLIT);
    if (d.axis < 0 || !(d.cost < kdtree_leaf_cost(t->n))) {
        subtree_leaf(c, t, mask, tri);
        PROBE_MARK(c, PROBE_SUB_LEAF);
        return 0;
    }
    uint32_t sides = subtree_sides(sb, mask, &d);
    uint32_t ml = __ballot_sync(FULL_MASK, sides & 1u), mr = __ballot_sync(FULL_MASK, sides & 2u), *left, *right;
    if (__popc(ml) != d.n_left || __popc(mr) != d.n_right) {
        if (c->lane == 0) set_error(c->p, BUILD_CORRUPT); /* the masks disagree with the rule */
        return -1;
    }
    if (warp_alloc_children(c, t, d.n_left, d.n_right, &left, &right)) return -1; /* t parked, or the build failed */
    PROBE_MARK(c, PROBE_SUB_ALLOC);
    uint32_t pair = c->lane == 0 ? lane0_reserve_pair(c) : 0;
    if (sides & 1u) left[__popc(ml & below)] = tri;
    if (sides & 2u) right[__popc(mr & below)] = tri;
    if (c->lane == 0) lane0_free(c, t->refs, t->n);
    uint32_t first = warp_write_inner(c, t, &d, pair);
    if (first == UINT32_MAX) return -1; /* the node array is full: the build failed */
    int larger = d.n_right > d.n_left; /* pushed first: the smaller is split next */
    for (int i = 0; i < 2; i++) {
        int s = i == 0 ? larger : !larger;
        uint32_t m = s ? mr : ml;
        task ch = child_task(t, d.axis, d.pos, s, s ? right : left, __popc(m), first + (uint32_t)s);
        if (m) subtree_push(c, sb, r, &ch, m);
        else if (c->lane == 0) c->p->nodes[ch.node] = kdtree_make_leaf(0, 0);
    }
    __syncwarp();
    PROBE_MARK(c, PROBE_SUB_WRITE);
    return 0;
}

/* Walks root's subtree (lane l holds its reference l, tri) depth first, giving pending nodes to idle warps as it goes. */
static __device__ void subtree_walk(warp_ctx *c, subtree_smem *sb, const task *root, uint32_t tri)
{
    subtree_ring r = {0, 0};
    subtree_push(c, sb, &r, root, root->n == 32 ? FULL_MASK : (1u << root->n) - 1u);
    __syncwarp();
    for (uint32_t k = 0; r.count > 0; k++) {
        r.count--;
        uint32_t at = (r.bottom + r.count) % SUBTREE_STACK;
        task t = sb->stack[at];
        uint32_t mask = sb->stack_mask[at];
        __syncwarp(); /* read before the entry is overwritten */
        if (k) { /* the root counts as warp_node's */
            prof_count(c, PROF_NODES);
            TIMELINE_ADD(c, TL_NODES, 1);
        }
        PROBE_COUNT(c, PROBE_SUB_NODES);
        if (subtree_node(c, sb, &r, root->n, &t, mask, tri)) {
            subtree_leave_pending(c, sb, &r);
            return;
        }
        if (r.count == 0) break;
        uint32_t where = warp_give_where(c);
        if (where) { /* the bottom (oldest, largest) pending node to an idle warp */
            task g = sb->stack[r.bottom];
            __syncwarp();
            r.bottom = (r.bottom + 1) % SUBTREE_STACK;
            r.count--;
            warp_give(c, &g, where);
        }
    }
}

/* Builds the subtree of node t (1 .. KDA_BUILD_SUBTREE_MAX references). */
static __device__ void warp_subtree(warp_ctx *c, const task *t)
{
    const build_params *p = c->p;
    subtree_smem *sb = &c->sm->sub;
    uint32_t tri = c->lane < t->n ? __ldcg(&t->refs[c->lane]) : 0;
    float extent[3], inv_area;
    box_setup(t, extent, &inv_area);
    if (!may_split(p, t, inv_area)) {
        warp_make_leaf(c, t, 1, tri, 0);
        return;
    }
    lane_box box[2]; /* box[0] alone: at most 32 references */
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 3; a++) box[s].lo[a] = box[s].hi[a] = 0.0f;
    if (c->lane < t->n) load_box(p, tri, box[0].lo, box[0].hi);
    exact_boxes_store(&sb->ex, t->n, box);
    PROBE_START;
    subtree_masks(sb, t->n);
    PROBE_MARK(c, PROBE_SUB_MASKS);
    PROBE_COUNT(c, PROBE_SUBTREES);
    subtree_walk(c, sb, t, tri);
}

#endif
