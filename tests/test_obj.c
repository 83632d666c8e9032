/* test_obj.c - the Wavefront OBJ loader (scenes/obj.c). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "scene.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_obj_" file

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

static char err[1024];

static int parse(const char *text, scene *s)
{
    err[0] = '\0';
    return scene_parse_obj(text, strlen(text), "t.obj", s, err, sizeof err);
}

/* Parses text that must load. */
static scene parse_ok(const char *text)
{
    scene s;
    cr_assert_eq(parse(text, &s), 0, "unexpected error \"%s\" for:\n%s", err, text);
    return s;
}

static void expect_empty(const scene *s)
{
    cr_expect_null(s->positions);
    cr_expect_null(s->triangles);
    cr_expect_eq(s->n_vertices, 0);
    cr_expect_eq(s->n_triangles, 0);
    cr_expect_eq(s->n_degenerate, 0);
}

/* Parses text that must fail with exactly `message`, leaving s empty. */
static void expect_error(const char *text, const char *message)
{
    scene s;
    memset(&s, 0xA5, sizeof s);
    cr_expect_eq(parse(text, &s), -1, "no error for:\n%s", text);
    cr_expect_str_eq(err, message, "for:\n%s", text);
    expect_empty(&s);
}

static void expect_positions(const scene *s, const float *want, uint32_t n)
{
    cr_assert_eq(s->n_vertices, n);
    for (uint32_t i = 0; i < 3 * n; i++)
        cr_expect_eq(s->positions[i], want[i], "coordinate %u: %.9g, want %.9g", i,
                     s->positions[i], want[i]);
}

static void expect_triangles(const scene *s, const uint32_t *want, uint32_t n)
{
    cr_assert_eq(s->n_triangles, n);
    for (uint32_t i = 0; i < 3 * n; i++)
        cr_expect_eq(s->triangles[i], want[i], "triangle %u corner %u: %u, want %u", i / 3,
                     i % 3, s->triangles[i], want[i]);
}

static void expect_same_scene(const scene *a, const scene *b)
{
    cr_assert_eq(a->n_vertices, b->n_vertices);
    cr_assert_eq(a->n_triangles, b->n_triangles);
    cr_expect_eq(memcmp(a->positions, b->positions, 3 * sizeof(float) * a->n_vertices), 0);
    cr_expect_eq(memcmp(a->triangles, b->triangles, 3 * sizeof(uint32_t) * a->n_triangles), 0);
    cr_expect_eq(memcmp(a->lo, b->lo, sizeof a->lo), 0);
    cr_expect_eq(memcmp(a->hi, b->hi, sizeof a->hi), 0);
}

#define TRI3 "v 0 0 0\nv 1 0 0\nv 0 1 0\n"

/* ------------------------------------------------------------------------
 * Syntax
 * ------------------------------------------------------------------------ */

Test(syntax, vertices_with_and_without_w)
{
    scene s = parse_ok("v 1 2 3\n"
                       "v -4.5 0.25 1e2 1.0\n"      /* w */
                       "v 7 8 9 0.5 0.25 1\n"       /* x y z r g b */
                       "f 1 2 3\n");
    const float want[] = {1, 2, 3, -4.5f, 0.25f, 100, 7, 8, 9};
    expect_positions(&s, want, 3);
    scene_free(&s);
}

Test(syntax, number_forms)
{
    scene s = parse_ok("v +1 -.5 5.\n"
                       "v 1e3 1E-3 -2.5e+1\n"
                       "v 0 -0 000123.4500\n"
                       "v -0.108324 1e-5 3.14159265\n"
                       "f 1 2 3\n");
    const float want[] = {1, -0.5f, 5, 1000, 0.001f, -25, 0, -0.0f, 123.45f,
                          -0.108324f, 1e-5f, 3.14159265f};
    expect_positions(&s, want, 4);
    cr_expect(signbit(s.positions[7]), "-0 keeps its sign");
    cr_expect(!signbit(s.positions[6]));
    scene_free(&s);
}

Test(syntax, each_face_form)
{
    scene s = parse_ok("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
                       "vt 0 0\nvt 1 0\nvt 0 1\n"
                       "vn 0 0 1\n"
                       "f 1 2 3\n"
                       "f 1/1 2/2 3/3\n"
                       "f 1/1/1 2/2/1 3/3/1\n"
                       "f 2//1 4//1 3//1\n");
    const uint32_t want[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 3, 2};
    expect_triangles(&s, want, 4);
    cr_expect_eq(s.n_vertices, 4);
    scene_free(&s);
}

