/* test_obj_errors.c - the OBJ loader's errors: malformed numbers, wrong
 * coordinate counts, non-finite coordinates, malformed face corners, faces
 * of fewer than three corners, index 0, indices out of range (counted
 * against what is read so far, or against the file's total for forward
 * references), coordinates beyond the float range, an empty file or one
 * without triangles, and lines that end in CR alone.
 *
 * Oracle: the exact message, `file:line: what` (`file: what` for an empty
 * file or one without triangles), and the empty scene an error leaves. */
#include "test_obj.h"

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
        {"v 1 2 3 \\ 4\n", "t.obj:1: malformed number \"\\\\\""}, /* a backslash shown doubled */
        {"# header\r\n\r\nv 1 2 3\r\nv 1 -2.5e 3\r\n", "t.obj:4: malformed number \"-2.5e\""},
        /* lines ended by CR alone are one line: the error says why; a lone
         * CR ending a one-line file is not the cause */
        {"v 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3\r",
         "t.obj:1: malformed number \"v\" (lines of the file end in CR alone, as old Mac files do; OBJ lines end "
         "in LF or CRLF)"},
        {"v 0 0 x\r", "t.obj:1: malformed number \"x\""},
        /* a forward index found too far in the second pass: the hint looks at its line */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 5 # c\rd\nv 0 0 1\n",
         "t.obj:4: vertex index 5 out of range (4 defined) (lines of the file end in CR alone, as old Mac files do; "
         "OBJ lines end in LF or CRLF)"},
        /* some lines ended by CR alone among LF ones: two ran together */
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\rf 1 2 3\n",
         "t.obj:3: malformed number \"f\" (lines of the file end in CR alone, as old Mac files do; OBJ lines end "
         "in LF or CRLF)"},
        /* '#' starts a comment at the start of a token only */
        {"v 1 2 3# origin\n", "t.obj:1: malformed number \"3#\""},
        {TRI3 "f 1 2 3#face\n", "t.obj:4: malformed face corner \"3#face\""},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, quoted_tokens_show_only_printable_ascii)
{
    static const error_case cases[] = {
        {"v 1 2 \x01\n", "t.obj:1: malformed number \"\\x01\""},
        {"v 1 2 \xc3\xa9\n", "t.obj:1: malformed number \"\\xc3\\xa9\""}, /* UTF-8 e-acute */
        {"v 1 2 \x1b[2J\n", "t.obj:1: malformed number \"\\x1b[2J\""},    /* a terminal's escape */
        {TRI3 "f 1 2 \x7f\n", "t.obj:4: malformed face corner \"\\x7f\""},
        /* too long: cut to 44 bytes and "..." */
        {"v 1 2 123456789a123456789b123456789c123456789d123456789e\n",
         "t.obj:1: malformed number \"123456789a123456789b123456789c123456789d1234...\""},
        {"v 1 2 123456789a123456789b123456789c123456789d1234\n",
         "t.obj:1: malformed number \"123456789a123456789b123456789c123456789d1234\""},
        {"v 1 2 123456789a123456789b123456789c123456789d1234567\n", /* 47 bytes and the NUL: whole */
         "t.obj:1: malformed number \"123456789a123456789b123456789c123456789d1234567\""},
        {"v 1 2 123456789a123456789b123456789c123456789d12\xff\n",
         "t.obj:1: malformed number \"123456789a123456789b123456789c123456789d12\\xff\""},
        {"v 1 2 123456789a123456789b123456789c123456789d123\xff\xff\n",
         "t.obj:1: malformed number \"123456789a123456789b123456789c123456789d123...\""},
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
        {"v 0 0 0 nan\n", "t.obj:1: non-finite coordinate \"nan\""}, /* w too */
    };
    EXPECT_ERRORS(cases);
}

/* Finite numbers that no float holds are not "non-finite": they are too
 * large, and the message says so. */
Test(errors, coordinates_beyond_the_float_range)
{
#define BEYOND(number) "t.obj:1: coordinate \"" number "\" is beyond the float range (largest float about 3.4e38)"
    static const error_case cases[] = {
        {"v 1e39 0 0\n", BEYOND("1e39")},
        {"v 0 -3.5e38 0\n", BEYOND("-3.5e38")},
        {"v 0 0 1e99999999999999\n", BEYOND("1e99999999999999")},
        {"v 0 0 340282356779733661637539395458142568448\n", BEYOND("340282356779733661637539395458142568448")},
        {"v 0 0 0 1e40\n", BEYOND("1e40")}, /* w too */
    };
#undef BEYOND
    EXPECT_ERRORS(cases);
    /* The largest float itself, and just below where rounding reaches infinity, load. */
    scene s = parse_ok("v 3.4028234e38 0 0\nv 0 340282356779733661637539395458142568447 0\nv 0 0 1\nf 1 2 3\n");
    cr_expect_eq(s.positions[0], 0x1.fffffep127f);
    cr_expect_eq(s.positions[4], 0x1.fffffep127f);
    scene_free(&s);
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
        {" ", "t.obj: no triangles"},
        {"\n\n# only a comment\n", "t.obj: no triangles"},
        {TRI3, "t.obj: no triangles"},
        {TRI3 "l 1 2 3\np 1\n", "t.obj: no triangles"},
        /* a face misspelt: the first line that starts with no OBJ keyword */
        {TRI3 "o thing\nF 1 2 3\nface 1 2 3\n",
         "t.obj: no triangles (line 5 starts with 'F', which is no OBJ statement; faces are 'f' lines)"},
        /* CR-only line ends after a comment: one comment line */
        {"# exported\rv 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3\r",
         "t.obj: no triangles (lines of the file end in CR alone, as old Mac files do; OBJ lines end in LF or CRLF)"},
    };
    EXPECT_ERRORS(cases);
}

Test(errors, empty_text)
{
    expect_error("", "t.obj: the file is empty");
}
