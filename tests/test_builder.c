/* test_builder.c - the CPU reference builder and the tree checker.
 *
 * Oracles: kdtree_check's invariants (every reference overlaps its leaf's
 * box, every triangle referenced, children reached once, depth limit), a
 * brute-force SAH search over every candidate plane at every node of small
 * scenes (the cost model written again here), and
 * hand-made scenes whose right answer is obvious.  The checker itself is
 * shown to fail on corrupted trees. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdtree.h"
#include "polygon_obj.h"
#include "scene.h"

static char err[512];

/* A scene from explicit triangles, 3 vertices each, unshared. */
static scene scene_from_triangles(const float (*tri)[9], uint32_t n)
{
    scene s = {0};
    s.n_triangles = n;
    s.n_vertices = 3 * n;
    s.positions = malloc(sizeof(float) * 9 * n);
    s.triangles = malloc(sizeof(uint32_t) * 3 * n);
    cr_assert(s.positions && s.triangles);
    memcpy(s.positions, tri, sizeof(float) * 9 * n);
    for (uint32_t i = 0; i < 3 * n; i++) s.triangles[i] = i;
    scene_update_bounds(&s);
    return s;
}

static void build_and_check(const scene *s, kdtree *t, kdtree_stats *st)
{
    cr_assert_eq(kdtree_build_cpu(s, t, st, err, sizeof err), 0, "build failed: %s", err);
    cr_assert_eq(kdtree_check(t, s, err, sizeof err), 0, "invariant broken: %s", err);
    cr_assert_eq(st->n_nodes, t->n_nodes);
    cr_assert_eq(st->n_refs, t->n_refs, "leaf counts must add up to the reference array");
    cr_assert_geq(st->n_refs, s->n_triangles, "every triangle is referenced at least once");
    cr_assert_leq(st->max_depth, st->depth_limit);
    cr_assert_eq(st->n_leaves * 2 - 1, st->n_nodes, "a k-d tree with pairs of children has 2L-1 nodes");
}

Test(builder, depth_limit_formula)
{
    cr_assert_eq(kdtree_max_depth(1), 8);
    cr_assert_eq(kdtree_max_depth(1024), 21);    /* 8 + 13.0 */
    cr_assert_eq(kdtree_max_depth(1000000), 33); /* 8 + 25.9 */
    cr_assert_eq(kdtree_max_depth(UINT32_MAX), 49);
}

Test(builder, empty_scene_is_an_error)
{
    scene s = {0};
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "empty"), "message: %s", err);
}

Test(builder, single_triangle)
{
    static const float tri[1][9] = {{0, 0, 0, 1, 0, 0, 0, 1, 0}};
    scene s = scene_from_triangles(tri, 1);
    kdtree t;
    kdtree_stats st;
    build_and_check(&s, &t, &st);
    cr_assert_eq(st.n_refs, 1);
    kdtree_free(&t);
    scene_free(&s);
}

/* Two small triangles far apart: the SAH must separate them. */
Test(builder, separates_distant_triangles)
{
    static const float tri[2][9] = {{0, 0, 0, 1, 0, 0, 0, 1, 0}, {100, 0, 0, 101, 0, 0, 100, 1, 0}};
    scene s = scene_from_triangles(tri, 2);
    kdtree t;
    kdtree_stats st;
    build_and_check(&s, &t, &st);
    cr_assert_eq(st.n_refs, 2, "nothing straddles, so nothing is duplicated");
    for (uint32_t i = 0; i < t.n_nodes; i++)
        if (kdtree_is_leaf(t.nodes[i])) cr_assert_leq(kdtree_count(t.nodes[i]), 1);
    cr_assert_lt(st.sah_cost, kdtree_leaf_cost(2));
    kdtree_free(&t);
    scene_free(&s);
}

static uint64_t rng_state = 12345;
static float rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng_state >> 40) / (float)(1u << 24);
}

/* Random small triangles, some of them flat on an axis, some huge. */
static scene random_scene(uint32_t n, uint64_t seed)
{
    rng_state = seed;
    float(*tri)[9] = malloc(sizeof *tri * n);
    for (uint32_t i = 0; i < n; i++) {
        float c[3] = {rnd() * 10, rnd() * 10, rnd() * 10}, size = (i % 17 == 0) ? 6.0f : 0.5f;
        for (int v = 0; v < 3; v++)
            for (int a = 0; a < 3; a++) tri[i][3 * v + a] = c[a] + (rnd() - 0.5f) * size;
        if (i % 5 == 0)
            for (int v = 0; v < 3; v++) tri[i][3 * v + (int)(i % 3)] = c[i % 3]; /* planar on one axis */
    }
    scene s = scene_from_triangles((const float(*)[9])tri, n);
    free(tri);
    return s;
}