Test(syntax, mixed_forms_in_one_file_and_one_face)
{
    scene s = parse_ok("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
                       "vt 0 0\nvt 1 0\nvn 0 0 1\n"
                       "f 4//1 3/2 1\n"
                       "f 1 2/1 3/2/1 4//1\n");
    const uint32_t want[] = {3, 2, 0, 0, 1, 2, 0, 2, 3};
    expect_triangles(&s, want, 3);
    scene_free(&s);
}

Test(syntax, negative_indices_count_back_from_elements_read_so_far)
{
    scene s = parse_ok("v 0 0 0\nv 1 0 0\nv 0 1 0\n"
                       "f -3 -2 -1\n"               /* 0 1 2 */
                       "v 0 0 1\n"
                       "f -1 -2 -4\n"               /* 3 2 0 */
                       "vt 0 0\nvt 1 1\nvn 1 0 0\n"
                       "f -1/-1/-1 -2/-2/-1 -3/-1/-1\n" /* 3 2 1 */
                       "f 1/-2 -1/1 2//-1\n");      /* 0 3 1 */
    const uint32_t want[] = {0, 1, 2, 3, 2, 0, 3, 2, 1, 0, 3, 1};
    expect_triangles(&s, want, 4);
    scene_free(&s);
}

Test(syntax, polygons_are_fan_triangulated)
{
    scene s = parse_ok("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 1 0\nv -1 0 0\n"
                       "f 1 2 3 4\n"
                       "f 1 2 3 4 5\n"
                       "f 6/1 5/1 4/1 3/1 2/1 1/1\n"
                       "vt 0 0\n");
    const uint32_t want[] = {0, 1, 2, 0, 2, 3,
                             0, 1, 2, 0, 2, 3, 0, 3, 4,
                             5, 4, 3, 5, 3, 2, 5, 2, 1, 5, 1, 0};
    expect_triangles(&s, want, 9);
    scene_free(&s);
}

Test(syntax, blanks_crlf_blank_lines_and_no_final_newline)
{
    scene s = parse_ok("\r\n"
                       "  v\t1  2\t\t3  \r\n"
                       "\r\n"
                       "\t \n"
                       "\tv 4 5 6\r\n"
                       "v 7 8 9\t\r\n"
                       "\n"
                       "f\t1 2\t 3 \r\n"
                       "f 3 2 1"); /* no final newline */
    const float want_v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const uint32_t want_t[] = {0, 1, 2, 2, 1, 0};
    expect_positions(&s, want_v, 3);
    expect_triangles(&s, want_t, 2);
    scene_free(&s);

    s = parse_ok(TRI3 "f 1 2 3\nv 5 6 7"); /* a vertex ends the file */
    cr_expect_eq(s.n_vertices, 4);
    cr_expect_eq(s.positions[11], 7.0f);
    scene_free(&s);
}

Test(syntax, utf8_byte_order_mark_is_skipped)
{
    scene s = parse_ok("\xEF\xBB\xBFv 1 2 3\nv 4 5 6\nv 7 8 9\nf 1 2 3\n");
    cr_expect_eq(s.n_vertices, 3);
    cr_expect_eq(s.positions[0], 1.0f);
    scene_free(&s);
}

