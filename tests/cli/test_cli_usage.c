/* test_cli_usage.c - what the programs say about their own use: usage
 * errors, help, versions, notes and defaults, run as child processes.
 * The oracles: a usage error is exit status 2 and exactly one line on
 * stderr that names the cause and points at --help, with nothing on
 * stdout; a limit the help states is the one the check enforces (the
 * limit is taken, one past it is refused); --help and --version exit 0
 * without a GPU; the allocators CMake knows are all in --version; and the
 * shadows of a closed scene leave most of its pixels lit, measured against
 * the same render without shadows (stb_image reads both).  The programs
 * run through run_exe.h. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stb_image.h>

#include "run_exe.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_cli_usage_" file
#define TEAPOT KDA_SHARED_SCENES "/teapot.obj.gz"
#define CONFERENCE KDA_SHARED_SCENES "/conference.obj.gz"

TestSuite(cli_usage, .timeout = 120);

/* Keeps r as the last run's result, freeing the one before, and returns
 * it: a test reads each result before it runs the next program. */
static const run_result *last_run(run_result r)
{
    static run_result last;
    run_result_free(&last);
    last = r;
    return &last;
}

#define RUN(exe, ...) last_run(RUN_EXE(exe, __VA_ARGS__))
#define KDALLOC(...) RUN(KDALLOC_EXE, __VA_ARGS__)

/* Exit 2, nothing on stdout, one line on stderr naming `cause` and --help. */
static void expect_usage(const run_result *o, const char *cause, const char *what)
{
    cr_expect_eq(o->status, 2, "%s: exit status %d, want 2; stderr:\n%s", what, o->status, o->err);
    cr_expect(strstr(o->err, cause) != NULL, "%s: stderr does not name \"%s\":\n%s", what, cause, o->err);
    cr_expect(strstr(o->err, "--help") != NULL, "%s: stderr does not point at --help:\n%s", what, o->err);
    const char *nl = strchr(o->err, '\n');
    cr_expect(nl && nl[1] == '\0', "%s: want one line on stderr, got:\n%s", what, o->err);
    cr_expect_str_empty(o->out, "%s: stdout not empty:\n%s", what, o->out);
}

/* ------------------------------------------------------------------------
 * Usage errors: one line, exit 2
 * ------------------------------------------------------------------------ */

Test(cli_usage, unknown_options_and_commands)
{
    expect_usage(KDALLOC("render", "-o", TMP("x.png"), "--foo"), "unknown option --foo", "render --foo");
    expect_usage(KDALLOC("build", "--foo=3"), "unknown option --foo", "build --foo=3");
    expect_usage(KDALLOC("build", "-x"), "unknown option -x", "build -x");
    expect_usage(KDALLOC("gen", "flat", "--bogus"), "unknown option --bogus", "gen --bogus");
    expect_usage(KDALLOC("gen", "flat", "wide", "-o", TMP("two.obj")), "one scene name expected, got 'wide' too",
                 "gen with two names");
    expect_usage(KDALLOC("build", "--json=1"), "--json takes no value", "build --json=1");
    expect_usage(KDALLOC("build", "--po", "3"), "ambiguous option --po", "build --po");
    expect_usage(KDALLOC("frobnicate"), "unknown command 'frobnicate'", "kdalloc frobnicate");
    expect_usage(last_run(run_exe(KDALLOC_EXE, (const char *const[]){NULL})), "which command", "kdalloc alone");
}

Test(cli_usage, unknown_scene_lists_the_valid_ones)
{
    const run_result *o = KDALLOC("gen", "nosuch", "-o", TMP("nosuch.obj"));
    expect_usage(o, "unknown scene 'nosuch'", "gen nosuch");
    for (const char *const *n = (const char *const[]){"atrium", "spheres", "flat", "coincident", NULL}; *n; n++)
        cr_expect(strstr(o->err, *n), "gen nosuch does not list %s:\n%s", *n, o->err);
    cr_expect_neq(access(TMP("nosuch.obj"), F_OK), 0, "gen nosuch wrote a file");
    expect_usage(KDALLOC("build", "--scene", "nosuch"), "unknown scene 'nosuch'", "build --scene nosuch");
}

