/* gpu_sah.cuh - split selection by one warp: exact SAH for small nodes,
 * binned SAH for the rest, with the cost model of kdtree.h.
 *
 * Binned splits.  A node's box is cut on each axis into GPU_BINS bins:
 * bin_of(x) = (x - lo) * scale, truncated and clamped to 0 .. GPU_BINS - 1,
 * with scale = GPU_BINS / extent, every operation explicitly rounded (no
 * FMA), so every warp computes the same bins.  bin_of never decreases as x
 * grows, so for each k = 1 .. GPU_BINS - 1 there is a least float
 *     threshold(k)   with   bin_of(x) >= k   exactly when   x >= threshold(k).
 * A reference goes left when bin_of(tri_lo) < k and right when
 * bin_of(tri_hi) >= k: counting bins and classifying references apply one
 * and the same test, so the children's sizes are known exactly before the
 * scatter, and the chosen plane k splits at threshold(k), which puts every
 * reference on the side its box lies on.  (A triangle ending exactly on the
 * plane goes to both sides; see docs/builder.md.)  The candidates are
 * costed at plane(k) = lo + extent * k / GPU_BINS, next to threshold(k),
 * which is found only for the chosen one (bin_threshold): checking each
 * reference's bin against the planes instead (as the builder once did) was
 * 37% of a big node's binning (bench/binbench.cu).
 *
 * Exact splits (nodes of at most KDA_BUILD_EXACT_MAX = 64 references, two
 * per lane) evaluate every bounding-box coordinate as a candidate with the
 * CPU builder's rule: left when tri_lo < split, right when tri_hi > split,
 * triangles in the plane on the cheaper side.
 *
 * Ties between equally cheap planes are broken by (axis, position), never
 * by which lane holds a reference, so a node's split does not depend on the
 * order of its references: builds are repeatable.
 */
#ifndef KDA_GPU_SAH_CUH
#define KDA_GPU_SAH_CUH

#include <stdint.h>

#include "kdtree.h"

#define GPU_BINS 128         /* four per lane */
#define BINS_PER_LANE (GPU_BINS / 32)
#ifndef KDA_BUILD_EXACT_MAX /* tunable, as those of gpu_build_types.cuh */
#define KDA_BUILD_EXACT_MAX 64 /* two references per lane (at most 64) */
#endif
#if KDA_BUILD_EXACT_MAX > 64
#error "KDA_BUILD_EXACT_MAX: at most 64 (two references per lane)"
#endif
#define FULL_MASK 0xffffffffu

typedef struct split_decision {
    float cost;
    float pos;
    int axis;        /* -1: make a leaf */
    uint32_t k;      /* binned: the plane's number */
    int exact;       /* the exact rule, not the binned one, classifies */
    int planar_left; /* exact: triangles in the plane go left */
    uint32_t n_left, n_right;
} split_decision;

static __device__ __forceinline__ float bin_plane(float lo, float extent, uint32_t k)
{
    return __fadd_rn(lo, __fmul_rn(extent, (float)k * (1.0f / GPU_BINS)));
}

/* The bin of coordinate x (see the top of this file). */
static __device__ __forceinline__ uint32_t bin_of(float x, float lo, float scale)
{
    float f = __fmul_rn(__fsub_rn(x, lo), scale);
    return !(f >= 0.0f) ? 0 : (f >= (float)(GPU_BINS - 1) ? GPU_BINS - 1 : (uint32_t)f); /* NaN: bin 0 */
}

