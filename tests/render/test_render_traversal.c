/* test_render_traversal.c - the k-d tree traversal (kdtree_trace) against
 * brute force.
 *
 * Oracles: brute_force_trace over every triangle, for random rays of
 * several kinds (among them rays aimed exactly at the meshes' vertices and
 * edges, and rays on and in split planes) through CPU trees of procedural
 * and real scenes, for hand-made trees with known answers, and through
 * validate_camera_rays_cpu; a closed mesh built here, from inside which
 * every ray must hit it; and a deliberately corrupted tree, which shows
 * that the comparison does catch a broken tree. */
#include "test_render.h"

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
 * group of rays gets about this many tests, within [min_rays, max_rays]
 * (budget and bounds 1 in KDA_TEST_SHARE of these in the sanitized build). */
#define BRUTE_FORCE_BUDGET 100000000ull

static uint32_t rays_within_budget(uint32_t n_triangles, uint64_t budget, uint32_t min_rays, uint32_t max_rays)
{
    budget /= KDA_TEST_SHARE; /* and the bounds with it: the sanitized build's share */
    min_rays /= KDA_TEST_SHARE;
    max_rays /= KDA_TEST_SHARE;
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
        render_options o = render_default_options(&views[i]);
        cr_assert_eq(validate_camera_rays_cpu(&t, s, &o, n, &v, err, sizeof err), 0, "%s: %s", label, err);
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
