/* traverse.h - ray casting through a k-d tree, shared by the CPU and GPU
 * ray casters (compiled as C on the host and as CUDA on the device, with no
 * FMA contraction on either side, so both give the same bits; only where
 * they read a node pair and a leaf's triangles do the two differ).
 *
 * - Triangle test: watertight (Woop, Benthin & Wald 2013).  Brute force and
 *   the tree call the same function, so they agree on every triangle.
 * - Leaves: a leaf's triangles are reference slots [first, first + count)
 *   (trace_scene).  On the GPU a slot's triangle is read from `tris`, a copy
 *   of the triangles' vertices made before a render or a validation
 *   (gpu_render.cu, 48 bytes a triangle): the slot's index, then three
 *   16-byte loads, where refs -> triangles -> positions is a chain of three
 *   dependent reads and thirteen loads.  A leaf's slots name triangles of the
 *   scene (kdtree_check); the gaps between a GPU tree's leaves are never
 *   read.  The CPU reads the chain (its caches hide it) and needs no copy.
 *   Both read the same vertices, so both give the same bits.
 * - Traversal: front-to-back with an explicit stack; a leaf records the
 *   closest hit among its triangles, and the walk stops when the best hit
 *   lies before the start of the next interval on the stack.  An occlusion
 *   query (kdtree_occluded) walks the same way and stops at any hit.
 * - Rounding: ray/plane distances are computed plane by plane, so a ray
 *   through a point where planes meet (a vertex on a split plane, say) can
 *   get intervals that miss each other by an ulp.  Every decision is
 *   therefore widened by TRAVERSE_EPS (relative): a child whose interval is
 *   within rounding of the ray's is visited.
 */
#ifndef KDA_TRAVERSE_H
#define KDA_TRAVERSE_H

#include <math.h>
#include <stdint.h>

#include "kdtree.h"

#define TRAVERSE_STACK 64 /* > the depth limit of kdtree_max_depth (60) */
#define TRAVERSE_EPS 2e-6f /* relative widening of ray intervals, ~16 ulps */
#define RAY_NO_HIT 0xffffffffu

typedef struct ray {
    float o[3], d[3];
} ray;

typedef struct ray_hit {
    float t;        /* distance along d (d is unit length for camera rays) */
    uint32_t tri;   /* RAY_NO_HIT when the ray hits nothing */
    uint32_t steps; /* inner nodes visited */
    uint32_t tests; /* ray/triangle tests */
} ray_hit;

/* Per-ray constants of the watertight test: kz is the axis the ray runs
 * along most, x and y the two after it in turn.  The paper swaps x and y
 * where d[kz] < 0 to keep the triangles' winding; no answer here depends on
 * the winding (a swap negates u, v, w, the determinant and the scaled
 * distance exactly, and the test takes their signs together), so kz alone
 * names the axes. */
typedef struct ray_shear {
    int kz;
    float sx, sy, sz;
} ray_shear;

static inline KD_HD ray_shear ray_make_shear(const ray *r)
{
    ray_shear s;
    float ax = fabsf(r->d[0]), ay = fabsf(r->d[1]), az = fabsf(r->d[2]);
    s.kz = (ax > ay) ? (ax > az ? 0 : 2) : (ay > az ? 1 : 2);
    float dz = kdtree_pick(r->d, s.kz);
    s.sx = kdtree_pick(r->d, (s.kz + 1) % 3) / dz;
    s.sy = kdtree_pick(r->d, (s.kz + 2) % 3) / dz;
    s.sz = 1.0f / dz;
    return s;
}

/* The watertight test with its axes known at compile time: ray_triangle
 * calls it once per value of kz, so every kdtree_pick below is a plain
 * register read (picks with run-time axes were nine selects a test, a
 * seventh of a render's instructions).  A warp whose rays run along
 * different axes takes the cases in turn; camera and shadow rays of one
 * warp nearly always share kz. */
