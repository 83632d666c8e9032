/* test_gpu_render.c - the GPU ray caster against the CPU one.  Skips,
 * saying why, when no usable GPU is present.
 *
 * Oracles: the CPU ray caster (same tree uploaded: the images must be
 * identical byte for byte, since both run the same code without FMA) and
 * brute force over all triangles (validate_camera_rays_gpu).  The image of
 * the GPU-built tree may differ from the CPU-built tree's only where two
 * triangles tie for the closest hit (shared edges): at most 0.1% of pixels. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_build.h"
#include "gpu_render.h"
#include "render.h"

static char err[512];

static void require_gpu(void)
{
    char why[256];
    if (gpu_device_check(why, sizeof why)) cr_skip_test("no GPU to test on: %s", why);
}

static void load_shared(const char *file, scene *s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KDA_SHARED_SCENES, file);
    cr_assert_eq(scene_load(path, s, err, sizeof err), 0, "%s", err);
}

static render_options options_for(const scene *s, shade_mode mode, int shadows)
{
    render_options o;
    memset(&o, 0, sizeof o);
    o.cam = (camera){{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, 320, 240};
    camera_frame(s->lo, s->hi, &o.cam);
    o.mode = mode;
    o.shadows = shadows;
    o.ao_rays = 4;
    float d[3] = {s->hi[0] - s->lo[0], s->hi[1] - s->lo[1], s->hi[2] - s->lo[2]};
    o.ao_radius = 0.1f * sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    return o;
}

static size_t differing_bytes(const image *a, const image *b)
{
    size_t n = 0;
    for (size_t i = 0; i < (size_t)a->width * a->height * 3; i++) n += a->rgb[i] != b->rgb[i];
    return n;
}

/* The CPU tree rendered on both sides: the same bytes in every mode. */
static void same_image(const scene *s, const char *file)
{
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(s, &t, NULL, err, sizeof err), 0, "%s", err);
    gpu_scene g;
    gpu_tree gt;
    cr_assert_eq(gpu_scene_upload(s, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu_tree_upload(&t, &gt, err, sizeof err), 0, "%s", err);
    for (int mode = SHADE_DIFFUSE; mode <= SHADE_AO; mode++) { /* shadows with diffuse and ao shading */
        render_options o = options_for(s, (shade_mode)mode, mode == SHADE_DIFFUSE || mode == SHADE_AO);
        image cpu, gpu;
        gpu_render_stats st;
        cr_assert_eq(render_cpu(&t, s, &o, &cpu, NULL, err, sizeof err), 0, "%s", err);
        cr_assert_eq(render_gpu(&gt, &g, &o, 2, &gpu, &st, err, sizeof err), 0, "%s", err);
        cr_assert_eq(differing_bytes(&cpu, &gpu), 0, "%s mode %d: GPU and CPU images differ", file, mode);
        if (cpu.counts)
            cr_assert_eq(memcmp(cpu.counts, gpu.counts, (size_t)cpu.width * cpu.height * 4), 0,
                         "%s mode %d: per-pixel counts differ", file, mode);
        image_free(&cpu);
        image_free(&gpu);
    }
    gpu_tree_free(&gt);
    gpu_scene_free(&g);
    kdtree_free(&t);
}

static void same_tree_same_image(const char *file)
{
    require_gpu();
    scene s;
    load_shared(file, &s);
    same_image(&s, file);
    scene_free(&s);
}

/* A numerically extreme scene, scaled as kdalloc loads it. */
static void same_image_generated(const char *name, uint64_t n)
{
    require_gpu();
    scene s;
    cr_assert_eq(scene_generate(name, n, &s, err, sizeof err), 0, "%s", err);
    scene_normalize(&s);
    same_image(&s, name);
    scene_free(&s);
}

Test(gpu_render, same_image_as_cpu_huge, .timeout = 120) { same_image_generated("huge", 12002); }
Test(gpu_render, same_image_as_cpu_wide, .timeout = 120) { same_image_generated("wide", 12002); }
Test(gpu_render, same_image_as_cpu_tilted, .timeout = 120) { same_image_generated("tilted", 20000); }
Test(gpu_render, same_image_as_cpu_coincident, .timeout = 120) { same_image_generated("coincident", 10000); }

Test(gpu_render, same_image_as_cpu_sponza, .timeout = 120) { same_tree_same_image("sponza.obj.gz"); }
Test(gpu_render, same_image_as_cpu_bunny, .timeout = 120) { same_tree_same_image("bunny.obj.gz"); }

