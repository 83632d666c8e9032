/* test_cli_output.c - the files kdalloc render and kdalloc gen write (app/,
 * io/outfile.c), the commands run as child processes (run_exe.h).
 *
 * Oracles: a write that fails (/dev/full, or a file size limit that makes
 * the disk look full) is exit 1 with one message naming the file and
 * strerror's cause, and leaves the directory as it was (no temporary file,
 * an old target untouched); a write that succeeds leaves exactly the final
 * file, a whole PNG (signature to IEND) or an OBJ that scene_load reads
 * back to exactly the scene scene_generate makes; a bad output path fails
 * before the scene is loaded (no "scene:" line); an output that would
 * replace what the user did not name (a link to nothing, the scene file,
 * standard output under --json) is refused and left as it was; and output
 * to standard output that is lost is exit 1.  Renders pass --cpu. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_exe.h"
#include "scene.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_cli_output_" file
#define KDALLOC(...) RUN_EXE(KDALLOC_EXE, __VA_ARGS__)
#define TEAPOT KDA_SHARED_SCENES "/teapot.obj.gz"

TestSuite(cli_output, .timeout = 60);

/* An empty directory at path (made, or emptied of plain files). */
static void fresh_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s: %s", path, strerror(errno));
        return;
    }
    char file[1024];
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        cr_assert_eq(unlink(file), 0, "unlink %s: %s", file, strerror(errno));
    }
    closedir(d);
}

/* The directory holds exactly the file `name` (nothing if name is NULL);
 * no temporary file is left beside it. */
static void expect_only(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (name && !strcmp(e->d_name, name)) found = 1;
        else cr_expect_fail("%s holds %s, want %s only", dir, e->d_name, name ? name : "nothing");
    }
    closedir(d);
    if (name) cr_expect(found, "%s does not hold %s", dir, name);
}

/* Exit 1 and stderr ends with exactly "kdalloc: PATH: cannot write WHAT:
 * strerror(cause)", after which nothing says the file was written. */
static void expect_write_error(const run_result *r, const char *path, const char *what, int cause)
{
    char want[1024];
    snprintf(want, sizeof want, "kdalloc: %s: cannot write %s: %s\n", path, what, strerror(cause));
    expect_status(r, 1, path);
    size_t n = strlen(r->err), k = strlen(want);
    cr_expect(n >= k && !strcmp(r->err + n - k, want), "stderr does not end with \"%s\":\n%s", want, r->err);
    cr_expect_null(strstr(r->out, "wrote"), "stdout says a file was written:\n%s", r->out);
    cr_expect_null(strstr(r->err, "wrote"), "stderr says a file was written:\n%s", r->err);
}

/* ------------------------------------------------------------------------
 * Write errors
 * ------------------------------------------------------------------------ */

/* /dev/full cannot be renamed over: it is written directly, and its
 * ENOSPC is an error, not "wrote /dev/full". */
Test(cli_output, render_to_dev_full_fails)
{
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", "/dev/full", "--width", "16", "--height", "12");
    expect_write_error(&r, "/dev/full", "PNG", ENOSPC);
    run_result_free(&r);
}

Test(cli_output, gen_to_dev_full_fails)
{
    run_result r = KDALLOC("gen", "flat", "-o", "/dev/full");
    expect_write_error(&r, "/dev/full", "OBJ", ENOSPC);
    run_result_free(&r);
}

/* A disk that fills up mid-write (a file size limit of 8 KiB, far below
 * the image's size): exit 1, the cause named, and the directory as it was,
 * an existing target with its old content. */
Test(cli_output, render_on_a_full_disk_leaves_nothing)
{
    const char *dir = TMP("full_render");
    fresh_dir(dir);
    const char *path = TMP("full_render/new.png");
    const char *const args[] = {"render", "--cpu", TEAPOT, "-o", path, "--width", "640", "--height", "480", NULL};
    run_result r = run_exe_limited(KDALLOC_EXE, args, 8192);
    expect_write_error(&r, path, "PNG", EFBIG);
    run_result_free(&r);
    expect_only(dir, NULL);

    const char *old = TMP("full_render/old.png");
    write_whole_file(old, "the old content");
    const char *const again[] = {"render", "--cpu", TEAPOT, "-o", old, "--width", "640", "--height", "480", NULL};
    r = run_exe_limited(KDALLOC_EXE, again, 8192);
    expect_write_error(&r, old, "PNG", EFBIG);
    run_result_free(&r);
    expect_only(dir, "old.png");
    char *text = read_whole_file(old, NULL);
    cr_expect_str_eq(text, "the old content", "the old file was changed");
    free(text);
}