static inline KD_HD int ray_triangle_axes(const ray *r, const ray_shear *s, const float *v0, const float *v1,
                                          const float *v2, float t_max, float *t, int kx, int ky, int kz)
{
    float a[3] = {v0[0] - r->o[0], v0[1] - r->o[1], v0[2] - r->o[2]};
    float b[3] = {v1[0] - r->o[0], v1[1] - r->o[1], v1[2] - r->o[2]};
    float c[3] = {v2[0] - r->o[0], v2[1] - r->o[1], v2[2] - r->o[2]};
    float az0 = kdtree_pick(a, kz), bz0 = kdtree_pick(b, kz), cz0 = kdtree_pick(c, kz);
    float ax = kdtree_pick(a, kx) - s->sx * az0, ay = kdtree_pick(a, ky) - s->sy * az0;
    float bx = kdtree_pick(b, kx) - s->sx * bz0, by = kdtree_pick(b, ky) - s->sy * bz0;
    float cx = kdtree_pick(c, kx) - s->sx * cz0, cy = kdtree_pick(c, ky) - s->sy * cz0;
    float u = cx * by - cy * bx;
    float v = ax * cy - ay * cx;
    float w = bx * ay - by * ax;
    if (u == 0.0f || v == 0.0f || w == 0.0f) { /* on an edge: decide in double */
        u = (float)((double)cx * (double)by - (double)cy * (double)bx);
        v = (float)((double)ax * (double)cy - (double)ay * (double)cx);
        w = (float)((double)bx * (double)ay - (double)by * (double)ax);
    }
    if ((u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f)) return 0;
    float det = u + v + w;
    if (det == 0.0f) return 0;
    float az = s->sz * az0, bz = s->sz * bz0, cz = s->sz * cz0;
    float tt = u * az + v * bz + w * cz;
    if (det < 0.0f) {
        tt = -tt;
        det = -det;
    }
    if (tt <= 0.0f || tt >= t_max * det) return 0;
    *t = tt / det;
    return *t > 0.0f && *t < t_max;
}

/* Watertight ray/triangle test.  Returns 1 and sets *t when the ray hits
 * the triangle at 0 < t < t_max. */
static inline KD_HD int ray_triangle(const ray *r, const ray_shear *s, const float *v0, const float *v1,
                                     const float *v2, float t_max, float *t)
{
    switch (s->kz) {
    case 0: return ray_triangle_axes(r, s, v0, v1, v2, t_max, t, 1, 2, 0);
    case 1: return ray_triangle_axes(r, s, v0, v1, v2, t_max, t, 2, 0, 1);
    default: return ray_triangle_axes(r, s, v0, v1, v2, t_max, t, 0, 1, 2);
    }
}

/* Clips the ray to a box; returns 0 when it misses. */
static inline KD_HD int ray_box(const ray *r, const float inv_d[3], const float lo[3], const float hi[3],
                                float *t0, float *t1)
{
    float tmin = 0.0f, tmax = INFINITY;
    for (int a = 0; a < 3; a++) {
        float tn = (lo[a] - r->o[a]) * inv_d[a];
        float tf = (hi[a] - r->o[a]) * inv_d[a];
        if (tn > tf) {
            float k = tn;
            tn = tf;
            tf = k;
        }
        /* (x - o) * inf is NaN when the ray lies in the slab's plane: the
         * comparisons below then leave the interval unchanged. */
        if (tn > tmin) tmin = tn;
        if (tf < tmax) tmax = tf;
    }
    *t0 = tmin * (1.0f - TRAVERSE_EPS);
    *t1 = tmax * (1.0f + TRAVERSE_EPS);
    return *t0 <= *t1;
}

static inline KD_HD void triangle_vertices(const float *positions, const uint32_t *triangles, uint32_t tri,
                                           const float **v0, const float **v1, const float **v2)
{
    *v0 = positions + 3 * (size_t)triangles[3 * (size_t)tri + 0];
    *v1 = positions + 3 * (size_t)triangles[3 * (size_t)tri + 1];
    *v2 = positions + 3 * (size_t)triangles[3 * (size_t)tri + 2];
}

/* A triangle in the GPU's copy: its three vertices, each padded to 16
 * bytes (the fourth word unused), read as three 16-byte words. */
typedef struct trace_tri {
    KDTREE_ALIGN(16) float v0[4];
    float v1[4], v2[4];
} trace_tri;

/* What a ray is cast through: the tree (nodes, refs, its box) and the
 * scene's triangles.  `tris`: the GPU's copy of the triangles, indexed by
 * triangle (NULL on the CPU, which does not read it). */
typedef struct trace_scene {
    const kdtree_node *nodes;
    const uint32_t *refs;
    const float *positions;
    const uint32_t *triangles;
    float lo[3], hi[3];
    const trace_tri *tris;
} trace_scene;

/* A host tree and its scene, to cast rays through on the CPU. */
static inline trace_scene trace_scene_of(const kdtree *t, const scene *s)
{
    trace_scene ts;
    ts.nodes = t->nodes;
    ts.refs = t->refs;
    ts.positions = s->positions;
    ts.triangles = s->triangles;
    ts.tris = NULL;
    for (int a = 0; a < 3; a++) {
        ts.lo[a] = t->lo[a];
        ts.hi[a] = t->hi[a];
    }
    return ts;
}