/* The SAH as kdtree.h documents it, written again here in double precision
 * so that the oracle below shares no code with the builder: a split costs
 * K_T + K_I * lambda * (SA_L/SA * N_L + SA_R/SA * N_R), K_T 15, K_I 20,
 * lambda 0.8 when a side is empty (else 1); a leaf K_I * N. */
static double sah_split(double p_left, double p_right, uint32_t n_left, uint32_t n_right)
{
    double lambda = n_left == 0 || n_right == 0 ? 0.8 : 1.0;
    return 15.0 + 20.0 * lambda * (p_left * n_left + p_right * n_right);
}

static double box_area(const double d[3]) { return 2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0]); }

/* Triangle t's extent on axis a. */
static void triangle_extent(const scene *s, uint32_t t, int a, float *lo, float *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int v = 0; v < 3; v++) {
        float x = s->positions[3 * s->triangles[3 * t + v] + a];
        *lo = fminf(*lo, x);
        *hi = fmaxf(*hi, x);
    }
}

/* The cost of splitting the node box lo..hi at plane p of axis a with
 * n_left and n_right triangles on the two sides. */
static double split_cost(const float lo[3], const float hi[3], int a, float p, uint32_t n_left, uint32_t n_right)
{
    double d[3] = {(double)hi[0] - lo[0], (double)hi[1] - lo[1], (double)hi[2] - lo[2]};
    double dl[3] = {d[0], d[1], d[2]}, dr[3] = {d[0], d[1], d[2]};
    dl[a] = (double)p - lo[a];
    dr[a] = (double)hi[a] - p;
    return sah_split(box_area(dl) / box_area(d), box_area(dr) / box_area(d), n_left, n_right);
}

/* The library's cost functions give the documented formula's values. */
Test(builder, cost_model_is_the_documented_sah)
{
    cr_expect_float_eq(kdtree_box_area((const float[3]){1, 2, 3}), 22.0f, 1e-6f);
    cr_expect_float_eq(kdtree_leaf_cost(3), 60.0f, 1e-6f);
    cr_expect_float_eq(kdtree_split_cost(0.25f, 0.75f, 4, 2), 15.0f + 20.0f * (1.0f + 1.5f), 1e-4f);
    cr_expect_float_eq(kdtree_split_cost(0.25f, 0.75f, 2, 0), 15.0f + 20.0f * 0.8f * 0.5f, 1e-4f);
}

/* The cheapest split of a node (box lo..hi, the triangles marked in `in`)
 * by trying every candidate plane directly against the classification
 * rule of kdtree.h: the ends of the triangles' boxes strictly inside the
 * node's; a triangle lying in the plane goes to whichever side is cheaper.
 * Keeping the node a leaf costs K_I * N. */
static double brute_force_cost(const scene *s, const uint8_t *in, const float lo[3], const float hi[3],
                               uint32_t *best_refs)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < s->n_triangles; t++) n += in[t];
    double best = 20.0 * n;
    *best_refs = n;
    for (int a = 0; a < 3; a++) {
        for (uint32_t cand = 0; cand < s->n_triangles; cand++) {
            if (!in[cand]) continue;
            float clo, chi;
            triangle_extent(s, cand, a, &clo, &chi);
            for (int end = 0; end < 2; end++) {
                float p = end ? chi : clo;
                if (!(p > lo[a] && p < hi[a])) continue;
                uint32_t nl = 0, nr = 0, np = 0;
                for (uint32_t t = 0; t < s->n_triangles; t++) {
                    if (!in[t]) continue;
                    float tlo, thi;
                    triangle_extent(s, t, a, &tlo, &thi);
                    if (tlo == p && thi == p) np++;
                    else {
                        nl += tlo < p;
                        nr += thi > p;
                    }
                }
                double c = fmin(split_cost(lo, hi, a, p, nl + np, nr), split_cost(lo, hi, a, p, nl, nr + np));
                if (c < best) best = c, *best_refs = nl + nr + np;
            }
        }
    }
    return best;
}

/* The triangles below `node` (its distinct references: a node's own
 * triangles, which its leaves hold between them), marked in a new array;
 * *n their number. */