Test(cli_output, gen_on_a_full_disk_leaves_nothing)
{
    const char *dir = TMP("full_gen");
    fresh_dir(dir);
    const char *path = TMP("full_gen/flat.obj");
    const char *const args[] = {"gen", "flat", "-o", path, NULL}; /* about 300 KB */
    run_result r = run_exe_limited(KDALLOC_EXE, args, 65536);
    expect_write_error(&r, path, "OBJ", EFBIG);
    run_result_free(&r);
    expect_only(dir, NULL);
}

/* ------------------------------------------------------------------------
 * Successful writes
 * ------------------------------------------------------------------------ */

/* The permissions a new file gets from open(0666) under the umask (not
 * mkstemp's 0600). */
static void expect_new_file_mode(const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
    cr_expect_eq(st.st_mode & 0777, 0666 & ~mask, "%s: mode %o, want %o", path, (unsigned)(st.st_mode & 0777),
                 (unsigned)(0666 & ~mask));
}

Test(cli_output, render_leaves_only_the_whole_png)
{
    const char *dir = TMP("render_ok");
    fresh_dir(dir);
    const char *path = TMP("render_ok/image.png");
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", path, "--width", "64", "--height", "48");
    expect_status(&r, 0, "render");
    char wrote[1024];
    snprintf(wrote, sizeof wrote, "wrote %s\n", path);
    expect_contains(r.out, wrote, "render");
    run_result_free(&r);
    expect_only(dir, "image.png");
    expect_png(path, 64, 48);
    expect_new_file_mode(path);

    /* Writing over it keeps the file's own permissions. */
    cr_assert_eq(chmod(path, 0640), 0);
    r = KDALLOC("render", "--cpu", TEAPOT, "-o", path, "--width", "32", "--height", "24");
    expect_status(&r, 0, "render over an existing file");
    run_result_free(&r);
    expect_only(dir, "image.png");
    expect_png(path, 32, 24);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0640, "mode %o after writing over a 0640 file", (unsigned)(st.st_mode & 0777));
}

/* Reads path back and compares it with scene_generate(name, n): the same
 * vertices and triangles, bit for bit. */
