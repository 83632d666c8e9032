/* gpu_small_nodes.cuh - small nodes done several at a time by one warp
 * (included by gpu_kernel.cuh).
 *
 * Most nodes of a tree hold a few references: on the Dragon nearly all of
 * its 3.5 million.  A whole warp on such a node idles most of its lanes and
 * waits alone for each load and atomic of the node.  So when the top of a
 * warp's stack holds nodes of at most SMALL_NODE references, the warp takes
 * up to four of them at once and splits the lanes into groups of G = 8 or
 * 16, one node each (lane i of a group holds the node's reference i):
 * the references and boxes of all of them are loaded at once, the exact SAH
 * sweeps every group in the same steps (group_exact_split), the first lane
 * of each group (its leader) allocates its node's child arrays and frees
 * its array, as lane 0 does for a whole warp's node, and one atomicAdd
 * reserves the node pairs and one the leaf references of them all.
 *
 * Every node gets the split, the arrays (requested, written and freed) and
 * the leaf a warp of its own would give it: the allocator sees the same
 * requests, up to four of them at once from one warp.
 *
 * All lanes run every step; a group's own flags decide what it does, so
 * groups never diverge around a shuffle or a ballot.
 */
#ifndef KDA_GPU_SMALL_NODES_CUH
#define KDA_GPU_SMALL_NODES_CUH

#include "gpu_big_node.cuh"
#include "gpu_build_types.cuh"
#include "gpu_node_work.cuh"
#include "gpu_tasks.cuh"

#ifndef SMALL_NODE /* (-D) */
#define SMALL_NODE 16 /* references of a node done by a group of 16 lanes (at most 16) */
#endif
#ifndef TINY_NODE /* (-D) */
#define TINY_NODE 8   /* ... by a group of 8 lanes, four nodes a warp (at most 8) */
#endif

/* How many nodes to take off the top of the stack together (0: none, the
 * top is no small node), and the group width *G.  Children of k nodes are
 * at most 2k tasks, so the stack keeps room for them: no task need go to
 * the global queue from here. */
static __device__ uint32_t small_nodes_on_top(const warp_ctx *c, uint32_t *G)
{
    uint32_t tiny = 0, small = 0, look = min(c->count, 4u);
    for (uint32_t i = 0; i < look; i++) {
        uint32_t n = c->sm->stack[(c->bottom + c->count - 1 - i) % LOCAL_TASKS].n;
        if (n <= TINY_NODE && tiny == i) tiny++;
        if (n <= SMALL_NODE && small == i) small++;
    }
    uint32_t room = LOCAL_TASKS - c->count, k;
    if (tiny >= 3) {
        *G = 8;
        k = tiny;
    } else {
        *G = 16;
        k = min(small, 2u);
    }
#ifndef KDA_GROUP_MIN
#define KDA_GROUP_MIN 1
#endif
    k = min(k, room);
    return k >= KDA_GROUP_MIN ? k : 0;
}

/* Exclusive prefix sum over the leaders of the groups (lanes 0, G, 2G, ..)
 * of v, which only leaders hold; *total gets the sum.  Every lane of a
 * group gets its leader's prefix. */
static __device__ uint32_t group_prefix(uint32_t G, uint32_t v, uint32_t *total)
{
    uint32_t lane = threadIdx.x & 31u, sum = v;
    for (uint32_t d = G; d < 32; d <<= 1) {
        uint32_t o = __shfl_up_sync(FULL_MASK, sum, d);
        if (lane >= d) sum += o;
    }
    *total = __shfl_sync(FULL_MASK, sum, 32 - (int)G);
    return __shfl_sync(FULL_MASK, sum - v, (int)(lane & ~(G - 1u)));
}

