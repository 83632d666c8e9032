/* test_cli.c - the kdalloc command line (app/), run as a child process.
 * The oracles: the documented exit codes (0 success, 1 runtime error such
 * as a bad file, 2 usage error, 3 validation mismatch), messages that name
 * the cause (the option, the file, the reason), the PNG signature and size
 * written into the file's header, and, for `gen`, the library itself: the
 * written OBJ must load back through scene_load to exactly the scene that
 * scene_generate makes.  Every command that builds a tree passes --cpu, so
 * the results do not depend on a GPU being present. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json_check.h"
#include "run_exe.h"
#include "scene.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_cli_" file
#define KDALLOC(...) RUN_EXE(KDALLOC_EXE, __VA_ARGS__)
#define TEAPOT KDA_SHARED_SCENES "/teapot.obj.gz"
#define BUNNY KDA_SHARED_SCENES "/bunny.obj.gz"

TestSuite(cli, .timeout = 60);

/* A usage error: exit 2, and stderr names `cause`. */
static void expect_usage_error(run_result r, const char *cause, const char *what)
{
    expect_status(&r, 2, what);
    expect_contains(r.err, cause, what);
    run_result_free(&r);
}

/* ------------------------------------------------------------------------
 * Help, version, unknown commands
 * ------------------------------------------------------------------------ */

Test(cli, no_arguments_is_a_usage_error)
{
    run_result r = run_exe(KDALLOC_EXE, (const char *const[]){NULL});
    expect_status(&r, 2, "kdalloc");
    expect_contains(r.err, "usage", "kdalloc");
    run_result_free(&r);
}

Test(cli, help_lists_the_commands)
{
    run_result r = KDALLOC("--help");
    expect_status(&r, 0, "kdalloc --help");
    for (const char *const *c = (const char *const[]){"build", "render", "gen", NULL}; *c; c++)
        expect_contains(r.out, *c, "kdalloc --help");
    run_result_free(&r);
}

Test(cli, version_names_the_allocator)
{
    run_result r = KDALLOC("--version");
    expect_status(&r, 0, "kdalloc --version");
    expect_contains(r.out, "allocator:", "kdalloc --version");
    /* the id CMake configured, and whether it is the default (CountedBump) */
    char want[96];
    snprintf(want, sizeof want, "(%s%s;", KDALLOC_ALLOCATOR_ID,
             strcmp(KDALLOC_ALLOCATOR_ID, KDALLOC_DEFAULT_ID) ? "" : ", the default");
    expect_contains(r.out, want, "kdalloc --version");
    run_result_free(&r);
}

Test(cli, unknown_command)
{
    expect_usage_error(KDALLOC("frobnicate"), "frobnicate", "kdalloc frobnicate");
}

Test(cli, command_help_exits_0)
{
    for (const char *const *c = (const char *const[]){"build", "render", "gen", NULL}; *c; c++) {
        run_result r = KDALLOC(*c, "--help");
        expect_status(&r, 0, *c);
        expect_contains(r.out, "usage: kdalloc", *c);
        run_result_free(&r);
    }
}

/* ------------------------------------------------------------------------
 * Usage errors (exit 2)
 * ------------------------------------------------------------------------ */

Test(cli, unknown_option)
{
    expect_usage_error(KDALLOC("build", "--bogus"), "bogus", "build --bogus");
}

Test(cli, bad_repeat)
{
    expect_usage_error(KDALLOC("build", "--repeat", "abc"), "--repeat", "build --repeat abc");
    expect_usage_error(KDALLOC("build", "--repeat", "0"), "--repeat", "build --repeat 0");
}

/* --pool auto (the default) grows the pool; --pool-factor and --pool-mb
 * size a fixed one, so they contradict an explicit --pool auto, and
 * --pool-start is only for a pool that grows.  Checked before any scene is
 * loaded or GPU touched. */
Test(cli, bad_pool_options)
{
    expect_usage_error(KDALLOC("build", "--pool", "huge"), "--pool", "--pool huge");
    expect_usage_error(KDALLOC("build", "--pool", "auto", "--pool-factor", "20"), "--pool auto",
                       "--pool auto --pool-factor 20");
    expect_usage_error(KDALLOC("render", "-o", TMP("pool.png"), "--pool-mb", "64", "--pool", "auto"), "--pool auto",
                       "--pool-mb 64 --pool auto");
    expect_usage_error(KDALLOC("build", "--pool-factor", "10", "--pool-mb", "10"), "give one",
                       "--pool-factor 10 --pool-mb 10");
    expect_usage_error(KDALLOC("build", "--pool", "fixed", "--pool-start", "2"), "--pool-start",
                       "--pool fixed --pool-start 2");
    expect_usage_error(KDALLOC("build", "--pool-factor", "20", "--pool-start", "2"), "--pool-start",
                       "--pool-factor 20 --pool-start 2");
    expect_usage_error(KDALLOC("build", "--pool-start", "0.5"), "--pool-start", "--pool-start 0.5");
}

