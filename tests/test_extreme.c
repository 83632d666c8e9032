/* test_extreme.c - scenes at the numeric extremes and the
 * default view, on the CPU builder and ray caster.
 *
 * Oracles: kdtree_check for the tree; brute force for every ray; and, for
 * the scenes that scene_normalize scales, a ray/triangle test in double on
 * the source's own coordinates (a different algorithm in a wider type, so
 * it is independent of the float scaling it checks).  For the default view,
 * the number of distinct triangles the framed outside view sees. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "shade.h"

TestSuite(extreme, .timeout = 120);

static scene generated(const char *name, uint64_t n)
{
    scene s;
    char err[512];
    cr_assert_eq(scene_generate(name, n, &s, err, sizeof err), 0, "%s: %s", name, err);
    return s;
}

static kdtree build_checked(const scene *s, kdtree_stats *st)
{
    kdtree t;
    char err[512];
    cr_assert_eq(kdtree_build_cpu(s, &t, st, err, sizeof err), 0, "kdtree_build_cpu: %s", err);
    cr_assert_eq(kdtree_check(&t, s, err, sizeof err), 0, "kdtree_check: %s", err);
    cr_assert(isfinite(st->sah_cost) && st->sah_cost > 0.0, "SAH cost %g", st->sah_cost);
    cr_assert(isfinite(st->refs_per_triangle), "references per triangle %g", st->refs_per_triangle);
    return t;
}

static float largest_magnitude(const scene *s)
{
    float m = 0.0f;
    for (int a = 0; a < 3; a++) m = fmaxf(m, fmaxf(fabsf(s->lo[a]), fabsf(s->hi[a])));
    return m;
}

/* Every ray of the view (4000 sampled) against brute force: no mismatch,
 * and at least `min_hits` hits so that the comparison means something. */
static void expect_view_validates(const kdtree *t, const scene *s, const camera *c, uint64_t min_hits)
{
    validation v;
    char err[512];
    render_options o = render_default_options(c);
    cr_assert_eq(validate_camera_rays_cpu(t, s, &o, 4000, &v, err, sizeof err), 0, "%s", err);
    cr_expect_eq(v.mismatches, 0, "%llu mismatches: %s", (unsigned long long)v.mismatches, v.first);
    cr_expect_geq(v.hits, min_hits, "only %llu of %llu rays hit", (unsigned long long)v.hits,
                  (unsigned long long)v.rays);
}

static camera default_camera(const kdtree *t, const scene *s)
{
    camera c = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, 320, 180};
    camera_choose_view(t, s, &c);
    char err[256];
    cr_assert_eq(camera_check(&c, err, sizeof err), 0, "default camera: %s", err);
    return c;
}

/* Closest hit in double (Moller-Trumbore) over the source scene; -1 for none. */
static double double_hit(const scene *src, const double o[3], const double d[3], uint32_t *tri)
{
    double best = -1.0;
    for (uint32_t k = 0; k < src->n_triangles; k++) {
        const float *v[3];
        for (int j = 0; j < 3; j++) v[j] = src->positions + 3 * (size_t)src->triangles[3 * (size_t)k + j];
        double e1[3], e2[3], s[3], p[3], q[3];
        for (int a = 0; a < 3; a++) {
            e1[a] = (double)v[1][a] - v[0][a];
            e2[a] = (double)v[2][a] - v[0][a];
            s[a] = o[a] - v[0][a];
        }
        p[0] = d[1] * e2[2] - d[2] * e2[1];
        p[1] = d[2] * e2[0] - d[0] * e2[2];
        p[2] = d[0] * e2[1] - d[1] * e2[0];
        double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
        if (det == 0.0) continue;
        double u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) / det;
        q[0] = s[1] * e1[2] - s[2] * e1[1];
        q[1] = s[2] * e1[0] - s[0] * e1[2];
        q[2] = s[0] * e1[1] - s[1] * e1[0];
        double w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / det;
        double t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
        if (u < 0.0 || w < 0.0 || u + w > 1.0 || t <= 0.0) continue;
        if (best < 0.0 || t < best) {
            best = t;
            *tri = k;
        }
    }
    return best;
}

