/* test_embree.c - Embree beside the project's CPU ray caster (bench/,
 * built only where CMake finds Embree 3).  The oracle: the CPU k-d tree's
 * closest hit of every camera ray of a small image.  Embree's triangle
 * test is not watertight (the project's is), so a ray through a shared
 * edge or vertex may slip through in one and not the other: a few such
 * rays (at most 0.1%) may disagree, no more. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "embree_scene.h"
#include "kdtree.h"
#include "shade.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_embree_" file
#define WIDTH 320
#define HEIGHT 180

TestSuite(embree, .timeout = 240);

typedef struct agreement {
    uint64_t rays, tree_hits, embree_hits, disagreements;
} agreement;

/* Every pixel of the default camera of `kdalloc render` (chosen through the
 * tree) through the k-d tree and through Embree's BVH of the given quality. */
static agreement compare_scene(const scene *s, enum RTCBuildQuality quality)
{
    char err[512];
    kdtree t;
    cr_assert_eq(kdtree_build_cpu(s, &t, NULL, err, sizeof err), 0, "kdtree_build_cpu: %s", err);
    camera cam = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, WIDTH, HEIGHT};
    camera_frame(s->lo, s->hi, &cam);
    const char *view = camera_choose_view(&t, s, &cam);

    embree_scene e;
    double ms;
    cr_assert_eq(embree_open(&e, s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(embree_build(&e, quality, &ms, err, sizeof err), 0, "%s", err);
    /* Embree's rays choose the same view as the tree's. */
    camera same = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, WIDTH, HEIGHT};
    camera_frame(s->lo, s->hi, &same);
    cr_expect_str_eq(camera_choose_view_with(embree_trace, &e, s, &same), view);

    uint32_t *tri = malloc(WIDTH * HEIGHT * sizeof *tri);
    float *dist = malloc(WIDTH * HEIGHT * sizeof *dist);
    cr_assert(tri && dist);
    agreement a = {.rays = WIDTH * HEIGHT};
    a.embree_hits = embree_cast(&e, &cam, 2, tri, dist, &ms);

    camera_basis basis;
    camera_make_basis(&cam, s->lo, s->hi, &basis);
    trace_scene ts = trace_scene_of(&t, s);
    uint64_t hits_seen = 0;
    for (uint32_t y = 0; y < HEIGHT; y++)
        for (uint32_t x = 0; x < WIDTH; x++) {
            ray r = camera_ray(&basis, x, y);
            ray_hit h = kdtree_trace(&ts, &r);
            size_t i = (size_t)y * WIDTH + x;
            a.tree_hits += h.tri != RAY_NO_HIT;
            hits_seen += tri[i] != RAY_NO_HIT;
            /* Both miss, or both hit at the same distance (on a shared
             * edge, the triangles may differ). */
            int same_hit = (h.tri == RAY_NO_HIT) == (tri[i] == RAY_NO_HIT) &&
                           (h.tri == RAY_NO_HIT || fabsf(h.t - dist[i]) <= VALIDATION_REL_TOLERANCE * h.t);
            a.disagreements += !same_hit;
        }
    cr_expect_eq(hits_seen, a.embree_hits, "embree_cast's count (%llu) is not its pixels' (%llu)",
                 (unsigned long long)a.embree_hits, (unsigned long long)hits_seen);
    cr_log_info("%s view: %llu rays, %llu tree hits, %llu Embree hits, %llu disagree", view,
                (unsigned long long)a.rays, (unsigned long long)a.tree_hits, (unsigned long long)a.embree_hits,
                (unsigned long long)a.disagreements);
    free(tri);
    free(dist);
    embree_close(&e);
    kdtree_free(&t);
    return a;
}

static void expect_agreement(const agreement *a)
{
    uint64_t allowed = a->rays / 1000; /* 0.1% */
    cr_expect_gt(a->tree_hits, a->rays / 20, "the view shows too little of the scene to test anything");
    cr_expect_leq(a->disagreements, allowed, "%llu of %llu rays disagree (at most %llu may)",
                  (unsigned long long)a->disagreements, (unsigned long long)a->rays, (unsigned long long)allowed);
    uint64_t diff = a->tree_hits > a->embree_hits ? a->tree_hits - a->embree_hits : a->embree_hits - a->tree_hits;
    cr_expect_leq(diff, allowed, "hits: %llu through the tree, %llu through Embree",
                  (unsigned long long)a->tree_hits, (unsigned long long)a->embree_hits);
}