/* A float's bits as an unsigned key with the same order, and back. */
static __device__ __forceinline__ uint32_t float_order(float f)
{
    uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static __device__ __forceinline__ float order_float(uint32_t key)
{
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

/* threshold(k), 1 <= k < GPU_BINS, for the box [lo, hi] with scale =
 * GPU_BINS / (hi - lo): the least float x with bin_of(x) >= k, by a
 * search over the floats between lo (bin 0) and hi (the last bin) in
 * which the 32 lanes test 32 evenly spaced floats a round, so that at most
 * 7 rounds find it (a bisection's 32 dependent steps built every scene
 * 0-5% slower: H100, docs/experiments/builder.md#build-kernel).  Not plane(k)
 * stepped by one float: where x - lo is rounded to a coarser grid than x
 * (x near 0, lo far from it) the two lie hundreds of floats apart.  Once
 * per binned split, by the whole warp, the same result in every lane.
 * NaN when threshold(k) is hi itself (no split there): on an axis
 * less than GPU_BINS floats wide the top planes have no float in their
 * bins, and binned_split never chooses them (k_max). */
static __device__ float bin_threshold(uint32_t k, float lo, float hi, float scale)
{
    uint32_t lane = threadIdx.x & 31u;
    uint32_t below = float_order(lo), at = float_order(hi); /* bin_of(below) < k <= bin_of(at) */
    while (at - below > 1) { /* the lanes test 32 points at once: the range shrinks 33-fold a round */
        uint32_t step = max((at - below) / 33u, 1u);
        uint32_t mid = min(below + step * (lane + 1), at);
        uint32_t hit = __ballot_sync(FULL_MASK, bin_of(order_float(mid), lo, scale) >= k);
        uint32_t first = hit ? (uint32_t)__ffs(hit) - 1 : 32u; /* the lowest point at or above k */
        if (first < 32) at = min(below + step * (first + 1), at);
        below += step * first;
    }
    return at == float_order(hi) ? NAN : order_float(at);
}

static __device__ __forceinline__ uint32_t warp_exclusive_scan(uint32_t v)
{
    uint32_t lane = threadIdx.x & 31u, sum = v;
    for (uint32_t d = 1; d < 32; d <<= 1) {
        uint32_t o = __shfl_up_sync(FULL_MASK, sum, d);
        if (lane >= d) sum += o;
    }
    return sum - v;
}

/* Orders candidates: axis, then position, then left before right. */
static __device__ __forceinline__ uint64_t candidate_key(int axis, float pos, int planar_left)
{
    return (uint64_t)axis << 33 | (uint64_t)float_order(pos) << 1 | (uint64_t)(planar_left ? 0 : 1);
}

/* Every lane ends with the cheapest decision of the warp: the least
 * (cost, key).  The least cost first (a butterfly of minima); the lowest
 * lane holding it gives its decision when every lane that ties with it
 * holds the same key, as is usual (triangles sharing a vertex make equal
 * candidates), and otherwise the least key among them is found.  The
 * decision (plane, counts, position) is one lane's, so its fields agree
 * even where two binned planes share a position but not a threshold. */
static __device__ __forceinline__ split_decision warp_best(split_decision d, uint64_t key)
{
    float cost = d.cost;
    for (int off = 16; off > 0; off >>= 1) cost = fminf(cost, __shfl_xor_sync(FULL_MASK, cost, off));
    int tied = d.cost == cost;
    int src = __ffs(__ballot_sync(FULL_MASK, tied)) - 1;
    uint64_t first_key = __shfl_sync(FULL_MASK, key, src);
    if (__any_sync(FULL_MASK, tied && key != first_key)) { /* different planes of the same cost */
        uint64_t least = tied ? key : UINT64_MAX;
        for (int off = 16; off > 0; off >>= 1) {
            uint64_t other = __shfl_xor_sync(FULL_MASK, least, off);
            least = other < least ? other : least;
        }
        src = __ffs(__ballot_sync(FULL_MASK, tied && key == least)) - 1;
    }
    d.cost = cost;
    d.pos = __shfl_sync(FULL_MASK, d.pos, src);
    d.axis = __shfl_sync(FULL_MASK, d.axis, src);
    d.k = __shfl_sync(FULL_MASK, d.k, src);
    d.planar_left = __shfl_sync(FULL_MASK, d.planar_left, src);
    d.n_left = __shfl_sync(FULL_MASK, d.n_left, src);
    d.n_right = __shfl_sync(FULL_MASK, d.n_right, src);
    return d;
}

/* The area of box lo..hi cut to [a0, a1] on `axis`: kdtree_box_area's
 * arithmetic, term for term.  Written out rather than calling it with an
 * array of the picked extents: that gives the same bits but other PTX, and
 * built every scene 1-2% slower (H100, docs/experiments/builder.md#build-kernel). */
static __device__ __forceinline__ float child_area(const float lo[3], const float hi[3], int axis, float a0,
                                                   float a1)
{
    float d = a1 - a0;
    float dx = axis == 0 ? d : hi[0] - lo[0], dy = axis == 1 ? d : hi[1] - lo[1], dz = axis == 2 ? d : hi[2] - lo[2];
    return 2.0f * (dx * dy + dy * dz + dz * dx);
}

static __device__ __forceinline__ split_decision no_split(int exact)
{
    split_decision d;
    d.cost = INFINITY;
    d.pos = 0.0f;
    d.axis = -1;
    d.k = 0;
    d.exact = exact;
    d.planar_left = 0;
    d.n_left = d.n_right = 0;
    return d;
}

/* Binned SAH from per-axis bin counts (bins[0] of tri_lo, bins[1] of tri_hi,
 * each [3][GPU_BINS]); n references in the node.  Lane l evaluates the
 * planes above its bins 4l .. 4l+3. */
static __device__ split_decision binned_split(const uint32_t (*bins)[3][GPU_BINS], uint32_t n, const float lo[3],
                                              const float hi[3], const float scale[3], float inv_area)
{
    uint32_t lane = threadIdx.x & 31u;
    split_decision best = no_split(0);
    uint64_t best_key = UINT64_MAX;
#pragma unroll 1
    for (int a = 0; a < 3; a++) {
        float alo = kdtree_pick(lo, a), ahi = kdtree_pick(hi, a), extent = ahi - alo;
        const uint32_t *lo_bins = &bins[0][a][lane * BINS_PER_LANE], *hi_bins = &bins[1][a][lane * BINS_PER_LANE];
        uint32_t sum_lo = 0, sum_hi = 0;
        for (int i = 0; i < BINS_PER_LANE; i++) {
            sum_lo += lo_bins[i];
            sum_hi += hi_bins[i];
        }
        uint32_t run_lo = warp_exclusive_scan(sum_lo), run_hi = warp_exclusive_scan(sum_hi);
        if (!(extent > 0.0f)) continue;
        /* Planes above k_max have no float below hi in their bins
         * (threshold(k) would be hi itself): on an axis less than GPU_BINS
         * floats wide they are skipped, so that a cheaper plane of another
         * axis, not the leaf, wins.  (The float below hi by order key; below
         * +0 that is -0, which bins as +0, so k_max only errs low there.) */
        uint32_t k_max = bin_of(order_float(float_order(ahi) - 1), alo, kdtree_pick(scale, a));
#pragma unroll 1
        for (int i = 0; i < BINS_PER_LANE; i++) {
            run_lo += lo_bins[i]; /* tri_lo in bins < k */
            run_hi += hi_bins[i]; /* tri_hi in bins < k */
            uint32_t k = lane * BINS_PER_LANE + (uint32_t)i + 1; /* plane above bin k-1 */
            float p = bin_plane(alo, extent, k);
            if (k > k_max || !(p > alo && p < ahi)) continue;
            uint32_t nl = run_lo, nr = n - run_hi;
            float cost = kdtree_split_cost(child_area(lo, hi, a, alo, p) * inv_area,
                                           child_area(lo, hi, a, p, ahi) * inv_area, nl, nr);
            uint64_t key = candidate_key(a, p, 1);
            if (cost < best.cost || (cost == best.cost && key < best_key)) {
                best.cost = cost;
                best.pos = p;
                best.axis = a;
                best.k = k;
                best.n_left = nl;
                best.n_right = nr;
                best_key = key;
            }
        }
    }
    best = warp_best(best, best_key);
    if (best.axis >= 0) { /* the chosen plane splits at its threshold */
        float alo = kdtree_pick(lo, best.axis), ahi = kdtree_pick(hi, best.axis);
        best.pos = bin_threshold(best.k, alo, ahi, kdtree_pick(scale, best.axis));
        if (!(best.pos > alo && best.pos < ahi)) best = no_split(0);
    }
    return best;
}

/* Costs plane p on axis a (alo, ahi: the node's box on a) with nl, nr and
 * np references left, right and in the plane; a plane with no reference in
 * it is costed once, with planar triangles "left": the right variant has
 * the same cost and a larger key, and could never win. */
static __device__ __forceinline__ void cost_candidate(int a, float p, uint32_t nl, uint32_t nr, uint32_t np,
                                                      const float lo[3], const float hi[3], float alo, float ahi,
                                                      float inv_area, split_decision *best, uint64_t *best_key)
{
    float pl = child_area(lo, hi, a, alo, p) * inv_area, pr = child_area(lo, hi, a, p, ahi) * inv_area;
    for (int side = 1; side >= (np ? 0 : 1); side--) { /* planar triangles left, then right */
        float cost = kdtree_split_cost(pl, pr, nl + (side ? np : 0), nr + (side ? 0 : np));
        uint64_t key = candidate_key(a, p, side);
        if (cost < best->cost || (cost == best->cost && key < *best_key)) {
            best->cost = cost;
            best->pos = p;
            best->axis = a;
            best->planar_left = side;
            best->n_left = nl + (side ? np : 0);
            best->n_right = nr + (side ? 0 : np);
            *best_key = key;
        }
    }
}

/* A reference's box as one lane holds it for the exact split. */
typedef struct lane_box {
    float lo[3], hi[3];
} lane_box;

/* The references' boxes of a node split exactly, per axis, in the warp's
 * shared memory: (lo, hi) of reference j at [axis][j], padded to an even
 * count with a reference that counts on no side (lo = +inf, hi = -inf), so
 * that a lane reads two references with one 16-byte load.  An axis's row
 * is two entries longer than it needs (EXACT_ROW): the lanes of one step
 * read the same entry of up to three rows, and rows 528 bytes apart put
 * those three 16-byte reads in different banks (512 apart, in the same
 * banks, they would take three rounds). */
#define EXACT_ROW (KDA_BUILD_EXACT_MAX + 2)
typedef struct __align__(16) exact_boxes {
    float2 r[3][EXACT_ROW];
} exact_boxes;

/* Writes the boxes lane l holds (reference l in box[0], l + 32 in box[1])
 * into ex, padded; the warp's lanes must all call it. */
static __device__ __forceinline__ void exact_boxes_store(exact_boxes *ex, uint32_t n, const lane_box box[2])
{
    uint32_t lane = threadIdx.x & 31u;
    for (uint32_t s = 0; s < 2; s++) {
        uint32_t j = lane + 32u * s;
        if (j < n) {
            for (int a = 0; a < 3; a++) ex->r[a][j] = make_float2(box[s].lo[a], box[s].hi[a]);
        } else if (j == n && (n & 1u)) {
            for (int a = 0; a < 3; a++) ex->r[a][j] = make_float2(INFINITY, -INFINITY);
        }
    }
    __syncwarp();
}

/* c + 1 where a < b, else c, counted in a float: set.lt gives 1.0 or 0.0
 * and an add takes it, two instructions, where c += (a < b) on an integer
 * compiles to three (a compare, an add and a predicated move).  Exact: a
 * count is at most 64.  (count_sides does four of them per two references;
 * so written, builds got up to 4% faster: H100,
 * docs/experiments/builder.md#build-kernel.)  Not flushed to zero: the build must not use -ftz=true, under
 * which the C comparisons of exact_sides would treat subnormals otherwise. */
static __device__ __forceinline__ float count_lt(float c, float a, float b)
{
    asm("{\n\t.reg .f32 t;\n\tset.lt.f32.f32 t, %1, %2;\n\tadd.rn.f32 %0, %0, t;\n\t}" : "+f"(c) : "f"(a), "f"(b));
    return c;
}

/* Counts, for this lane's candidate plane `cand` on one axis, the node's
 * references e[0 .. n-1] (n even, padded): nl of those with tri_lo < cand,
 * nr with tri_hi > cand, np (with_planar only) of those lying in the plane
 * itself.  A planar reference at cand adds to neither nl nor nr, as the
 * comparisons are strict.  Every lane reads the same two references at a
 * time (a broadcast from shared memory). */
static __device__ __forceinline__ void count_sides(float cand, const float2 *e, uint32_t n, int with_planar,
                                                   uint32_t *nl, uint32_t *nr, uint32_t *np)
{
    const float4 *pairs = (const float4 *)e;
    float l = 0.0f, r = 0.0f;
    uint32_t q = 0;
    if (with_planar) { /* not unrolled: the compiler's four steps and their odd ones cost Conference 2.7% */
#pragma unroll 1
        for (uint32_t j = 0; j < n / 2; j++) {
            float4 v = pairs[j];
            l = count_lt(count_lt(l, v.x, cand), v.z, cand);
            r = count_lt(count_lt(r, cand, v.y), cand, v.w);
            q += (v.x == v.y && v.x == cand) + (v.z == v.w && v.z == cand);
        }
    } else {
#pragma unroll 2
        for (uint32_t j = 0; j < n / 2; j++) {
            float4 v = pairs[j];
            l = count_lt(count_lt(l, v.x, cand), v.z, cand);
            r = count_lt(count_lt(r, cand, v.y), cand, v.w);
        }
    }
    *nl = (uint32_t)l;
    *nr = (uint32_t)r;
    *np = q;
}

/* Exact SAH over the box coordinates of n <= 64 references: lane l holds
 * reference l in box[0] and reference l + 32 in box[1] (when they exist),
 * and ex holds them all (exact_boxes_store).  The node's 6n candidate
 * planes (per axis: the low sides of its references, then the high sides)
 * are dealt out one per lane and pass over all three axes at once, so a
 * node of at most 5 references takes one pass, not one per axis; a lane
 * counts its candidate against every reference of its axis, two per step
 * (one 16-byte read from shared memory, where shuffles from the lanes
 * holding them cost two instructions and a dependent wait each). */
static __device__ split_decision exact_split(uint32_t n, const lane_box box[2], const exact_boxes *ex,
                                             const float lo[3], const float hi[3], float inv_area)
{
    uint32_t lane = threadIdx.x & 31u;
    split_decision best = no_split(1);
    uint64_t best_key = UINT64_MAX;
    uint32_t n0 = min(n, 32u), n1 = n > 32u ? n - 32u : 0u, padded = (n + 1u) & ~1u;
    int flat0 = box[0].lo[0] == box[0].hi[0] || box[0].lo[1] == box[0].hi[1] || box[0].lo[2] == box[0].hi[2];
    int flat1 = box[1].lo[0] == box[1].hi[0] || box[1].lo[1] == box[1].hi[1] || box[1].lo[2] == box[1].hi[2];
    /* References lying in a plane need the third count; on an axis with
     * none it stays 0. */
    int planar = __any_sync(FULL_MASK, (lane < n0 && flat0) || (lane < n1 && flat1));
#pragma unroll 1
    for (uint32_t base = 0; base < 6 * n; base += 32) {
        uint32_t i = base + lane;
        int a = i >= 4 * n ? 2 : i >= 2 * n ? 1 : 0;
        uint32_t j = i - 2 * n * (uint32_t)a, r = j < n ? j : j - n;
        const float2 *e = ex->r[a];
        float2 mine = e[r < n ? r : 0];
        float cand = j < n ? mine.x : mine.y, alo = kdtree_pick(lo, a), ahi = kdtree_pick(hi, a);
        uint32_t nl, nr, np;
        count_sides(cand, e, padded, planar, &nl, &nr, &np);
        if (i < 6 * n && cand > alo && cand < ahi)
            cost_candidate(a, cand, nl, nr, np, lo, hi, alo, ahi, inv_area, &best, &best_key);
    }
    return warp_best(best, best_key);
}

/* Which children a reference goes to under a decision: bit 0 left, bit 1 right. */
static __device__ __forceinline__ uint32_t exact_sides(const split_decision *d, float tlo, float thi)
{
    int planar_here = tlo == thi && tlo == d->pos;
    uint32_t left = tlo < d->pos || (planar_here && d->planar_left);
    uint32_t right = thi > d->pos || (planar_here && !d->planar_left);
    return left | right << 1;
}

static __device__ __forceinline__ uint32_t binned_sides(uint32_t k, float tlo, float thi, float lo, float scale)
{
    uint32_t left = bin_of(tlo, lo, scale) < k;
    uint32_t right = bin_of(thi, lo, scale) >= k;
    return left | right << 1;
}

#endif