/* The tree of the normalised scene against double-precision hits in the
 * source's units, on a grid of camera rays.  Rays through an edge may go
 * either way, so 1% may disagree; the hits must match in distance. */
static void expect_source_hits(const kdtree *t, const scene *norm, const scene *src, const camera *c)
{
    camera_basis b;
    camera small = *c;
    small.width = 48;
    small.height = 27;
    camera_make_basis(&small, norm->lo, norm->hi, &b);
    trace_scene ts = trace_scene_of(t, norm);
    int rays = 0, hits = 0, disagree = 0;
    for (uint32_t y = 0; y < small.height; y++)
        for (uint32_t x = 0; x < small.width; x++) {
            ray r = camera_ray(&b, x, y);
            ray_hit h = kdtree_trace(&ts, &r);
            double o[3], d[3];
            for (int a = 0; a < 3; a++) {
                o[a] = ldexp(r.o[a], -norm->scale_log2);
                d[a] = r.d[a];
            }
            uint32_t tri = RAY_NO_HIT;
            double want = double_hit(src, o, d, &tri);
            rays++;
            hits += want >= 0.0;
            double got = h.tri == RAY_NO_HIT ? -1.0 : ldexp(h.t, -norm->scale_log2);
            if ((want < 0.0) != (got < 0.0) || (want >= 0.0 && tri != h.tri && fabs(got - want) > 1e-4 * want))
                disagree++;
        }
    cr_expect_geq(hits, rays / 10, "only %d of %d rays hit in double", hits, rays);
    cr_expect_leq(disagree, rays / 100, "%d of %d rays disagree with the double-precision hits", disagree, rays);
}

/* A scene that scene_normalize must scale by 2^expect_log2 (exactly). */
static void check_scaled_scene(scene src, int expect_log2)
{
    scene s = src;
    s.positions = malloc(3 * (size_t)src.n_vertices * sizeof *s.positions);
    s.triangles = malloc(3 * (size_t)src.n_triangles * sizeof *s.triangles);
    cr_assert(s.positions && s.triangles);
    memcpy(s.positions, src.positions, 3 * (size_t)src.n_vertices * sizeof *s.positions);
    memcpy(s.triangles, src.triangles, 3 * (size_t)src.n_triangles * sizeof *s.triangles);
    cr_assert_eq(scene_normalize(&s), expect_log2);
    cr_assert_eq(s.scale_log2, expect_log2);
    float m = largest_magnitude(&s);
    cr_assert(m >= 0.5f && m < 1.0f, "largest magnitude %g after scaling", m);
    for (size_t i = 0; i < 3 * (size_t)s.n_vertices; i++)
        cr_assert_eq(ldexpf(s.positions[i], -expect_log2), src.positions[i], "vertex value %zu not exact", i);
    cr_assert_eq(s.n_degenerate, src.n_degenerate);
    kdtree_stats st;
    kdtree t = build_checked(&s, &st);
    cr_expect_gt(st.n_nodes, 100, "a tree of %u nodes", st.n_nodes);
    camera c = default_camera(&t, &s);
    expect_view_validates(&t, &s, &c, 400);
    expect_source_hits(&t, &s, &src, &c);
    kdtree_free(&t);
    scene_free(&s);
    scene_free(&src);
}

Test(extreme, huge_coordinates_are_scaled_exactly_and_hit_right)
{
    scene s = generated("huge", 1202);
    cr_assert_gt(largest_magnitude(&s), 9e29f);
    check_scaled_scene(s, -100); /* 1e30 = 0.79 * 2^100 */
}