/* Each builder's own tree: the pictures agree up to ties. */
/* The scene uploaded and its tree built on the GPU (pool 200x). */
static void gpu_built(const scene *s, gpu_scene *g, gpu_tree *gt)
{
    gpu_build_stats bst;
    gpu_build_options bo = {.pool_factor = 200.0, .repeat = 1};
    cr_assert_eq(gpu_scene_upload(s, g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu_build(g, &bo, gt, &bst, err, sizeof err), 0, "%s", err);
}

Test(gpu_render, gpu_tree_and_cpu_tree_agree, .timeout = 120)
{
    require_gpu();
    scene s;
    load_shared("sibenik.obj.gz", &s);
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0, "%s", err);
    gpu_scene g;
    gpu_tree gt;
    gpu_built(&s, &g, &gt);
    render_options o = options_for(&s, SHADE_DIFFUSE, 0);
    o.cam.width = 640;
    o.cam.height = 480;
    image cpu, gpu;
    gpu_render_stats st;
    cr_assert_eq(render_cpu(&t, &s, &o, &cpu, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(render_gpu(&gt, &g, &o, 2, &gpu, &st, err, sizeof err), 0, "%s", err);
    size_t pixels = (size_t)cpu.width * cpu.height, differ = 0;
    for (size_t i = 0; i < pixels; i++) differ += memcmp(cpu.rgb + 3 * i, gpu.rgb + 3 * i, 3) != 0;
    cr_assert_leq(differ, pixels / 1000, "%zu of %zu pixels differ", differ, pixels);
    cr_log_info("GPU tree vs CPU tree: %zu of %zu pixels differ", differ, pixels);
    validation v;
    cr_assert_eq(validate_camera_rays_gpu(&gt, &g, &o, 0, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v.rays, pixels);
    cr_assert_eq(v.mismatches, 0, "%s", v.first);
    image_free(&cpu);
    image_free(&gpu);
    gpu_tree_free(&gt);
    gpu_scene_free(&g);
    kdtree_free(&t);
    scene_free(&s);
}

/* The GPU-built tree's shadow and ambient-occlusion rays, asked on the GPU
 * of the tree and of brute force: the same answers, and both answers
 * occur. */
Test(gpu_render, occlusion_rays_validate, .timeout = 120)
{
    require_gpu();
    scene s;
    load_shared("sponza.obj.gz", &s);
    gpu_scene g;
    gpu_tree gt;
    gpu_built(&s, &g, &gt);
    render_options o = options_for(&s, SHADE_AO, 1);
    validation v;
    cr_assert_eq(validate_camera_rays_gpu(&gt, &g, &o, 3000, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v.mismatches, 0, "%s", v.first);
    cr_assert_eq(v.occlusion_mismatches, 0, "%s", v.first);
    cr_assert_eq(v.occlusion_rays, 5 * v.hits, "%llu secondary rays for %llu hits",
                 (unsigned long long)v.occlusion_rays, (unsigned long long)v.hits);
    cr_assert(v.occluded > 0 && v.occluded < v.occlusion_rays, "%llu of %llu occluded",
              (unsigned long long)v.occluded, (unsigned long long)v.occlusion_rays);
    gpu_tree_free(&gt);
    gpu_scene_free(&g);
    scene_free(&s);
}

/* The validation can fail: an emptied leaf is noticed. */
Test(gpu_render, validation_detects_a_broken_tree, .timeout = 120)
{
    require_gpu();
    scene s;
    load_shared("bunny.obj.gz", &s);
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0, "%s", err);
    uint32_t emptied = 0;
    for (uint32_t i = 0; i < t.n_nodes && emptied < 200; i++)
        if (kdtree_is_leaf(t.nodes[i]) && kdtree_count(t.nodes[i]) > 0) {
            t.nodes[i] = kdtree_make_leaf(0, 0);
            emptied++;
        }
    gpu_scene g;
    gpu_tree gt;
    cr_assert_eq(gpu_scene_upload(&s, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu_tree_upload(&t, &gt, err, sizeof err), 0, "%s", err);
    render_options o = options_for(&s, SHADE_DIFFUSE, 0);
    validation v;
    cr_assert_eq(validate_camera_rays_gpu(&gt, &g, &o, 0, &v, err, sizeof err), 0, "%s", err);
    cr_assert_gt(v.mismatches, 0, "200 emptied leaves went unnoticed");
    gpu_tree_free(&gt);
    gpu_scene_free(&g);
    kdtree_free(&t);
    scene_free(&s);
}

Test(gpu_render, bad_camera_is_an_error)
{
    require_gpu();
    scene s;
    load_shared("teapot.obj.gz", &s);
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0, "%s", err);
    gpu_scene g;
    gpu_tree gt;
    cr_assert_eq(gpu_scene_upload(&s, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu_tree_upload(&t, &gt, err, sizeof err), 0, "%s", err);
    render_options o = options_for(&s, SHADE_DIFFUSE, 0);
    o.cam.fov_deg = 0.0f;
    image img;
    gpu_render_stats st;
    cr_assert_eq(render_gpu(&gt, &g, &o, 1, &img, &st, err, sizeof err), -1);
    cr_assert(strstr(err, "field of view"), "%s", err);
    gpu_tree_free(&gt);
    gpu_scene_free(&g);
    kdtree_free(&t);
    scene_free(&s);
}

/* A tree whose children sit where the GPU cannot read a pair in one load
 * is refused at upload, naming the node, and leaves nothing allocated. */
Test(gpu_render, upload_refuses_a_pair_at_an_even_index)
{
    require_gpu();
    scene s;
    load_shared("teapot.obj.gz", &s);
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_gt(t.n_nodes, 3u);
    t.nodes[0] = kdtree_make_inner(kdtree_axis(t.nodes[0]), t.nodes[0].split, kdtree_left(t.nodes[0]) + 1);
    gpu_tree gt;
    cr_assert_eq(gpu_tree_upload(&t, &gt, err, sizeof err), -1);
    cr_assert(strstr(err, "node 0: left child 2 has an even index"), "%s", err);
    cr_assert_null(gt.nodes);
    kdtree_free(&t);
    scene_free(&s);
}

/* A GPU-built tree's reference array may hold gaps between leaves, whose
 * words are whatever the memory held (gpu_build.h).  The CPU tree with
 * words naming no triangle before every leaf renders as the tree without
 * them, byte for byte, and validates (memcheck, run on this test by
 * bench/device_checks.sh, sees any read through a gap). */
Test(gpu_render, gaps_between_leaves_are_never_read, .timeout = 120)
{
    require_gpu();
    scene s;
    load_shared("teapot.obj.gz", &s);
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(&s, &t, NULL, err, sizeof err), 0, "%s", err);
    const uint32_t gap[3] = {0xffffffffu, s.n_triangles, 0x7fffffffu};
    uint32_t leaves = 0;
    for (uint32_t i = 0; i < t.n_nodes; i++) leaves += kdtree_is_leaf(t.nodes[i]);
    kdtree gapped = t;
    gapped.n_refs = t.n_refs + 3 * leaves;
    gapped.nodes = malloc((size_t)t.n_nodes * sizeof *gapped.nodes);
    gapped.refs = malloc((size_t)gapped.n_refs * sizeof *gapped.refs);
    cr_assert(gapped.nodes && gapped.refs);
    uint32_t at = 0;
    for (uint32_t i = 0; i < t.n_nodes; i++) {
        gapped.nodes[i] = t.nodes[i];
        if (!kdtree_is_leaf(t.nodes[i])) continue;
        for (int k = 0; k < 3; k++) gapped.refs[at++] = gap[k];
        uint32_t count = kdtree_count(t.nodes[i]);
        memcpy(gapped.refs + at, t.refs + t.nodes[i].first, count * sizeof *t.refs);
        gapped.nodes[i] = kdtree_make_leaf(at, count);
        at += count;
    }
    cr_assert_leq(at, gapped.n_refs);
    gpu_scene g;
    gpu_tree gt;
    cr_assert_eq(gpu_scene_upload(&s, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu_tree_upload(&gapped, &gt, err, sizeof err), 0, "%s", err);
    render_options o = options_for(&s, SHADE_AO, 1);
    image cpu, gpu;
    gpu_render_stats st;
    cr_assert_eq(render_cpu(&t, &s, &o, &cpu, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(render_gpu(&gt, &g, &o, 1, &gpu, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(differing_bytes(&cpu, &gpu), 0, "the tree with gaps renders otherwise");
    validation v;
    cr_assert_eq(validate_camera_rays_gpu(&gt, &g, &o, 2000, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v.mismatches, 0, "%s", v.first);
    cr_assert_eq(v.occlusion_mismatches, 0, "%s", v.first);
    image_free(&cpu);
    image_free(&gpu);
    gpu_tree_free(&gt);
    gpu_scene_free(&g);
    kdtree_free(&gapped);
    kdtree_free(&t);
    scene_free(&s);
}