/* Slot k's triangle: its vertices into v0..v2; returns its index. */
static inline KD_HD uint32_t leaf_triangle(const trace_scene *ts, uint32_t k, float v0[3], float v1[3], float v2[3])
{
    uint32_t tri = ts->refs[k];
#ifdef __CUDA_ARCH__
    const float4 *p = (const float4 *)(const void *)(ts->tris + tri);
    float4 a = p[0], b = p[1], c = p[2];
    v0[0] = a.x;
    v0[1] = a.y;
    v0[2] = a.z;
    v1[0] = b.x;
    v1[1] = b.y;
    v1[2] = b.z;
    v2[0] = c.x;
    v2[1] = c.y;
    v2[2] = c.z;
#else
    const float *p0, *p1, *p2;
    triangle_vertices(ts->positions, ts->triangles, tri, &p0, &p1, &p2);
    for (int i = 0; i < 3; i++) {
        v0[i] = p0[i];
        v1[i] = p1[i];
        v2[i] = p2[i];
    }
#endif
    return tri;
}

typedef struct trace_item {
    uint32_t node;
    float t0, t1;
} trace_item;

static inline KD_HD void trace_push(trace_item *stack, int *sp, uint32_t node, float t0, float t1)
{
    stack[*sp].node = node;
    stack[*sp].t0 = t0;
    stack[*sp].t1 = t1;
    (*sp)++;
}

/* Both children of an inner node (at left and left + 1).  On the GPU one
 * 16-byte load: a device tree's pairs are 16-byte aligned (gpu_nodes.cuh). */
static inline KD_HD void trace_children(const kdtree_node *nodes, uint32_t left, kdtree_node kid[2])
{
#ifdef __CUDA_ARCH__
    uint4 v = *(const uint4 *)(const void *)(nodes + left);
    kid[0].header = v.x;
    kid[0].first = v.y;
    kid[1].header = v.z;
    kid[1].first = v.w;
#else
    kid[0] = nodes[left];
    kid[1] = nodes[left + 1];
#endif
}

/* Descends from `node` with the ray's interval [*t0, *t1] to a leaf, front
 * to back: the far child of a node whose plane the interval crosses goes
 * on the stack with its part of the interval.  The leaf's node goes to
 * *leaf. */
static inline KD_HD void trace_descend(const kdtree_node *nodes, const ray *r, const float inv_d[3],
                                       trace_item *stack, int *sp, uint32_t node, float *t0, float *t1,
                                       uint32_t *steps, kdtree_node *leaf)
{
    kdtree_node n = nodes[node];
    while (!kdtree_is_leaf(n)) {
        (*steps)++;
        /* Both children are read before the walk knows which it takes:
         * the reads then wait out the choice, not the other way round. */
        uint32_t left = kdtree_left(n);
        kdtree_node kid[2];
        trace_children(nodes, left, kid);
        int a = (int)kdtree_axis(n);
        float o = kdtree_pick(r->o, a), d = kdtree_pick(r->d, a), split = n.split;
        int below_first = o < split || (o == split && d <= 0.0f);
        uint32_t first = left + (below_first ? 0u : 1u);
        uint32_t second = left + (below_first ? 1u : 0u);
        if (d == 0.0f) {
            if (o == split) /* ray lies in the plane: both sides touch it */
                trace_push(stack, sp, second, *t0, *t1);
            node = first;
        } else {
            float t_split = (split - o) * kdtree_pick(inv_d, a);
            float t_near_end = t_split * (1.0f + TRAVERSE_EPS), t_far_start = t_split * (1.0f - TRAVERSE_EPS);
            if (t_far_start > *t1 || t_split <= 0.0f) {
                node = first;
            } else if (t_near_end < *t0) {
                node = second;
            } else {
                trace_push(stack, sp, second, t_far_start > *t0 ? t_far_start : *t0, *t1);
                node = first;
                if (t_near_end < *t1) *t1 = t_near_end;
            }
        }
        n = node == left ? kid[0] : kid[1];
    }
    *leaf = n;
}

