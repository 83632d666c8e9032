/* test_obj_syntax.c - the OBJ loader (scenes/obj.c) on what it must accept:
 * vertices with and without w (and colours), number forms, every face form
 * and their mixes, negative and forward indices, blanks, CRLF, a missing
 * final newline, a UTF-8 byte order mark, comments and ignored statements,
 * backslash continuations, and degenerate triangles kept with bounds of the
 * referenced vertices only.  Faces of more corners: test_obj_polygons.c.
 *
 * Oracles: hand-written OBJ text whose vertices, triangles, counts and
 * bounds are known exactly (every number in it is exact in float, or
 * compared with the float the literal names). */
#include "test_obj.h"

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
    /* "vertex" is no OBJ statement: skipped, and the scene says where */
    cr_expect_eq(s.n_skipped, 1);
    cr_expect_eq(s.skipped_line, 17);
    cr_expect_str_eq(s.skipped, "vertex");
    scene_free(&s);
}

Test(syntax, comments_after_a_statement)
{
    scene s = parse_ok("v 0 0 0 # origin\n"
                       "v 1 0 0\t#x\n"
                       "v 0 1 0 # 5 5 5\n"
                       "v 0 0 1 ## \\\n"
                       "f 1 2 4 (the comment, continued)\n"
                       "f 1 2 3 # 4\n"
                       "f 1 3 4 #\n");
    const float want_v[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    const uint32_t want_t[] = {0, 1, 2, 0, 2, 3};
    expect_positions(&s, want_v, 4);
    expect_triangles(&s, want_t, 2);
    cr_expect_eq(s.n_skipped, 0);
    scene_free(&s);
}

Test(syntax, lines_of_no_statement_are_counted)
{
    scene s = parse_ok("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                       "f 1 2 3\n"
                       "F 1 2 4\n"        /* a capital F: skipped, counted */
                       "\xc3\xa9 1 3 4\n" /* non-ASCII, shown as \xNN */
                       "F 2 3 4\n");
    cr_expect_eq(s.n_triangles, 1);
    cr_expect_eq(s.n_skipped, 3);
    cr_expect_eq(s.skipped_line, 6);
    cr_expect_str_eq(s.skipped, "F");
    scene_free(&s);
    s = parse_ok("v 0 0 0\nv 1 0 0\nv 0 1 0\n\xc3\xa9\x01 1 2 3\nf 1 2 3\n");
    cr_expect_eq(s.n_skipped, 1);
    cr_expect_eq(s.skipped_line, 4);
    cr_expect_str_eq(s.skipped, "\\xc3\\xa9\\x01");
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
    /* A keyword continued on the next line */
    s = parse_ok("v 0 0 0\nv 1 0 0\nv 0 1 0\nf\\\n1 2 3\nf\\\r\n 1 3 2\n");
    cr_expect_eq(s.n_triangles, 2);
    cr_expect_eq(s.n_skipped, 0);
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