Test(cli_usage, missing_values)
{
    expect_usage(KDALLOC("render", "-o"), "-o needs a value", "render -o");
    expect_usage(KDALLOC("render", "-o", TMP("x.png"), "--width"), "--width needs a value", "--width");
    expect_usage(KDALLOC("build", "--repeat"), "--repeat needs a value", "--repeat");
    expect_usage(KDALLOC("gen", "flat", "--triangles"), "--triangles needs a value", "gen --triangles");
    expect_usage(KDALLOC("build", "--pool-mb"), "--pool-mb needs a value", "--pool-mb");
}

Test(cli_usage, bad_numbers)
{
    static const char *const cases[][3] = {
        /* command, option, value */
        {"build", "--repeat", "1.5"},    {"build", "--repeat", "-3"},       {"build", "--pool-mb", "x"},
        {"build", "--watchdog", "-1"},   {"build", "--pool-factor", "abc"}, {"build", "--pool-start", "-2"},
        {"build", "--triangles", "0"},   {"build", "--triangles", "-5"},    {"render", "--width", "abc"},
        {"render", "--height", "-3"},    {"render", "--frames", "ten"},     {"render", "--fov", "180"},
        {"render", "--fov", "-10"},      {"render", "--validate", "-1"},    {"render", "--validate=0"},
        {"gen", "--triangles", "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s %s %s", cases[i][0], cases[i][1], cases[i][2] ? cases[i][2] : "");
        char option[32];
        snprintf(option, sizeof option, "%.*s", (int)strcspn(cases[i][1], "="), cases[i][1]);
        const run_result *o = !strcmp(cases[i][0], "render")
                                  ? KDALLOC("render", "-o", TMP("x.png"), cases[i][1], cases[i][2])
                                  : !strcmp(cases[i][0], "gen") ? KDALLOC("gen", "flat", "-o", TMP("x.obj"),
                                                                          cases[i][1], cases[i][2])
                                                                : KDALLOC("build", cases[i][1], cases[i][2]);
        expect_usage(o, option, what);
    }
    /* --validate -1 names --validate and its count, not an option '-1' */
    const run_result *o = KDALLOC("render", "-o", TMP("x.png"), "--validate", "-1");
    cr_expect(strstr(o->err, "--validate takes a count"), "%s", o->err);
}

Test(cli_usage, scene_sizes)
{
    expect_usage(KDALLOC("gen", "spheres", "--triangles", "99", "-o", TMP("x.obj")), "spheres takes 100 to",
                 "spheres of 99");
    expect_usage(KDALLOC("build", "--triangles", "100"), "fixed size", "--triangles for atrium");
    expect_usage(KDALLOC("build", "--cpu", "--gpu"), "--cpu or --gpu", "--cpu --gpu");
}

/* ------------------------------------------------------------------------
 * The limits the help states are the ones enforced
 * ------------------------------------------------------------------------ */

/* From the help text, the range "LO to HI" first given after "  OPTION ". */
static void help_range(const char *help, const char *option, unsigned long long *lo, unsigned long long *hi)
{
    char key[40];
    snprintf(key, sizeof key, "  %s ", option);
    const char *p = strstr(help, key);
    cr_assert_not_null(p, "the help has no %s:\n%s", option, help);
    for (p += strlen(key); *p; p++)
        if (*p >= '0' && *p <= '9' && sscanf(p, "%llu to %llu", lo, hi) == 2) return;
    cr_assert_fail("the help of %s states no range", option);
}

/* `value` is taken: the command fails later, on `later`, not on `option`. */
static void expect_taken(const run_result *o, const char *option, const char *later)
{
    cr_expect_eq(o->status, 2, "%s: exit %d:\n%s", option, o->status, o->err);
    cr_expect(strstr(o->err, later) && !strstr(o->err, option), "%s refused:\n%s", option, o->err);
}