Test(syntax, comments_and_ignored_statements)
{
    scene s = parse_ok("# a comment\n"
                       "#v 9 9 9\n"
                       "mtllib scene.mtl\n"
                       "o object\n"
                       "g group1 group2\n"
                       "s 1\n"
                       "s off\n"
                       "usemtl stone\n"
                       "vp 0.5 0.5\n"
                       "vt 0.5 0.5 0\n"
                       "vn 0 0 1\n"
                       "cstype bezier\n"
                       "deg 3\n"
                       "curv 0 1 1 2\n"
                       "parm u 0 1\n"
                       "end\n"
                       "vertex 5 5 5\n" /* an unknown keyword, not "v" */
                       TRI3
                       "l 1 2 3\n"
                       "p 1\n"
                       "#f 1 2 3\n"
                       "f 1/1/1 2/1/1 3/1/1\n"
                       "   # indented comment\n");
    const float want_v[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t want_t[] = {0, 1, 2};
    expect_positions(&s, want_v, 3);
    expect_triangles(&s, want_t, 1);
    scene_free(&s);
}

Test(syntax, backslash_continues_a_line)
{
    scene s = parse_ok("v 1 2 \\\n3\n"
                       "v 4 5\\\r\n 6\n"
                       "# comment \\\n"
                       "v 99 99 99 (still the comment)\n"
                       "v 7 8 9\n"
                       "f 1 2 \\\n"
                       "  3\\\n"
                       "\n");
    const float want_v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const uint32_t want_t[] = {0, 1, 2};
    expect_positions(&s, want_v, 3);
    expect_triangles(&s, want_t, 1);
    scene_free(&s);
    /* Joined lines still count: the error is on physical line 4. */
    expect_error("v 1 \\\n2 \\\n3\nv 1 2 x\n", "t.obj:4: malformed number \"x\"");
}

Test(syntax, positive_indices_may_point_forward)
{
    scene s = parse_ok("f 1 2 3\n" TRI3);
    const uint32_t want[] = {0, 1, 2};
    expect_triangles(&s, want, 1);
    scene_free(&s);
}

Test(syntax, degenerate_triangles_are_kept_and_bounds_use_referenced_vertices)
{
    scene s = parse_ok("v 0 0 0\nv 2 0 0\nv 0 3 0\nv 1 0 0\n"
                       "v 100 -100 50\n" /* referenced by no face */
                       "f 1 2 3\n"
                       "f 1 4 2\n"       /* collinear: zero area */
                       "f 3 3 1\n");     /* repeated corner: zero area */
    cr_expect_eq(s.n_vertices, 5);
    cr_expect_eq(s.n_triangles, 3);
    cr_expect_eq(s.n_degenerate, 2);
    const float lo[3] = {0, 0, 0}, hi[3] = {2, 3, 0};
    for (int a = 0; a < 3; a++) {
        cr_expect_eq(s.lo[a], lo[a]);
        cr_expect_eq(s.hi[a], hi[a]);
    }
    scene_free(&s);
}

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

typedef struct error_case {
    const char *text, *message;
} error_case;

static void expect_errors(const error_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) expect_error(cases[i].text, cases[i].message);
}

#define EXPECT_ERRORS(cases) expect_errors(cases, sizeof cases / sizeof *cases)

