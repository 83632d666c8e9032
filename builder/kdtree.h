/* kdtree.h - the k-d tree layout shared by the CPU and GPU builders and by
 * both ray casters, the SAH cost model, and the CPU reference builder.
 *
 * Layout.  A tree is a compact array of 8-byte nodes plus an array of
 * triangle references (indices into the scene's triangles).
 *   inner node: header = (left_child << 2) | axis   (axis 0, 1, 2 = x, y, z)
 *               split  = position of the splitting plane on that axis
 *               the right child is always left_child + 1
 *   leaf:       header = (count << 2) | 3
 *               first  = index of its first reference in `refs`
 * Node 0 is the root.  Children always have larger indices than their parent,
 * and a left child's index is odd (the root alone, then whole pairs).
 *
 * Geometry.  Each node covers a closed box; an inner node's children cover
 * [lo, split] and [split, hi] on its axis.  A triangle is referenced by a
 * child when its bounding box reaches into that child:
 *   left  if  tri_lo < split,     right  if  tri_hi > split,
 * and a triangle lying in the plane itself (tri_lo == tri_hi == split) goes
 * to the one side the builder chose.  (The GPU builder's binned splits use a
 * bin-index form of the same rule; see docs/builder.md.)  Triangles that
 * straddle the plane are referenced by both children.
 */
#ifndef KDA_KDTREE_H
#define KDA_KDTREE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scene.h"

#ifdef __CUDACC__
#define KD_HD __host__ __device__
#else
#define KD_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A node is read whole: 8-byte aligned, one 64-bit load on the GPU. */
#ifdef __cplusplus
#define KDTREE_ALIGN(n) alignas(n)
#else
#define KDTREE_ALIGN(n) _Alignas(n)
#endif

typedef struct kdtree_node {
    KDTREE_ALIGN(8) uint32_t header;
    union {
        float split;    /* inner node */
        uint32_t first; /* leaf */
    };
} kdtree_node;

#define KDTREE_LEAF 3u
#define KDTREE_MAX_COUNT ((1u << 30) - 1) /* largest child index or leaf size */

/* v[axis] through selects: a small array indexed at run time would live in
 * local memory on the GPU, every access a memory round trip. */
static inline KD_HD float kdtree_pick(const float v[3], int axis)
{
    return axis == 0 ? v[0] : axis == 1 ? v[1] : v[2];
}

static inline KD_HD int kdtree_is_leaf(kdtree_node n) { return (n.header & 3u) == KDTREE_LEAF; }
static inline KD_HD uint32_t kdtree_axis(kdtree_node n) { return n.header & 3u; }
static inline KD_HD uint32_t kdtree_left(kdtree_node n) { return n.header >> 2; }
static inline KD_HD uint32_t kdtree_count(kdtree_node n) { return n.header >> 2; }

static inline KD_HD kdtree_node kdtree_make_inner(uint32_t axis, float split, uint32_t left)
{
    kdtree_node n;
    n.header = (left << 2) | axis;
    n.split = split;
    return n;
}

static inline KD_HD kdtree_node kdtree_make_leaf(uint32_t first, uint32_t count)
{
    kdtree_node n;
    n.header = (count << 2) | KDTREE_LEAF;
    n.first = first;
    return n;
}

/* ------------------------------------------------------------------------
 * SAH cost model (Wald & Havran 2006), written once for every builder.
 * Splitting a node of surface area SA holding N triangles at a plane that
 * leaves N_L and N_R triangles in children of areas SA_L and SA_R costs
 *     C_split = K_T + K_I * lambda * (SA_L / SA * N_L + SA_R / SA * N_R)
 * where lambda = 1 - EMPTY_BONUS when one child is empty, else 1.  Keeping
 * the node as a leaf costs C_leaf = K_I * N.  A node is split when its best
 * plane has C_split < C_leaf, its depth is below the depth limit
 * 8 + 1.3 log2(N_scene), and its reference budget (below) allows the
 * split; otherwise it becomes a leaf.
 * ------------------------------------------------------------------------ */
#define KDTREE_COST_TRAVERSAL 15.0f /* K_T: one traversal step */
#define KDTREE_COST_INTERSECT 20.0f /* K_I: one ray/triangle test */
#define KDTREE_EMPTY_BONUS 0.2f     /* favours planes that cut off empty space */

static inline KD_HD float kdtree_split_cost(float p_left, float p_right, uint32_t n_left, uint32_t n_right)
{
    float lambda = (n_left == 0 || n_right == 0) ? 1.0f - KDTREE_EMPTY_BONUS : 1.0f;
    return KDTREE_COST_TRAVERSAL +
           KDTREE_COST_INTERSECT * lambda * (p_left * (float)n_left + p_right * (float)n_right);
}

static inline KD_HD float kdtree_leaf_cost(uint32_t n) { return KDTREE_COST_INTERSECT * (float)n; }

/* Surface area of a box with extents d[3]. */
static inline KD_HD float kdtree_box_area(const float d[3])
{
    return 2.0f * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0]);
}

/* Bounding box of triangle t. */
static inline KD_HD void kdtree_triangle_box(const float *positions, const uint32_t *triangles,
                                              uint32_t t, float lo[3], float hi[3])
{
    const float *v0 = positions + 3 * (size_t)triangles[3 * (size_t)t + 0];
    const float *v1 = positions + 3 * (size_t)triangles[3 * (size_t)t + 1];
    const float *v2 = positions + 3 * (size_t)triangles[3 * (size_t)t + 2];
    for (int a = 0; a < 3; a++) {
        float mn = v0[a] < v1[a] ? v0[a] : v1[a];
        float mx = v0[a] > v1[a] ? v0[a] : v1[a];
        lo[a] = mn < v2[a] ? mn : v2[a];
        hi[a] = mx > v2[a] ? mx : v2[a];
    }
}