Test(cli_usage, help_states_the_limits_enforced)
{
    static const char *const options[][2] = {
        {"build", "--repeat"}, {"build", "--pool-mb"}, {"build", "--watchdog"}, {"build", "--triangles"},
        {"render", "--width"}, {"render", "--height"}, {"render", "--frames"},   {"render", "--validate"},
        {"gen", "--triangles"},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const char *cmd = options[i][0], *opt = options[i][1];
        const run_result *o = KDALLOC(cmd, "--help");
        cr_assert_eq(o->status, 0);
        unsigned long long lo, hi;
        help_range(o->out, opt, &lo, &hi);
        char at_hi[32], past[32], below[32];
        snprintf(at_hi, sizeof at_hi, "%llu", hi);
        snprintf(past, sizeof past, "%llu", hi + 1);
        snprintf(below, sizeof below, "%lld", (long long)lo - 1);
        /* Taken: the command then fails on what comes after the options. */
        if (!strcmp(cmd, "build")) {
            /* --triangles needs a scalable scene; flat takes the most */
            expect_taken(KDALLOC("build", "--scene", "flat", opt, at_hi, "a", "b"), opt, "unexpected argument");
            expect_usage(KDALLOC("build", "--scene", "flat", opt, past), opt, past);
            expect_usage(KDALLOC("build", "--scene", "flat", opt, below), opt, below);
        } else if (!strcmp(cmd, "render")) {
            expect_taken(KDALLOC("render", opt, at_hi, "a", "b"), opt, "unexpected argument");
            expect_usage(KDALLOC("render", "-o", TMP("x.png"), opt, past), opt, past);
        } else {
            expect_taken(KDALLOC("gen", "flat", opt, at_hi), opt, "missing -o");
            expect_usage(KDALLOC("gen", "flat", "-o", TMP("x.obj"), opt, past), opt, past);
        }
    }
}

/* ------------------------------------------------------------------------
 * --help and --version of every program, without a GPU
 * ------------------------------------------------------------------------ */

static void expect_help_and_version(const char *exe, const char *name)
{
    const run_result *o = RUN(exe, "--help");
    cr_expect_eq(o->status, 0, "%s --help: exit %d:\n%s", name, o->status, o->err);
    cr_expect(strstr(o->out, "usage:"), "%s --help:\n%s", name, o->out);
    o = RUN(exe, "--version");
    cr_expect_eq(o->status, 0, "%s --version: exit %d:\n%s", name, o->status, o->err);
    cr_expect(!strncmp(o->out, name, strlen(name)), "%s --version:\n%s", name, o->out);
    /* the help cut after 100 bytes (a file size limit, on stderr too: the
     * versions are shorter than the error line, so only the help is cut):
     * exit 1, said */
    const char *const args[] = {"--help", NULL};
    run_result r = run_exe_limited(exe, args, 100);
    cr_expect_eq(r.status, 1, "%s --help, its output cut: exit %d", name, r.status);
    cr_expect(strstr(r.err, "cannot write to standard output") != NULL, "%s --help, its output cut:\n%s", name,
              r.err);
    run_result_free(&r);
}

Test(cli_usage, every_program_has_help_and_version)
{
    expect_help_and_version(KDALLOC_EXE, "kdalloc");
    expect_help_and_version(KDALLOC_OBJBENCH_EXE, "kdalloc-objbench");
#ifdef KDALLOC_BINBENCH_EXE
    expect_help_and_version(KDALLOC_BINBENCH_EXE, "kdalloc-binbench");
    expect_help_and_version(KDALLOC_ALLOCBENCH_EXE, "kdalloc-allocbench");
    expect_help_and_version(KDALLOC_HEAPFAULT_EXE, "kdalloc-heapfault");
    expect_usage(RUN(KDALLOC_HEAPFAULT_EXE, "0"), "'0'", "heapfault 0");
    expect_usage(RUN(KDALLOC_HEAPFAULT_EXE, "2", "3"), "one argument", "heapfault 2 3");
#endif
#ifdef KDALLOC_EMBREE_EXE
    expect_help_and_version(KDALLOC_EMBREE_EXE, "kdalloc-embree");
#endif
    expect_usage(RUN(KDALLOC_OBJBENCH_EXE, "--bogus"), "--bogus", "objbench --bogus");
}

Test(cli_usage, version_lists_every_allocator)
{
    const run_result *o = KDALLOC("--version");
    cr_assert_eq(o->status, 0);
    char names[] = KDALLOC_ALL_ALLOCATORS; /* CMake's list and its peers, by spaces */
    for (char *save, *n = strtok_r(names, " ", &save); n; n = strtok_r(NULL, " ", &save)) {
        char word[64];
        snprintf(word, sizeof word, " %s", n);
        cr_expect(strstr(o->out, word), "--version does not list %s:\n%s", n, o->out);
    }
}

/* ------------------------------------------------------------------------
 * The CPU path's note, the default validation, the closed scene's light
 * ------------------------------------------------------------------------ */

/* How many lines of text contain needle. */
static int lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *hit = strstr(line, needle);
        n += hit && hit < line + len;
        line += len + (end != NULL);
    }
    return n;
}