/* Splits (or makes leaves of) the k small nodes on top of the stack. */
#ifdef KDA_GROUP_NOINLINE
#define GROUP_INLINE __noinline__
#else
#define GROUP_INLINE
#endif
static __device__ GROUP_INLINE void warp_small_nodes(warp_ctx *c, uint32_t G, uint32_t k)
{
    const build_params *p = c->p;
    uint32_t lane = c->lane, g = lane / G, gl = lane & (G - 1u), leader_lane = lane & ~(G - 1u);
    int active = g < k;
    task t = c->sm->stack[(c->bottom + c->count - 1 - (active ? g : 0)) % LOCAL_TASKS];
    __syncwarp(); /* every lane has its task before children overwrite the slots */
    c->count -= k;
    if (!active) t.n = 0;
    int leader = active && gl == 0;

    float extent[3], inv_area;
    box_setup(&t, extent, &inv_area);
    int may = active && may_split(p, &t, inv_area);
    uint32_t tri = 0;
    lane_box box;
    for (int a = 0; a < 3; a++) {
        box.lo[a] = INFINITY;
        box.hi[a] = -INFINITY;
    }
    if (gl < t.n) {
        tri = __ldcg(&t.refs[gl]);
        load_box(p, tri, box.lo, box.hi);
    }
    uint32_t steps = __reduce_max_sync(FULL_MASK, t.n);
    split_decision d = group_exact_split(G, t.n, steps, &box, t.lo, t.hi, inv_area, may);
    int split = may && d.axis >= 0 && d.cost < kdtree_leaf_cost(t.n);

    /* The leaders allocate their nodes' child arrays. */
    uint32_t *left = NULL, *right = NULL;
    uint32_t ok = 1;
    if (leader && split) {
        left = lane0_alloc(c, d.n_left);
        right = lane0_alloc(c, d.n_right);
        ok = (!d.n_left || left) && (!d.n_right || right);
        if (ok) {
            lane0_count_array(c, d.n_left);
            lane0_count_array(c, d.n_right);
        } else if (!c->can_park) {
            set_error(p, BUILD_POOL_EXHAUSTED);
        } else {
            park_node(p->heap, p->state, p->spill, p->queue.capacity, t, left, right);
        }
    }
    ok = __shfl_sync(FULL_MASK, ok, (int)leader_lane);
    left = (uint32_t *)__shfl_sync(FULL_MASK, (unsigned long long)left, (int)leader_lane);
    right = (uint32_t *)__shfl_sync(FULL_MASK, (unsigned long long)right, (int)leader_lane);
    split = split && ok;
    int leaf = active && ok && !split;

    /* One atomicAdd for the node pairs of every split node (its round trip
     * overlaps the scatter). */
    uint32_t splitters = __ballot_sync(FULL_MASK, leader && split), pairs = 0;
    if (lane == 0 && splitters) pairs = atomicAdd(&p->state->n_nodes.v, 2u * __popc(splitters));

    /* Scatter: a group's ballot bits give each lane its slot. */
    uint32_t gmask = group_mask(G, lane), below = gmask & ((1u << lane) - 1u);
    uint32_t sides = 0;
    if (split && gl < t.n) {
        float tlo = d.axis == 0 ? box.lo[0] : d.axis == 1 ? box.lo[1] : box.lo[2];
        float thi = d.axis == 0 ? box.hi[0] : d.axis == 1 ? box.hi[1] : box.hi[2];
        sides = exact_sides(&d, tlo, thi);
    }
    uint32_t goes_l = __ballot_sync(FULL_MASK, sides & 1u), goes_r = __ballot_sync(FULL_MASK, sides & 2u);
    if (split && (__popc(goes_l & gmask) > d.n_left || __popc(goes_r & gmask) > d.n_right)) {
        if (leader) set_error(p, BUILD_CORRUPT); /* the array changed under us */
        split = 0;
        sides = 0;
    }
    if (sides & 1u) left[__popc(goes_l & below)] = tri;
    if (sides & 2u) right[__popc(goes_r & below)] = tri;

    /* Leaves: one reservation of output references for all of them. */
    uint32_t leaf_refs, at = group_prefix(G, leader && leaf ? t.n : 0u, &leaf_refs), first = 0, out_ok = 1;
    if (lane == 0 && leaf_refs) {
        if (c->out_end - c->out_pos < leaf_refs) {
            uint32_t want = leaf_refs > OUT_BATCH ? leaf_refs : OUT_BATCH;
            c->out_pos = atomicAdd(&p->state->refs_out.v, want);
            c->out_end = c->out_pos + want;
            if (c->out_end > p->refs_capacity || c->out_end < c->out_pos) {
                set_error(p, BUILD_REFS_FULL);
                c->out_pos = c->out_end = 0; /* never write into a range past the array */
                out_ok = 0;
            }
        }
        if (out_ok) {
            first = c->out_pos;
            c->out_pos += leaf_refs;
        }
    }
    out_ok = broadcast(out_ok);
    first = broadcast(first) + at;
    if (leaf && out_ok && gl < t.n) p->refs_out[first + gl] = tri;
    __syncwarp(); /* every lane has read its node's array */
    if (leader && leaf && out_ok) p->nodes[t.node] = kdtree_make_leaf(t.n ? first : 0u, t.n);
    if (leader && (split || (leaf && out_ok))) lane0_free(c, t.refs, t.n);

    /* Split nodes: the inner node, and the children onto the stack (the
     * larger first, so that the smaller is done next). */
    pairs = broadcast(pairs) + 2u * __popc(splitters & ((1u << lane) - 1u));
    int placed = leader && split && pairs + 2 <= p->node_capacity;
    if (leader && split && !placed) set_error(p, BUILD_NODES_FULL);
    uint32_t pushed, slot = group_prefix(G, placed ? (d.n_left != 0) + (d.n_right != 0) : 0u, &pushed);
    if (placed) {
        p->nodes[t.node] = kdtree_make_inner((uint32_t)d.axis, d.pos, pairs);
        int larger = d.n_right > d.n_left;
        for (int i = 0; i < 2; i++) {
            int s = i == 0 ? larger : !larger;
            uint32_t n = s ? d.n_right : d.n_left;
            if (n == 0) p->nodes[pairs + (uint32_t)s] = kdtree_make_leaf(0, 0);
            else c->sm->stack[(c->bottom + c->count + slot++) % LOCAL_TASKS] =
                     child_task(&t, d.axis, d.pos, s, s ? right : left, n, pairs + (uint32_t)s);
        }
    }
    __syncwarp();
    c->count += pushed;
}

#endif