/* Depth limit for a scene of n triangles: 8 + 1.3 log2(n), at most 60. */
int kdtree_max_depth(uint32_t n_triangles);

/* ------------------------------------------------------------------------
 * Reference budget.  A triangle straddling a plane is referenced by both
 * children, and the SAH (on triangles' own boxes) may keep splitting nodes
 * whose triangles nearly all straddle: the fan of 10,000 slivers met at one
 * corner took 396,000 references a triangle and 15 GB.  So each node
 * carries a ratio R of references allowed below it to references it holds:
 * KDTREE_BUDGET at the root; a split into N_L + N_R references of the N a
 * node holds is taken only when N_L + N_R <= R N, and gives both children
 * R N / (N_L + N_R).  The references below a node never exceed R N (up
 * to rounding), so a tree holds at most KDTREE_BUDGET references a
 * triangle.  No tree of the nine shared OBJ scenes meets a budget of
 * 1024, on the CPU or the GPU (at 256 the CPU's Conference and Sponza do,
 * by a few nodes; the GPU's binned splits duplicate more, and its built-in
 * atrium and spheres lose 2 and 6 of 1.4 and 1.6 million nodes), so it
 * changes trees like the fan (10,000 slivers: 805 references a triangle,
 * 0.27 s on the CPU).
 *
 * A node's depth and R travel in one word (a GPU task's): the depth in the
 * low 8 bits, R's float bits above them (R rounded down to 15 bits of
 * mantissa).  Both builders compute R alike, in float: two products and
 * a reciprocal, each rounded once (no fused multiply-add to differ by; a
 * reciprocal costs the GPU less than a quotient). */
#define KDTREE_BUDGET 1024.0f

static inline KD_HD uint32_t kdtree_float_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

static inline KD_HD float kdtree_bits_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

static inline KD_HD uint32_t kdtree_level_root(void) { return kdtree_float_bits(KDTREE_BUDGET) & ~0xffu; }
static inline KD_HD uint32_t kdtree_level_depth(uint32_t level) { return level & 0xffu; }
static inline KD_HD float kdtree_level_budget(uint32_t level) { return kdtree_bits_float(level & ~0xffu); }

/* Whether a node of n references at `level` may split into n_left + n_right. */
static inline KD_HD int kdtree_budget_allows(uint32_t level, uint32_t n, uint32_t n_left, uint32_t n_right)
{
    return (float)(n_left + n_right) <= kdtree_level_budget(level) * (float)n;
}

/* The level of both children of such a split: one deeper, R N / (N_L + N_R). */
static inline KD_HD uint32_t kdtree_level_child(uint32_t level, uint32_t n, uint32_t n_left, uint32_t n_right)
{
    float r = kdtree_level_budget(level) * (float)n * (1.0f / (float)(n_left + n_right));
    r = r < 1.0f ? 1.0f : r; /* >= 1 but for rounding: a split that duplicates nothing stays allowed */
    return (kdtree_float_bits(r) & ~0xffu) | (kdtree_level_depth(level) + 1u);
}

/* A built tree.  `nodes` and `refs` are host memory for a CPU tree. */
typedef struct kdtree {
    kdtree_node *nodes;
    uint32_t *refs;
    uint32_t n_nodes;
    uint32_t n_refs;
    float lo[3], hi[3]; /* root box: the scene bounds */
} kdtree;

/* Statistics of a tree (the paper's Table 3 columns that do not depend on
 * the allocator; the GPU builder adds its own). */
typedef struct kdtree_stats {
    uint32_t n_triangles;
    uint32_t n_nodes;
    uint32_t n_leaves;
    uint32_t n_empty_leaves;
    uint32_t max_depth;      /* deepest leaf, root = 0 */
    uint32_t depth_limit;
    uint64_t n_refs;         /* references held by leaves */
    double refs_per_triangle;
    double sah_cost;         /* expected cost of a random ray, see kdtree_sah_cost */
    double build_ms;
} kdtree_stats;

/* Builds the SAH tree on the CPU, single-threaded (O(N log N) event sweep).
 * Returns 0, or -1 with a message (out of memory, empty scene). */
int kdtree_build_cpu(const scene *s, kdtree *out, kdtree_stats *stats, char *err, size_t errlen);

/* Fills the statistics that can be read off a finished tree (everything but
 * build_ms). */
void kdtree_compute_stats(const kdtree *t, uint32_t n_triangles, kdtree_stats *stats);

/* SAH cost of the whole tree, relative to the root's area:
 *   sum over inner nodes K_T * SA(node) / SA(root)
 * + sum over leaves    K_I * count * SA(leaf) / SA(root). */
double kdtree_sah_cost(const kdtree *t);

/* Checks the structural invariants of a tree against its scene: child
 * indices in range, left children at odd indices, each node reached exactly
 * once, every leaf's references in range and overlapping the leaf's box, no
 * triangle referenced twice by one leaf, every triangle referenced by some
 * leaf, depth within the limit.  Returns 0, or -1 with the first violation in `err`. */
int kdtree_check(const kdtree *t, const scene *s, char *err, size_t errlen);

void kdtree_free(kdtree *t);

#ifdef __cplusplus
}
#endif
#endif
