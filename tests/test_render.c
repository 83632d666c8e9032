/* test_render.c - the ray caster (render/): triangle test, traversal,
 * camera and images, each against an oracle of its own:
 *   - ray_triangle: hand-made triangles whose hit distance is exact in
 *     float, and shared edges aimed at through points that are exact in
 *     float (a watertight test never lets such a ray through);
 *   - kdtree_trace: brute_force_trace over every triangle, for random rays
 *     of several kinds (among them rays aimed exactly at the meshes'
 *     vertices and edges) through CPU trees of procedural and real scenes,
 *     for hand-made trees with known answers, and validate_camera_rays_cpu;
 *     a deliberately corrupted tree shows that the comparison does catch a
 *     broken tree;
 *   - a closed mesh built here: rays from inside it must always hit it;
 *   - images: brute force decides which pixels show the scene, stb_image
 *     reads the PNG back, the heat maps' per-pixel counts are recomputed
 *     with kdtree_trace, and camera_frame is checked by projecting the box
 *     corners with this file's own vector algebra. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

#include "kdtree.h"
#include "render.h"
#include "scene.h"
#include "shade.h"
#include "traverse.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_render_" file
#define PI_F 3.14159265f

/* ------------------------------------------------------------------------
 * Deterministic random numbers (splitmix64)
 * ------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *g)
{
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), a multiple of 2^-24. */
static float rng_unit(rng *g) { return (float)(rng_next(g) >> 40) * 0x1p-24f; }

static float rng_range(rng *g, float lo, float hi) { return lo + (hi - lo) * rng_unit(g); }

static uint32_t rng_below(rng *g, uint32_t n) { return (uint32_t)(rng_next(g) % n); }

/* A multiple of 2^-8 in [lo, hi): few enough bits that sums and
 * differences of such numbers stay exact in float. */
static float rng_dyadic(rng *g, int lo, int hi)
{
    return (float)lo + (float)rng_below(g, (uint32_t)(hi - lo) * 256u) / 256.0f;
}

/* Uniform on the unit sphere (z uniform, longitude uniform). */
static void rng_direction(rng *g, float d[3])
{
    float z = rng_range(g, -1.0f, 1.0f), phi = rng_range(g, 0.0f, 2.0f * PI_F);
    float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    d[0] = r * cosf(phi);
    d[1] = r * sinf(phi);
    d[2] = z;
}

static void rng_point_in_box(rng *g, const float lo[3], const float hi[3], float p[3])
{
    for (int a = 0; a < 3; a++) p[a] = rng_range(g, lo[a], hi[a]);
}

/* ------------------------------------------------------------------------
 * Vector helpers
 * ------------------------------------------------------------------------ */

static void normalize3(float v[3])
{
    float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++) v[a] /= len;
}

static float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const float a[3], const float b[3], float c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static float box_diagonal(const float lo[3], const float hi[3])
{
    float d = 0.0f;
    for (int a = 0; a < 3; a++) d += (hi[a] - lo[a]) * (hi[a] - lo[a]);
    return sqrtf(d);
}

static void box_center(const float lo[3], const float hi[3], float c[3])
{
    for (int a = 0; a < 3; a++) c[a] = 0.5f * (lo[a] + hi[a]);
}

/* ------------------------------------------------------------------------
 * Scenes and trees
 * ------------------------------------------------------------------------ */

static scene generated_scene(const char *name, uint64_t n_triangles)
{
    scene s;
    char err[512];
    cr_assert_eq(scene_generate(name, n_triangles, &s, err, sizeof err), 0,
                 "built-in scene \"%s\" is required by this test: %s", name, err);
    return s;
}

/* Loads KDA_SHARED_SCENES/<name>.obj.gz; a missing file fails the test. */
static scene real_scene(const char *name)
{
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/%s.obj.gz", KDA_SHARED_SCENES, name);
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "real scene \"%s\" is required by this test: %s",
                 name, err);
    return s;
}

static kdtree build_tree(const scene *s)
{
    kdtree t;
    char err[512];
    cr_assert_eq(kdtree_build_cpu(s, &t, NULL, err, sizeof err), 0, "kdtree_build_cpu: %s", err);
    return t;
}

static ray_hit trace_tree(const kdtree *t, const scene *s, const ray *r)
{
    return kdtree_trace(t->nodes, t->refs, t->lo, t->hi, s->positions, s->triangles, r);
}

/* A camera that shows the whole scene from outside. */
static camera framed_camera(const scene *s, uint32_t width, uint32_t height)
{
    camera c = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, width, height};
    camera_frame(s->lo, s->hi, &c);
    return c;
}

/* ------------------------------------------------------------------------
 * Ray/triangle test on hand-made triangles
 * ------------------------------------------------------------------------ */

/* ray_triangle on one ray; returns whether it hits, and the distance. */
static int hit_triangle(const float o[3], const float d[3], const float v0[3], const float v1[3],
                        const float v2[3], float t_max, float *t)
{
    ray r = {{o[0], o[1], o[2]}, {d[0], d[1], d[2]}};
    ray_shear sh = ray_make_shear(&r);
    *t = NAN;
    return ray_triangle(&r, &sh, v0, v1, v2, t_max, t);
}

static const float TRI_V0[3] = {0, 0, 5}, TRI_V1[3] = {1, 0, 5}, TRI_V2[3] = {0, 1, 5};

