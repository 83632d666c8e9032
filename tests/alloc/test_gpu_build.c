/* test_gpu_build.c - the GPU builder, with the allocator this binary was
 * compiled with (test_gpu_build_<allocator>).  Skips, saying why, when no
 * usable GPU is present.
 *
 * Oracles: the invariants of kdtree_check on the downloaded tree; closest
 * hits of rays through it against brute force over all triangles; the SAH
 * cost of the CPU reference builder's tree (the GPU's may be at most 10%
 * worse); repeated builds, which must all be valid and identical in
 * structure; and builds from a pool that grows (--pool auto), which must
 * make the same tree with the same allocator workload as a fixed pool. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "gpu_build.h"
#include "gpu_render.h"
#include "kdtree.h"
#include "polygon_obj.h"
#include "render.h"
#include "scene.h"

static char err[512];

#if KDA_ALLOC_BUILDS
static void require_gpu(void)
{
    char why[256];
    if (gpu_device_check(why, sizeof why)) cr_skip_test("no GPU to test on: %s", why);
}

/* The paper's pool of 200x the root array. */
static gpu_build_options default_options(void)
{
    gpu_build_options o = {.pool_factor = 200.0, .repeat = 1};
    return o;
}

/* A camera looking at the scene from a random direction around it. */
static camera random_camera(const scene *s, uint32_t seed)
{
    camera c = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 60.0f, 200, 150};
    camera_frame(s->lo, s->hi, &c);
    float angle = (float)seed * 2.39996f, lift = (float)(seed % 5) * 0.3f - 0.5f;
    float d[3] = {c.eye[0] - c.target[0], c.eye[1] - c.target[1], c.eye[2] - c.target[2]};
    float r = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * (0.3f + 0.2f * (float)(seed % 4));
    c.eye[0] = c.target[0] + r * cosf(angle);
    c.eye[1] = c.target[1] + r * lift;
    c.eye[2] = c.target[2] + r * sinf(angle);
    return c;
}

typedef struct built {
    gpu_scene g;
    gpu_tree t;
    gpu_build_stats st;
    kdtree host;
} built;

