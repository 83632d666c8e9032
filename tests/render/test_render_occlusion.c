/* test_render_occlusion.c - occlusion queries (shadow and ambient-occlusion
 * rays) through the tree, and the images and validation that use them.
 *
 * Oracles: brute_force_occluded (every triangle tested) for each query,
 * and the closest hit (kdtree_trace, itself checked against brute force in
 * test_render_traversal.c): a ray is occluded before t_max exactly when
 * its closest hit lies before t_max.  Images: the same input gives the same
 * bytes, and an ambient-occlusion radius too short to reach anything
 * leaves every pixel that shows the scene at full light. */
#include "test_render.h"

/* Queries a scene (1 in KDA_TEST_SHARE in the sanitized build, tests/CMakeLists.txt). */
#define OCCLUSION_QUERIES (3000u / KDA_TEST_SHARE)

/* A ray from inside the scene's box (or from outside it, toward it) with
 * a random length: an infinite one, one within the box, or a tiny one. */
static float random_query(rng *g, const scene *s, ray *r)
{
    float diag = box_diagonal(s->lo, s->hi), lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
        float pad = 0.2f * (s->hi[a] - s->lo[a]);
        lo[a] = s->lo[a] - pad;
        hi[a] = s->hi[a] + pad;
    }
    rng_point_in_box(g, lo, hi, r->o);
    rng_direction(g, r->d);
    switch (rng_below(g, 4)) {
    case 0: return INFINITY;
    case 1: return 1e-3f * diag * rng_unit(g);
    default: return diag * rng_unit(g);
    }
}

static void expect_queries_agree(const scene *s, uint32_t n_queries, uint64_t seed)
{
    kdtree t = build_tree(s);
    trace_scene ts = trace_scene_of(&t, s);
    rng g = {seed};
    uint32_t occluded = 0;
    for (uint32_t i = 0; i < n_queries; i++) {
        ray r;
        float t_max = random_query(&g, s, &r);
        int tree = kdtree_occluded(&ts, &r, t_max);
        int brute = brute_force_occluded(s->positions, s->triangles, s->n_triangles, &r, t_max);
        cr_assert_eq(tree, brute, "query %u (t_max %g): tree %d, brute force %d", i, (double)t_max, tree, brute);
        ray_hit closest = trace_tree(&t, s, &r);
        cr_assert_eq(tree, closest.tri != RAY_NO_HIT && closest.t < t_max,
                     "query %u: occluded %d, but the closest hit is at %g of %g", i, tree, (double)closest.t,
                     (double)t_max);
        occluded += (uint32_t)tree;
    }
    cr_expect(occluded > n_queries / 20 && occluded < n_queries - n_queries / 20,
              "%u of %u queries occluded: too few either way to test both answers", occluded, n_queries);
    kdtree_free(&t);
}

Test(occlusion, agrees_with_brute_force_on_generated_scenes)
{
    const char *names[] = {"atrium", "spheres", "stacked", "coincident"};
    for (int i = 0; i < 4; i++) {
        scene s = generated_scene(names[i], 20000);
        expect_queries_agree(&s, OCCLUSION_QUERIES, 11 + (uint64_t)i);
        scene_free(&s);
    }
}

Test(occlusion, agrees_with_brute_force_on_the_teapot)
{
    scene s = real_scene("teapot");
    expect_queries_agree(&s, OCCLUSION_QUERIES, 5);
    scene_free(&s);
}

static render_options ao_options(const scene *s, uint32_t width, uint32_t height, float radius_share)
{
    camera c = framed_camera(s, width, height);
    render_options o = render_default_options(&c);
    o.mode = SHADE_AO;
    o.ao_rays = 4;
    o.ao_radius = radius_share * box_diagonal(s->lo, s->hi);
    return o;
}

/* The shadow rays and ambient-occlusion rays of the image's hits, against
 * brute force, through the validation the command line runs. */
Test(occlusion, shadow_and_ao_rays_validate)
{
    scene s = generated_scene("atrium", 20000);
    kdtree t = build_tree(&s);
    render_options o = ao_options(&s, 64, 48, 0.1f);
    o.shadows = 1;
    validation v;
    char err[512];
    cr_assert_eq(validate_camera_rays_cpu(&t, &s, &o, 600 / KDA_TEST_SHARE, &v, err, sizeof err), 0, "%s", err);
    cr_expect_eq(v.mismatches, 0, "%llu camera-ray mismatches: %s", (unsigned long long)v.mismatches, v.first);
    cr_expect_eq(v.occlusion_mismatches, 0, "%llu occlusion mismatches: %s",
                 (unsigned long long)v.occlusion_mismatches, v.first);
    cr_expect_eq(v.occlusion_rays, 5 * v.hits, "a shadow ray and 4 ao rays a hit: %llu for %llu hits",
                 (unsigned long long)v.occlusion_rays, (unsigned long long)v.hits);
    cr_expect(v.occluded > 0 && v.occluded < v.occlusion_rays, "%llu of %llu occluded",
              (unsigned long long)v.occluded, (unsigned long long)v.occlusion_rays);
    kdtree_free(&t);
    scene_free(&s);
}

static image render_ao(const kdtree *t, const scene *s, const render_options *o)
{
    image img;
    char err[512];
    cr_assert_eq(render_cpu(t, s, o, &img, NULL, err, sizeof err), 0, "%s", err);
    return img;
}

Test(occlusion, ao_images_are_deterministic_and_darken_with_the_radius)
{
    scene s = generated_scene("atrium", 20000);
    kdtree t = build_tree(&s);
    render_options wide = ao_options(&s, 64, 48, 0.2f), none = ao_options(&s, 64, 48, 1e-7f);
    image a = render_ao(&t, &s, &wide), b = render_ao(&t, &s, &wide), lit = render_ao(&t, &s, &none);
    size_t pixels = (size_t)a.width * a.height;
    cr_assert_eq(memcmp(a.rgb, b.rgb, 3 * pixels), 0, "the same ao image twice");
    camera c = framed_camera(&s, 64, 48);
    camera_basis basis;
    camera_make_basis(&c, s.lo, s.hi, &basis);
    uint32_t hits = 0, full = 0, darker = 0;
    for (uint32_t y = 0; y < a.height; y++)
        for (uint32_t x = 0; x < a.width; x++) {
            ray r = camera_ray(&basis, x, y);
            if (trace_tree(&t, &s, &r).tri == RAY_NO_HIT) continue;
            size_t i = 3 * ((size_t)y * a.width + x);
            hits++;
            full += lit.rgb[i] == shade_quantize(0.92f);
            darker += a.rgb[i] < lit.rgb[i];
            cr_assert_leq(a.rgb[i], lit.rgb[i], "pixel %u,%u: a longer radius never lightens", x, y);
        }
    cr_expect_gt(hits, pixels / 10, "the view shows the scene: %u of %zu pixels", hits, pixels);
    cr_expect_geq(full, hits - hits / 100, "radius ~0: %u of %u hits at full light", full, hits);
    cr_expect_gt(darker, hits / 10, "radius 0.2 of the diagonal: %u of %u hits darker", darker, hits);
    image_free(&a);
    image_free(&b);
    image_free(&lit);
    kdtree_free(&t);
    scene_free(&s);
}