Test(errors, malformed_numbers)
{
    static const error_case cases[] = {
        {"v 1 2 abc\n", "t.obj:1: malformed number \"abc\""},
        {"v 1 2 3junk\n", "t.obj:1: malformed number \"3junk\""},
        {"v 1 2 .\n", "t.obj:1: malformed number \".\""},
        {"v 1 2 -\n", "t.obj:1: malformed number \"-\""},
        {"v 1 2 1e\n", "t.obj:1: malformed number \"1e\""},
        {"v 1 2 1e+\n", "t.obj:1: malformed number \"1e+\""},
        {"v 1 2 1.5.2\n", "t.obj:1: malformed number \"1.5.2\""},
        {"v 1 2 1,5\n", "t.obj:1: malformed number \"1,5\""},
        {"v 0x1p3 2 3\n", "t.obj:1: malformed number \"0x1p3\""},
        {"v 1 2 3/4\n", "t.obj:1: malformed number \"3/4\""},
        {"v 1 2 3 \\ 4\n", "t.obj:1: malformed number \"\\\""},
        {"# header\r\n\r\nv 1 2 3\r\nv 1 -2.5e 3\r\n", "t.obj:4: malformed number \"-2.5e\""},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, wrong_number_of_coordinates)
{
    static const error_case cases[] = {
        {"v 1 2\n", "t.obj:1: vertex needs 3, 4 or 6 numbers, got 2"},
        {"v\n", "t.obj:1: vertex needs 3, 4 or 6 numbers, got 0"},
        {TRI3 "v 1 2 3 4 5\n", "t.obj:4: vertex needs 3, 4 or 6 numbers, got 5"},
        {"v 1 2 3 4 5 6 7", "t.obj:1: vertex needs 3, 4 or 6 numbers, got 7"},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, non_finite_coordinates)
{
    static const error_case cases[] = {
        {"v nan 0 0\n", "t.obj:1: non-finite coordinate \"nan\""},
        {"v 0 NaN 0\n", "t.obj:1: non-finite coordinate \"NaN\""},
        {"v 0 0 inf\n", "t.obj:1: non-finite coordinate \"inf\""},
        {"v 0 -Infinity 0\n", "t.obj:1: non-finite coordinate \"-Infinity\""},
        {"v 1e39 0 0\n", "t.obj:1: non-finite coordinate \"1e39\""},
        {"v 0 -3.5e38 0\n", "t.obj:1: non-finite coordinate \"-3.5e38\""},
        {"v 0 0 1e99999999999999\n", "t.obj:1: non-finite coordinate \"1e99999999999999\""},
        {"v 0 0 0 nan\n", "t.obj:1: non-finite coordinate \"nan\""}, /* w too */
    };
    EXPECT_ERRORS(cases);
}

Test(errors, malformed_face_corners)
{
    static const error_case cases[] = {
        {TRI3 "f 1 x 3\n", "t.obj:4: malformed face corner \"x\""},
        {TRI3 "f 1/ 2 3\n", "t.obj:4: malformed face corner \"1/\""},
        {TRI3 "f 1// 2 3\n", "t.obj:4: malformed face corner \"1//\""},
        {TRI3 "f 1 2 3/\n", "t.obj:4: malformed face corner \"3/\""},
        {TRI3 "f /1 2 3\n", "t.obj:4: malformed face corner \"/1\""},
        {TRI3 "f 1/1/1/1 2 3\n", "t.obj:4: malformed face corner \"1/1/1/1\""},
        {TRI3 "f 1/x 2 3\n", "t.obj:4: malformed face corner \"1/x\""},
        {TRI3 "f 1 2 3x\n", "t.obj:4: malformed face corner \"3x\""},
        {TRI3 "f +1 2 3\n", "t.obj:4: malformed face corner \"+1\""},
        {TRI3 "f 1.0 2 3\n", "t.obj:4: malformed face corner \"1.0\""},
        {TRI3 "f 1 2 -\n", "t.obj:4: malformed face corner \"-\""},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, faces_with_fewer_than_three_corners)
{
    static const error_case cases[] = {
        {TRI3 "f 1 2\n", "t.obj:4: face has 2 corners, needs at least 3"},
        {TRI3 "f 1\r\n", "t.obj:4: face has 1 corners, needs at least 3"},
        {TRI3 "f", "t.obj:4: face has 0 corners, needs at least 3"},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, index_zero)
{
    static const error_case cases[] = {
        {TRI3 "f 0 1 2\n", "t.obj:4: vertex index 0 is invalid (indices start at 1)"},
        {TRI3 "vt 0 0\nf 1/0 2/1 3/1\n",
         "t.obj:5: texture coordinate index 0 is invalid (indices start at 1)"},
        {TRI3 "vn 0 0 1\nf 1//1 2//0 3//1\n",
         "t.obj:5: normal index 0 is invalid (indices start at 1)"},
        {TRI3 "f -0 1 2\n", "t.obj:4: vertex index 0 is invalid (indices start at 1)"},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, indices_out_of_range)
{
    static const error_case cases[] = {
        {TRI3 "f 1 2 4\n", "t.obj:4: vertex index 4 out of range (3 defined)"},
        {TRI3 "f -4 1 2\n", "t.obj:4: vertex index -4 out of range (3 defined so far)"},
        /* negative indices count what is read so far, not the file's total */
        {"v 0 0 0\nv 1 0 0\nf 1 2 -3\nv 0 1 0\n",
         "t.obj:3: vertex index -3 out of range (2 defined so far)"},
        /* a forward reference is checked against the total, at its face */
        {"v 0 0 0\nf 1 2 3\nv 1 0 0\nf 1 2 4\nv 0 1 0\nf 3 2 1\n",
         "t.obj:4: vertex index 4 out of range (3 defined)"},
        {TRI3 "f 1 2 99999999999999999999\n",
         "t.obj:4: vertex index 99999999999999999999 out of range (3 defined)"},
        {TRI3 "f 1 2 4294967297\n", "t.obj:4: vertex index 4294967297 out of range (3 defined)"},
        {TRI3 "vt 0 0\nf 1/1 2/2 3/1\n",
         "t.obj:5: texture coordinate index 2 out of range (1 defined)"},
        {TRI3 "f 1/1 2/1 3/1\n", "t.obj:4: texture coordinate index 1 out of range (0 defined)"},
        {TRI3 "vt 0 0\nf 1/-2 2/1 3/1\n",
         "t.obj:5: texture coordinate index -2 out of range (1 defined so far)"},
        {TRI3 "vn 0 0 1\nf 1//1 2//1 3//-2\n",
         "t.obj:5: normal index -2 out of range (1 defined so far)"},
        {TRI3 "vn 0 0 1\nf 1/1/2 2//1 3//1\nvt 0 0\n",
         "t.obj:5: normal index 2 out of range (1 defined)"},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, no_triangles)
{
    /* The one OBJ error without a line number: it is about the whole file. */
    static const error_case cases[] = {
        {"", "t.obj: no triangles"},
        {"\n\n# only a comment\n", "t.obj: no triangles"},
        {TRI3, "t.obj: no triangles"},
        {TRI3 "l 1 2 3\np 1\n", "t.obj: no triangles"},
    };
    EXPECT_ERRORS(cases);
}

/* ------------------------------------------------------------------------
 * Files and gzip
 * ------------------------------------------------------------------------ */

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, cap, f);
    cr_assert(feof(f), "%s is larger than the test expects", path);
    fclose(f);
    return buf;
}

/* Writes text as a gzip file of one member, or appends one member. */
static void write_gz(const char *path, const char *mode, const char *text, size_t len)
{
    gzFile gz = gzopen(path, mode);
    cr_assert_not_null(gz, "gzopen %s", path);
    cr_assert_eq(gzwrite(gz, text, (unsigned)len), (int)len);
    cr_assert_eq(gzclose(gz), Z_OK);
}

/* A few hundred lines of OBJ: a grid of quads with vt indices. */
static char *grid_obj(size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    n += (size_t)snprintf(t + n, cap - n, "# grid\nvt 0 0\n");
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 10; x++)
            n += (size_t)snprintf(t + n, cap - n, "v %d.%d %d.25 -%d.0625\n", x, y, y, x + y);
    for (int y = 0; y < 9; y++)
        for (int x = 0; x < 9; x++) {
            int i = 10 * y + x + 1;
            n += (size_t)snprintf(t + n, cap - n, "f %d/1 %d/1 %d/1 %d/1\n", i, i + 1, i + 11,
                                  i + 10);
        }
    cr_assert_lt(n, cap);
    *len = n;
    return t;
}

Test(files, plain_gzip_and_sniffed_gzip_load_the_same_scene)
{
    size_t len;
    char *text = grid_obj(&len);
    scene mem, plain, gz, sniffed;
    cr_assert_eq(scene_parse_obj(text, len, "grid", &mem, err, sizeof err), 0, "%s", err);
    cr_expect_eq(mem.n_vertices, 100);
    cr_expect_eq(mem.n_triangles, 2 * 81);

    write_bytes(TMP("grid.obj"), text, len);
    write_gz(TMP("grid.obj.gz"), "wb9", text, len);
    write_gz(TMP("grid_gzip_content.obj"), "wb1", text, len);
    cr_assert_eq(scene_load(TMP("grid.obj"), &plain, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(TMP("grid.obj.gz"), &gz, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(TMP("grid_gzip_content.obj"), &sniffed, err, sizeof err), 0, "%s",
                 err);
    expect_same_scene(&plain, &mem);
    expect_same_scene(&gz, &mem);
    expect_same_scene(&sniffed, &mem);
    scene_free(&mem);
    scene_free(&plain);
    scene_free(&gz);
    scene_free(&sniffed);
    free(text);
}

Test(files, gzip_of_several_members_is_read_whole)
{
    size_t len;
    char *text = grid_obj(&len);
    size_t half = len / 2;
    while (text[half - 1] != '\n') half++;
    write_gz(TMP("members.obj.gz"), "wb", text, half);
    write_gz(TMP("members.obj.gz"), "ab", text + half, len - half);
    scene mem, gz;
    cr_assert_eq(scene_parse_obj(text, len, "grid", &mem, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(TMP("members.obj.gz"), &gz, err, sizeof err), 0, "%s", err);
    expect_same_scene(&gz, &mem);
    scene_free(&mem);
    scene_free(&gz);
    free(text);
}

/* Loads path, which must fail with exactly message. */
static void expect_load_error(const char *path, const char *message)
{
    scene s;
    memset(&s, 0xA5, sizeof s);
    err[0] = '\0';
    cr_expect_eq(scene_load(path, &s, err, sizeof err), -1, "%s loaded", path);
    cr_expect_str_eq(err, message);
    expect_empty(&s);
}

Test(files, truncated_gzip_is_an_error)
{
    size_t len, gz_len;
    char *text = grid_obj(&len);
    write_gz(TMP("whole.obj.gz"), "wb9", text, len);
    unsigned char *gz = read_bytes(TMP("whole.obj.gz"), &gz_len);
    const size_t cuts[] = {0, 1, 2, 10, 20, gz_len / 3, gz_len / 2, gz_len - 8, gz_len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        write_bytes(TMP("cut.obj.gz"), gz, cuts[i]);
        expect_load_error(TMP("cut.obj.gz"), TMP("cut.obj.gz") ": truncated or corrupt gzip data");
    }
    free(gz);
    free(text);
}

Test(files, corrupt_gzip_is_an_error)
{
    size_t len, gz_len;
    char *text = grid_obj(&len);
    write_gz(TMP("good.obj.gz"), "wb9", text, len);
    unsigned char *gz = read_bytes(TMP("good.obj.gz"), &gz_len);

    gz[gz_len - 8] ^= 0xFF; /* CRC-32 */
    write_bytes(TMP("bad_crc.obj.gz"), gz, gz_len);
    expect_load_error(TMP("bad_crc.obj.gz"),
                      TMP("bad_crc.obj.gz") ": truncated or corrupt gzip data: incorrect data check");
    gz[gz_len - 8] ^= 0xFF;

    /* Bytes after the last member that are not another member. */
    unsigned char *tail = malloc(gz_len + 4);
    cr_assert_not_null(tail);
    memcpy(tail, gz, gz_len);
    memcpy(tail + gz_len, "junk", 4);
    write_bytes(TMP("trailing.obj.gz"), tail, gz_len + 4);
    expect_load_error(TMP("trailing.obj.gz"),
                      TMP("trailing.obj.gz") ": truncated or corrupt gzip data: incorrect header check");

    /* A ".gz" name promises gzip data. */
    write_bytes(TMP("plain_text.obj.gz"), text, len);
    expect_load_error(TMP("plain_text.obj.gz"),
                      TMP("plain_text.obj.gz") ": truncated or corrupt gzip data: incorrect header check");
    free(tail);
    free(gz);
    free(text);
}

Test(files, unreadable_files)
{
    expect_load_error(TMP("no_such_file.obj"),
                      TMP("no_such_file.obj") ": cannot open: No such file or directory");
    expect_load_error(KDA_TEST_TMPDIR, KDA_TEST_TMPDIR ": cannot read: Is a directory");
}

Test(files, errors_name_the_path_and_line)
{
    const char text[] = TRI3 "f 1 2 3\nv 1 2 3junk\n";
    write_bytes(TMP("bad.obj"), text, sizeof text - 1);
    expect_load_error(TMP("bad.obj"), TMP("bad.obj") ":5: malformed number \"3junk\"");
    write_gz(TMP("bad.obj.gz"), "wb", text, sizeof text - 1);
    expect_load_error(TMP("bad.obj.gz"), TMP("bad.obj.gz") ":5: malformed number \"3junk\"");
}

/* ------------------------------------------------------------------------
 * Real scenes (KDA_SHARED_SCENES, described by its MANIFEST.md)
 * ------------------------------------------------------------------------ */

typedef struct real_scene {
    const char *name;
    uint32_t n_vertices, n_triangles, n_degenerate;
    float lo[3], hi[3];
} real_scene;

/* Counts and boxes from MANIFEST.md.  The MANIFEST's boxes are of all v
 * lines, the loader's of the vertices that triangles use; they agree for
 * every scene, because the only unreferenced vertices (bunny's 1,113,
 * sibenik's 2) lie inside the box of the others.  Zero-area triangles are
 * those the MANIFEST counts, except sibenik: it says 10, but exactly 9 have a
 * zero cross product (in float, and in double as well).  The MANIFEST gives
 * none for armadillo, buddha, bunny and teapot; they have 0. */
static const real_scene real_scenes[] = {
    {"sponza", 60848, 66450, 6, {-17.4028f, -0.906689f, -7.79851f}, {17.4172f, 15.6533f, 7.80149f}},
    {"sibenik", 40981, 75284, 9, {-20.1411f, -15.3123f, -8.4968f}, {20.1411f, 15.3f, 8.4968f}},
    {"conference", 194399, 331179, 53627, {-1020.13f, -2.7924f, -1055.66f},
     {1685.81f, 650.293f, 668.489f}},
    {"dragon", 437645, 871414, 108, {-0.108324f, 0.0527295f, -0.0504143f},
     {0.0965662f, 0.197173f, 0.0412075f}},
    {"buddha_100k", 49950, 100000, 0, {-0.460955f, -1.00222f, -0.323877f},
     {0.35222f, 0.9775f, 0.490175f}},
    {"armadillo_lowres", 14587, 29170, 0, {-0.434446f, -0.571575f, -0.374793f},
     {0.403139f, 0.426281f, 0.377968f}},
    {"hand", 38219, 76438, 2, {-44.84f, -101.38f, -37.05f}, {42.54f, 100.24f, 38.76f}},
    {"bunny", 35947, 69451, 0, {-0.09469f, 0.032987f, -0.061874f}, {0.061009f, 0.187321f, 0.0588f}},
    {"teapot", 3644, 6320, 0, {-3, 0, -2}, {3.434f, 3.15f, 2}},
};

#define MANIFEST KDA_SHARED_SCENES "/MANIFEST.md"

static char *read_manifest(void)
{
    FILE *f = fopen(MANIFEST, "rb");
    cr_assert_not_null(f, "the shared scenes folder is missing: looked for %s", MANIFEST);
    size_t cap = 1 << 20;
    char *text = calloc(cap, 1);
    cr_assert_not_null(text);
    size_t len = fread(text, 1, cap - 1, f);
    cr_assert(len > 0 && feof(f), "cannot read %s", MANIFEST);
    fclose(f);
    return text;
}

static void check_real_scene(const char *name)
{
    free(read_manifest());
    const real_scene *want = NULL;
    for (size_t i = 0; i < sizeof real_scenes / sizeof *real_scenes; i++)
        if (strcmp(real_scenes[i].name, name) == 0) want = &real_scenes[i];
    cr_assert_not_null(want);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.obj.gz", KDA_SHARED_SCENES, name);
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.n_vertices, want->n_vertices);
    cr_expect_eq(s.n_triangles, want->n_triangles);
    cr_expect_eq(s.n_degenerate, want->n_degenerate);
    for (int a = 0; a < 3; a++) {
        cr_expect_leq(fabsf(s.lo[a] - want->lo[a]), 1e-4f * fabsf(want->lo[a]),
                      "%s lo[%d] = %.9g, want %.9g", name, a, s.lo[a], want->lo[a]);
        cr_expect_leq(fabsf(s.hi[a] - want->hi[a]), 1e-4f * fabsf(want->hi[a]),
                      "%s hi[%d] = %.9g, want %.9g", name, a, s.hi[a], want->hi[a]);
    }
    for (size_t i = 0; i < 3 * (size_t)s.n_triangles; i++)
        if (s.triangles[i] >= s.n_vertices)
            cr_assert_fail("%s: index %u out of range", name, s.triangles[i]);
    scene_free(&s);
}

Test(real, sponza) { check_real_scene("sponza"); }
Test(real, sibenik) { check_real_scene("sibenik"); }
Test(real, conference) { check_real_scene("conference"); }
Test(real, dragon) { check_real_scene("dragon"); }
Test(real, buddha_100k) { check_real_scene("buddha_100k"); }
Test(real, armadillo_lowres) { check_real_scene("armadillo_lowres"); }
Test(real, hand) { check_real_scene("hand"); }
Test(real, bunny) { check_real_scene("bunny"); }
Test(real, teapot) { check_real_scene("teapot"); }

Test(real, every_manifest_scene_is_checked)
{
    /* Scene rows start "| `NAME.obj.gz` |". */
    char *text = read_manifest();
    int rows = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (strncmp(line, "| `", 3) != 0) continue;
        const char *name = line + 3, *close = strchr(name, '`');
        size_t n = close ? (size_t)(close - name) : 0;
        if (n <= 7 || strncmp(close - 7, ".obj.gz", 7) != 0) continue;
        n -= 7;
        int known = 0;
        for (size_t i = 0; i < sizeof real_scenes / sizeof *real_scenes; i++)
            known |= strlen(real_scenes[i].name) == n && strncmp(real_scenes[i].name, name, n) == 0;
        cr_expect(known, "MANIFEST lists %.*s.obj.gz, which no test loads", (int)n, name);
        rows++;
    }
    cr_expect_eq(rows, (int)(sizeof real_scenes / sizeof *real_scenes));
    free(text);
}

/* ------------------------------------------------------------------------
 * Float parsing: every result must equal strtof's, bit for bit
 * ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static int rng_below(int n) { return (int)(rng() % (uint64_t)n); }

/* A finite float below 1e38 in magnitude, from random bits. */
static float random_float(void)
{
    for (;;) {
        uint32_t bits = (uint32_t)rng();
        float f;
        memcpy(&f, &bits, sizeof f);
        if (isfinite(f) && fabsf(f) < 1e38f) return f;
    }
}

static void random_digits(char *s, int n)
{
    for (int i = 0; i < n; i++) s[i] = (char)('0' + rng_below(10));
    s[n] = '\0';
}

/* One decimal number string of a randomly chosen kind; all are finite as
 * floats. */
static void random_number(char *s, size_t size)
{
    char a[48], b[56];
    switch (rng_below(6)) {
    case 0: /* shortest-ish printing of any float, 1 to 9 digits */
        snprintf(s, size, rng_below(2) ? "%.*g" : "%.*e", 1 + rng_below(9), random_float());
        break;
    case 1: { /* free-form: [sign] digits [. digits] [e[sign]digits] */
        int ni = rng_below(11), nf = rng_below(11);
        if (ni + nf == 0) ni = 1;
        random_digits(a, ni);
        random_digits(b, nf);
        const char *sign = (const char *[]){"", "-", "+"}[rng_below(3)];
        const char *dot = nf || rng_below(2) ? "." : "";
        if (rng_below(2))
            snprintf(s, size, "%s%s%s%s%c%d", sign, a, dot, b, rng_below(2) ? 'e' : 'E',
                     rng_below(51) - 25);
        else
            snprintf(s, size, "%s%s%s%s", sign, a, dot, b);
        break;
    }
    case 2: { /* near or on the midpoint between two adjacent floats */
        float f = random_float();
        double mid = 0.5 * ((double)f + (double)nextafterf(f, INFINITY));
        if (isnormal(f)) snprintf(s, size, "%.*g", 14 + rng_below(4), mid);
        else snprintf(s, size, "%.9g", f);
        break;
    }
    case 3: /* typical OBJ output */
        snprintf(s, size, rng_below(2) ? "%f" : "%g", (rng_below(2000001) - 1000000) * 1e-4);
        break;
    case 4: /* long mantissas, some longer than 64 characters */
        {
            int ni = 1 + rng_below(40);
            random_digits(a, ni);
            random_digits(b, rng_below(50));
            snprintf(s, size, "%s.%se%d", a, b, rng_below(60) - 40 - ni);
        }
        break;
    default: /* up to 2^53 times a power of ten around the fast path's range */
        snprintf(s, size, "%llue%d",
                 (unsigned long long)(rng() >> (11 + rng_below(50))), rng_below(53) - 30);
        break;
    }
}

Test(floats, equal_strtof_bit_for_bit, .timeout = 60)
{
    static const char *const fixed[] = {
        "0", "-0", "0.0", "-0.0", ".5", "5.", "+1", "-.0e0", "1e-5", "-0.108324",
        "3.14159265", "0.1", "0.2", "0.3", "1e22", "1e-22", "1e23", "1e-23",
        "9007199254740992", "9007199254740993", "9007199254740993e-10",
        "3.4028234e38", "3.40282346638528859811704183484516925440e38", "1.17549435e-38",
        "1.1754942e-38", "1e-45", "1.4e-45", "7e-46", "7.1e-46", "1e-50", "0e999",
        "16777217", "16777216.5", "33554435", "0.000000000000000000000000000000000000001",
        "00000000000000000000000000000000000000000000000000000000000000000000001.5",
        "1.000000000000000000000000000000000000000000000000000000000000000000000000001",
        "0.99999999999999999999999999999999999999999999999999999999999999999999999",
    };
    enum { N_RANDOM = 300000 };
    size_t n_fixed = sizeof fixed / sizeof *fixed, n = n_fixed + N_RANDOM;
    n += (3 - n % 3) % 3; /* whole v lines */
    char (*numbers)[128] = malloc(n * sizeof *numbers);
    char *text = malloc(n * 130 + 64);
    cr_assert(numbers && text);
    for (size_t i = 0; i < n; i++) {
        if (i < n_fixed) snprintf(numbers[i], sizeof numbers[i], "%s", fixed[i]);
        else random_number(numbers[i], sizeof numbers[i]);
    }
    size_t len = 0;
    for (size_t i = 0; i < n; i += 3)
        len += (size_t)sprintf(text + len, "v %s %s %s\n", numbers[i], numbers[i + 1],
                               numbers[i + 2]);
    len += (size_t)sprintf(text + len, "f 1 2 3\n");

    scene s;
    cr_assert_eq(scene_parse_obj(text, len, "floats", &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq((size_t)s.n_vertices * 3, n);
    size_t double_rounding_traps = 0;
    for (size_t i = 0; i < n; i++) {
        float want = strtof(numbers[i], NULL), got = s.positions[i];
        cr_expect_eq(memcmp(&got, &want, sizeof got), 0, "\"%s\": got %.9g, strtof %.9g",
                     numbers[i], got, want);
        double_rounding_traps += (float)strtod(numbers[i], NULL) != want;
    }
    /* The set holds strings that rounding through double gets wrong. */
    cr_expect_gt(double_rounding_traps, 100, "only %zu double-rounding traps",
                 double_rounding_traps);
    scene_free(&s);
    free(text);
    free(numbers);
}