static void build_on_gpu(const scene *s, const gpu_build_options *o, built *b)
{
    cr_assert_eq(gpu_scene_upload(s, &b->g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu_build(&b->g, o, &b->t, &b->st, err, sizeof err), 0, "%s: %s", kda_allocator_name(), err);
    cr_assert_eq(gpu_tree_download(&b->t, &b->host, err, sizeof err), 0, "%s", err);
}

static void free_built(built *b)
{
    kdtree_free(&b->host);
    gpu_tree_free(&b->t);
    gpu_scene_free(&b->g);
}

/* The statistics of built tree t (freed here); *valid: whether its
 * invariants hold (kdtree_check, whose message is left in err). */
static kdtree_stats tree_stats(gpu_tree *t, const scene *s, int *valid)
{
    kdtree host;
    cr_assert_eq(gpu_tree_download(t, &host, err, sizeof err), 0, "%s", err);
    *valid = kdtree_check(&host, s, err, sizeof err) == 0;
    kdtree_stats ks;
    kdtree_compute_stats(&host, s->n_triangles, &ks);
    kdtree_free(&host);
    gpu_tree_free(t);
    return ks;
}

/* ---- --pool auto: a pool that grows as the build needs it ---- */

static gpu_build_options auto_options(void)
{
    gpu_build_options o = default_options();
    o.pool_auto = 1;
    return o;
}

/* Builds s again with the growable pool of `grow` and compares with the
 * fixed pool's build `fixed`: the same tree (node, leaf and reference
 * counts, depth, SAH cost), the same allocator workload (N_alloc and the
 * requests' mean size: a node that parked asks again, and its first,
 * given-back request is not counted), and the grown tree valid and
 * hit-for-hit right.  An allocator that cannot grow builds on a fixed pool
 * and says why.  Returns the growable build's statistics. */
static gpu_build_stats expect_same_when_grown(const scene *s, const char *name, const built *fixed,
                                              const gpu_build_options *grow)
{
    built b;
    build_on_gpu(s, grow, &b);
    const char *why;
    if (kda_allocator_grows(&why)) {
        cr_assert(b.st.pool_grows, "%s can grow", kda_allocator_name());
        cr_assert_leq(b.st.pool_start_bytes, b.st.pool_bytes);
    } else {
        cr_assert(!b.st.pool_grows);
        cr_assert(b.st.pool_fixed_why && !strcmp(b.st.pool_fixed_why, why), "why: %s", b.st.pool_fixed_why);
    }
    cr_assert_eq(kdtree_check(&b.host, s, err, sizeof err), 0, "%s: %s", name, err);
    kdtree_stats x, y;
    kdtree_compute_stats(&fixed->host, s->n_triangles, &x);
    kdtree_compute_stats(&b.host, s->n_triangles, &y);
    cr_assert_eq(y.n_nodes, x.n_nodes, "%s: %u nodes grown, %u fixed", name, y.n_nodes, x.n_nodes);
    cr_assert_eq(y.n_leaves, x.n_leaves, "%s", name);
    cr_assert_eq(y.n_refs, x.n_refs, "%s", name);
    cr_assert_eq(y.max_depth, x.max_depth, "%s", name);
    cr_assert_eq(y.sah_cost, x.sah_cost, "%s: SAH %.4f grown, %.4f fixed", name, y.sah_cost, x.sah_cost);
    cr_assert_eq(b.st.n_alloc, fixed->st.n_alloc, "%s: N_alloc %llu grown, %llu fixed", name,
                 (unsigned long long)b.st.n_alloc, (unsigned long long)fixed->st.n_alloc);
    cr_assert_eq(b.st.alloc_mean, fixed->st.alloc_mean, "%s", name);
    camera c = random_camera(s, 7);
    validation v;
    render_options vo = render_default_options(&c);
    cr_assert_eq(validate_camera_rays_gpu(&b.t, &b.g, &vo, 4000, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v.mismatches, 0, "%s: %s", name, v.first);
    cr_log_info("%s (%s): pool %s, %.1f MiB from %.1f MiB in %u steps (%.3f ms), build %.3f ms (fixed: %.3f)", name,
                kda_allocator_name(), b.st.pool_grows ? "grown" : "fixed", b.st.pool_bytes / 1048576.0,
                b.st.pool_start_bytes / 1048576.0, b.st.grow_steps, b.st.grow_ms, b.st.tree.build_ms,
                fixed->st.tree.build_ms);
    gpu_build_stats st = b.st;
    free_built(&b);
    return st;
}

/* Every check of one GPU-built scene: a valid tree, its SAH cost within 10%
 * of the CPU builder's, its peak pool use, its rays against brute force, and
 * the same tree from a pool that grows. */
static void check_scene(const scene *s, const char *name, double pool_factor)
{
    require_gpu();
    gpu_build_options o = default_options();
    o.pool_factor = pool_factor;
    built b;
    build_on_gpu(s, &o, &b);
    cr_assert_eq(kdtree_check(&b.host, s, err, sizeof err), 0, "%s: %s", name, err);
    kdtree_stats gpu_st;
    kdtree_compute_stats(&b.host, s->n_triangles, &gpu_st);

    kdtree cpu;
    kdtree_stats cpu_st;
    cr_assert_eq(kdtree_build_cpu(s, &cpu, &cpu_st, err, sizeof err), 0, "%s", err);
    cr_assert_leq(gpu_st.sah_cost, 1.10 * cpu_st.sah_cost, "%s: GPU tree SAH cost %.2f vs CPU %.2f", name,
                  gpu_st.sah_cost, cpu_st.sah_cost);
    cr_log_info("%s (%s): SAH GPU %.2f CPU %.2f (%.1f%%), N_ref %.2f, %llu allocations, %.3f ms", name,
                kda_allocator_name(), gpu_st.sah_cost, cpu_st.sah_cost,
                100.0 * (gpu_st.sah_cost / cpu_st.sah_cost - 1.0), gpu_st.refs_per_triangle,
                (unsigned long long)b.st.n_alloc, b.st.tree.build_ms);
    kdtree_free(&cpu);
    /* The most bytes live at once lies between the root's array and all
     * requests together (a build that counted the root's free but not its
     * allocation reported 2^64 - 4 bytes). */
    double requested = (double)b.st.n_alloc * b.st.alloc_mean;
    cr_assert_geq(b.st.peak_pool_bytes, 4ull * s->n_triangles, "%s: peak %llu bytes", name,
                  (unsigned long long)b.st.peak_pool_bytes);
    cr_assert_leq((double)b.st.peak_pool_bytes, requested * (1.0 + 1e-9), "%s: peak %llu bytes of %.0f requested", name,
                  (unsigned long long)b.st.peak_pool_bytes, requested);

    for (uint32_t view = 0; view < 3; view++) {
        camera c = random_camera(s, view + 1);
        validation v;
        render_options vo = render_default_options(&c);
        cr_assert_eq(validate_camera_rays_gpu(&b.t, &b.g, &vo, 4000, &v, err, sizeof err), 0, "%s", err);
        cr_assert_eq(v.mismatches, 0, "%s view %u: %s", name, view, v.first);
        cr_assert_eq(v.rays, 4000);
    }
    gpu_build_options grow = auto_options();
    grow.pool_factor = pool_factor; /* where the allocator cannot grow */
    expect_same_when_grown(s, name, &b, &grow); /* and the same tree from a pool that grows */
    free_built(&b);
}

static void check_generated_in(const char *name, uint64_t n, double pool_factor)
{
    scene s;
    cr_assert_eq(scene_generate(name, n, &s, err, sizeof err), 0, "%s", err);
    scene_normalize(&s); /* as kdalloc loads it: "huge" is scaled */
    check_scene(&s, name, pool_factor);
    scene_free(&s);
}

static void check_generated(const char *name, uint64_t n) { check_generated_in(name, n, 200.0); }

/* The extreme scenes straddle far more (their trees hold 10-40 references a
 * triangle): a pool of 2000x, so that the allocators that never free get
 * through them too; the pool is not what these tests are about. */
static void check_extreme(const char *name, uint64_t n) { check_generated_in(name, n, 2000.0); }

static void load_shared(const char *file, scene *s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KDA_SHARED_SCENES, file);
    cr_assert_eq(scene_load(path, s, err, sizeof err), 0, "%s", err);
}

static void check_shared(const char *file)
{
    scene s;
    load_shared(file, &s);
    check_scene(&s, file, 200.0);
    scene_free(&s);
}

Test(gpu_build, atrium, .timeout = 300) { check_generated("atrium", 0); }
Test(gpu_build, spheres, .timeout = 300) { check_generated("spheres", 200000); }
Test(gpu_build, flat, .timeout = 300) { check_generated("flat", 20000); }
Test(gpu_build, stacked, .timeout = 300) { check_generated("stacked", 5000); }
Test(gpu_build, one_triangle, .timeout = 300) { check_generated("flat", 1); }
Test(gpu_build, huge, .timeout = 300) { check_extreme("huge", 12002); }
Test(gpu_build, wide, .timeout = 300) { check_extreme("wide", 12002); }
Test(gpu_build, tilted, .timeout = 300) { check_extreme("tilted", 20000); }
Test(gpu_build, coincident, .timeout = 300) { check_extreme("coincident", 10000); }
Test(gpu_build, teapot, .timeout = 300) { check_shared("teapot.obj.gz"); }
Test(gpu_build, armadillo, .timeout = 300) { check_shared("armadillo_lowres.obj.gz"); }
Test(gpu_build, bunny, .timeout = 300) { check_shared("bunny.obj.gz"); }
Test(gpu_build, hand, .timeout = 300) { check_shared("hand.obj.gz"); }
Test(gpu_build, sponza, .timeout = 300) { check_shared("sponza.obj.gz"); }
Test(gpu_build, sibenik, .timeout = 300) { check_shared("sibenik.obj.gz"); }
Test(gpu_build, buddha, .timeout = 300) { check_shared("buddha_100k.obj.gz"); }
Test(gpu_build, conference, .timeout = 300) { check_shared("conference.obj.gz"); }
Test(gpu_build, dragon, .timeout = 300) { check_shared("dragon.obj.gz"); }

/* The fan of 2,000 slivers that meet at one corner (test_builder.c): the
 * reference budget (kdtree.h) holds the GPU's tree to 1024 references a
 * triangle as well, and the tree hits like brute force. */
Test(gpu_build, a_fan_of_slivers_keeps_to_the_reference_budget, .timeout = 300)
{
    require_gpu();
    enum { N = 2000 };
    char *text = fan_obj(N);
    cr_assert_not_null(text);
    scene s;
    cr_assert_eq(scene_parse_obj(text, strlen(text), "fan.obj", &s, err, sizeof err), 0, "%s", err);
    free(text);
    gpu_build_options o = default_options();
    o.pool_factor = 40000.0; /* an allocator that never frees keeps every level's arrays: about 22 x 1024 */
    built b;
    build_on_gpu(&s, &o, &b);
    cr_assert_eq(kdtree_check(&b.host, &s, err, sizeof err), 0, "%s", err);
    kdtree_stats ks; /* the leaves' references (the GPU's array may hold words between them) */
    kdtree_compute_stats(&b.host, s.n_triangles, &ks);
    cr_assert_leq(ks.n_refs, 1024ull * N, "%llu references for %d triangles", (unsigned long long)ks.n_refs, N);
    cr_log_info("fan (%s): %.1f references a triangle, %.3f ms", kda_allocator_name(), ks.refs_per_triangle,
                b.st.tree.build_ms);
    camera c = random_camera(&s, 5);
    validation v;
    render_options vo = render_default_options(&c);
    cr_assert_eq(validate_camera_rays_gpu(&b.t, &b.g, &vo, 4000, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v.mismatches, 0, "%s", v.first);
    free_built(&b);
    scene_free(&s);
}

/* A box less than 128 floats wide on one axis: x spans 100 floats near
 * 2^20 (lo + 12.5).  Of 100 triangles, 50 lie in the plane x = hi and 50
 * reach from lo to the float below hi.  The cheapest of the root's binned
 * planes is the top one on x (it would separate the two halves), but no
 * float below hi falls in its bin, so it cannot be made.  Unless
 * binned_split skips such planes (k_max), the build keeps all 100
 * triangles in one leaf, though x planes a bin lower beat the leaf's cost
 * (1692 against 2000).  The root must split, and the tree must be valid
 * and hit like brute force. */
static void narrow_axis_scene(scene *s)
{
    const float x0 = 1048576.0f, ulp = 0.125f, hi = x0 + 100 * ulp, below = x0 + 99 * ulp;
    memset(s, 0, sizeof *s);
    s->n_triangles = 100;
    s->n_vertices = 300;
    s->positions = malloc(sizeof(float) * 3 * s->n_vertices);
    s->triangles = malloc(sizeof(uint32_t) * 3 * s->n_triangles);
    cr_assert(s->positions && s->triangles);
    for (uint32_t i = 0; i < 100; i++) {
        float *v = &s->positions[9 * i];
        if (i < 50) { /* in the plane x = hi, short in y, across z */
            float y = 0.25f * (float)i;
            float tri[9] = {hi, y, 0.0f, hi, y + 0.1f, 0.0f, hi, y, 12.5f};
            memcpy(v, tri, sizeof tri);
        } else { /* from lo to the float below hi */
            float y = 0.125f * (float)(i - 50);
            float tri[9] = {x0, y, 0.0f, below, y, 0.0f, x0, y + 6.0f, 12.5f};
            memcpy(v, tri, sizeof tri);
        }
        for (uint32_t k = 0; k < 3; k++) s->triangles[3 * i + k] = 3 * i + k;
    }
    scene_update_bounds(s);
    cr_assert_eq(s->hi[0], hi);
}

Test(gpu_build, narrow_axis_splits, .timeout = 300)
{
    require_gpu();
    scene s;
    narrow_axis_scene(&s);
    gpu_build_options o = default_options();
    built b;
    build_on_gpu(&s, &o, &b);
    cr_assert_eq(kdtree_check(&b.host, &s, err, sizeof err), 0, "%s", err);
    kdtree_stats ks;
    kdtree_compute_stats(&b.host, s.n_triangles, &ks);
    kdtree cpu;
    kdtree_stats cpu_st;
    cr_assert_eq(kdtree_build_cpu(&s, &cpu, &cpu_st, err, sizeof err), 0, "%s", err);
    kdtree_free(&cpu);
    cr_log_info("narrow axis (%s): %u nodes, SAH GPU %.1f, CPU %.1f, one leaf %.1f", kda_allocator_name(), ks.n_nodes,
                ks.sah_cost, cpu_st.sah_cost, (double)kdtree_leaf_cost(s.n_triangles));
    cr_assert_gt(ks.n_nodes, 1, "the root of 100 triangles was kept as a leaf");
    cr_assert_lt(ks.sah_cost, kdtree_leaf_cost(s.n_triangles), "SAH %.1f", ks.sah_cost);
    camera c = random_camera(&s, 3);
    validation v;
    render_options vo = render_default_options(&c);
    cr_assert_eq(validate_camera_rays_gpu(&b.t, &b.g, &vo, 4000, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v.mismatches, 0, "%s", v.first);
    free_built(&b);
    scene_free(&s);
}

/* Twenty builds of one scene: every one valid, all of the same structure
 * (the split choices do not depend on timing; only the order of references
 * inside leaves may). */
Test(gpu_build, repeatable, .timeout = 300)
{
    require_gpu();
    scene s;
    load_shared("sibenik.obj.gz", &s);
    gpu_scene g;
    cr_assert_eq(gpu_scene_upload(&s, &g, err, sizeof err), 0, "%s", err);
    gpu_build_options o = default_options();
    kdtree_stats first = {0};
    for (int i = 0; i < 20; i++) {
        gpu_tree t;
        gpu_build_stats st;
        cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), 0, "build %d: %s", i, err);
        int valid;
        kdtree_stats ks = tree_stats(&t, &s, &valid);
        cr_assert(valid, "build %d: %s", i, err);
        if (i == 0) first = ks;
        cr_assert_eq(ks.n_nodes, first.n_nodes, "build %d: %u nodes, first build %u", i, ks.n_nodes, first.n_nodes);
        cr_assert_eq(ks.n_refs, first.n_refs, "build %d", i);
        cr_assert_eq(ks.sah_cost, first.sah_cost, "build %d", i);
    }
    gpu_scene_free(&g);
    scene_free(&s);
}

/* A task queue far too small: every overflow stops the build, which grows
 * the queue and builds again, warm-up and timed builds alike, until it
 * fits; never a hang (producers stop waiting for cells once a build has
 * failed, since taken tickets can leave cells that nobody will free). */
Test(gpu_build, queue_overflow_grows, .timeout = 300)
{
    require_gpu();
    scene s;
    load_shared("sponza.obj.gz", &s);
    gpu_build_options o = default_options();
    o.queue_capacity = 256; /* the root alone pushes 260 chunks (its SCATTER phase) */
    o.repeat = 3;
    built b;
    build_on_gpu(&s, &o, &b);
    cr_assert_eq(kdtree_check(&b.host, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.st.builds_timed, 3);
    free_built(&b);
    scene_free(&s);
}

/* A pool too small for the build: a clear error, no hang, no bad tree.
 * (AWMalloc never runs out: it overwrites; its wrap is reported instead.) */
Test(gpu_build, pool_too_small, .timeout = 300)
{
    require_gpu();
    scene s; /* large enough that CUDA's own heap cannot round the pool up to fit */
    cr_assert_eq(scene_generate("spheres", 2000000, &s, err, sizeof err), 0, "%s", err);
    gpu_scene g;
    cr_assert_eq(gpu_scene_upload(&s, &g, err, sizeof err), 0, "%s", err);
    gpu_build_options o = {.pool_factor = 1.5, .repeat = 1};
    gpu_tree t;
    gpu_build_stats st;
    if (kda_allocator_min_pool() > 1.5 * 4 * s.n_triangles) { /* Halloc: 1.5x is raised to its minimum; an explicit size below it is refused */
        o.pool_bytes = kda_allocator_min_pool() / 2;
        cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), -1);
        cr_assert(strstr(err, "needs a pool of at least"), "message: %s", err);
        gpu_scene_free(&g);
        scene_free(&s);
        return;
    }
    int rc = gpu_build(&g, &o, &t, &st, err, sizeof err);
#if KDA_ALLOC_WRAPS
    if (rc == 0) {
        cr_assert(st.pool_wrapped, "a pool of 1.5x the root array must wrap");
        gpu_tree_free(&t);
    } else {
        cr_assert(strstr(err, "overwritten") || strstr(err, "overwrote"), "%s", err);
    }
#else
    cr_assert_eq(rc, -1, "a pool of 1.5x the root array cannot hold the build");
    cr_assert(strstr(err, "pool exhausted after"), "message: %s", err);
    cr_assert_eq(st.pool_short, GPU_POOL_EXHAUSTED, "the cause, for the caller's advice: %d", st.pool_short);
    o = default_options();
#if KDA_ALLOC_SYS_HEAP == KDA_SYS_HEAP_ALL
    /* CUDA's heap cannot be resized once used: a clear error instead. */
    cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), -1);
    cr_assert(strstr(err, "needs a new process"), "message: %s", err);