#ifdef KDALLOC_ALLOCBENCH_EXE
/* kdalloc-allocbench: a bad count, a size over the pool, a bad time limit,
 * an unknown test or argument, a missing value is one line on stderr and
 * exit 2, before any GPU is touched (so this runs without one). */
#define ALLOCBENCH(...) run_exe(KDALLOC_ALLOCBENCH_EXE, (const char *const[]){__VA_ARGS__, NULL})

static void expect_one_line_error(run_result r, const char *cause, const char *what)
{
    expect_status(&r, 2, what);
    expect_contains(r.err, cause, what);
    const char *newline = strchr(r.err, '\n');
    cr_expect(newline && newline[1] == '\0', "%s: want one line, got:\n%s", what, r.err);
    cr_expect_str_empty(r.out, "%s: nothing on stdout", what);
    run_result_free(&r);
}

Test(cli, allocbench_bad_arguments)
{
    expect_one_line_error(ALLOCBENCH("--test", "live-warp", "--requesters", "0"), "--requesters", "N = 0");
    expect_one_line_error(ALLOCBENCH("--test", "live-thread", "--requesters", "-5"), "--requesters", "N = -5");
    expect_one_line_error(ALLOCBENCH("--test", "mixed", "--size", "8192", "--pool-bytes", "4096"),
                          "larger than the pool", "a size over the pool");
    expect_one_line_error(ALLOCBENCH("--test", "soak", "--seconds", "0"), "--seconds", "--seconds 0");
    expect_one_line_error(ALLOCBENCH("--test", "soak", "--seconds", "soon"), "--seconds", "--seconds soon");
    expect_one_line_error(ALLOCBENCH("--test", "ad", "--seconds", "5"), "--seconds is for the survey's tests, not 'ad'",
                          "--seconds outside the survey's tests");
    expect_one_line_error(ALLOCBENCH("--test", "p", "--size", "64"), "--size is for the survey's tests, not 'p'",
                          "--size outside the survey's tests");
    expect_one_line_error(ALLOCBENCH("--test", "bogus"), "unknown test 'bogus'", "--test bogus");
    expect_one_line_error(ALLOCBENCH("--test", "reuse", "--bogus"), "unknown argument '--bogus'", "--bogus");
    expect_one_line_error(ALLOCBENCH("--test", "reuse", "--size"), "missing after '--size'", "--size without a value");
    expect_one_line_error(ALLOCBENCH("--size", "64"), "no --test", "no --test");
    expect_one_line_error(ALLOCBENCH("--test", "reuse", "--pool-bytes", "-1"), "--pool-bytes", "--pool-bytes -1");
    expect_one_line_error(ALLOCBENCH("--test", "reuse", "--pool-bytes", "100000000000000000000000"), "--pool-bytes",
                          "--pool-bytes 10^23");
    expect_one_line_error(ALLOCBENCH("--test", "reuse", "--pool-bytes", "+4096"), "--pool-bytes", "--pool-bytes +4096");
}

/* A pool the library cannot make for want of a GPU says what is missing
 * (kda_gpu_usable), not CUDA's "driver version is insufficient", which it
 * also says when there is no driver at all; with a GPU the run succeeds (a
 * pool of 1 GiB: every allocator's smallest fits). */
Test(cli, allocbench_says_why_there_is_no_gpu)
{
    run_result r =
        ALLOCBENCH("--test", "live-warp", "--requesters", "32", "--size", "64", "--pool-bytes", "1073741824");
    if (r.status == 0) {
        expect_contains(r.out, "live-warp,", "a small survey point with a GPU");
    } else {
        expect_status(&r, 1, "no GPU");
        expect_contains(r.err, "kdalloc-allocbench: no usable CUDA device (", "no GPU");
        cr_expect(!strstr(r.err, "insufficient"), "no GPU: CUDA's words instead of the cause:\n%s", r.err);
    }
    run_result_free(&r);
}
#endif

Test(cli, render_needs_an_output)
{
    expect_usage_error(KDALLOC("render", "--cpu", TEAPOT), "-o", "render without -o");
}

