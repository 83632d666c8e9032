/* gpu_sah.cuh - split selection by one warp: exact SAH for small nodes,
 * binned SAH for the rest, with the cost model of kdtree.h.
 *
 * Binned splits.  A node's box is cut on each axis into GPU_BINS bins by the
 * planes plane(k) = lo + extent * k / GPU_BINS, k = 1 .. GPU_BINS - 1.
 * bin_of(x) is the number of the last plane at or below x (0 below the
 * first), computed from the planes themselves, so that for every k
 *     bin_of(x) >= k   exactly when   x >= plane(k).
 * A reference goes left when bin_of(tri_lo) < k (tri_lo < plane) and right
 * when bin_of(tri_hi) >= k (tri_hi >= plane): counting bins and classifying
 * references apply one and the same test, so the children's sizes are known
 * exactly before the scatter.  (A triangle ending exactly on the plane goes
 * to both sides; see docs/builder.md.)  All arithmetic is explicitly
 * rounded (no FMA), so every warp computes the same bins.
 *
 * Exact splits (nodes of at most 32 references, one per lane) evaluate every
 * bounding-box coordinate as a candidate with the CPU builder's rule: left
 * when tri_lo < split, right when tri_hi > split, triangles in the plane on
 * the cheaper side.
 */
#ifndef KDA_GPU_SAH_CUH
#define KDA_GPU_SAH_CUH

#include <stdint.h>

#include "kdtree.h"

#define GPU_BINS 32 /* one per lane */
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

static __device__ __forceinline__ uint32_t bin_of(float x, float lo, float extent, float scale)
{
    float f = __fmul_rn(__fsub_rn(x, lo), scale);
    int b = !(f >= 0.0f) ? 0 : (f >= (float)(GPU_BINS - 1) ? GPU_BINS - 1 : (int)f); /* NaN: bin 0 */
    while (b > 0 && x < bin_plane(lo, extent, (uint32_t)b)) b--;
    while (b < GPU_BINS - 1 && x >= bin_plane(lo, extent, (uint32_t)b + 1)) b++;
    return (uint32_t)b;
}

static __device__ __forceinline__ uint32_t warp_inclusive_scan(uint32_t v)
{
    uint32_t lane = threadIdx.x & 31u;
    for (uint32_t d = 1; d < 32; d <<= 1) {
        uint32_t o = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += o;
    }
    return v;
}

/* Every lane ends with the decision of the lane whose cost is lowest (ties:
 * the lowest candidate number, so the choice is deterministic). */
static __device__ __forceinline__ split_decision warp_best(split_decision d, uint32_t candidate)
{
    for (int off = 16; off > 0; off >>= 1) {
        float oc = __shfl_xor_sync(FULL_MASK, d.cost, off);
        uint32_t ocand = __shfl_xor_sync(FULL_MASK, candidate, off);
        int take = oc < d.cost || (oc == d.cost && ocand < candidate);
        /* Lanes pair up symmetrically; each takes the better of the two. */
        float opos = __shfl_xor_sync(FULL_MASK, d.pos, off);
        int oaxis = __shfl_xor_sync(FULL_MASK, d.axis, off);
        uint32_t ok = __shfl_xor_sync(FULL_MASK, d.k, off);
        int opl = __shfl_xor_sync(FULL_MASK, d.planar_left, off);
        uint32_t onl = __shfl_xor_sync(FULL_MASK, d.n_left, off);
        uint32_t onr = __shfl_xor_sync(FULL_MASK, d.n_right, off);
        if (take) {
            d.cost = oc;
            d.pos = opos;
            d.axis = oaxis;
            d.k = ok;
            d.planar_left = opl;
            d.n_left = onl;
            d.n_right = onr;
            candidate = ocand;
        }
    }
    return d;
}

static __device__ __forceinline__ float child_area(const float lo[3], const float hi[3], int axis, float a0,
                                                   float a1)
{
    float d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    d[axis] = a1 - a0;
    return kdtree_box_area(d);
}

/* Binned SAH from per-axis bin counts (bins[0] of tri_lo, bins[1] of tri_hi,
 * each [3][GPU_BINS]); n references in the node. */