static uint8_t *subtree_triangles(const kdtree *t, uint32_t n_triangles, uint32_t node, uint32_t *n)
{
    uint8_t *in = calloc(n_triangles, 1);
    cr_assert_not_null(in);
    uint32_t stack[256], sp = 0;
    stack[sp++] = node;
    *n = 0;
    while (sp) {
        kdtree_node x = t->nodes[stack[--sp]];
        if (kdtree_is_leaf(x)) {
            for (uint32_t i = 0; i < kdtree_count(x); i++) {
                uint32_t tri = t->refs[x.first + i];
                *n += !in[tri];
                in[tri] = 1;
            }
        } else {
            cr_assert_lt(sp + 2, 256u, "the test's stack is too small");
            stack[sp++] = kdtree_left(x);
            stack[sp++] = kdtree_left(x) + 1;
        }
    }
    return in;
}

/* Every node of the tree against the brute-force search: an inner node's
 * plane costs the optimum and less than a leaf, and keeps within the
 * node's reference budget (`budget`: references allowed below it per
 * reference it holds, 1024 at the root, as docs/builder.md defines it); a
 * leaf above the depth limit has no plane cheaper than itself, or its
 * cheapest would spend more than the budget.  Returns the inner nodes seen. */
static uint32_t check_every_node(const scene *s, const kdtree *t, uint32_t node, const float lo[3],
                                 const float hi[3], int depth, int limit, double budget)
{
    uint32_t n, best_refs;
    uint8_t *in = subtree_triangles(t, s->n_triangles, node, &n);
    double d[3] = {(double)hi[0] - lo[0], (double)hi[1] - lo[1], (double)hi[2] - lo[2]}, leaf = 20.0 * n;
    kdtree_node x = t->nodes[node];
    if (kdtree_is_leaf(x)) {
        if (depth < limit && n > 0 && box_area(d) > 0.0) {
            double best = brute_force_cost(s, in, lo, hi, &best_refs);
            cr_assert(best >= leaf * (1.0 - 1e-4) || best_refs > budget * n * (1.0 - 1e-2), /* R is rounded */
                      "node %u (depth %d, %u triangles) is a leaf (%g), yet a plane within its budget costs %g", node,
                      depth, n, leaf, best);
        }
        free(in);
        return 0;
    }
    cr_assert_lt(depth, limit, "node %u splits at the depth limit", node);
    double best = brute_force_cost(s, in, lo, hi, &best_refs);
    free(in);
    int a = (int)kdtree_axis(x);
    uint32_t n_left, n_right;
    free(subtree_triangles(t, s->n_triangles, kdtree_left(x), &n_left));
    free(subtree_triangles(t, s->n_triangles, kdtree_left(x) + 1, &n_right));
    double got = split_cost(lo, hi, a, x.split, n_left, n_right);
    cr_assert(fabs(got - best) <= 1e-4 * best, "node %u (depth %d): its plane costs %g, the optimum %g", node, depth,
              got, best);
    cr_assert(got < leaf * (1.0 + 1e-4), "node %u splits at %g, dearer than a leaf (%g)", node, got, leaf);
    cr_assert(n_left + n_right <= budget * n * (1.0 + 1e-4), "node %u (depth %d): %u + %u references of %u, budget %g",
              node, depth, n_left, n_right, n, budget);
    float left_hi[3] = {hi[0], hi[1], hi[2]}, right_lo[3] = {lo[0], lo[1], lo[2]};
    left_hi[a] = x.split;
    right_lo[a] = x.split;
    budget = budget * n / (n_left + n_right);
    return 1 + check_every_node(s, t, kdtree_left(x), lo, left_hi, depth + 1, limit, budget) +
           check_every_node(s, t, kdtree_left(x) + 1, right_lo, hi, depth + 1, limit, budget);
}

/* The sweep's choice at every node is what the brute-force search finds. */
Test(builder, every_split_is_the_exact_sah_optimum)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        scene s = random_scene(40 + (uint32_t)seed * 7, seed);
        kdtree t;
        cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0);
        cr_assert(!kdtree_is_leaf(t.nodes[0]), "seed %llu: the root should split", (unsigned long long)seed);
        uint32_t inner = check_every_node(&s, &t, 0, s.lo, s.hi, 0, kdtree_max_depth(s.n_triangles), 1024.0);
        cr_assert_gt(inner, 4, "seed %llu: only %u inner nodes", (unsigned long long)seed, inner);
        kdtree_free(&t);
        scene_free(&s);
    }
}