#else
    /* The device is still usable: a proper pool builds. */
    cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), 0, "%s", err);
    gpu_tree_free(&t);
#endif
#endif
    gpu_scene_free(&g);
    scene_free(&s);
}

#if KDA_ALLOC_WRAPS
/* With a pool of 20x the root array, AWMalloc's ring wraps on Sponza and
 * may overwrite a live array in one build and not in the next, leaving a
 * valid tree but other requests.  A build that succeeds must report the
 * clean build's requests and, if its tree is valid (the caller checks a
 * wrapped pool's tree), the clean tree (its statistics are the warm-up
 * build's, its tree the last timed build's); else it fails naming the
 * cause: the wrap (two builds differ) or, when a kernel's own check read
 * an overwritten array, the reused live arrays.  Until the builds were
 * compared, one run in a few reported the requests of a corrupted warm-up
 * build beside a clean tree. */
Test(gpu_build, wrapped_pool_reports_no_other_workload, .timeout = 300)
{
    require_gpu();
    scene s;
    load_shared("sponza.obj.gz", &s);
    gpu_build_options o = default_options();
    built clean;
    build_on_gpu(&s, &o, &clean);
    kdtree_stats want;
    kdtree_compute_stats(&clean.host, s.n_triangles, &want);
    o.pool_factor = 20.0;
    o.repeat = 5;
    for (int i = 0; i < 3; i++) {
        gpu_tree t;
        gpu_build_stats st;
        if (gpu_build(&clean.g, &o, &t, &st, err, sizeof err)) {
            cr_assert(strstr(err, "wrapped around its pool") || strstr(err, "reused live arrays"), "run %d: %s", i, err);
            continue;
        }
        cr_assert(st.pool_wrapped, "a pool of 20x the root array must wrap on Sponza");
        int valid;
        kdtree_stats got = tree_stats(&t, &s, &valid);
        if (!valid) continue; /* the caller's check of a wrapped pool's tree (docs/builder.md) rejects it */
        cr_assert_eq(st.n_alloc, clean.st.n_alloc, "run %d: %llu requests reported, the clean build makes %llu", i,
                     (unsigned long long)st.n_alloc, (unsigned long long)clean.st.n_alloc);
        cr_assert_eq(st.alloc_mean, clean.st.alloc_mean, "run %d", i);
        cr_assert_eq(st.alloc_sigma, clean.st.alloc_sigma, "run %d", i);
        cr_assert_eq(got.n_nodes, want.n_nodes, "run %d", i);
        cr_assert_eq(got.n_refs, want.n_refs, "run %d", i);
        cr_assert_eq(got.sah_cost, want.sah_cost, "run %d", i);
    }
    free_built(&clean);
    scene_free(&s);
}
#endif