static scene expect_generated(const char *path, const char *name, uint64_t n)
{
    scene want, got;
    char err[1024];
    cr_assert_eq(scene_generate(name, n, &want, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(path, &got, err, sizeof err), 0, "%s", err);
    cr_assert_eq(got.n_vertices, want.n_vertices, "%s", name);
    cr_assert_eq(got.n_triangles, want.n_triangles, "%s", name);
    cr_expect(memcmp(got.positions, want.positions, sizeof(float) * 3 * want.n_vertices) == 0,
              "%s: vertex positions differ from scene_generate's", name);
    cr_expect(memcmp(got.triangles, want.triangles, sizeof(uint32_t) * 3 * want.n_triangles) == 0,
              "%s: triangles differ from scene_generate's", name);
    scene_free(&want);
    return got;
}

Test(cli_output, gen_leaves_only_the_whole_obj)
{
    const char *dir = TMP("gen_ok");
    fresh_dir(dir);
    const char *path = TMP("gen_ok/flat.obj");
    run_result r = KDALLOC("gen", "flat", "--triangles", "100", "-o", path);
    expect_status(&r, 0, "gen flat");
    run_result_free(&r);
    expect_only(dir, "flat.obj");
    expect_new_file_mode(path);
    scene s = expect_generated(path, "flat", 100);
    scene_free(&s);
}

/* A name ending in .gz gets gzip data (its magic bytes first), which loads
 * back to the generated scene; the same gzip when it goes to a device. */
Test(cli_output, gen_compresses_a_gz_name)
{
    const char *path = TMP("gen_gz.obj.gz");
    run_result r = KDALLOC("gen", "flat", "--triangles", "100", "-o", path);
    expect_status(&r, 0, "gen flat -o .obj.gz");
    run_result_free(&r);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    unsigned char magic[2] = {0, 0};
    cr_expect_eq(fread(magic, 1, 2, f), 2);
    fclose(f);
    cr_expect(magic[0] == 0x1f && magic[1] == 0x8b, "%s starts with %02x %02x, not gzip's 1f 8b", path, magic[0],
              magic[1]);
    scene s = expect_generated(path, "flat", 100);
    scene_free(&s);
    unlink(path);
    const char *out = TMP("gen_out.obj.gz"); /* a link to standard output: gzip there too */
    unlink(out);
    cr_assert_eq(symlink("/dev/stdout", out), 0);
    r = KDALLOC("gen", "flat", "--triangles", "10", "-o", out);
    expect_status(&r, 0, "gen flat -o a .gz link to /dev/stdout");
    cr_expect((unsigned char)r.out[0] == 0x1f && (unsigned char)r.out[1] == 0x8b, "standard output is not gzip: %.20s",
              r.out);
    run_result_free(&r);
    unlink(out);
    const char *full = TMP("gen_full.obj.gz"); /* a link to /dev/full: zlib's writes fail there */
    unlink(full);
    cr_assert_eq(symlink("/dev/full", full), 0);
    r = KDALLOC("gen", "flat", "-o", full);
    expect_status(&r, 1, "gen flat -o a .gz link to /dev/full");
    cr_expect(strstr(r.err, strerror(ENOSPC)), "want ENOSPC's message:\n%s", r.err);
    run_result_free(&r);
    unlink(full);
}

/* The largest coordinate magnitude of the scene. */
static float largest_coordinate(const scene *s)
{
    float m = 0.0f;
    for (size_t i = 0; i < 3 * (size_t)s->n_vertices; i++) m = fmaxf(m, fabsf(s->positions[i]));
    return m;
}

/* Each scene's file holds the coordinates scene_generate makes, unscaled:
 * huge's reach 1e30 and wide's 1e6, as `gen --help` says. */
Test(cli_output, gen_writes_the_coordinates_the_help_promises)
{
    for (const char *const *name = scene_generator_names(); *name; name++) {
        if (!strcmp(*name, "atrium")) continue; /* test_cli's gen_round_trips */
        uint64_t n = strcmp(*name, "spheres") ? 0 : 1000;
        char path[512], count[32];
        snprintf(path, sizeof path, TMP("gen_%s.obj"), *name);
        snprintf(count, sizeof count, "%llu", (unsigned long long)n);
        run_result r = n ? KDALLOC("gen", *name, "--triangles", count, "-o", path) : KDALLOC("gen", *name, "-o", path);
        expect_status(&r, 0, *name);
        cr_expect_null(strstr(r.err, "scaled"), "gen %s scaled the scene:\n%s", *name, r.err);
        run_result_free(&r);
        scene s = expect_generated(path, *name, n);
        float m = largest_coordinate(&s);
        if (!strcmp(*name, "huge")) {
            cr_expect(strstr(scene_generator_help("huge"), "up to 1e30"), "huge's help: %s",
                      scene_generator_help("huge"));
            cr_expect(m >= 0.99e30f && m <= 1.01e30f, "huge: largest coordinate %g, want 1e30", m);
        }
        if (!strcmp(*name, "wide")) cr_expect(m >= 0.99e6f && m <= 1.2e6f, "wide: largest coordinate %g", m);
        scene_free(&s);
        unlink(path);
    }
}

/* ------------------------------------------------------------------------
 * Bad output paths, refused before any work
 * ------------------------------------------------------------------------ */

/* Exit 1 with one line naming the path and the reason, and no scene
 * loaded or made (no "scene:" line). */
static void expect_refused(run_result r, const char *path, const char *reason, const char *what)
{
    expect_status(&r, 1, what);
    char want[1024];
    snprintf(want, sizeof want, "kdalloc: %s: cannot write: ", path);
    cr_expect(!strncmp(r.err, want, strlen(want)), "%s: stderr does not start with \"%s\":\n%s", what, want, r.err);
    expect_contains(r.err, reason, what);
    const char *newline = strchr(r.err, '\n');
    cr_expect(newline && newline[1] == '\0', "%s: want one line, got:\n%s", what, r.err);
    cr_expect_null(strstr(r.err, "scene:"), "%s: a scene was loaded:\n%s", what, r.err);
    run_result_free(&r);
}

Test(cli_output, bad_output_paths_are_refused_first)
{
    const char *missing = TMP("no_such_dir/out.png");
    /* The built-in scene would take a while to build: none of it happens. */
    expect_refused(KDALLOC("render", "--cpu", "-o", missing), missing, strerror(ENOENT), "render into no directory");
    expect_refused(KDALLOC("gen", "atrium", "-o", missing), missing, strerror(ENOENT), "gen into no directory");
    const char *dir = KDA_TEST_TMPDIR;
    expect_refused(KDALLOC("render", "--cpu", "-o", dir), dir, "is a directory", "render onto a directory");
    expect_refused(KDALLOC("gen", "huge", "-o", dir), dir, "is a directory", "gen onto a directory");
    const char *file = TMP("plain_file");
    write_whole_file(file, "x");
    const char *under_file = TMP("plain_file/out.png");
    expect_refused(KDALLOC("render", "--cpu", "-o", under_file), under_file, strerror(ENOTDIR),
                   "render under a plain file");
    /* /proc takes no new file, though access() lets root write there */
    expect_refused(KDALLOC("render", "--cpu", "-o", "/proc/out.png"), "/proc/out.png", "cannot write",
                   "render into /proc");
}

/* ------------------------------------------------------------------------
 * Outputs that would replace what the user did not name
 * ------------------------------------------------------------------------ */

/* A link to nothing (as /dev/stdout is with standard output closed) is
 * refused: neither replaced by the file nor followed to create one. */
Test(cli_output, a_link_to_nothing_is_refused)
{
    const char *dir = TMP("dangling");
    fresh_dir(dir);
    const char *link = TMP("dangling/out.obj");
    cr_assert_eq(symlink("missing.obj", link), 0, "symlink: %s", strerror(errno));
    run_result r = KDALLOC("gen", "flat", "--triangles", "10", "-o", link);
    expect_status(&r, 1, "gen -o a dangling link");
    expect_contains(r.err, "a symbolic link to a file that does not exist", "gen -o a dangling link");
    run_result_free(&r);
    struct stat st;
    cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
    expect_only(dir, "out.obj");
}

/* -o naming the scene file itself is a usage error, and the scene stays. */
Test(cli_output, render_over_its_own_scene_is_refused)
{
    const char *path = TMP("own_scene.obj");
    const char *text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    write_whole_file(path, text);
    run_result r = KDALLOC("render", "--cpu", path, "-o", path, "--width", "16", "--height", "12");
    expect_status(&r, 2, "render -o its own scene");
    expect_contains(r.err, "is the scene file itself", "render -o its own scene");
    run_result_free(&r);
    char *now = read_whole_file(path, NULL);
    cr_expect_str_eq(now, text, "the scene file was changed");
    free(now);
    unlink(path);
}

/* --json prints to standard output: a PNG sent there too is refused. */
Test(cli_output, json_and_png_on_standard_output_are_refused)
{
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "--json", "-o", "/dev/stdout", "--width", "16", "--height", "12");
    expect_status(&r, 2, "render --json -o /dev/stdout");
    expect_contains(r.err, "is standard output, where --json prints", "render --json -o /dev/stdout");
    cr_expect_str_empty(r.out, "something was printed: %s", r.out);
    run_result_free(&r);
}