Test(cli, bad_image_size)
{
    expect_usage_error(KDALLOC("render", "-o", TMP("size.png"), "--width", "0"), "--width", "--width 0");
    expect_usage_error(KDALLOC("render", "-o", TMP("size.png"), "--height", "-3"), "--height", "--height -3");
    expect_usage_error(KDALLOC("render", "-o", TMP("size.png"), "--width", "40000"), "--width", "--width 40000");
}

Test(cli, bad_camera_values)
{
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--eye", "1,2"), "--eye", "--eye 1,2");
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--fov", "wide"), "--fov", "--fov wide");
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--shade", "bogus"), "bogus", "--shade bogus");
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--shade", "ao", "--ao-rays", "0"), "--ao-rays",
                       "--ao-rays 0");
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--shade", "ao", "--ao-rays", "65"), "--ao-rays",
                       "--ao-rays 65");
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--shade", "ao", "--ao-radius", "-1"), "--ao-radius",
                       "--ao-radius -1");
    expect_usage_error(KDALLOC("render", "-o", TMP("cam.png"), "--ao-rays", "8"), "--shade ao",
                       "--ao-rays without --shade ao");
}

/* Ambient occlusion with shadows: the image written, and every secondary
 * ray of the validated pixels checked against brute force. */
Test(cli, ambient_occlusion_validates)
{
    const char *path = TMP("ao.png");
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", path, "--width", "48", "--height", "32", "--shade", "ao",
                           "--ao-rays", "3", "--shadows", "--validate", "all");
    expect_status(&r, 0, "render --shade ao --shadows --validate all");
    expect_contains(r.out, "ao: 3 rays a hit, out to ", "render --shade ao");
    expect_contains(r.out, "first image: ", "render: the time to the first image");
    expect_contains(r.out, "shadow and ao rays", "render --shade ao --validate");
    expect_contains(r.out, "occluded, 0 mismatches", "render --shade ao --validate");
    expect_png(path, 48, 32);
    run_result_free(&r);
}

/* camera_check's errors come after the scene is loaded; they are usage
 * errors too (exit 2), and no image is written. */
Test(cli, camera_rejected)
{
    unlink(TMP("fov.png"));
    expect_usage_error(KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("fov.png"), "--fov", "0"), "field of view",
                       "--fov 0");
    expect_usage_error(KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("fov.png"), "--fov", "180"), "field of view",
                       "--fov 180");
    expect_usage_error(KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("fov.png"), "--eye", "0,1,0", "--target",
                               "0,1,0"),
                       "camera", "--eye == --target");
    expect_usage_error(KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("fov.png"), "--up", "0,0,0"), "up",
                       "--up 0,0,0");
    /* pixels finer than a float direction resolves: 0.01 degrees over the
     * default 720 rows is 2.4e-7 radians a pixel */
    expect_usage_error(KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("fov.png"), "--fov", "0.01"), "radians",
                       "--fov 0.01");
    cr_expect_not(file_exists(TMP("fov.png")), "an image was written for a rejected camera");
}

/* The camera's edges that are legal: 0.01 degrees over 32 rows (5.5e-6
 * radians a pixel); a coordinate that underflows to its nearest float; a
 * --validate asking more rays than there are pixels checks each pixel once. */
Test(cli, camera_edges_accepted)
{
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("edge.png"), "--fov", "0.01", "--width", "32",
                           "--height", "32", "--validate", "1000000000");
    expect_status(&r, 0, "--fov 0.01 over 32 rows");
    expect_contains(r.out, "validation: 1024 rays (every pixel),", "--validate 10^9 on 1024 pixels");
    run_result_free(&r);
    r = KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("edge.png"), "--eye", "1e-40,3,4", "--target", "0,0,0",
                "--width", "16", "--height", "16");
    expect_status(&r, 0, "--eye 1e-40,3,4");
    expect_contains(r.out, "camera: --eye 9.9999461e-41,3,4 ", "--eye 1e-40,3,4");
    run_result_free(&r);
}

Test(cli, scene_arguments_conflict)
{
    expect_usage_error(KDALLOC("build", "--cpu", TEAPOT, TEAPOT), "unexpected argument", "two files");
    expect_usage_error(KDALLOC("build", "--cpu", "--scene", "flat", TEAPOT), "--scene", "a file and --scene");
    expect_usage_error(KDALLOC("build", "--cpu", "--triangles", "100", TEAPOT), "--triangles",
                       "--triangles with a file");
}

Test(cli, gen_usage)
{
    expect_usage_error(KDALLOC("gen", "-o", TMP("gen_usage.obj")), "scene", "gen without a name");
    expect_usage_error(KDALLOC("gen", "atrium"), "-o", "gen without -o");
}