/* ---- --pool auto: a pool that grows as the build needs it ---- */

/* The paper's 200x pool and a growable one: the same tree (every scene's
 * test above compares them too). */
static gpu_build_stats check_grown_tree(const scene *s, const char *name, const gpu_build_options *grow)
{
    require_gpu();
    gpu_build_options fixed = default_options();
    built a;
    build_on_gpu(s, &fixed, &a);
    gpu_build_stats st = expect_same_when_grown(s, name, &a, grow);
    free_built(&a);
    return st;
}

Test(gpu_build, pool_auto_same_tree_sponza, .timeout = 300)
{
    scene s;
    load_shared("sponza.obj.gz", &s);
    gpu_build_options o = auto_options();
    o.repeat = 3; /* every timed build starts small and grows again */
    check_grown_tree(&s, "sponza", &o);
    scene_free(&s);
}

Test(gpu_build, pool_auto_same_tree_spheres, .timeout = 300)
{
    scene s;
    cr_assert_eq(scene_generate("spheres", 300000, &s, err, sizeof err), 0, "%s", err);
    gpu_build_options o = auto_options();
    check_grown_tree(&s, "spheres", &o);
    scene_free(&s);
}

/* A start of 1x the root array and growth by one step of a few MiB at a
 * time: the build parks and resumes many times (big nodes in flight, the
 * root's own array at first for the allocators with headers), and still
 * makes the same tree. */