/* -o - is standard output: the PNG alone goes there (what render says goes
 * to stderr), and gen's OBJ text likewise. */
Test(cli_output, dash_writes_standard_output_and_nothing_else)
{
    run_result r = KDALLOC("render", "--cpu", TEAPOT, "-o", "-", "--width", "16", "--height", "12");
    expect_status(&r, 0, "render -o -");
    cr_expect(memcmp(r.out, "\x89PNG\r\n\x1a\n", 8) == 0, "standard output does not start with a PNG signature: %.60s",
              r.out);
    expect_contains(r.err, "wrote standard output", "render -o -");
    expect_contains(r.err, "tree: ", "render -o -");
    run_result_free(&r);
    r = KDALLOC("gen", "flat", "--triangles", "10", "-o", "-");
    expect_status(&r, 0, "gen -o -");
    cr_expect(strncmp(r.out, "# written by kdalloc", 20) == 0, "gen -o - printed: %.60s", r.out);
    expect_contains(r.err, "wrote standard output", "gen -o -");
    run_result_free(&r);
}

/* What build prints (about 320 bytes), or a command's help, cannot all be
 * written (a file size limit of 250 bytes on standard output): exit 1 and
 * one line saying so, not exit 0 with the statistics lost. */
Test(cli_output, lost_standard_output_is_an_error)
{
    const char *const args[] = {"build", "--cpu", "--scene", "flat", "--triangles", "10", NULL};
    run_result r = run_exe_limited(KDALLOC_EXE, args, 250);
    expect_status(&r, 1, "build with its output cut");
    expect_contains(r.err, "cannot write to standard output", "build with its output cut");
    run_result_free(&r);
    /* each command's help (render's about 3 KB) */
    static const char *const helps[][3] = {{"build", "--help", NULL}, {"render", "--help", NULL}, {"gen", "--help", NULL}};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        r = run_exe_limited(KDALLOC_EXE, helps[i], 250);
        expect_status(&r, 1, helps[i][0]);
        expect_contains(r.err, "cannot write to standard output", helps[i][0]);
        run_result_free(&r);
    }
}

/* A name of 254 bytes (legal, but too long for ".NAME.tmp.XXXXXX") is
 * written through a shorter temporary name, and only the file is left. */
Test(cli_output, a_long_file_name_is_written)
{
    const char *dir = TMP("long_name");
    fresh_dir(dir);
    char name[255], path[1024];
    memset(name, 'a', 250);
    strcpy(name + 250, ".obj");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    run_result r = KDALLOC("gen", "flat", "--triangles", "10", "-o", path);
    expect_status(&r, 0, "gen -o a 254-byte name");
    run_result_free(&r);
    expect_only(dir, name);
}