Test(extreme, tiny_coordinates_are_scaled_exactly_and_hit_right)
{
    scene s = generated("huge", 1202);
    for (size_t i = 0; i < 3 * (size_t)s.n_vertices; i++) s.positions[i] = ldexpf(s.positions[i], -200);
    scene_update_bounds(&s);
    cr_assert_lt(largest_magnitude(&s), 1e-29f);
    check_scaled_scene(s, 100);
}

/* A scene whose coordinates need no scaling (wide: 1e-6 to 1e6) is left
 * as it was.  Oracle: a copy of every vertex taken before, byte for byte. */
Test(extreme, coordinates_in_range_are_left_alone)
{
    scene s = generated("wide", 1202);
    size_t bytes = 3 * (size_t)s.n_vertices * sizeof *s.positions;
    float *before = malloc(bytes);
    cr_assert_not_null(before);
    memcpy(before, s.positions, bytes);
    cr_assert_eq(scene_normalize(&s), 0);
    cr_assert_eq(s.scale_log2, 0);
    cr_assert_eq(memcmp(s.positions, before, bytes), 0, "scene_normalize changed a vertex of an unscaled scene");
    free(before);
    scene_free(&s);
}

/* A scene that needs no scaling: a real tree, and every ray as brute force
 * has it, from the default view and from the framed one. */
static void check_scene(const char *name, uint64_t n, uint64_t min_hits)
{
    scene s = generated(name, n);
    cr_assert_eq(scene_normalize(&s), 0, "%s was scaled", name);
    kdtree_stats st;
    kdtree t = build_checked(&s, &st);
    cr_expect_gt(st.n_nodes, 100, "%s: a tree of %u nodes", name, st.n_nodes);
    camera c = default_camera(&t, &s);
    expect_view_validates(&t, &s, &c, min_hits);
    camera framed = c;
    camera_frame(s.lo, s.hi, &framed);
    expect_view_validates(&t, &s, &framed, min_hits);
    kdtree_free(&t);
    scene_free(&s);
}

Test(extreme, tiny_next_to_large) { check_scene("wide", 1202, 400); }
Test(extreme, axis_aligned_plane) { check_scene("flat", 10000, 200); }
Test(extreme, tilted_plane) { check_scene("tilted", 10000, 200); }

Test(extreme, wide_spans_twelve_orders_of_magnitude)
{
    scene s = generated("wide", 1202);
    float smallest = INFINITY;
    for (uint32_t k = 0; k < s.n_triangles; k++) {
        float lo[3], hi[3];
        kdtree_triangle_box(s.positions, s.triangles, k, lo, hi);
        for (int a = 0; a < 3; a++)
            if (hi[a] > lo[a]) smallest = fminf(smallest, hi[a] - lo[a]);
    }
    cr_expect_lt(smallest, 1e-5f, "smallest triangle extent %g", smallest);
    cr_expect_geq(largest_magnitude(&s), 1e6f);
    scene_free(&s);
}

Test(extreme, tilted_is_planar_but_flat_on_no_axis)
{
    scene s = generated("tilted", 10000);
    for (int a = 0; a < 3; a++) cr_expect_gt(s.hi[a] - s.lo[a], 10.0f, "axis %d is flat", a);
    /* Every vertex lies within rounding of the plane 0.48 x - 0.64 y + 0.6 z = 0. */
    for (uint32_t v = 0; v < s.n_vertices; v++) {
        const float *p = s.positions + 3 * (size_t)v;
        double dist = 0.48 * p[0] - 0.64 * p[1] + 0.6 * p[2];
        cr_assert_lt(fabs(dist), 1e-4, "vertex %u is %g off the plane", v, dist);
    }
    scene_free(&s);
}