static __device__ split_decision binned_split(const uint32_t (*bins)[3][GPU_BINS], uint32_t n, const float lo[3],
                                              const float hi[3], float inv_area)
{
    uint32_t lane = threadIdx.x & 31u;
    split_decision best;
    best.cost = INFINITY;
    best.axis = -1;
    best.exact = 0;
    best.planar_left = 0;
    best.k = 0;
    best.pos = 0.0f;
    best.n_left = best.n_right = 0;
    uint32_t candidate = UINT32_MAX;
    for (int a = 0; a < 3; a++) {
        float extent = hi[a] - lo[a];
        uint32_t below_lo = warp_inclusive_scan(bins[0][a][lane]); /* tri_lo in bins <= lane */
        uint32_t below_hi = warp_inclusive_scan(bins[1][a][lane]); /* tri_hi in bins <= lane */
        uint32_t k = lane + 1;                                     /* plane between bins lane, lane+1 */
        if (!(extent > 0.0f) || k >= GPU_BINS) continue;
        float p = bin_plane(lo[a], extent, k);
        if (!(p > lo[a] && p < hi[a])) continue;
        uint32_t nl = below_lo, nr = n - below_hi;
        float cost = kdtree_split_cost(child_area(lo, hi, a, lo[a], p) * inv_area,
                                       child_area(lo, hi, a, p, hi[a]) * inv_area, nl, nr);
        if (cost < best.cost) {
            best.cost = cost;
            best.pos = p;
            best.axis = a;
            best.k = k;
            best.n_left = nl;
            best.n_right = nr;
            candidate = (uint32_t)a * GPU_BINS + k;
        }
    }
    best = warp_best(best, candidate);
    best.exact = 0;
    return best;
}

/* Exact SAH over the bounding-box coordinates of the n <= 32 references,
 * lane i holding reference i's box (lanes >= n hold nothing). */
static __device__ split_decision exact_split(uint32_t n, const float tlo[3], const float thi[3], const float lo[3],
                                             const float hi[3], float inv_area)
{
    uint32_t lane = threadIdx.x & 31u;
    split_decision best;
    best.cost = INFINITY;
    best.axis = -1;
    best.exact = 1;
    best.planar_left = 0;
    best.k = 0;
    best.pos = 0.0f;
    best.n_left = best.n_right = 0;
    uint32_t candidate = UINT32_MAX;
    for (int a = 0; a < 3; a++) {
        if (!(hi[a] > lo[a])) continue;
        /* This lane's two candidates: its reference's low and high side. */
        float cand[2] = {tlo[a], thi[a]};
        uint32_t nl[2] = {0, 0}, nr[2] = {0, 0}, np[2] = {0, 0};
        for (uint32_t j = 0; j < n; j++) {
            float jl = __shfl_sync(FULL_MASK, tlo[a], (int)j);
            float jh = __shfl_sync(FULL_MASK, thi[a], (int)j);
            for (int c = 0; c < 2; c++) {
                if (jl == jh && jl == cand[c]) {
                    np[c]++;
                } else {
                    nl[c] += jl < cand[c];
                    nr[c] += jh > cand[c];
                }
            }
        }
        if (lane >= n) continue;
        for (int c = 0; c < 2; c++) {
            float p = cand[c];
            if (!(p > lo[a] && p < hi[a])) continue;
            float pl = child_area(lo, hi, a, lo[a], p) * inv_area, pr = child_area(lo, hi, a, p, hi[a]) * inv_area;
            float with_left = kdtree_split_cost(pl, pr, nl[c] + np[c], nr[c]);
            float with_right = kdtree_split_cost(pl, pr, nl[c], nr[c] + np[c]);
            int go_left = with_left <= with_right;
            float cost = go_left ? with_left : with_right;
            if (cost < best.cost) {
                best.cost = cost;
                best.pos = p;
                best.axis = a;
                best.planar_left = go_left;
                best.n_left = nl[c] + (go_left ? np[c] : 0);
                best.n_right = nr[c] + (go_left ? 0 : np[c]);
                candidate = ((uint32_t)a * 32 + lane) * 2 + (uint32_t)c;
            }
        }
    }
    best = warp_best(best, candidate);
    best.exact = 1;
    return best;
}

/* Which children a reference goes to under a decision: bit 0 left, bit 1 right. */
static __device__ __forceinline__ uint32_t exact_sides(const split_decision *d, float tlo, float thi)
{
    int planar_here = tlo == thi && tlo == d->pos;
    uint32_t left = tlo < d->pos || (planar_here && d->planar_left);
    uint32_t right = thi > d->pos || (planar_here && !d->planar_left);
    return left | right << 1;
}

static __device__ __forceinline__ uint32_t binned_sides(uint32_t k, float tlo, float thi, float lo, float extent,
                                                        float scale)
{
    uint32_t left = bin_of(tlo, lo, extent, scale) < k;
    uint32_t right = bin_of(thi, lo, extent, scale) >= k;
    return left | right << 1;
}

#endif