Test(cli_usage, cpu_path_says_once_what_it_ignores)
{
    const run_result *o = KDALLOC("build", "--cpu", "--scene", "flat", "--triangles", "200", "--repeat", "3",
                               "--pool-mb", "64", "--watchdog", "5", "--profile");
    cr_assert_eq(o->status, 0, "%s", o->err);
    cr_expect_eq(lines_with(o->err, "device: CPU"), 1, "%s", o->err);
    cr_expect_eq(lines_with(o->err, "allocator compiled in"), 1, "%s", o->err);
    for (const char *const *opt = (const char *const[]){"--repeat", "--pool-mb", "--watchdog", "--profile", NULL};
         *opt; opt++)
        cr_expect_eq(lines_with(o->err, *opt), 1, "%s: not named once:\n%s", *opt, o->err);
    o = KDALLOC("render", "--cpu", "--scene", "flat", "--triangles", "200", "-o", TMP("flat.png"), "--width", "32",
                "--height", "16", "--frames", "3");
    cr_assert_eq(o->status, 0, "%s", o->err);
    cr_expect_eq(lines_with(o->err, "--frames"), 1, "%s", o->err);
    o = KDALLOC("build", "--cpu", "--scene", "flat", "--triangles", "200");
    cr_expect_eq(lines_with(o->err, "allocator compiled in"), 1, "%s", o->err);
    cr_expect_eq(lines_with(o->err, "GPU only"), 0, "no GPU option given, none named:\n%s", o->err);
}

Test(cli_usage, bare_validate_checks_the_default_count)
{
    const run_result *o = KDALLOC("render", "--help");
    char want[64];
    unsigned long long def = 0;
    const char *p = strstr(o->out, "without N, ");
    cr_assert(p && sscanf(p, "without N, %llu", &def) == 1, "the help states no default count:\n%s", o->out);
    o = KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("teapot.png"), "--width", "200", "--height", "100",
                "--validate");
    cr_assert_eq(o->status, 0, "%s", o->err);
    snprintf(want, sizeof want, "validation: %llu rays,", def);
    cr_expect(strstr(o->out, want), "no \"%s\" in:\n%s", want, o->out);
    o = KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("teapot.png"), "--width", "40", "--height", "30",
                "--validate", "all");
    cr_assert_eq(o->status, 0, "%s", o->err);
    cr_expect(strstr(o->out, "validation: 1200 rays (every pixel)"), "%s", o->out);
}

/* The share of pixels the shadows leave as the render without them shows. */
static double lit_share(const char *scene)
{
    const char *png[2] = {TMP("plain.png"), TMP("shadows.png")};
    for (int k = 0; k < 2; k++) {
        const run_result *o = k ? KDALLOC("render", "--cpu", scene, "-o", png[k], "--width", "160", "--height",
                                          "90", "--shadows")
                                : KDALLOC("render", "--cpu", scene, "-o", png[k], "--width", "160", "--height", "90");
        cr_assert_eq(o->status, 0, "%s", o->err);
    }
    int w[2], h[2], n[2];
    unsigned char *img[2];
    for (int k = 0; k < 2; k++) {
        img[k] = stbi_load(png[k], &w[k], &h[k], &n[k], 3);
        cr_assert_not_null(img[k], "%s: %s", png[k], stbi_failure_reason());
    }
    cr_assert(w[0] == w[1] && h[0] == h[1]);
    size_t same = 0, pixels = (size_t)w[0] * h[0];
    for (size_t i = 0; i < pixels; i++) same += !memcmp(img[0] + 3 * i, img[1] + 3 * i, 3);
    stbi_image_free(img[0]);
    stbi_image_free(img[1]);
    return (double)same / (double)pixels;
}

/* Conference is a closed room: a light above it would leave it dark. */
Test(cli_usage, closed_scene_light_is_inside)
{
    double share = lit_share(CONFERENCE);
    cr_expect_geq(share, 0.5, "only %.0f%% of the room's pixels are lit", 100.0 * share);
    const run_result *o = KDALLOC("render", "--cpu", CONFERENCE, "-o", TMP("conf.png"), "--width", "32", "--height",
                               "18", "--shadows");
    cr_expect(strstr(o->out, "light: ") && strstr(o->out, "(inside the scene"), "%s", o->out);
    o = KDALLOC("render", "--cpu", TEAPOT, "-o", TMP("teapot.png"), "--width", "32", "--height", "18",
                "--shadows");
    cr_expect(strstr(o->out, "light: ") && strstr(o->out, "(above the scene"), "%s", o->out);
}