/* Closest hit of the ray through the tree. */
static inline KD_HD ray_hit kdtree_trace(const trace_scene *ts, const ray *r)
{
    ray_hit hit = {INFINITY, RAY_NO_HIT, 0, 0};
    float inv_d[3] = {1.0f / r->d[0], 1.0f / r->d[1], 1.0f / r->d[2]};
    float t0, t1;
    if (!ray_box(r, inv_d, ts->lo, ts->hi, &t0, &t1)) return hit;
    ray_shear shear = ray_make_shear(r);
    trace_item stack[TRAVERSE_STACK];
    int sp = 0;
    uint32_t node = 0;
    for (;;) {
        kdtree_node n;
        trace_descend(ts->nodes, r, inv_d, stack, &sp, node, &t0, &t1, &hit.steps, &n);
        uint32_t count = kdtree_count(n);
        for (uint32_t i = 0; i < count; i++) {
            float v0[3], v1[3], v2[3], t;
            uint32_t tri = leaf_triangle(ts, n.first + i, v0, v1, v2);
            hit.tests++;
            if (ray_triangle(r, &shear, v0, v1, v2, hit.t, &t)) {
                hit.t = t;
                hit.tri = tri;
            }
        }
        /* No early return here: an interval on the stack may overlap this
         * one (a ray lying in a split plane, or widened intervals). */
        if (sp == 0) return hit;
        trace_item it = stack[--sp];
        node = it.node;
        t0 = it.t0;
        t1 = it.t1;
        if (hit.tri != RAY_NO_HIT && hit.t <= t0) return hit;
    }
}

/* Whether the ray hits any triangle at 0 < t < t_max (an occlusion query:
 * shadow and ambient-occlusion rays).  The closest hit's walk, its
 * interval clipped to t_max (widened as every interval is), ended by the
 * first triangle hit: no closest hit is searched for.  The triangle test
 * is the closest hit's, bounded by t_max, so the answer is brute force's
 * (brute_force_occluded). */
static inline KD_HD int kdtree_occluded(const trace_scene *ts, const ray *r, float t_max)
{
    float inv_d[3] = {1.0f / r->d[0], 1.0f / r->d[1], 1.0f / r->d[2]};
    float t0, t1, t_end = t_max * (1.0f + TRAVERSE_EPS);
    if (!ray_box(r, inv_d, ts->lo, ts->hi, &t0, &t1) || t0 > t_end) return 0;
    if (t1 > t_end) t1 = t_end;
    ray_shear shear = ray_make_shear(r);
    trace_item stack[TRAVERSE_STACK];
    int sp = 0;
    uint32_t node = 0, steps = 0;
    for (;;) {
        kdtree_node n;
        trace_descend(ts->nodes, r, inv_d, stack, &sp, node, &t0, &t1, &steps, &n);
        uint32_t count = kdtree_count(n);
        for (uint32_t i = 0; i < count; i++) {
            float v0[3], v1[3], v2[3], t;
            leaf_triangle(ts, n.first + i, v0, v1, v2);
            if (ray_triangle(r, &shear, v0, v1, v2, t_max, &t)) return 1;
        }
        if (sp == 0) return 0;
        trace_item it = stack[--sp];
        node = it.node;
        t0 = it.t0;
        t1 = it.t1;
    }
}

/* Closest hit by testing every triangle: the oracle. */
static inline KD_HD ray_hit brute_force_trace(const float *positions, const uint32_t *triangles,
                                              uint32_t n_triangles, const ray *r)
{
    ray_hit hit = {INFINITY, RAY_NO_HIT, 0, 0};
    ray_shear shear = ray_make_shear(r);
    for (uint32_t tri = 0; tri < n_triangles; tri++) {
        const float *v0, *v1, *v2;
        float t;
        triangle_vertices(positions, triangles, tri, &v0, &v1, &v2);
        if (ray_triangle(r, &shear, v0, v1, v2, hit.t, &t)) {
            hit.t = t;
            hit.tri = tri;
        }
    }
    hit.tests = n_triangles;
    return hit;
}

/* Whether any triangle lies on the ray at 0 < t < t_max, testing every one:
 * the occlusion queries' oracle. */
static inline KD_HD int brute_force_occluded(const float *positions, const uint32_t *triangles, uint32_t n_triangles,
                                             const ray *r, float t_max)
{
    ray_shear shear = ray_make_shear(r);
    for (uint32_t tri = 0; tri < n_triangles; tri++) {
        const float *v0, *v1, *v2;
        float t;
        triangle_vertices(positions, triangles, tri, &v0, &v1, &v2);
        if (ray_triangle(r, &shear, v0, v1, v2, t_max, &t)) return 1;
    }
    return 0;
}

#endif
