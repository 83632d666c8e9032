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
 * Exact splits (nodes of at most EXACT_MAX = 64 references, two per lane)
 * evaluate every bounding-box coordinate as a candidate with the CPU
 * builder's rule: left when tri_lo < split, right when tri_hi > split,
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
#define EXACT_MAX 64         /* two references per lane */
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

static __device__ __forceinline__ uint32_t warp_exclusive_scan(uint32_t v)
{
    uint32_t lane = threadIdx.x & 31u, sum = v;
    for (uint32_t d = 1; d < 32; d <<= 1) {
        uint32_t o = __shfl_up_sync(FULL_MASK, sum, d);
        if (lane >= d) sum += o;
    }
    return sum - v;
}

/* A float's bits as an unsigned key with the same order. */
static __device__ __forceinline__ uint32_t float_order(float f)
{
    uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* Orders candidates: axis, then position, then left before right. */
static __device__ __forceinline__ uint64_t candidate_key(int axis, float pos, int planar_left)
{
    return (uint64_t)axis << 33 | (uint64_t)float_order(pos) << 1 | (uint64_t)(planar_left ? 0 : 1);
}

/* Every lane ends with the cheapest decision of the warp. */
static __device__ __forceinline__ split_decision warp_best(split_decision d, uint64_t key)
{
    for (int off = 16; off > 0; off >>= 1) {
        float oc = __shfl_xor_sync(FULL_MASK, d.cost, off);
        uint64_t okey = __shfl_xor_sync(FULL_MASK, key, off);
        float opos = __shfl_xor_sync(FULL_MASK, d.pos, off);
        int oaxis = __shfl_xor_sync(FULL_MASK, d.axis, off);
        uint32_t ok = __shfl_xor_sync(FULL_MASK, d.k, off);
        int opl = __shfl_xor_sync(FULL_MASK, d.planar_left, off);
        uint32_t onl = __shfl_xor_sync(FULL_MASK, d.n_left, off);
        uint32_t onr = __shfl_xor_sync(FULL_MASK, d.n_right, off);
        if (oc < d.cost || (oc == d.cost && okey < key)) {
            d.cost = oc;
            d.pos = opos;
            d.axis = oaxis;
            d.k = ok;
            d.planar_left = opl;
            d.n_left = onl;
            d.n_right = onr;
            key = okey;
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
                                              const float hi[3], float inv_area)
{
    uint32_t lane = threadIdx.x & 31u;
    split_decision best = no_split(0);
    uint64_t best_key = UINT64_MAX;
    for (int a = 0; a < 3; a++) {
        float extent = hi[a] - lo[a];
        uint32_t run_lo[BINS_PER_LANE], run_hi[BINS_PER_LANE], sum_lo = 0, sum_hi = 0;
        for (int i = 0; i < BINS_PER_LANE; i++) {
            sum_lo += bins[0][a][lane * BINS_PER_LANE + i];
            sum_hi += bins[1][a][lane * BINS_PER_LANE + i];
            run_lo[i] = sum_lo;
            run_hi[i] = sum_hi;
        }
        uint32_t before_lo = warp_exclusive_scan(sum_lo), before_hi = warp_exclusive_scan(sum_hi);
        if (!(extent > 0.0f)) continue;
        for (int i = 0; i < BINS_PER_LANE; i++) {
            uint32_t k = lane * BINS_PER_LANE + (uint32_t)i + 1; /* plane above bin k-1 */
            if (k >= GPU_BINS) continue;
            float p = bin_plane(lo[a], extent, k);
            if (!(p > lo[a] && p < hi[a])) continue;
            uint32_t nl = before_lo + run_lo[i];     /* tri_lo in bins < k */
            uint32_t nr = n - (before_hi + run_hi[i]); /* tri_hi in bins >= k */
            float cost = kdtree_split_cost(child_area(lo, hi, a, lo[a], p) * inv_area,
                                           child_area(lo, hi, a, p, hi[a]) * inv_area, nl, nr);
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
    return warp_best(best, best_key);
}

/* A reference's box as one lane holds it for the exact split. */
typedef struct lane_box {
    float lo[3], hi[3];
} lane_box;

/* Exact SAH over the box coordinates of n <= 64 references: lane l holds
 * reference l in box[0] and reference l + 32 in box[1] (when they exist). */
static __device__ split_decision exact_split(uint32_t n, const lane_box box[2], const float lo[3], const float hi[3],
                                             float inv_area)
{
    uint32_t lane = threadIdx.x & 31u;
    split_decision best = no_split(1);
    uint64_t best_key = UINT64_MAX;
    for (int a = 0; a < 3; a++) {
        if (!(hi[a] > lo[a])) continue;
        /* This lane's candidates: the low and high sides of its references. */
        float cand[4] = {box[0].lo[a], box[0].hi[a], box[1].lo[a], box[1].hi[a]};
        uint32_t nl[4] = {0, 0, 0, 0}, nr[4] = {0, 0, 0, 0}, np[4] = {0, 0, 0, 0};
        for (int s = 0; s < 2; s++) {
            uint32_t count = n > 32u * (uint32_t)s ? min(32u, n - 32u * (uint32_t)s) : 0u;
            for (uint32_t j = 0; j < count; j++) {
                float jl = __shfl_sync(FULL_MASK, box[s].lo[a], (int)j);
                float jh = __shfl_sync(FULL_MASK, box[s].hi[a], (int)j);
                for (int c = 0; c < 4; c++) {
                    if (jl == jh && jl == cand[c]) {
                        np[c]++;
                    } else {
                        nl[c] += jl < cand[c];
                        nr[c] += jh > cand[c];
                    }
                }
            }
        }
        for (int c = 0; c < 4; c++) {
            if (lane + 32u * (uint32_t)(c / 2) >= n) continue;
            float p = cand[c];
            if (!(p > lo[a] && p < hi[a])) continue;
            float pl = child_area(lo, hi, a, lo[a], p) * inv_area, pr = child_area(lo, hi, a, p, hi[a]) * inv_area;
            for (int side = 1; side >= 0; side--) { /* planar triangles left, then right */
                float cost = kdtree_split_cost(pl, pr, nl[c] + (side ? np[c] : 0), nr[c] + (side ? 0 : np[c]));
                uint64_t key = candidate_key(a, p, side);
                if (cost < best.cost || (cost == best.cost && key < best_key)) {
                    best.cost = cost;
                    best.pos = p;
                    best.axis = a;
                    best.planar_left = side;
                    best.n_left = nl[c] + (side ? np[c] : 0);
                    best.n_right = nr[c] + (side ? 0 : np[c]);
                    best_key = key;
                }
            }
        }
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

static __device__ __forceinline__ uint32_t binned_sides(uint32_t k, float tlo, float thi, float lo, float extent,
                                                        float scale)
{
    uint32_t left = bin_of(tlo, lo, extent, scale) < k;
    uint32_t right = bin_of(thi, lo, extent, scale) >= k;
    return left | right << 1;
}

#endif