/* ------------------------------------------------------------------------
 * Runtime errors (exit 1)
 * ------------------------------------------------------------------------ */

Test(cli, missing_file)
{
    const char *path = TMP("does_not_exist.obj");
    run_result r = KDALLOC("build", "--cpu", path);
    expect_status(&r, 1, "missing file");
    expect_contains(r.err, path, "missing file");
    expect_contains(r.err, "cannot open", "missing file");
    run_result_free(&r);
}

/* An OBJ error reads "kdalloc: FILE:LINE: what". */
Test(cli, malformed_obj)
{
    const char *path = TMP("malformed.obj");
    write_whole_file(path, "v 1 2 x\nv 0 0 0\nf 1 2 2\n");
    run_result r = KDALLOC("build", "--cpu", path);
    expect_status(&r, 1, "malformed OBJ");
    char prefix[600];
    snprintf(prefix, sizeof prefix, "kdalloc: %s:1: ", path);
    cr_expect(strncmp(r.err, prefix, strlen(prefix)) == 0, "stderr does not start with \"%s\":\n%s", prefix, r.err);
    expect_contains(r.err, "\"x\"", "malformed OBJ");
    run_result_free(&r);
}

Test(cli, obj_without_faces)
{
    const char *path = TMP("no_faces.obj");
    write_whole_file(path, "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    run_result r = KDALLOC("render", "--cpu", path, "-o", TMP("no_faces.png"));
    expect_status(&r, 1, "OBJ without faces");
    expect_contains(r.err, path, "OBJ without faces");
    expect_contains(r.err, "no triangles", "OBJ without faces");
    run_result_free(&r);
}

/* Lines of no OBJ statement among good ones are skipped, and said so. */
Test(cli, obj_with_a_misspelt_statement_warns)
{
    const char *path = TMP("misspelt.obj");
    write_whole_file(path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nF 1 2 4\nF 1 3 4\n");
    run_result r = KDALLOC("build", "--cpu", path);
    expect_status(&r, 0, "misspelt statement");
    char want[600];
    snprintf(want, sizeof want,
             "scene: warning: %s:6: 'F' is no OBJ statement; line skipped (2 such lines in all; faces are 'f' lines)\n",
             path);
    expect_contains(r.err, want, "misspelt statement");
    expect_contains(r.err, ": 1 triangle, 4 vertices", "misspelt statement");
    run_result_free(&r);
    /* --json says it too, beside a zero-area face (kept, counted) */
    write_whole_file(path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nF 1 2 4\nf 3 3 1\nF 1 3 4\n");
    r = KDALLOC("build", "--cpu", "--json", path);
    expect_status(&r, 0, "misspelt statement, --json");
    expect_json(r.out, "misspelt statement, --json");
    expect_contains(r.out, "\"degenerate_triangles\": 1, \"skipped_obj_lines\": 2,", "misspelt statement, --json");
    run_result_free(&r);
    r = KDALLOC("render", "--cpu", "--json", path, "-o", TMP("misspelt.png"), "--width", "16", "--height", "12");
    expect_status(&r, 0, "misspelt statement, render --json");
    expect_json(r.out, "misspelt statement, render --json");
    expect_contains(r.out, "\"degenerate_triangles\": 1, \"skipped_obj_lines\": 2,", "misspelt statement, render --json");
    run_result_free(&r);
    write_whole_file(path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 # the one face\n");
    r = KDALLOC("build", "--cpu", path);
    expect_status(&r, 0, "a comment after a face");
    cr_expect(strstr(r.err, "warning") == NULL, "a warning where all is well:\n%s", r.err);
    run_result_free(&r);
}

Test(cli, unwritable_png)
{
    const char *path = TMP("no/such/dir/out.png");
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", path, "--width", "16", "--height", "12");
    expect_status(&r, 1, "unwritable PNG");
    expect_contains(r.err, path, "unwritable PNG");
    expect_contains(r.err, "cannot write", "unwritable PNG");
    run_result_free(&r);
}

/* ------------------------------------------------------------------------
 * Successful runs
 * ------------------------------------------------------------------------ */

Test(cli, build_default_scene)
{
    run_result r = KDALLOC("build", "--cpu");
    expect_status(&r, 0, "build --cpu");
    expect_contains(r.out, "SAH cost", "build --cpu");
    expect_contains(r.err, scene_generator_names()[0], "build --cpu: the scene line");
    run_result_free(&r);
}

/* Lines of `text` that begin with `prefix`. */
static int lines_starting(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *l = text; l && *l;) {
        n += !strncmp(l, prefix, strlen(prefix));
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    return n;
}

/* Without --cpu or --gpu the build says once which device it used, and
 * when that is the CPU, why (no GPU here, or none compiled in). */
Test(cli, build_names_its_device_once)
{
    run_result r = KDALLOC("build", TEAPOT);
    expect_status(&r, 0, "build without a device flag");
    cr_expect_eq(lines_starting(r.err, "device: "), 1, "not one device line:\n%s", r.err);
    if (strstr(r.err, "device: CPU ("))
        cr_expect(strstr(r.err, "--gpu requires one") || strstr(r.err, "built without CUDA"),
                  "the CPU chosen without saying why:\n%s", r.err);
    else
        expect_contains(r.err, "device: GPU ", "build without a device flag");
    expect_contains(r.out, "SAH cost", "build without a device flag");
    run_result_free(&r);
}

/* --gpu never falls back: with a GPU it builds there, without one it fails
 * (exit 1) in one line that says why and names --cpu. */
Test(cli, gpu_flag_without_a_gpu_is_a_clear_error)
{
    run_result r = KDALLOC("build", "--gpu", TEAPOT);
    if (strstr(r.err, "cannot serve the k-d tree build")) {
        run_result_free(&r);
        cr_skip_test("this allocator cannot build the tree");
    }
    if (r.status == 0) {
        expect_contains(r.err, "device: GPU ", "build --gpu with a GPU");
    } else {
        expect_status(&r, 1, "build --gpu without a GPU");
        expect_contains(r.err, "use --cpu", "build --gpu without a GPU");
        cr_expect_eq(lines_starting(r.err, "kdalloc: "), 1, "not one error line:\n%s", r.err);
        cr_expect_eq(lines_starting(r.err, "device: "), 0, "an error, yet a device line:\n%s", r.err);
        cr_expect_str_empty(r.out, "build --gpu without a GPU printed results");
    }
    run_result_free(&r);
}

/* A fixed pool of the root's array alone cannot hold the root's children
 * beside it: the build fails in one line (exit 1) that names the option to
 * raise.  Skips without a GPU or with an allocator that cannot build, and
 * where such a pool may hold the tree all the same: raised to an
 * allocator's minimum (Halloc's, Gallatin's), CUDA's heap, or AWMalloc's
 * wrapping pool (which overwrites old arrays, checked afterwards). */
Test(cli, pool_too_small_names_the_option_to_raise)
{
    run_result r = KDALLOC("build", "--gpu", "--pool-factor", "1", BUNNY);
    int may_hold = strstr(r.err, "pool raised to") || strstr(r.err, "allocator CudaMalloc") ||
                   strstr(r.err, "allocator AWMalloc");
    const char *skip = strstr(r.err, "use --cpu")                          ? "no GPU to build on"
                       : strstr(r.err, "cannot serve the k-d tree build") ? "this allocator cannot build the tree"
                       : r.status == 0 && may_hold                          ? "this allocator's pool held the tree"
                                                                            : NULL;
    if (skip) {
        run_result_free(&r);
        cr_skip_test("%s", skip);
    }
    expect_status(&r, 1, "build --gpu --pool-factor 1");
    expect_contains(r.err, "; rerun with ", "build --gpu --pool-factor 1");
    expect_contains(r.err, "--pool-factor", "build --gpu --pool-factor 1");
    cr_expect_eq(lines_starting(r.err, "kdalloc: "), 1, "not one error line:\n%s", r.err);
    cr_expect_str_empty(r.out, "a failed build printed results");
    run_result_free(&r);
}

/* --check runs the tree's invariant checks and says on stderr that they hold. */
Test(cli, build_check_says_the_invariants_hold)
{
    run_result r = KDALLOC("build", "--cpu", "--check", TEAPOT);
    expect_status(&r, 0, "build --check");
    expect_contains(r.err, "check: tree invariants hold", "build --check");
    run_result_free(&r);
}

/* --json prints one object on one line, nothing else on stdout; its
 * n_tris is the triangle count scene_load finds. */
Test(cli, build_json)
{
    scene s;
    char err[512];
    cr_assert_eq(scene_load(TEAPOT, &s, err, sizeof err), 0, "%s", err);
    run_result r = KDALLOC("build", "--cpu", "--json", TEAPOT);
    expect_status(&r, 0, "build --json");
    size_t len = strlen(r.out);
    cr_assert_gt(len, 2);
    cr_expect_eq(r.out[0], '{', "stdout:\n%s", r.out);
    cr_expect(r.out[len - 2] == '}' && r.out[len - 1] == '\n', "stdout does not end in }\\n:\n%s", r.out);
    cr_expect_null(memchr(r.out, '\n', len - 1), "more than one line on stdout:\n%s", r.out);
    char n_tris[64];
    snprintf(n_tris, sizeof n_tris, "\"n_tris\": %u,", s.n_triangles);
    expect_contains(r.out, n_tris, "build --json");
    for (const char *const *k = (const char *const[]){"\"scene\":", "\"nodes\":", "\"sah_cost\":", NULL}; *k; k++)
        expect_contains(r.out, *k, "build --json");
    run_result_free(&r);
    scene_free(&s);
}

Test(cli, render_and_validate)
{
    const char *path = TMP("render.png");
    unlink(path);
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", path, "--width", "64", "--height", "48", "--validate",
                           "500");
    expect_status(&r, 0, "render --validate 500");
    expect_contains(r.out, "validation: 500 rays", "render --validate 500");
    expect_contains(r.out, " 0 mismatches", "render --validate 500");
    expect_png(path, 64, 48);
    run_result_free(&r);
}

/* A tree whose hits are wrong (kdalloc-wrongtree: every leaf holds triangle
 * 0) fails its validation: exit 3, the first mismatch named in one error
 * line, and with --json the object is still printed, its mismatches counted
 * (at least one of the 500 rays: the teapot fills much of the view). */
Test(cli, failed_validation_exits_3)
{
    run_result r = RUN_EXE(KDALLOC_WRONGTREE_EXE, "render", "--cpu", TEAPOT, "-o", TMP("wrong.png"), "--width", "64",
                           "--height", "48", "--validate", "500", "--json");
    expect_status(&r, 3, "a wrong tree's --validate");
    cr_expect_eq(lines_starting(r.err, "kdalloc: validation failed: "), 1, "not one error line:\n%s", r.err);
    const char *m = strstr(r.out, "\"mismatches\": ");
    cr_assert_not_null(m, "no mismatches in the JSON: %s", r.out);
    cr_expect_gt(strtoull(m + strlen("\"mismatches\": "), NULL, 10), 0, "%s", r.out);
    unlink(TMP("wrong.png"));
    run_result_free(&r);
}

/* --validate takes an optional count: a file name after it stays the
 * scene, and every pixel is checked. */
Test(cli, validate_without_count)
{
    const char *path = TMP("render_all.png");
    run_result r = KDALLOC("render", "--cpu", "--validate", TEAPOT, "-o", path, "--width", "32", "--height", "24",
                           "--shade", "steps");
    expect_status(&r, 0, "render --validate FILE");
    expect_contains(r.err, TEAPOT, "render --validate FILE: the scene line");
    expect_contains(r.out, "validation: 768 rays", "render --validate FILE");
    expect_contains(r.out, " 0 mismatches", "render --validate FILE");
    expect_png(path, 32, 24);
    run_result_free(&r);
}

/* The OBJ that `gen` writes loads back to the very scene scene_generate
 * makes: same vertices and triangles, bit for bit. */
Test(cli, gen_round_trips)
{
    const char *path = TMP("atrium.obj");
    run_result r = KDALLOC("gen", "atrium", "-o", path);
    expect_status(&r, 0, "gen atrium");
    run_result_free(&r);

    scene want, got;
    char err[1024];
    cr_assert_eq(scene_generate("atrium", 0, &want, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(path, &got, err, sizeof err), 0, "%s", err);
    cr_expect_eq(got.n_triangles, want.n_triangles);
    cr_assert_eq(got.n_vertices, want.n_vertices);
    cr_expect(memcmp(got.positions, want.positions, sizeof(float) * 3 * want.n_vertices) == 0,
              "vertex positions differ after the OBJ round trip");
    cr_expect(got.n_triangles == want.n_triangles &&
                  memcmp(got.triangles, want.triangles, sizeof(uint32_t) * 3 * want.n_triangles) == 0,
              "triangles differ after the OBJ round trip");
    scene_free(&want);
    scene_free(&got);
    unlink(path);
}

Test(cli, gen_unknown_scene_lists_the_valid_ones)
{
    run_result r = KDALLOC("gen", "nosuch", "-o", TMP("nosuch.obj"));
    expect_status(&r, 2, "gen nosuch");
    expect_contains(r.err, "nosuch", "gen nosuch");
    for (const char *const *n = scene_generator_names(); *n; n++) expect_contains(r.err, *n, "gen nosuch");
    cr_expect_not(file_exists(TMP("nosuch.obj")), "gen nosuch wrote a file");
    run_result_free(&r);
}

/* ------------------------------------------------------------------------
 * Numeric extremes and the printed camera
 * ------------------------------------------------------------------------ */

Test(cli, extreme_scenes_give_valid_json)
{
    const char *scenes[] = {"huge", "wide", "tilted", "coincident"};
    for (int i = 0; i < 4; i++) {
        run_result r = KDALLOC("build", "--cpu", "--scene", scenes[i], "--json");
        expect_status(&r, 0, scenes[i]);
        expect_json(r.out, scenes[i]);
        expect_contains(r.out, "\"sah_cost\": ", scenes[i]);
        run_result_free(&r);
        r = KDALLOC("render", "--cpu", "--scene", scenes[i], "--json", "-o", TMP("extreme.png"), "--width", "96",
                    "--height", "54", "--validate", "500");
        expect_status(&r, 0, scenes[i]);
        expect_json(r.out, scenes[i]);
        expect_contains(r.out, "\"mismatches\": 0,", scenes[i]);
        expect_contains(r.out, "\"occlusion_mismatches\": 0}", scenes[i]);
        expect_contains(r.out, "\"camera\": {\"eye\": [", scenes[i]);
        expect_contains(r.out, "\"first_image_ms\": ", scenes[i]);
        expect_contains(r.out, "\"primary_ms\": null,", scenes[i]); /* one pass on the CPU, not timed apart */
        run_result_free(&r);
    }
}

/* A scene a millionth of a unit across: --json gives its numbers their
 * own digits, as the text does (six decimals made its ao radius 0). */
Test(cli, json_keeps_small_numbers)
{
    const char *path = TMP("tiny.obj");
    write_whole_file(path, "v 0 0 0\nv 1e-6 0 0\nv 0 1e-6 0\nf 1 2 3\n");
    run_result r = KDALLOC("render", "--cpu", path, "--json", "--shade", "ao", "-o", TMP("tiny.png"), "--width", "32",
                           "--height", "24");
    expect_status(&r, 0, "render tiny --json");
    expect_json(r.out, "render tiny");
    const char *json = strstr(r.out, "\"ao_radius\": "), *text = strstr(r.err, "out to ");
    cr_assert(json && text, "no ao radius in:\n%s\n%s", r.out, r.err);
    double in_json = strtod(json + strlen("\"ao_radius\": "), NULL), in_text = strtod(text + strlen("out to "), NULL);
    cr_expect(in_json > 0.0 && fabs(in_json - in_text) <= 1e-6 * in_text, "ao radius %g in the JSON, %g in the text",
              in_json, in_text);
    run_result_free(&r);
    unlink(path);
}

/* A file name with a tab and a byte that is not UTF-8: the JSON escapes
 * the one and replaces the other, so it stays JSON. */
Test(cli, json_escapes_a_file_name)
{
    const char *path = TMP("tab\tname\xff.obj");
    write_whole_file(path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    run_result r = KDALLOC("build", "--cpu", "--json", path);
    expect_status(&r, 0, "build --json of a file with a tab and 0xff in its name");
    expect_json(r.out, "build --json");
    expect_contains(r.out, "tab\\u0009name\\ufffd.obj\"", "build --json");
    run_result_free(&r);
    unlink(path);
}

Test(cli, huge_scene_is_scaled_and_says_so)
{
    run_result r = KDALLOC("build", "--cpu", "--scene", "huge", "--json");
    expect_status(&r, 0, "build huge");
    expect_contains(r.out, "\"scale_log2\": -100,", "build huge --json");
    expect_contains(r.err, "scaled by 2^-100", "build huge");
    run_result_free(&r);
    /* Cameras are in the file's units: a camera at 3e30 looks at the scene. */
    r = KDALLOC("render", "--cpu", "--scene", "huge", "-o", TMP("huge.png"), "--width", "64", "--height", "36",
                "--eye", "0,1e30,3e30", "--target", "0,0,0", "--validate");
    expect_status(&r, 0, "render huge");
    expect_contains(r.out, "camera: --eye 0,1.00000002e+30,2.99999989e+30 --target 0,0,0 ", "render huge");
    cr_expect(strstr(r.out, " 0 hits") == NULL, "render huge: no hits:\n%s", r.out);
    run_result_free(&r);
}

/* With only the eye given, the camera line says what was given and what
 * was chosen (not "outside from +z"). */
Test(cli, camera_line_names_what_was_given)
{
    run_result r = KDALLOC("render", "--cpu", "--scene", "flat", "--triangles", "100", "-o", TMP("eye.png"), "--width",
                           "32", "--height", "24", "--eye", "-1,-2,-3");
    expect_status(&r, 0, "render --eye");
    expect_contains(r.out, "(eye given, looking at the scene's centre)", "render --eye");
    run_result_free(&r);
}

/* An image of too many pixels (each side within its limit) is refused
 * before the scene is loaded, with the count it passes. */
Test(cli, too_large_an_image_is_refused_first)
{
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("big.png"), "--width", "32768", "--height", "32768");
    expect_status(&r, 2, "render 32768x32768");
    expect_contains(r.err, "is 1073741824 pixels, more than the 268435456 an image may have", "render 32768x32768");
    cr_expect_null(strstr(r.err, "scene:"), "the scene was loaded first:\n%s", r.err);
    run_result_free(&r);
}

/* --validate ALL is --validate all (every pixel), not a scene file. */
Test(cli, validate_all_in_capitals)
{
    run_result r = KDALLOC("render", "--cpu", "--scene", "flat", "--triangles", "100", "-o", TMP("all.png"), "--width",
                           "32", "--height", "24", "--validate", "ALL");
    expect_status(&r, 0, "render --validate ALL");
    expect_contains(r.out, "validation: 768 rays", "render --validate ALL");
    run_result_free(&r);
}

Test(cli, printed_camera_repeats_the_image)
{
    run_result r = KDALLOC("render", "--cpu", "--scene", "coincident", "--triangles", "100", "-o", TMP("view1.png"),
                           "--width", "120", "--height", "80");
    expect_status(&r, 0, "render with the default view");
    const char *line = strstr(r.out, "camera: ");
    cr_assert_not_null(line, "no camera line in:\n%s", r.out);
    /* "camera: --eye E --target T --up U --fov F --width W --height H (view)" */
    char eye[64], target[64], up[64], fov[64], width[16], height[16];
    cr_assert_eq(sscanf(line, "camera: --eye %63s --target %63s --up %63s --fov %63s --width %15s --height %15s", eye,
                        target, up, fov, width, height),
                 6, "camera line: %s", line);
    run_result again = KDALLOC("render", "--cpu", "--scene", "coincident", "--triangles", "100", "-o",
                               TMP("view2.png"), "--eye", eye, "--target", target, "--up", up, "--fov", fov,
                               "--width", width, "--height", height);
    expect_status(&again, 0, "render with the printed camera");
    const char *line2 = strstr(again.out, "camera: ");
    cr_assert_not_null(line2);
    cr_expect_eq(strncmp(line, line2, (size_t)(strstr(line, " (") - line)), 0, "camera lines differ:\n%s\n%s", line,
                 line2);
    expect_contains(line2, "(given)", "render with the printed camera");
    char *a = read_whole_file(TMP("view1.png"), NULL), *b = read_whole_file(TMP("view2.png"), NULL);
    struct stat sa, sb;
    cr_assert_eq(stat(TMP("view1.png"), &sa), 0);
    cr_assert_eq(stat(TMP("view2.png"), &sb), 0);
    cr_expect(sa.st_size == sb.st_size && memcmp(a, b, (size_t)sa.st_size) == 0, "the images differ");
    free(a);
    free(b);
    run_result_free(&r);
    run_result_free(&again);
}

/* The build watchdog: with an allocator that livelocks
 * (tests/alloc/stall.h), the build ends within its bound with one message that
 * names the allocator and the build's state, and exit status 1. */
Test(cli, watchdog_ends_a_stuck_build, .timeout = 120)
{
#ifndef KDALLOC_STALL_EXE
    cr_skip_test("built without CUDA: no GPU build to watch");
#else
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_result r = run_exe(KDALLOC_STALL_EXE, (const char *const[]){"build", "--gpu", "--watchdog", "2", NULL});
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (strstr(r.err, "no usable CUDA device")) cr_skip_test("no GPU to test on: %s", r.err);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_eq(r.status, 1, "exit status %d; stderr: %s", r.status, r.err);
    cr_assert(strstr(r.err, "the build made no progress for 2 s: StallMalloc or the builder is stuck"), "%s", r.err);
    cr_assert(strstr(r.err, "tasks pending") && strstr(r.err, "nodes done") && strstr(r.err, "live arrays"), "%s",
              r.err);
    cr_assert_lt(s, 60.0, "the stuck build took %.1f s to end", s);
    cr_log_info("stuck build ended after %.1f s: %s", s, r.err);
#endif
}