static void check_generated(const char *name, uint64_t n)
{
    scene s;
    cr_assert_eq(scene_generate(name, n, &s, err, sizeof err), 0, "%s: %s", name, err);
    kdtree t;
    kdtree_stats st;
    build_and_check(&s, &t, &st);
    kdtree_free(&t);
    scene_free(&s);
}

Test(builder, procedural_scenes) { check_generated("spheres", 30000); }
Test(builder, default_scene, .timeout = 120) { check_generated(scene_generator_names()[0], 0); }

/* Degenerate inputs terminate with a valid tree. */
Test(builder, all_triangles_in_one_plane) { check_generated("flat", 5000); }
Test(builder, identical_triangles) { check_generated("stacked", 500); }

/* One convex polygon of many corners in one f line: the loader's triangles
 * lie side by side (scenes/obj_polygon.c, the strip), so the tree parts
 * them with about two references a triangle; a fan from one corner made
 * thousands (docs/experiments/builder.md). */
Test(builder, a_polygon_of_many_corners)
{
    double(*xy)[2] = regular_polygon(2000);
    cr_assert_not_null(xy);
    char *text = polygon_obj((const double(*)[2])xy, 2000, POLYGON_XY);
    free(xy);
    cr_assert_not_null(text);
    scene s;
    cr_assert_eq(scene_parse_obj(text, strlen(text), "polygon.obj", &s, err, sizeof err), 0, "%s", err);
    free(text);
    kdtree t;
    kdtree_stats st;
    build_and_check(&s, &t, &st);
    cr_expect_leq(st.n_refs, 4ull * s.n_triangles, "%llu references for %u triangles",
                  (unsigned long long)st.n_refs, s.n_triangles);
    kdtree_free(&t);
    scene_free(&s);
}

/* The budget along the tree: no split takes more references than its
 * node's budget allows (docs/builder.md), each node's references counted
 * off the leaves below it. */
static void check_budget(const kdtree *t, uint32_t n_triangles, uint32_t node, double budget)
{
    kdtree_node x = t->nodes[node];
    if (kdtree_is_leaf(x)) return;
    uint32_t n, n_left, n_right;
    free(subtree_triangles(t, n_triangles, node, &n));
    free(subtree_triangles(t, n_triangles, kdtree_left(x), &n_left));
    free(subtree_triangles(t, n_triangles, kdtree_left(x) + 1, &n_right));
    cr_assert(n_left + n_right <= budget * n * (1.0 + 1e-4), "node %u: %u + %u references of %u, budget %g", node,
              n_left, n_right, n, budget);
    budget = budget * n / (n_left + n_right);
    check_budget(t, n_triangles, kdtree_left(x), budget);
    check_budget(t, n_triangles, kdtree_left(x) + 1, budget);
}

/* A fan of slivers that meet at one corner, as triangles: nearly every
 * triangle straddles every plane near that corner, and each split still
 * lowers the SAH cost, so the duplication compounds down to the depth
 * limit (12,847 references a triangle at 2,000 slivers, before the
 * budget).  The reference budget holds the tree to 1024 a triangle. */
Test(builder, a_fan_of_slivers_keeps_to_the_reference_budget)
{
    enum { N = 2000 };
    char *text = fan_obj(N);
    cr_assert_not_null(text);
    scene s;
    cr_assert_eq(scene_parse_obj(text, strlen(text), "fan.obj", &s, err, sizeof err), 0, "%s", err);
    free(text);
    cr_assert_eq(s.n_triangles, N);
    kdtree t;
    kdtree_stats st;
    build_and_check(&s, &t, &st);
    cr_assert_leq(st.n_refs, 1024ull * N, "%llu references for %u triangles", (unsigned long long)st.n_refs, N);
    check_budget(&t, N, 0, 1024.0);
    kdtree_free(&t);
    scene_free(&s);
}

static void check_real_scene(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KDA_SHARED_SCENES, file);
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "%s (the shared scenes must be beside the checkout)",
                 err);
    kdtree t;
    kdtree_stats st;
    build_and_check(&s, &t, &st);
    cr_assert_lt(st.sah_cost, kdtree_leaf_cost(s.n_triangles) / 100.0, "%s: the tree must pay off", file);
    cr_assert_lt(st.refs_per_triangle, 20.0, "%s: N_ref %g", file, st.refs_per_triangle);
    kdtree_free(&t);
    scene_free(&s);
}