Test(gpu_build, pool_auto_many_small_steps, .timeout = 300)
{
    const char *why;
    if (!kda_allocator_grows(&why)) cr_skip_test("%s cannot grow its pool: %s", kda_allocator_name(), why);
    scene s;
    cr_assert_eq(scene_generate("spheres", 2000000, &s, err, sizeof err), 0, "%s", err);
    gpu_build_options o = auto_options();
    o.pool_start = 1.0;
    /* AtomicMalloc never reuses: its pool must hold every request, so its
     * steps are larger (a pool has at most KDA_POOL_MAX_MAPS mappings). */
    o.pool_step = kda_allocator_frees() ? 2u << 20 : 32u << 20;
    gpu_build_stats st = check_grown_tree(&s, "spheres 2M", &o);
    cr_assert_geq(st.grow_steps, 4, "%u growth steps", st.grow_steps);
    scene_free(&s);
}

/* A growable pool that may not grow far enough: one clear error, and the
 * GPU is still usable. */
Test(gpu_build, pool_auto_limit_reached, .timeout = 300)
{
    require_gpu();
    const char *why;
    if (!kda_allocator_grows(&why)) cr_skip_test("%s cannot grow its pool: %s", kda_allocator_name(), why);
    scene s;
    cr_assert_eq(scene_generate("spheres", 2000000, &s, err, sizeof err), 0, "%s", err);
    gpu_scene g;
    cr_assert_eq(gpu_scene_upload(&s, &g, err, sizeof err), 0, "%s", err);
    gpu_build_options o = auto_options();
    o.pool_start = 1.0;
    o.pool_limit = 12u << 20; /* 1.5x the root array */
    gpu_tree t;
    gpu_build_stats st;
    cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), -1);
    cr_assert(strstr(err, "pool exhausted after") && strstr(err, "cannot grow past"), "message: %s", err);
    o = auto_options();
    cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), 0, "%s", err);
    gpu_tree_free(&t);
    gpu_scene_free(&g);
    scene_free(&s);
}