Test(embree, procedural_scene_matches_the_kdtree)
{
    char err[512];
    scene s;
    cr_assert_eq(scene_generate("spheres", 20000, &s, err, sizeof err), 0, "%s", err);
    agreement medium = compare_scene(&s, RTC_BUILD_QUALITY_MEDIUM);
    expect_agreement(&medium);
    agreement high = compare_scene(&s, RTC_BUILD_QUALITY_HIGH);
    expect_agreement(&high);
    scene_free(&s);
}

/* Sibenik: a closed room, so the default view is chosen inside it. */
Test(embree, shared_scene_matches_the_kdtree)
{
    const char *path = KDA_SHARED_SCENES "/sibenik.obj.gz";
    char err[512];
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "%s (the shared scenes are beside the checkout)", err);
    agreement medium = compare_scene(&s, RTC_BUILD_QUALITY_MEDIUM);
    expect_agreement(&medium);
    scene_free(&s);
}

/* ------------------------------------------------------------------------
 * The program
 * ------------------------------------------------------------------------ */

typedef struct run_result {
    int status; /* exit code, or -1 when it did not exit */
    char out[4096], err[4096];
} run_result;

static void read_into(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
}

/* Runs kdalloc-embree with args (already quoted for the shell). */
static void run(const char *args, run_result *r)
{
    char cmd[2048], out[512], err[512];
    /* Per process: Criterion runs tests in parallel. */
    snprintf(out, sizeof out, TMP("%ld.out"), (long)getpid());
    snprintf(err, sizeof err, TMP("%ld.err"), (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s' </dev/null", KDALLOC_EMBREE_EXE, args, out, err);
    int status = system(cmd);
    r->status = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    read_into(out, r->out, sizeof r->out);
    read_into(err, r->err, sizeof r->err);
}

/* The program casts the same rays as embree_cast: the same hits, which agree
 * with the k-d tree's (the independent oracle) as closely as the library's. */
Test(embree, program_hits_agree_with_the_kdtree)
{
    char err[512];
    scene s;
    cr_assert_eq(scene_generate("spheres", 20000, &s, err, sizeof err), 0, "%s", err);
    agreement a = compare_scene(&s, RTC_BUILD_QUALITY_MEDIUM);
    expect_agreement(&a);
    scene_free(&s);
    run_result r;
    run("--scene spheres --triangles 20000 --width 320 --height 180 --repeat 1 --quality both --json", &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    /* One JSON object per quality, each with every pixel and the hits. */
    const char *line = r.out;
    for (int q = 0; q < 2; q++) {
        const char *hits = strstr(line, "\"hits\": ");
        cr_assert_not_null(hits, "no hits in: %s", r.out);
        unsigned long long n = strtoull(hits + 8, NULL, 10);
        cr_expect_eq(n, a.embree_hits, "the program's hits (%llu) are not embree_cast's (%llu)", n,
                     (unsigned long long)a.embree_hits);
        uint64_t off = n > a.tree_hits ? n - a.tree_hits : a.tree_hits - n;
        cr_expect_leq(off, a.rays / 1000, "the program's hits (%llu) are not the k-d tree's (%llu)", n,
                      (unsigned long long)a.tree_hits);
        cr_expect_not_null(strstr(line, "\"rays\": 57600"), "%s", line);
        cr_expect_not_null(strstr(line, "\"degenerate_triangles\": 0, \"skipped_obj_lines\": 0,"), "%s", line);
        cr_expect_not_null(strstr(line, q ? "\"quality\": \"high\"" : "\"quality\": \"medium\""), "%s", line);
        line = strchr(hits, '\n');
        cr_assert_not_null(line);
    }
}

Test(embree, missing_file_is_a_clear_error)
{
    run_result r;
    run("'" TMP("no_such_scene.obj") "'", &r);
    cr_expect_eq(r.status, 1);
    cr_expect_not_null(strstr(r.err, "kdalloc-embree: "), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "no_such_scene.obj"), "%s", r.err);
    cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "more than one line: %s", r.err);
}

Test(embree, bad_options_are_clear_errors)
{
    static const char *const cases[][2] = {{"--quality best", "--quality takes medium, high or both, not 'best'"},
                                           {"--repeat 0", "--repeat takes a whole number from 1 to 1000, not '0'"},
                                           {"--width", "--width needs a value"},
                                           {"--frobnicate", "unknown option --frobnicate"},
                                           {"--scene nonesuch", "nonesuch"},
                                           {"a.obj b.obj", "unexpected argument 'b.obj'"},
                                           {"--scene spheres a.obj", "not both"},
                                           {"--triangles 100 a.obj", "does not apply to a.obj"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r;
        run(cases[i][0], &r);
        cr_expect_eq(r.status, 2, "%s: exit %d, not the usage error's 2", cases[i][0], r.status);
        cr_expect_not_null(strstr(r.err, cases[i][1]), "%s: %s", cases[i][0], r.err);
    }
}