Test(builder, real_scene_sponza) { check_real_scene("sponza.obj.gz"); }
Test(builder, real_scene_sibenik) { check_real_scene("sibenik.obj.gz"); }
Test(builder, real_scene_bunny) { check_real_scene("bunny.obj.gz"); }
Test(builder, real_scene_teapot) { check_real_scene("teapot.obj.gz"); }

/* ---- the checker rejects broken trees ---- */

static void corrupt_and_expect(void (*corrupt)(kdtree *, const scene *), const char *expect)
{
    scene s = random_scene(300, 99);
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0);
    cr_assert_eq(kdtree_check(&t, &s, err, sizeof err), 0, "%s", err);
    corrupt(&t, &s);
    cr_assert_eq(kdtree_check(&t, &s, err, sizeof err), -1, "the checker missed: %s", expect);
    cr_assert(strstr(err, expect), "message '%s' should mention '%s'", err, expect);
    kdtree_free(&t);
    scene_free(&s);
}

static uint32_t first_leaf_with_refs(const kdtree *t)
{
    for (uint32_t i = 0; i < t->n_nodes; i++)
        if (kdtree_is_leaf(t->nodes[i]) && kdtree_count(t->nodes[i]) >= 2) return i;
    cr_assert_fail("no leaf with two references");
    return 0;
}

static void drop_references(kdtree *t, const scene *s)
{
    (void)s; /* empty every leaf holding triangle 0 */
    for (uint32_t i = 0; i < t->n_nodes; i++)
        if (kdtree_is_leaf(t->nodes[i]))
            for (uint32_t k = 0; k < kdtree_count(t->nodes[i]); k++)
                if (t->refs[t->nodes[i].first + k] == 0) t->nodes[i] = kdtree_make_leaf(0, 0);
}
static void split_outside_box(kdtree *t, const scene *s)
{
    uint32_t a = kdtree_axis(t->nodes[0]);
    t->nodes[0].split = s->hi[a] + 1.0f;
}
static void reference_out_of_range(kdtree *t, const scene *s)
{
    t->refs[t->nodes[first_leaf_with_refs(t)].first] = s->n_triangles;
}
static void duplicate_in_leaf(kdtree *t, const scene *s)
{
    (void)s;
    kdtree_node n = t->nodes[first_leaf_with_refs(t)];
    t->refs[n.first + 1] = t->refs[n.first];
}
static void child_cycle(kdtree *t, const scene *s)
{
    (void)s;
    t->nodes[0] = kdtree_make_inner(kdtree_axis(t->nodes[0]), t->nodes[0].split, 0);
}
/* The root's children moved one node on: a pair the GPU reads as one load
 * must start at an odd index (kdtree.h). */
static void even_left_child(kdtree *t, const scene *s)
{
    (void)s;
    cr_assert_gt(t->n_nodes, 3u);
    t->nodes[0] = kdtree_make_inner(kdtree_axis(t->nodes[0]), t->nodes[0].split, kdtree_left(t->nodes[0]) + 1);
}
/* Moves a leaf's reference to a triangle far from the leaf's box. */
static void far_reference(kdtree *t, const scene *s)
{
    float box_lo[3], box_hi[3];
    uint32_t far_tri = 0;
    float best = -1.0f;
    kdtree_node n = t->nodes[first_leaf_with_refs(t)];
    kdtree_triangle_box(s->positions, s->triangles, t->refs[n.first], box_lo, box_hi);
    for (uint32_t i = 0; i < s->n_triangles; i++) {
        float lo[3], hi[3];
        kdtree_triangle_box(s->positions, s->triangles, i, lo, hi);
        float dist = fabsf(lo[0] - box_lo[0]) + fabsf(lo[1] - box_lo[1]) + fabsf(lo[2] - box_lo[2]);
        if (dist > best) best = dist, far_tri = i;
    }
    t->refs[n.first] = far_tri;
}

Test(checker, finds_unreferenced_triangle) { corrupt_and_expect(drop_references, "referenced by no leaf"); }
Test(checker, finds_split_outside_box) { corrupt_and_expect(split_outside_box, "outside its box"); }
Test(checker, finds_reference_out_of_range) { corrupt_and_expect(reference_out_of_range, "out of range"); }
Test(checker, finds_duplicate_reference) { corrupt_and_expect(duplicate_in_leaf, "referenced twice"); }
Test(checker, finds_bad_child_index) { corrupt_and_expect(child_cycle, "child index"); }
Test(checker, finds_even_left_child) { corrupt_and_expect(even_left_child, "has an even index"); }
Test(checker, finds_reference_outside_leaf_box) { corrupt_and_expect(far_reference, "does not overlap"); }