/* The pool raised to the allocator's minimum where the factor asks for less. */
Test(gpu_build, minimum_pool, .timeout = 300)
{
    require_gpu();
    if (!kda_allocator_min_pool()) cr_skip_test("%s has no minimum pool", kda_allocator_name());
    scene s;
    cr_assert_eq(scene_generate("flat", 1, &s, err, sizeof err), 0, "%s", err);
    built b;
    gpu_build_options o = default_options();
    build_on_gpu(&s, &o, &b);
    cr_assert(b.st.pool_raised, "200 x 4 B is below the minimum");
    cr_assert_eq(b.st.pool_bytes, kda_allocator_min_pool());
    free_built(&b);
    scene_free(&s);
}

#else /* an allocator that cannot serve the build: refused, saying why, before any GPU work */

Test(gpu_build, refused_with_the_reason)
{
    gpu_scene g;
    memset(&g, 0, sizeof g);
    g.n_triangles = 1;
    gpu_build_options o = {.pool_factor = 200.0, .repeat = 1};
    gpu_tree t;
    gpu_build_stats st;
    cr_assert_eq(gpu_build(&g, &o, &t, &st, err, sizeof err), -1);
    cr_assert(strstr(err, kda_allocator_name()) && strstr(err, "cannot serve the k-d tree build"), "message: %s", err);
}

#endif