Test(extreme, coincident_triangles_share_one_leaf)
{
    scene s = generated("coincident", 10000);
    cr_assert_eq(s.n_triangles, 10248);
    kdtree_stats st;
    kdtree t = build_checked(&s, &st);
    cr_expect_gt(st.n_nodes, 20, "a tree of %u nodes", st.n_nodes);
    /* Some leaf holds all 10,000 copies (triangles 248 ..): no plane can part them. */
    uint32_t most = 0;
    for (uint32_t i = 0; i < t.n_nodes; i++)
        if (kdtree_is_leaf(t.nodes[i])) {
            uint32_t copies = 0;
            for (uint32_t k = 0; k < kdtree_count(t.nodes[i]); k++) copies += t.refs[t.nodes[i].first + k] >= 248;
            most = copies > most ? copies : most;
        }
    cr_expect_eq(most, 10000);
    camera c = default_camera(&t, &s);
    expect_view_validates(&t, &s, &c, 200);
    /* Straight at the copies: the first of them (brute force's rule) at y = 1.5. */
    ray r = {{0.0f, 1.5f, -10.0f}, {0.0f, 0.0f, 1.0f}};
    trace_scene ts = trace_scene_of(&t, &s);
    ray_hit h = kdtree_trace(&ts, &r), b = brute_force_trace(s.positions, s.triangles, s.n_triangles, &r);
    cr_expect(h.tri >= 248 && h.tri != RAY_NO_HIT, "hit triangle %u", h.tri);
    cr_expect_float_eq(h.t, 10.125f, 1e-5f, "hit at %g", h.t); /* the plane z = 0.125 (y - 1) */
    cr_expect_eq(h.tri, b.tri);
    kdtree_free(&t);
    scene_free(&s);
}

/* ---- the default view on closed real scenes ---- */

static void check_view_sees_inside(const char *name)
{
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/%s.obj.gz", KDA_SHARED_SCENES, name);
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "real scene \"%s\" is required: %s", name, err);
    kdtree_stats st;
    kdtree t = build_checked(&s, &st);
    camera framed = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, 1280, 720}, chosen = framed;
    camera_frame(s.lo, s.hi, &framed);
    const char *view = camera_choose_view(&t, &s, &chosen);
    view_score fs, cs;
    camera_view_score(&t, &s, &framed, &fs);
    camera_view_score(&t, &s, &chosen, &cs);
    /* The outside view sees a shell (a few big faces); the chosen one many
     * distinct triangles, and its eye is inside the scene's box. */
    cr_expect_lt(2 * fs.structure, fs.hits, "%s: the outside view sees %u distinct of %u hits", name, fs.structure,
                 fs.hits);
    cr_expect_geq(cs.structure, 5 * fs.structure + 200, "%s (%s): %u distinct triangles, outside %u", name, view,
                  cs.structure, fs.structure);
    for (int a = 0; a < 3; a++) cr_expect(chosen.eye[a] > s.lo[a] && chosen.eye[a] < s.hi[a], "%s: eye outside", name);
    kdtree_free(&t);
    scene_free(&s);
}

Test(extreme, default_view_sees_inside_sponza) { check_view_sees_inside("sponza"); }
Test(extreme, default_view_sees_inside_conference) { check_view_sees_inside("conference"); }

Test(extreme, default_view_of_an_object_stays_outside)
{
    char err[1024];
    scene s;
    cr_assert_eq(scene_load(KDA_SHARED_SCENES "/teapot.obj.gz", &s, err, sizeof err), 0,
                 "real scene \"teapot\" is required: %s", err);
    kdtree_stats st;
    kdtree t = build_checked(&s, &st);
    camera framed = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, 640, 360}, chosen = framed;
    camera_frame(s.lo, s.hi, &framed);
    cr_expect_str_eq(camera_choose_view(&t, &s, &chosen), "outside from +z");
    cr_expect_arr_eq(chosen.eye, framed.eye, sizeof framed.eye);
    cr_expect_arr_eq(chosen.target, framed.target, sizeof framed.target);
    kdtree_free(&t);
    scene_free(&s);
}