Test(ray_triangle, hits_at_the_exact_distance)
{
    float t;
    cr_assert(hit_triangle((float[]){0.25f, 0.25f, 0}, (float[]){0, 0, 1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    cr_expect_eq(t, 5.0f, "t = %.9g, want 5", t);
    /* t is in units of |d|: a direction of length 2 halves it. */
    cr_assert(hit_triangle((float[]){0.25f, 0.25f, 0}, (float[]){0, 0, 2}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    cr_expect_eq(t, 2.5f, "t = %.9g, want 2.5", t);
    /* A tilted triangle, z = 4 + x: the ray along z at x = 0.5 meets it at 4.5. */
    cr_assert(hit_triangle((float[]){0.5f, 0.5f, 0}, (float[]){0, 0, 1}, (float[]){0, 0, 4}, (float[]){2, 0, 6},
                           (float[]){0, 2, 4}, INFINITY, &t));
    cr_expect_float_eq(t, 4.5f, 4.5f * 1e-6f, "t = %.9g, want 4.5", t);
}

Test(ray_triangle, every_axis_and_sign)
{
    /* The triangle in the plane x[a] = 3 with the other two coordinates
     * forming a right triangle at the origin, hit along +a and -a. */
    for (int a = 0; a < 3; a++)
        for (int sign = -1; sign <= 1; sign += 2) {
            int b = (a + 1) % 3, c = (a + 2) % 3;
            float v0[3] = {0}, v1[3] = {0}, v2[3] = {0}, o[3] = {0}, d[3] = {0};
            v0[a] = v1[a] = v2[a] = 3.0f;
            v1[b] = 2.0f;
            v2[c] = 2.0f;
            o[a] = sign > 0 ? -1.0f : 10.0f;
            o[b] = o[c] = 0.5f;
            d[a] = (float)sign;
            float t;
            cr_assert(hit_triangle(o, d, v0, v1, v2, INFINITY, &t), "axis %d sign %d: miss", a, sign);
            cr_expect_eq(t, sign > 0 ? 4.0f : 7.0f, "axis %d sign %d: t = %.9g", a, sign, t);
        }
}

Test(ray_triangle, misses)
{
    float t;
    /* Beside the triangle (beyond its hypotenuse). */
    cr_expect_not(hit_triangle((float[]){0.6f, 0.6f, 0}, (float[]){0, 0, 1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    /* Pointing away: the plane is behind the origin. */
    cr_expect_not(hit_triangle((float[]){0.25f, 0.25f, 0}, (float[]){0, 0, -1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    /* The origin is beyond the triangle. */
    cr_expect_not(hit_triangle((float[]){0.25f, 0.25f, 6}, (float[]){0, 0, 1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
}

Test(ray_triangle, respects_t_max)
{
    float t;
    const float o[3] = {0.25f, 0.25f, 0}, d[3] = {0, 0, 1};
    cr_expect_not(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, 4.0f, &t), "hit before t_max = 4");
    cr_expect_not(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, 5.0f, &t), "t_max is exclusive");
    cr_expect(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, nextafterf(5.0f, INFINITY), &t));
    cr_expect_eq(t, 5.0f);
}

Test(ray_triangle, parallel_rays_miss)
{
    float t;
    /* Above the plane, parallel to it, passing over the triangle. */
    cr_expect_not(hit_triangle((float[]){-1, 0.25f, 4}, (float[]){1, 0, 0}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    /* In the plane itself, crossing the triangle: no proper hit either. */
    cr_expect_not(hit_triangle((float[]){-1, 0.25f, 5}, (float[]){1, 0, 0}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    cr_expect_not(hit_triangle((float[]){-1, -1, 5}, (float[]){1, 1, 0}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
}

Test(ray_triangle, back_faces_are_hit)
{
    float t, t_back;
    const float o[3] = {0.25f, 0.25f, 10}, d[3] = {0, 0, -1};
    cr_assert(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t), "back face culled");
    cr_expect_eq(t, 5.0f);
    /* Reversed winding, same ray: the same hit. */
    cr_assert(hit_triangle(o, d, TRI_V0, TRI_V2, TRI_V1, INFINITY, &t_back));
    cr_expect_eq(t_back, t);
}

/* A folded quad P0 P1 P2 P3 split along the diagonal P0-P2 into (P0, P1, P2)
 * and (P0, P2, P3).  Every coordinate is a small dyadic number, so points
 * P0 + k/1024 (P2 - P0) on the shared edge and the directions toward them
 * from dyadic origins are exact in float.  The triangles slope by at most
 * 0.15 and every ray from quad_origin by at least 0.2, so no ray sees the
 * fold edge-on: around the edge, the two triangles cover both sides. */
static const float QUAD_P0[3] = {-1, -1, 0}, QUAD_P1[3] = {1, -1, -0.0625f}, QUAD_P2[3] = {1, 1, 0.125f},
                   QUAD_P3[3] = {-1, 1, 0.25f};

static int hits_quad(const float o[3], const float target[3])
{
    float d[3], t;
    for (int a = 0; a < 3; a++) d[a] = target[a] - o[a];
    return hit_triangle(o, d, QUAD_P0, QUAD_P1, QUAD_P2, INFINITY, &t) ||
           hit_triangle(o, d, QUAD_P0, QUAD_P2, QUAD_P3, INFINITY, &t);
}

/* An origin 2 to 6 units above or below the quad, anywhere over [-4, 4]^2. */
static void quad_origin(rng *g, int i, float o[3])
{
    o[0] = rng_dyadic(g, -4, 4);
    o[1] = rng_dyadic(g, -4, 4);
    o[2] = (i % 2 ? 1.0f : -1.0f) * rng_dyadic(g, 2, 6);
}

Test(ray_triangle, watertight_on_a_shared_edge)
{
    rng g = {1};
    int leaks = 0, first_leak = -1;
    float first_o[3] = {0}, first_p[3] = {0};
    for (int i = 0; i < 10000; i++) {
        float o[3], p[3];
        quad_origin(&g, i, o);
        /* Inside the edge: its ends are corners of the quad's outline,
         * where a ray may rightly pass outside both triangles. */
        float s = (float)(1 + rng_below(&g, 1023)) / 1024.0f;
        for (int a = 0; a < 3; a++) p[a] = QUAD_P0[a] + s * (QUAD_P2[a] - QUAD_P0[a]);
        if (!hits_quad(o, p) && leaks++ == 0) {
            first_leak = i;
            memcpy(first_o, o, sizeof o);
            memcpy(first_p, p, sizeof p);
        }
    }
    cr_expect_eq(leaks, 0,
                 "%d of 10000 rays aimed at the shared edge hit neither triangle; first: ray %d from "
                 "(%a, %a, %a) toward (%a, %a, %a)",
                 leaks, first_leak, first_o[0], first_o[1], first_o[2], first_p[0], first_p[1], first_p[2]);
}

/* A closed fan of six triangles around a centre vertex, not planar but, as
 * the quad, flatter than any ray from quad_origin. */
static const float FAN_CENTER[3] = {0.25f, -0.125f, 0.5f};
static const float FAN_RIM[6][3] = {{2, 0, 0.5625f},  {1, 2, 0.4375f},  {-1, 2, 0.5625f},
                                    {-2, 0, 0.4375f}, {-1, -2, 0.5f}, {1, -2, 0.53125f}};

static int hits_fan(const float o[3], const float target[3])
{
    float d[3], t;
    for (int a = 0; a < 3; a++) d[a] = target[a] - o[a];
    int hit = 0;
    for (int k = 0; k < 6; k++) hit |= hit_triangle(o, d, FAN_CENTER, FAN_RIM[k], FAN_RIM[(k + 1) % 6], INFINITY, &t);
    return hit;
}

Test(ray_triangle, watertight_at_a_shared_vertex_and_spokes)
{
    rng g = {2};
    int vertex_leaks = 0, spoke_leaks = 0;
    for (int i = 0; i < 10000; i++) {
        float o[3], p[3];
        quad_origin(&g, i, o);
        vertex_leaks += !hits_fan(o, FAN_CENTER);
        const float *rim = FAN_RIM[rng_below(&g, 6)];
        float s = (float)(1 + rng_below(&g, 1023)) / 1024.0f;
        for (int a = 0; a < 3; a++) p[a] = FAN_CENTER[a] + s * (rim[a] - FAN_CENTER[a]);
        spoke_leaks += !hits_fan(o, p);
    }
    cr_expect_eq(vertex_leaks, 0, "%d of 10000 rays aimed at the centre of a closed fan hit none of it",
                 vertex_leaks);
    cr_expect_eq(spoke_leaks, 0, "%d of 10000 rays aimed at a spoke of a closed fan hit none of it", spoke_leaks);
}

/* ------------------------------------------------------------------------
 * Traversal against brute force
 * ------------------------------------------------------------------------ */

typedef enum ray_kind {
    KIND_INSIDE,         /* origin in the scene box, direction uniform */
    KIND_OUTSIDE_AIMED,  /* origin outside, aimed at a point of the box */
    KIND_OUTSIDE_ANY,    /* origin outside, direction uniform */
    KIND_AXIS_PARALLEL,  /* one or two direction components exactly zero */
    KIND_ON_ROOT_SPLIT,  /* origin exactly on the root's splitting plane */
    KIND_ON_INNER_SPLIT, /* origin exactly on some inner node's plane */
    KIND_IN_SPLIT_PLANE, /* lying in the root's plane (zero component there) */
    KIND_GENERAL_COUNT,
    KIND_AT_VERTEX = KIND_GENERAL_COUNT, /* aimed exactly at a vertex */
    KIND_AT_EDGE,                        /* aimed at a point of an edge */
    KIND_COUNT
} ray_kind;

static const char *const KIND_NAMES[KIND_COUNT] = {
    "inside", "outside, aimed", "outside", "axis-parallel", "on the root plane", "on an inner plane",
    "in the root plane", "at a vertex", "at an edge"};

/* What the random rays need to know about a tree. */
typedef struct ray_source {
    const kdtree *tree;
    const scene *s;
    uint32_t *inner; /* indices of the inner nodes */
    uint32_t n_inner;
    float center[3], radius;
} ray_source;

static ray_source ray_source_make(const kdtree *t, const scene *s)
{
    ray_source src = {t, s, malloc(sizeof(uint32_t) * t->n_nodes), 0, {0}, 0};
    cr_assert_not_null(src.inner);
    for (uint32_t i = 0; i < t->n_nodes; i++)
        if (!kdtree_is_leaf(t->nodes[i])) src.inner[src.n_inner++] = i;
    box_center(t->lo, t->hi, src.center);
    src.radius = box_diagonal(t->lo, t->hi);
    if (src.radius == 0.0f) src.radius = 1.0f;
    return src;
}

static void point_outside(rng *g, const ray_source *src, float o[3])
{
    float d[3];
    rng_direction(g, d);
    for (int a = 0; a < 3; a++) o[a] = src->center[a] + 1.5f * src->radius * d[a];
}

static void aim_at(const float o[3], const float target[3], float d[3])
{
    for (int a = 0; a < 3; a++) d[a] = target[a] - o[a];
    normalize3(d);
}

/* An origin in the box lying on the plane of inner node `node`, with a
 * uniform direction, or (in_plane) one lying in the plane.  A tree that is
 * one leaf (no split can separate the triangles) has no planes: the plane
 * through the box's centre across its longest axis stands in. */
static void ray_on_plane(rng *g, const ray_source *src, uint32_t node, int in_plane, ray *r)
{
    const kdtree *t = src->tree;
    uint32_t axis = 0;
    float split;
    if (src->n_inner) {
        axis = kdtree_axis(t->nodes[node]);
        split = t->nodes[node].split;
    } else {
        for (uint32_t a = 1; a < 3; a++)
            if (t->hi[a] - t->lo[a] > t->hi[axis] - t->lo[axis]) axis = a;
        split = src->center[axis];
    }
    rng_point_in_box(g, t->lo, t->hi, r->o);
    r->o[axis] = split;
    rng_direction(g, r->d);
    if (in_plane) {
        r->d[axis] = 0.0f;
        normalize3(r->d);
    }
}

/* A ray from outside or inside the box toward a vertex of a random
 * triangle, or toward a point of one of its edges. */
static void ray_at_mesh(rng *g, const ray_source *src, int on_edge, ray *r)
{
    const scene *s = src->s;
    const uint32_t *tri = s->triangles + 3 * (size_t)rng_below(g, s->n_triangles);
    uint32_t k = rng_below(g, 3);
    const float *v0 = s->positions + 3 * (size_t)tri[k], *v1 = s->positions + 3 * (size_t)tri[(k + 1) % 3];
    float target[3], w = on_edge ? rng_unit(g) : 0.0f;
    for (int a = 0; a < 3; a++) target[a] = v0[a] + w * (v1[a] - v0[a]);
    if (rng_below(g, 2)) point_outside(g, src, r->o);
    else rng_point_in_box(g, src->tree->lo, src->tree->hi, r->o);
    aim_at(r->o, target, r->d);
}

static ray random_ray(rng *g, const ray_source *src, ray_kind kind)
{
    const kdtree *t = src->tree;
    ray r = {{0, 0, 0}, {0, 0, 0}};
    float p[3];
    switch (kind) {
    case KIND_INSIDE:
        rng_point_in_box(g, t->lo, t->hi, r.o);
        rng_direction(g, r.d);
        break;
    case KIND_OUTSIDE_AIMED:
        point_outside(g, src, r.o);
        rng_point_in_box(g, t->lo, t->hi, p);
        aim_at(r.o, p, r.d);
        break;
    case KIND_OUTSIDE_ANY:
        point_outside(g, src, r.o);
        rng_direction(g, r.d);
        break;
    case KIND_AXIS_PARALLEL: {
        rng_point_in_box(g, t->lo, t->hi, r.o);
        int zero = (int)rng_below(g, 3);
        rng_direction(g, r.d);
        r.d[zero] = 0.0f;
        if (rng_below(g, 2)) r.d[(zero + 1) % 3] = 0.0f; /* along one axis */
        if (r.d[0] == 0.0f && r.d[1] == 0.0f && r.d[2] == 0.0f) r.d[(zero + 2) % 3] = 1.0f;
        normalize3(r.d);
        break;
    }
    case KIND_ON_ROOT_SPLIT: ray_on_plane(g, src, 0, 0, &r); break;
    case KIND_ON_INNER_SPLIT:
        ray_on_plane(g, src, src->n_inner ? src->inner[rng_below(g, src->n_inner)] : 0, 0, &r);
        break;
    case KIND_IN_SPLIT_PLANE: ray_on_plane(g, src, 0, 1, &r); break;
    case KIND_AT_VERTEX: ray_at_mesh(g, src, 0, &r); break;
    case KIND_AT_EDGE: ray_at_mesh(g, src, 1, &r); break;
    default: cr_assert_fail("bad ray kind %d", (int)kind);
    }
    return r;
}

/* Tree-versus-brute-force comparisons, remembering the first bad ray. */
typedef struct ray_check {
    validation v;
    uint64_t on_surface; /* rays left out: they start on a triangle */
    float surface_eps;   /* brute-force hits closer than this count as that */
    uint64_t mismatches_by_kind[KIND_COUNT];
    ray first_bad;
    ray_kind first_bad_kind;
} ray_check;

static ray_check ray_check_make(const kdtree *t)
{
    ray_check c = {.first_bad_kind = KIND_COUNT};
    c.surface_eps = 1e-5f * box_diagonal(t->lo, t->hi);
    return c;
}

/* A ray that starts on a triangle has no well-defined closest hit: the
 * triangle under it is "hit" at a distance of rounding noise, or not, so
 * such rays are counted apart and not compared. */
static void check_ray(ray_check *c, const kdtree *t, const scene *s, const ray *r, ray_kind kind)
{
    ray_hit brute = brute_force_trace(s->positions, s->triangles, s->n_triangles, r);
    if (brute.tri != RAY_NO_HIT && brute.t < c->surface_eps) {
        c->on_surface++;
        return;
    }
    ray_hit tree = trace_tree(t, s, r);
    uint64_t before = c->v.mismatches;
    validation_record(&c->v, c->v.rays, tree.tri, tree.t, brute.tri, brute.t);
    c->mismatches_by_kind[kind] += c->v.mismatches - before;
    if (c->v.mismatches == 1 && c->first_bad_kind == KIND_COUNT) {
        c->first_bad = *r;
        c->first_bad_kind = kind;
    }
}

static void expect_no_mismatch(const ray_check *c, const char *label)
{
    char by_kind[512] = "";
    for (int k = 0; k < KIND_COUNT; k++)
        if (c->mismatches_by_kind[k])
            snprintf(by_kind + strlen(by_kind), sizeof by_kind - strlen(by_kind), " %s: %llu;", KIND_NAMES[k],
                     (unsigned long long)c->mismatches_by_kind[k]);
    const ray *r = &c->first_bad;
    cr_expect_eq(c->v.mismatches, 0,
                 "%s: %llu of %llu rays disagree with brute force (%s )\n  first (%s ray): %s\n"
                 "  o = (%a, %a, %a), d = (%a, %a, %a)",
                 label, (unsigned long long)c->v.mismatches, (unsigned long long)c->v.rays, by_kind,
                 c->first_bad_kind < KIND_COUNT ? KIND_NAMES[c->first_bad_kind] : "?", c->v.first, r->o[0],
                 r->o[1], r->o[2], r->d[0], r->d[1], r->d[2]);
}

/* Brute force costs one ray/triangle test per ray and triangle: each
 * group of rays gets about this many tests, within [min_rays, max_rays]. */
#define BRUTE_FORCE_BUDGET 100000000ull

static uint32_t rays_within_budget(uint32_t n_triangles, uint64_t budget, uint32_t min_rays, uint32_t max_rays)
{
    uint64_t n = budget / n_triangles;
    return n < min_rays ? min_rays : (n > max_rays ? max_rays : (uint32_t)n);
}

/* Casts rays of kinds [first_kind, end_kind) in turn through the tree of s
 * and by brute force; at least half of them must be compared (not start on
 * a triangle). */
static void expect_rays_agree(const scene *s, const char *label, ray_kind first_kind, ray_kind end_kind)
{
    kdtree t = build_tree(s);
    ray_source src = ray_source_make(&t, s);
    ray_check c = ray_check_make(&t);
    rng g = {s->n_triangles + first_kind};
    uint32_t n = rays_within_budget(s->n_triangles, BRUTE_FORCE_BUDGET, 700, 16000);
    uint32_t kinds = (uint32_t)(end_kind - first_kind);
    for (uint32_t i = 0; i < n; i++) {
        ray_kind kind = (ray_kind)(first_kind + i % kinds);
        ray r = random_ray(&g, &src, kind);
        check_ray(&c, &t, s, &r, kind);
    }
    expect_no_mismatch(&c, label);
    cr_expect_geq(c.v.rays, n / 2, "%s: %llu of %u rays start on a triangle: the rays test little", label,
                  (unsigned long long)c.on_surface, n);
    cr_expect_gt(c.v.hits, n / 20, "%s: only %llu of %u rays hit anything: the rays test little", label,
                 (unsigned long long)c.v.hits, n);
    free(src.inner);
    kdtree_free(&t);
}

/* A 64x48 camera framing the scene and one inside the box looking along
 * -z, checked by validate_camera_rays_cpu: every pixel, or for big scenes
 * a sample of at least 400. */
static void expect_camera_rays_agree(const scene *s, const char *label)
{
    kdtree t = build_tree(s);
    char err[512];
    camera views[2] = {framed_camera(s, 64, 48), framed_camera(s, 64, 48)};
    box_center(s->lo, s->hi, views[1].eye);
    memcpy(views[1].target, views[1].eye, sizeof views[1].target);
    views[1].target[2] -= 1.0f;
    uint32_t n = rays_within_budget(s->n_triangles, BRUTE_FORCE_BUDGET / 2, 400, 64 * 48);
    for (int i = 0; i < 2; i++) {
        validation v;
        cr_assert_eq(validate_camera_rays_cpu(&t, s, &views[i], n, &v, err, sizeof err), 0, "%s: %s", label, err);
        cr_expect_eq(v.rays, n, "%s: %llu rays checked, %u asked for", label, (unsigned long long)v.rays, n);
        cr_expect_eq(v.mismatches, 0, "%s, %s camera: %llu mismatches; first: %s", label,
                     i ? "inside" : "framed", (unsigned long long)v.mismatches, v.first);
        if (i == 0) cr_expect_gt(v.hits, 0, "%s: the framed camera sees nothing", label);
    }
    kdtree_free(&t);
}

/* Three tests per scene: general random rays, rays aimed exactly at the
 * mesh's vertices and edges, and camera rays. */
#define SCENE_TESTS(name, make_scene)                                                                       \
    Test(random_rays, name)                                                                                 \
    {                                                                                                       \
        scene s = make_scene;                                                                               \
        expect_rays_agree(&s, #name, KIND_INSIDE, KIND_GENERAL_COUNT);                                      \
        scene_free(&s);                                                                                     \
    }                                                                                                       \
    Test(mesh_rays, name)                                                                                   \
    {                                                                                                       \
        scene s = make_scene;                                                                               \
        expect_rays_agree(&s, #name, KIND_AT_VERTEX, KIND_COUNT);                                           \
        scene_free(&s);                                                                                     \
    }                                                                                                       \
    Test(camera_rays, name)                                                                                 \
    {                                                                                                       \
        scene s = make_scene;                                                                               \
        expect_camera_rays_agree(&s, #name);                                                                \
        scene_free(&s);                                                                                     \
    }

SCENE_TESTS(atrium, generated_scene("atrium", 0))
SCENE_TESTS(spheres, generated_scene("spheres", 20000))
SCENE_TESTS(flat, generated_scene("flat", 20000))
SCENE_TESTS(stacked, generated_scene("stacked", 2000))
SCENE_TESTS(teapot, real_scene("teapot"))
SCENE_TESTS(bunny, real_scene("bunny"))
SCENE_TESTS(sibenik, real_scene("sibenik"))

/* ------------------------------------------------------------------------
 * Traversal: small hand-made cases
 * ------------------------------------------------------------------------ */

static scene obj_scene(const char *text)
{
    scene s;
    char err[512];
    cr_assert_eq(scene_parse_obj(text, strlen(text), "hand-made.obj", &s, err, sizeof err), 0, "%s", err);
    return s;
}

/* Triangle 0 stands on the plane z = 0 from above (z in [0, 1]) at x = 1,
 * triangle 1 hangs from it below (z in [-1, 0]) at x = 5.  The tree splits
 * at z = 0: triangle 1 on the left, triangle 0 on the right, as the
 * reference rule of kdtree.h says.  A ray lying in the plane z = 0 along +x
 * meets the lower edge of triangle 0 at t = 1 and the upper edge of
 * triangle 1 at t = 5: the closest is on the right. */
Test(traversal, ray_in_a_split_plane_sees_both_sides)
{
    scene s = obj_scene("v 1 -1 0\nv 1 1 0\nv 1 0 1\n"
                        "v 5 -1 0\nv 5 1 0\nv 5 0 -1\n"
                        "f 1 2 3\nf 4 5 6\n");
    kdtree_node nodes[3] = {kdtree_make_inner(2, 0.0f, 1), kdtree_make_leaf(0, 1), kdtree_make_leaf(1, 1)};
    uint32_t refs[2] = {1, 0};
    kdtree t = {nodes, refs, 3, 2, {0}, {0}};
    memcpy(t.lo, s.lo, sizeof t.lo);
    memcpy(t.hi, s.hi, sizeof t.hi);
    char err[512];
    cr_assert_eq(kdtree_check(&t, &s, err, sizeof err), 0, "the hand-made tree is not valid: %s", err);

    ray_check c = ray_check_make(&t);
    for (int i = 0; i < 9; i++) {
        ray r = {{0, -0.5f + 0.125f * (float)i, 0}, {1, 0.0625f * (float)(i - 4), 0}};
        normalize3(r.d);
        cr_assert_eq(brute_force_trace(s.positions, s.triangles, s.n_triangles, &r).tri, 0);
        check_ray(&c, &t, &s, &r, KIND_IN_SPLIT_PLANE);
    }
    expect_no_mismatch(&c, "ray in the root plane");
    scene_free(&s);
}

/* A tetrahedron fills its bounding box's corner: three of its vertices lie
 * on edges of the box and one on a corner, so rays aimed at them enter or
 * graze the box exactly there. */
Test(traversal, rays_at_vertices_on_the_box_boundary)
{
    scene s = obj_scene("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                        "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
    kdtree t = build_tree(&s);
    ray_check c = ray_check_make(&t);
    rng g = {5};
    for (int i = 0; i < 4000; i++) {
        ray r = {{rng_dyadic(&g, -4, 4), rng_dyadic(&g, -4, 4), rng_dyadic(&g, -4, 4)}, {0}};
        const float *v = s.positions + 3 * (i % 4);
        for (int a = 0; a < 3; a++) r.d[a] = v[a] - r.o[a];
        check_ray(&c, &t, &s, &r, KIND_AT_VERTEX);
    }
    expect_no_mismatch(&c, "tetrahedron");
    cr_expect_gt(c.v.hits, 2000, "only %llu of 4000 rays aimed at a vertex hit", (unsigned long long)c.v.hits);
    kdtree_free(&t);
    scene_free(&s);
}

/* ------------------------------------------------------------------------
 * A closed mesh has no holes
 * ------------------------------------------------------------------------ */

/* A unit sphere of `rings` x `segments` quads, vertices shared along every
 * seam and single vertices at the poles: a closed surface. */
static scene closed_sphere(uint32_t rings, uint32_t segments)
{
    scene s = {0};
    s.n_vertices = 2 + (rings - 1) * segments;
    s.n_triangles = 2 * segments * (rings - 1);
    s.positions = malloc(sizeof(float) * 3 * s.n_vertices);
    s.triangles = malloc(sizeof(uint32_t) * 3 * s.n_triangles);
    cr_assert(s.positions && s.triangles);
    float *p = s.positions;
    *p++ = 0, *p++ = 1, *p++ = 0;
    *p++ = 0, *p++ = -1, *p++ = 0;
    for (uint32_t i = 1; i < rings; i++)
        for (uint32_t j = 0; j < segments; j++) {
            float theta = PI_F * (float)i / (float)rings, phi = 2.0f * PI_F * (float)j / (float)segments;
            *p++ = sinf(theta) * cosf(phi), *p++ = cosf(theta), *p++ = sinf(theta) * sinf(phi);
        }
    /* ring i (1-based) vertex j is 2 + (i - 1) * segments + j */
    uint32_t *t = s.triangles;
    for (uint32_t j = 0; j < segments; j++) {
        uint32_t k = (j + 1) % segments;
        *t++ = 0, *t++ = 2 + j, *t++ = 2 + k;
        *t++ = 1, *t++ = 2 + (rings - 2) * segments + k, *t++ = 2 + (rings - 2) * segments + j;
        for (uint32_t i = 1; i + 1 < rings; i++) {
            uint32_t a = 2 + (i - 1) * segments, b = a + segments;
            *t++ = a + j, *t++ = b + j, *t++ = b + k;
            *t++ = a + j, *t++ = b + k, *t++ = a + k;
        }
    }
    scene_update_bounds(&s);
    return s;
}

Test(closed_mesh, rays_from_inside_never_escape)
{
    scene s = closed_sphere(24, 48);
    kdtree t = build_tree(&s);
    rng g = {3};
    /* [0]: aimed at a vertex, [1]: at a point of an edge, where a test that
     * is not watertight, or a traversal that is not conservative, lets a
     * ray slip between neighbours. */
    int escaped[2] = {0, 0}, brute_escaped[2] = {0, 0};
    ray first_escape = {{0, 0, 0}, {0, 0, 0}};
    for (int i = 0; i < 20000; i++) {
        float o[3], target[3];
        for (int a = 0; a < 3; a++) o[a] = rng_range(&g, -0.5f, 0.5f);
        const uint32_t *tri = s.triangles + 3 * (size_t)rng_below(&g, s.n_triangles);
        const float *v0 = s.positions + 3 * (size_t)tri[0], *v1 = s.positions + 3 * (size_t)tri[1];
        float w = i % 2 ? rng_unit(&g) : 0.0f;
        for (int a = 0; a < 3; a++) target[a] = v0[a] + w * (v1[a] - v0[a]);
        ray r = {{o[0], o[1], o[2]}, {0}};
        aim_at(o, target, r.d);
        if (trace_tree(&t, &s, &r).tri == RAY_NO_HIT) {
            if (escaped[0] + escaped[1] == 0) first_escape = r;
            escaped[i % 2]++;
        }
        brute_escaped[i % 2] += brute_force_trace(s.positions, s.triangles, s.n_triangles, &r).tri == RAY_NO_HIT;
    }
    cr_expect(escaped[0] == 0 && escaped[1] == 0,
              "rays escaped the closed sphere through the tree: %d of 10000 aimed at vertices, %d of 10000 at "
              "edges; first: o = (%a, %a, %a), d = (%a, %a, %a)",
              escaped[0], escaped[1], first_escape.o[0], first_escape.o[1], first_escape.o[2], first_escape.d[0],
              first_escape.d[1], first_escape.d[2]);
    cr_expect(brute_escaped[0] == 0 && brute_escaped[1] == 0,
              "rays escaped the closed sphere by brute force: %d of 10000 aimed at vertices, %d of 10000 at edges",
              brute_escaped[0], brute_escaped[1]);
    kdtree_free(&t);
    scene_free(&s);
}

/* ------------------------------------------------------------------------
 * The comparison can fail
 * ------------------------------------------------------------------------ */

typedef struct leaf_box {
    uint32_t node;
    float lo[3], hi[3];
} leaf_box;

/* Walks the tree to the leaf with the most references, tracking boxes. */
static void find_fullest_leaf(const kdtree *t, uint32_t node, const float lo[3], const float hi[3], leaf_box *best)
{
    kdtree_node n = t->nodes[node];
    if (kdtree_is_leaf(n)) {
        if (kdtree_count(n) > kdtree_count(t->nodes[best->node])) {
            best->node = node;
            memcpy(best->lo, lo, sizeof best->lo);
            memcpy(best->hi, hi, sizeof best->hi);
        }
        return;
    }
    uint32_t a = kdtree_axis(n);
    float mid_hi[3], mid_lo[3];
    memcpy(mid_hi, hi, sizeof mid_hi);
    memcpy(mid_lo, lo, sizeof mid_lo);
    mid_hi[a] = mid_lo[a] = n.split;
    find_fullest_leaf(t, kdtree_left(n), lo, mid_hi, best);
    find_fullest_leaf(t, kdtree_left(n) + 1, mid_lo, hi, best);
}

/* A point of one of the leaf's triangles inside the leaf's box. */
static int point_on_leaf_triangle(rng *g, const kdtree *t, const scene *s, const leaf_box *leaf, float p[3])
{
    kdtree_node n = t->nodes[leaf->node];
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint32_t tri = t->refs[n.first + rng_below(g, kdtree_count(n))];
        const float *v0, *v1, *v2;
        triangle_vertices(s->positions, s->triangles, tri, &v0, &v1, &v2);
        float u = rng_unit(g), v = rng_unit(g);
        if (u + v > 1.0f) u = 1.0f - u, v = 1.0f - v;
        int inside = 1;
        for (int a = 0; a < 3; a++) {
            p[a] = v0[a] + u * (v1[a] - v0[a]) + v * (v2[a] - v0[a]);
            inside &= p[a] >= leaf->lo[a] && p[a] <= leaf->hi[a];
        }
        if (inside) return 1;
    }
    return 0;
}

Test(oracle, catches_a_tree_with_an_emptied_leaf)
{
    scene s = real_scene("teapot");
    kdtree good = build_tree(&s);
    leaf_box leaf = {0};
    find_fullest_leaf(&good, 0, good.lo, good.hi, &leaf);
    cr_assert_gt(kdtree_count(good.nodes[leaf.node]), 0);

    kdtree bad = good;
    bad.nodes = malloc(sizeof(kdtree_node) * good.n_nodes);
    cr_assert_not_null(bad.nodes);
    memcpy(bad.nodes, good.nodes, sizeof(kdtree_node) * good.n_nodes);
    bad.nodes[leaf.node] = kdtree_make_leaf(good.nodes[leaf.node].first, 0);

    /* Rays from outside aimed at the emptied leaf's triangles. */
    ray_source src = ray_source_make(&good, &s);
    ray_check on_good = ray_check_make(&good), on_bad = ray_check_make(&good);
    rng g = {4};
    for (int i = 0; i < 2000; i++) {
        float p[3];
        cr_assert(point_on_leaf_triangle(&g, &good, &s, &leaf, p), "no triangle point in the leaf's box");
        ray r;
        point_outside(&g, &src, r.o);
        aim_at(r.o, p, r.d);
        check_ray(&on_good, &good, &s, &r, KIND_OUTSIDE_AIMED);
        check_ray(&on_bad, &bad, &s, &r, KIND_OUTSIDE_AIMED);
    }
    expect_no_mismatch(&on_good, "teapot, intact tree");
    cr_expect_gt(on_bad.v.mismatches, 0, "emptying leaf %u (%u triangles) went unnoticed over %llu rays",
                 leaf.node, kdtree_count(good.nodes[leaf.node]), (unsigned long long)on_bad.v.rays);
    cr_log_info("emptied leaf %u of %u triangles: %llu of %llu rays mismatch", leaf.node,
                kdtree_count(good.nodes[leaf.node]), (unsigned long long)on_bad.v.mismatches,
                (unsigned long long)on_bad.v.rays);

    free(bad.nodes);
    free(src.inner);
    kdtree_free(&good);
    scene_free(&s);
}

/* ------------------------------------------------------------------------
 * Images
 * ------------------------------------------------------------------------ */

static image render_image(const kdtree *t, const scene *s, const camera *c, shade_mode mode, int shadows)
{
    render_options opt = {*c, mode, shadows};
    image img;
    char err[512];
    cr_assert_eq(render_cpu(t, s, &opt, &img, NULL, err, sizeof err), 0, "render_cpu: %s", err);
    cr_assert_eq(img.width, c->width);
    cr_assert_eq(img.height, c->height);
    return img;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static size_t distinct_colors(const image *img)
{
    size_t n = (size_t)img->width * img->height, distinct = 0;
    uint32_t *packed = malloc(n * sizeof *packed);
    cr_assert_not_null(packed);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = img->rgb + 3 * i;
        packed[i] = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    }
    qsort(packed, n, sizeof *packed, compare_u32);
    for (size_t i = 0; i < n; i++) distinct += i == 0 || packed[i] != packed[i - 1];
    free(packed);
    return distinct;
}

Test(png, round_trips_and_shows_the_scene)
{
    scene s = real_scene("teapot");
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image img = render_image(&t, &s, &c, SHADE_DIFFUSE, 0);
    cr_expect_null(img.counts, "a diffuse render has no counts");

    char err[512];
    cr_assert_eq(image_write_png(&img, TMP("teapot.png"), err, sizeof err), 0, "%s", err);
    int w, h, channels;
    uint8_t *back = stbi_load(TMP("teapot.png"), &w, &h, &channels, 0);
    cr_assert_not_null(back, "stb_image cannot read the PNG: %s", stbi_failure_reason());
    cr_expect_eq(w, 160);
    cr_expect_eq(h, 120);
    cr_expect_eq(channels, 3);
    cr_expect(w == 160 && h == 120 && channels == 3 && memcmp(back, img.rgb, 160 * 120 * 3) == 0,
              "the PNG's pixels differ from the image in memory");
    stbi_image_free(back);
    cr_expect_geq(distinct_colors(&img), 50, "only %zu distinct colours", distinct_colors(&img));

    /* Brute force says which pixels see the teapot: those differ from the
     * background, which depends on the row only. */
    camera_basis b;
    camera_make_basis(&c, s.lo, s.hi, &b);
    uint32_t hits = 0, misses = 0, wrong = 0;
    uint8_t shows[160];
    cr_assert_leq(c.width, sizeof shows);
    for (uint32_t y = 0; y < c.height; y++) {
        const uint8_t *row = img.rgb + 3 * (size_t)y * c.width, *background = NULL;
        for (uint32_t x = 0; x < c.width; x++) {
            ray r = camera_ray(&b, x, y);
            shows[x] = brute_force_trace(s.positions, s.triangles, s.n_triangles, &r).tri != RAY_NO_HIT;
            if (!shows[x] && !background) background = row + 3 * x;
        }
        for (uint32_t x = 0; x < c.width; x++) {
            hits += shows[x];
            misses += !shows[x];
            if (background) wrong += (memcmp(row + 3 * x, background, 3) == 0) == shows[x];
        }
    }
    cr_expect_gt(hits, 1000, "only %u pixels show the teapot", hits);
    cr_expect_gt(misses, 1000, "only %u background pixels", misses);
    cr_expect_eq(wrong, 0, "%u pixels disagree with brute force about showing the scene", wrong);

    image_free(&img);
    kdtree_free(&t);
    scene_free(&s);
}

Test(png, write_to_a_bad_path_fails)
{
    image img;
    char err[512] = "";
    cr_assert_eq(image_alloc(&img, 4, 4, 0, err, sizeof err), 0, "%s", err);
    memset(img.rgb, 128, 4 * 4 * 3);
    cr_expect_eq(image_write_png(&img, TMP("no/such/dir/x.png"), err, sizeof err), -1);
    cr_expect(strstr(err, "no/such/dir/x.png") != NULL, "message does not name the file: \"%s\"", err);
    image_free(&img);
}

/* The colour the heat map gives each count 0..max: a one-row image of
 * those counts, too small to get a legend. */
static uint8_t *heat_palette(uint32_t max, shade_mode mode)
{
    image ramp;
    char err[512];
    cr_assert_eq(image_alloc(&ramp, max + 1, 1, 1, err, sizeof err), 0, "%s", err);
    for (uint32_t i = 0; i <= max; i++) ramp.counts[i] = i;
    image_colorize_counts(&ramp, mode);
    uint8_t *palette = malloc(3 * ((size_t)max + 1));
    cr_assert_not_null(palette);
    memcpy(palette, ramp.rgb, 3 * ((size_t)max + 1));
    image_free(&ramp);
    return palette;
}

static void expect_heat_map(shade_mode mode, const char *name)
{
    scene s = real_scene("teapot");
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image img = render_image(&t, &s, &c, mode, 0);
    cr_assert_not_null(img.counts, "%s: no counts", name);

    /* Each count is what the traversal reports for that pixel's ray. */
    camera_basis b;
    camera_make_basis(&c, s.lo, s.hi, &b);
    uint32_t min = UINT32_MAX, max = 0, wrong_counts = 0;
    for (uint32_t y = 0; y < c.height; y++)
        for (uint32_t x = 0; x < c.width; x++) {
            ray r = camera_ray(&b, x, y);
            ray_hit h = trace_tree(&t, &s, &r);
            uint32_t want = mode == SHADE_STEPS ? h.steps : h.tests, got = img.counts[y * c.width + x];
            wrong_counts += got != want;
            min = got < min ? got : min;
            max = got > max ? got : max;
        }
    cr_expect_eq(wrong_counts, 0, "%s: %u pixels have the wrong count", name, wrong_counts);
    cr_assert_lt(min, max, "%s: flat heat map (every count %u)", name, min);

    /* Colours are a function of the count (blue = few, red = many), except
     * where the legend is drawn: in the bottom rows only. */
    uint8_t *palette = heat_palette(max, mode);
    const uint8_t *few = palette, *many = palette + 3 * (size_t)max;
    cr_expect(few[2] > few[0], "%s: count 0 is not blue: %u %u %u", name, few[0], few[1], few[2]);
    cr_expect(many[0] > many[2], "%s: the largest count is not red: %u %u %u", name, many[0], many[1], many[2]);
    uint32_t legend_top = 0, legend_bottom = 0;
    for (uint32_t y = 0; y < c.height; y++)
        for (uint32_t x = 0; x < c.width; x++) {
            size_t i = (size_t)y * c.width + x;
            if (memcmp(img.rgb + 3 * i, palette + 3 * (size_t)img.counts[i], 3) == 0) continue;
            if (y < c.height * 2 / 3) legend_top++;
            else legend_bottom++;
        }
    cr_expect_eq(legend_top, 0, "%s: %u pixels in the top two thirds are not coloured by their count", name,
                 legend_top);
    cr_expect_gt(legend_bottom, c.width, "%s: no legend in the bottom rows (%u pixels differ)", name,
                 legend_bottom);

    free(palette);
    image_free(&img);
    kdtree_free(&t);
    scene_free(&s);
}

Test(heat_map, steps) { expect_heat_map(SHADE_STEPS, "steps"); }

Test(heat_map, tests) { expect_heat_map(SHADE_TESTS, "tests"); }

/* ------------------------------------------------------------------------
 * Determinism and shadows
 * ------------------------------------------------------------------------ */

Test(render, same_input_same_bytes)
{
    scene s = generated_scene("atrium", 0);
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image first = render_image(&t, &s, &c, SHADE_DIFFUSE, 1);
    image second = render_image(&t, &s, &c, SHADE_DIFFUSE, 1);
    cr_expect(memcmp(first.rgb, second.rgb, 160 * 120 * 3) == 0, "two renders of atrium differ");
    image_free(&first);
    image_free(&second);
    kdtree_free(&t);
    scene_free(&s);
}

Test(render, shadows_only_darken)
{
    scene s = generated_scene("atrium", 0);
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image lit = render_image(&t, &s, &c, SHADE_DIFFUSE, 0);
    image shadowed = render_image(&t, &s, &c, SHADE_DIFFUSE, 1);
    uint32_t darker = 0, brighter = 0;
    for (size_t i = 0; i < 160 * 120 * 3; i++) {
        darker += shadowed.rgb[i] < lit.rgb[i];
        brighter += shadowed.rgb[i] > lit.rgb[i];
    }
    cr_expect_gt(darker, 0, "shadows changed nothing in atrium");
    cr_expect_eq(brighter, 0, "%u channel values got brighter with shadows", brighter);
    image_free(&lit);
    image_free(&shadowed);
    kdtree_free(&t);
    scene_free(&s);
}

/* ------------------------------------------------------------------------
 * Camera
 * ------------------------------------------------------------------------ */

static const camera GOOD_CAMERA = {{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 50.0f, 64, 48};

static void expect_rejected(camera c, const char *what)
{
    char err[512] = "";
    cr_expect_eq(camera_check(&c, err, sizeof err), -1, "camera_check accepts %s", what);
    cr_expect_neq(err[0], '\0', "no message for %s", what);
}

Test(camera, rejects_bad_cameras)
{
    camera c;
    for (int a = 0; a < 3; a++) {
        c = GOOD_CAMERA, c.eye[a] = NAN, expect_rejected(c, "NaN in eye");
        c = GOOD_CAMERA, c.target[a] = NAN, expect_rejected(c, "NaN in target");
        c = GOOD_CAMERA, c.up[a] = NAN, expect_rejected(c, "NaN in up");
        c = GOOD_CAMERA, c.eye[a] = INFINITY, expect_rejected(c, "infinite eye");
    }
    c = GOOD_CAMERA, memcpy(c.target, c.eye, sizeof c.eye), expect_rejected(c, "eye == target");
    c = GOOD_CAMERA, memcpy(c.up, (float[]){0, 0, 1}, sizeof c.up), expect_rejected(c, "up along the view");
    c = GOOD_CAMERA, memcpy(c.up, (float[]){0, 0, -3}, sizeof c.up), expect_rejected(c, "up against the view");
    c = GOOD_CAMERA, memset(c.up, 0, sizeof c.up), expect_rejected(c, "zero up");
    const float bad_fov[] = {0.0f, 180.0f, -10.0f, 200.0f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_fov / sizeof bad_fov[0]; i++) {
        c = GOOD_CAMERA, c.fov_deg = bad_fov[i];
        char what[64];
        snprintf(what, sizeof what, "fov %g", bad_fov[i]);
        expect_rejected(c, what);
    }
    c = GOOD_CAMERA, c.width = 0, expect_rejected(c, "width 0");
    c = GOOD_CAMERA, c.height = 0, expect_rejected(c, "height 0");
    c = GOOD_CAMERA, c.width = CAMERA_MAX_SIDE + 1, c.height = 1, expect_rejected(c, "width above the limit");
    c = GOOD_CAMERA, c.width = 1, c.height = CAMERA_MAX_SIDE + 1, expect_rejected(c, "height above the limit");
    c = GOOD_CAMERA, c.width = CAMERA_MAX_SIDE, c.height = CAMERA_MAX_SIDE, expect_rejected(c, "too many pixels");
    c = GOOD_CAMERA, c.width = 1u << 14, c.height = (1u << 14) + 1, expect_rejected(c, "one row too many");
}

Test(camera, accepts_good_cameras)
{
    char err[512] = "";
    camera c = GOOD_CAMERA;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c.width = CAMERA_MAX_SIDE, c.height = 1;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c.width = 1u << 14, c.height = 1u << 14; /* exactly CAMERA_MAX_PIXELS */
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c = GOOD_CAMERA, c.fov_deg = 179.0f;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c = GOOD_CAMERA, c.fov_deg = 0.5f;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
}

Test(camera, render_refuses_a_bad_camera)
{
    scene s = real_scene("teapot");
    kdtree t = build_tree(&s);
    render_options opt = {GOOD_CAMERA, SHADE_DIFFUSE, 0};
    opt.cam.fov_deg = 0.0f;
    image img;
    validation v;
    char err[512] = "";
    cr_expect_eq(render_cpu(&t, &s, &opt, &img, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "camera") != NULL, "render_cpu's message: \"%s\"", err);
    err[0] = '\0';
    cr_expect_eq(validate_camera_rays_cpu(&t, &s, &opt.cam, 10, &v, err, sizeof err), -1);
    cr_expect(strstr(err, "camera") != NULL, "validate_camera_rays_cpu's message: \"%s\"", err);
    kdtree_free(&t);
    scene_free(&s);
}

/* Whether point p is inside the camera's field of view, by projecting it
 * onto the camera's own axes. */
static int in_view(const camera *c, const float p[3])
{
    float f[3], r[3], u[3], v[3];
    for (int a = 0; a < 3; a++) f[a] = c->target[a] - c->eye[a], v[a] = p[a] - c->eye[a];
    normalize3(f);
    cross3(f, c->up, r);
    normalize3(r);
    cross3(r, f, u);
    float depth = dot3(v, f), half_h = tanf(0.5f * c->fov_deg * PI_F / 180.0f);
    float half_w = half_h * (float)c->width / (float)c->height;
    return depth > 0.0f && fabsf(dot3(v, u)) <= half_h * depth && fabsf(dot3(v, r)) <= half_w * depth;
}

Test(camera, frame_shows_the_whole_box)
{
    /* Boxes of every shape, with whether they are solid (thick on every
     * axis): only those must be hit by the centre pixel, which lies half a
     * pixel off the exact centre for even sizes. */
    static const struct {
        float lo[3], hi[3];
        int solid;
    } boxes[] = {{{-1, -1, -1}, {1, 1, 1}, 1},
                 {{1000, 1000, -1001}, {1001, 1002, -1000}, 1},
                 {{-0.1f, 0.03f, -0.06f}, {0.06f, 0.19f, 0.06f}, 1},
                 {{0, 0, 0}, {100, 1, 1}, 0},
                 {{-5, 2, 3}, {5, 2, 3}, 0},
                 {{7, 7, 7}, {7, 7, 7}, 0}};
    static const uint32_t sizes[][2] = {{64, 48}, {48, 64}, {200, 20}, {1, 1}};
    static const float fovs[] = {20.0f, 50.0f, 100.0f};
    for (size_t bi = 0; bi < sizeof boxes / sizeof boxes[0]; bi++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t fi = 0; fi < sizeof fovs / sizeof fovs[0]; fi++) {
                const float *lo = boxes[bi].lo, *hi = boxes[bi].hi;
                camera c = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, fovs[fi], sizes[si][0], sizes[si][1]};
                camera_frame(lo, hi, &c);
                char err[512] = "";
                cr_assert_eq(camera_check(&c, err, sizeof err), 0, "box %zu, %ux%u, fov %g: %s", bi, c.width,
                             c.height, c.fov_deg, err);
                cr_expect(c.fov_deg == fovs[fi] && c.width == sizes[si][0] && c.height == sizes[si][1],
                          "camera_frame changed fov or size");
                for (int k = 0; k < 8; k++) {
                    float corner[3] = {(k & 1 ? hi : lo)[0], (k & 2 ? hi : lo)[1], (k & 4 ? hi : lo)[2]};
                    cr_expect(in_view(&c, corner), "box %zu, %ux%u, fov %g: corner %d out of view", bi, c.width,
                              c.height, c.fov_deg, k);
                }
                if (!boxes[bi].solid) continue;
                camera_basis b;
                camera_make_basis(&c, lo, hi, &b);
                ray r = camera_ray(&b, c.width / 2, c.height / 2);
                float inv_d[3] = {1.0f / r.d[0], 1.0f / r.d[1], 1.0f / r.d[2]}, t0, t1;
                cr_expect(ray_box(&r, inv_d, lo, hi, &t0, &t1) && t0 > 0.0f,
                          "box %zu, %ux%u, fov %g: the centre pixel misses the box", bi, c.width, c.height,
                          c.fov_deg);
            }
}
