/* obj.c - Wavefront OBJ statements: scene_parse_obj (scene.h), the parser
 * of OBJ text held in memory.  Reading files and gzip is obj_read.c's; the
 * numbers are obj_number.c's; the lexical classes are obj_lex.h's.
 *
 * Statements read (one per line; the keyword is the line's first token):
 *   v x y z [w]     a vertex.  Every v line is kept, in file order.  w is
 *                   read and discarded, as are the colours of the common
 *                   "v x y z r g b" extension: a v line has 3, 4 or 6 numbers.
 *   f c1 c2 c3 ...  a face of 3 or more corners, each one of  i  i/t  i/t/n
 *                   i//n  (forms may differ between corners), a simple
 *                   polygon cut into n - 2 triangles (obj_polygon.h): a
 *                   quad as (c1 c2 c3) (c1 c3 c4), convex or not (the cut
 *                   the shared scenes' figures were measured with); more
 *                   corners as a strip when the face is convex, else by
 *                   ear clipping (at most OBJ_POLYGON_EARS_MAX corners),
 *                   once the vertices it names are read.
 *   vt, vn          counted, so that t and n indices can be range-checked;
 *                   their numbers are not read.
 *   # ...           a comment, as a line's first token or after the numbers
 *                   or corners of a v or f line (a token that starts with
 *                   '#' ends the statement).
 * Every other OBJ statement is skipped without a word: o g s usemtl mtllib
 * vp l p and free-form geometry (cstype deg curv surf ...) carry nothing a
 * triangle mesh of positions needs.  A line whose first token is no OBJ
 * keyword (a misspelt or capitalised "f", a vendor's extension) is skipped
 * too, but counted: the scene records the first (scene.h), the command line
 * warns of it, and where no triangle is read the error names it.  Tokens
 * quoted in messages show a backslash doubled and bytes outside printable
 * ASCII as \xNN, cut with "..." where long.
 *
 * Lexical rules: tokens are separated by blanks (obj_lex.h), so CRLF files
 * read like LF ones; blank lines, leading and trailing blanks and a
 * missing final newline are fine; a backslash ending a line (before LF or
 * CRLF) joins it to the next, comments included; a UTF-8 byte-order mark at
 * the start is skipped; lines that end in CR alone run into the next, and
 * an error then says so.  Numbers are decimal (obj_number.h); "nan", "inf"
 * (non-finite), hexadecimal floats (malformed) and values beyond the float
 * range (about 3.4e38) are errors.  Indices are 1-based; a negative one
 * counts back from the elements of its kind read so far (-1 = the latest); a
 * positive one may point forward but must not exceed the number of elements
 * of its kind in the whole file.
 *
 * Errors read "FILE:LINE: what", LINE being the 1-based line of the offending
 * token.  Errors about the whole text have no line: "FILE: no triangles" (a
 * file with no faces is an error), "FILE: the file is empty", "FILE: does
 * not look like an OBJ file: it starts like a PNG image" (or holds a NUL
 * byte: obj_sniff.c).  On error the scene is left zeroed.
 *
 * Invariants of a loaded scene: n_triangles >= 1; every index < n_vertices;
 * every coordinate finite; both counts <= UINT32_MAX; degenerate triangles
 * are kept; bounds and n_degenerate come from scene_update_bounds.
 */
#include "scene.h"
#include "obj_lex.h"
#include "obj_number.h"
#include "obj_polygon.h"
#include "obj_sniff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Parser state
 * ------------------------------------------------------------------------ */

enum { KIND_V, KIND_VT, KIND_VN, N_KINDS };

static const char *const kind_name[N_KINDS] = {"vertex", "texture coordinate", "normal"};

/* A face of more than 4 corners that names a vertex not read yet: its
 * triangles, first at `tri`, are cut again once every vertex is read. */
typedef struct face_record {
    size_t tri, corner, n, line;
} face_record;

typedef struct obj_parser {
    const char *name;           /* for messages */
    char *err;
    size_t errlen;
    size_t line;                /* 1-based line of the current token */
    float *pos;                 /* 3 floats per vertex */
    uint32_t *tri;              /* 3 indices per triangle */
    size_t cap_v, n_t, cap_t;   /* vertex capacity; triangle count, capacity */
    uint32_t *corner;           /* the vertices of the face being read */
    size_t cap_c;
    face_record *face;          /* faces of more than 4 corners naming vertices ahead */
    size_t n_f, cap_f;
    uint32_t *face_c;           /* their corners' vertices, face after face */
    size_t n_fc, cap_fc;
    uint64_t count[N_KINDS];    /* v, vt, vn lines read so far */
    uint64_t max_ref[N_KINDS];  /* largest positive index of each kind seen */
    uint64_t limit[N_KINDS];    /* largest positive index allowed */
    uint64_t n_stranger;        /* lines whose first token is no OBJ keyword */
    size_t stranger_line;       /* the first of them */
    char stranger[SCENE_TOKEN_SHOWN]; /* its keyword, as show_token writes it */
    char shown[SCENE_TOKEN_SHOWN];    /* the token quoted in an error */
} obj_parser;

static void parser_init(obj_parser *ps, const char *name, char *err, size_t errlen,
                        const uint64_t limit[N_KINDS])
{
    memset(ps, 0, sizeof *ps);
    ps->name = name;
    ps->err = err;
    ps->errlen = errlen;
    ps->line = 1;
    memcpy(ps->limit, limit, sizeof ps->limit);
}

static void parser_free(obj_parser *ps)
{
    free(ps->pos);
    free(ps->tri);
    free(ps->corner);
    free(ps->face);
    free(ps->face_c);
}

/* Bytes show_token writes for byte c: printable ASCII as it is, a backslash
 * doubled, every other byte as \xNN. */
static size_t shown_bytes(unsigned char c) { return c == '\\' ? 2 : c >= 0x21 && c <= 0x7e ? 1 : 4; }

/* Writes a token of `len` bytes as a message may quote it into buf (size
 * bytes, at least 8), each byte as shown_bytes says, so that a stray control
 * or non-ASCII byte cannot garble the terminal; a token that does not fit
 * whole is cut where "..." and the NUL still fit, and ends in "...".
 * Returns buf. */
static const char *show_token(char *buf, size_t size, const char *tok, size_t len)
{
    size_t whole = 0;
    for (size_t i = 0; i < len && whole < size; i++) whole += shown_bytes((unsigned char)tok[i]);
    size_t room = whole < size ? size - 1 : size - 4; /* with the NUL, or "..." and the NUL */
    size_t o = 0, i = 0;
    for (; i < len && o + shown_bytes((unsigned char)tok[i]) <= room; i++) {
        unsigned char c = (unsigned char)tok[i];
        if (shown_bytes(c) == 1) buf[o++] = (char)c;
        else if (c == '\\') buf[o++] = '\\', buf[o++] = '\\';
        else o += (size_t)snprintf(buf + o, 5, "\\x%02x", c);
    }
    if (i < len) memcpy(buf + o, "...", 3), o += 3;
    buf[o] = '\0';
    return buf;
}

/* Writes "name:line: " and the formatted message into ps->err; returns -1. */
static int fail(obj_parser *ps, const char *fmt, ...)
{
    int n = snprintf(ps->err, ps->errlen, "%s:%zu: ", ps->name, ps->line);
    if (n >= 0 && (size_t)n < ps->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Doubles an array of *cap elements of `size` bytes, to at most UINT32_MAX
 * elements.  Returns the new array, or NULL (the old one intact) after
 * reporting "too many" or "out of memory". */
static void *grow(obj_parser *ps, void *array, size_t *cap, size_t size, const char *what)
{
    if (*cap >= UINT32_MAX) {
        fail(ps, "too many %s (more than %lu)", what, (unsigned long)UINT32_MAX);
        return NULL;
    }
    size_t n = *cap ? 2 * *cap : 4096;
    if (n > UINT32_MAX) n = UINT32_MAX;
    void *bigger = n <= SIZE_MAX / size ? realloc(array, n * size) : NULL;
    if (!bigger) {
        fail(ps, "out of memory");
        return NULL;
    }
    *cap = n;
    return bigger;
}

static int push_vertex(obj_parser *ps, const float xyz[3])
{
    size_t n = (size_t)ps->count[KIND_V];
    if (n == ps->cap_v) {
        float *bigger = grow(ps, ps->pos, &ps->cap_v, 3 * sizeof *ps->pos, "vertices");
        if (!bigger) return -1;
        ps->pos = bigger;
    }
    memcpy(ps->pos + 3 * n, xyz, 3 * sizeof *xyz);
    ps->count[KIND_V]++;
    return 0;
}

/* Room for k more triangles; returns the first, or NULL after reporting. */
static uint32_t *add_triangles(obj_parser *ps, size_t k)
{
    while (ps->n_t + k > ps->cap_t) {
        uint32_t *bigger = grow(ps, ps->tri, &ps->cap_t, 3 * sizeof *ps->tri, "triangles");
        if (!bigger) return NULL;
        ps->tri = bigger;
    }
    ps->n_t += k;
    return ps->tri + 3 * (ps->n_t - k);
}

/* Cuts a face of more than 4 corners c[0..n-1] again, by its ears, where it
 * is not convex; its strip's triangles start at triangle `tri`.  `line`:
 * the face's, for the message. */
static int cut_face(obj_parser *ps, const uint32_t *c, size_t n, size_t tri, size_t line)
{
    if (obj_polygon_convex(ps->pos, c, n)) return 0;
    if (n > OBJ_POLYGON_EARS_MAX) {
        ps->line = line;
        return fail(ps, "face of %zu corners is not convex: such a face may have at most %d", n,
                    OBJ_POLYGON_EARS_MAX);
    }
    if (obj_polygon_ears(ps->pos, c, n, ps->tri + 3 * tri)) return fail(ps, "out of memory");
    return 0;
}

/* Notes a face of more than 4 corners (ps->corner) that names a vertex not
 * read yet, to be cut once every vertex is (cut_faces). */
static int keep_face(obj_parser *ps, size_t tri, size_t n, size_t line)
{
    if (ps->n_f == ps->cap_f) {
        face_record *bigger = grow(ps, ps->face, &ps->cap_f, sizeof *ps->face, "faces of more than 4 corners");
        if (!bigger) return -1;
        ps->face = bigger;
    }
    while (ps->n_fc + n > ps->cap_fc) {
        uint32_t *bigger = grow(ps, ps->face_c, &ps->cap_fc, sizeof *ps->face_c, "corners of faces");
        if (!bigger) return -1;
        ps->face_c = bigger;
    }
    ps->face[ps->n_f++] = (face_record){tri, ps->n_fc, n, line};
    memcpy(ps->face_c + ps->n_fc, ps->corner, n * sizeof *ps->corner);
    ps->n_fc += n;
    return 0;
}

/* ------------------------------------------------------------------------
 * Lexing
 * ------------------------------------------------------------------------ */

/* Length of the token at p. */
static size_t token_len(const char *p, const char *end)
{
    size_t n = 0;
    while (p + n < end && !obj_is_blank(p[n]) && p[n] != '\n') n++;
    return n;
}

/* The token at p as an error quotes it (show_token), in ps->shown. */
static const char *show(obj_parser *ps, const char *p, const char *end)
{
    return show_token(ps->shown, sizeof ps->shown, p, token_len(p, end));
}

/* Whether p is a backslash that continues the line: right before LF or
 * CRLF, or ending the text. */
static int at_continuation(const char *p, const char *end)
{
    if (p == end || *p != '\\') return 0;
    if (++p < end && *p == '\r') p++;
    return p == end || *p == '\n';
}

/* Skips blanks and line continuations (at_continuation), counting the lines
 * joined. */
static const char *skip_blanks(obj_parser *ps, const char *p, const char *end)
{
    for (;;) {
        while (p < end && obj_is_blank(*p)) p++;
        if (!at_continuation(p, end)) return p;
        p = memchr(p, '\n', (size_t)(end - p)); /* the LF right after the backslash (and a CR) */
        if (!p) return end;
        p++;
        ps->line++;
    }
}

/* Skips to the newline ending the statement at p (or the end of the text),
 * following line continuations. */
static const char *skip_statement(obj_parser *ps, const char *p, const char *end)
{
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return end;
        size_t n = (size_t)(nl - p); /* characters before the newline */
        if (n > 0 && p[n - 1] == '\r') n--;
        if (n == 0 || p[n - 1] != '\\') return nl;
        p = nl + 1;
        ps->line++;
    }
}

/* ------------------------------------------------------------------------
 * Coordinates
 * ------------------------------------------------------------------------ */

static int parse_coordinate(obj_parser *ps, const char **pp, const char *end, float *out)
{
    const char *tok = *pp;
    switch (obj_parse_float(pp, end, out)) {
    case OBJ_NUM_OK:
        return 0;
    case OBJ_NUM_NOMEM:
        return fail(ps, "out of memory");
    case OBJ_NUM_OVERFLOW:
        return fail(ps, "coordinate \"%s\" is beyond the float range (largest float about 3.4e38)",
                    show(ps, tok, end));
    case OBJ_NUM_MALFORMED: {
        size_t n = token_len(tok, end); /* no name of a non-finite value is longer than 16 */
        if (!obj_names_nonfinite(tok, n < 16 ? (int)n : 16))
            return fail(ps, "malformed number \"%s\"", show(ps, tok, end));
        break;
    }
    }
    return fail(ps, "non-finite coordinate \"%s\"", show(ps, tok, end));
}

/* ------------------------------------------------------------------------
 * Statements
 * ------------------------------------------------------------------------ */

/* After "v": 3, 4 or 6 numbers, of which the first 3 are kept. */
static int parse_vertex(obj_parser *ps, const char **pp, const char *end)
{
    const char *p = *pp;
    float xyz[3], discarded;
    size_t n = 0;
    for (;;) {
        p = skip_blanks(ps, p, end);
        if (p < end && *p == '#') p = skip_statement(ps, p, end); /* a comment ends the statement */
        if (p == end || *p == '\n') break;
        if (parse_coordinate(ps, &p, end, n < 3 ? &xyz[n] : &discarded)) return -1;
        n++;
    }
    if (n != 3 && n != 4 && n != 6)
        return fail(ps, "vertex needs 3, 4 or 6 numbers, got %zu", n);
    *pp = p;
    return push_vertex(ps, xyz);
}

/* One index of a face corner: its value and where it is written. */
typedef struct corner_index {
    int64_t value;      /* saturated far beyond any valid index */
    const char *text;   /* NULL when the corner leaves it out */
    int len;
} corner_index;

/* Reads an index (obj_scan_index) and notes where it is written; returns
 * the position after it, or NULL if there are no digits. */
static const char *scan_index(const char *p, const char *end, corner_index *ix)
{
    const char *s = p;
    p = obj_scan_index(p, end, &ix->value);
    if (!p) return NULL;
    ix->text = s;
    ix->len = (int)(p - s < 40 ? p - s : 40);
    return p;
}

/* Reads a corner  i  i/t  i/t/n  or  i//n  into ix[KIND_V..KIND_VN]; returns
 * the position after it, or NULL if it is malformed. */
static const char *scan_corner(const char *p, const char *end, corner_index ix[N_KINDS])
{
    ix[KIND_VT].text = ix[KIND_VN].text = NULL;
    p = scan_index(p, end, &ix[KIND_V]);
    if (p && p < end && *p == '/') {
        p++;
        if (p < end && *p == '/') {
            p = scan_index(p + 1, end, &ix[KIND_VN]);
        } else {
            p = scan_index(p, end, &ix[KIND_VT]);
            if (p && p < end && *p == '/') p = scan_index(p + 1, end, &ix[KIND_VN]);
        }
    }
    return p && obj_at_token_end(p, end) ? p : NULL;
}

/* Checks one index against the elements of its kind and makes it 0-based.
 * A positive index is only checked against `limit` (unlimited in the first
 * pass, the file's totals in the second: see parse_checked). */
static int resolve_index(obj_parser *ps, int kind, const corner_index *ix, uint32_t *out)
{
    const char *what = kind_name[kind];
    uint64_t have = ps->count[kind];
    if (ix->value == 0)
        return fail(ps, "%s index 0 is invalid (indices start at 1)", what);
    if (ix->value < 0) {
        if ((uint64_t)-ix->value > have)
            return fail(ps, "%s index %.*s out of range (%llu defined so far)", what,
                        ix->len, ix->text, (unsigned long long)have);
        *out = (uint32_t)(have - (uint64_t)-ix->value);
        return 0;
    }
    uint64_t v = (uint64_t)ix->value;
    if (v > ps->limit[kind])
        return fail(ps, "%s index %.*s out of range (%llu defined)", what, ix->len, ix->text,
                    (unsigned long long)ps->limit[kind]);
    if (v > ps->max_ref[kind]) ps->max_ref[kind] = v;
    *out = (uint32_t)(v - 1);
    return 0;
}

/* Parses one face corner at *pp; stores its 0-based vertex index. */
static int parse_corner(obj_parser *ps, const char **pp, const char *end, uint32_t *vertex)
{
    corner_index ix[N_KINDS];
    const char *p = scan_corner(*pp, end, ix);
    if (!p)
        return fail(ps, "malformed face corner \"%s\"", show(ps, *pp, end));
    uint32_t unused;
    if (resolve_index(ps, KIND_V, &ix[KIND_V], vertex)) return -1;
    if (ix[KIND_VT].text && resolve_index(ps, KIND_VT, &ix[KIND_VT], &unused)) return -1;
    if (ix[KIND_VN].text && resolve_index(ps, KIND_VN, &ix[KIND_VN], &unused)) return -1;
    *pp = p;
    return 0;
}

/* After "f": 3 or more corners, then their triangles: the strip, which a
 * face of more than 4 corners keeps only if it is convex (cut_face, now or,
 * where it names a vertex ahead, in cut_faces). */
static int parse_face(obj_parser *ps, const char **pp, const char *end)
{
    const char *p = *pp;
    size_t n = 0, line = ps->line;
    uint32_t highest = 0;
    for (;;) {
        p = skip_blanks(ps, p, end);
        if (p < end && *p == '#') p = skip_statement(ps, p, end); /* a comment ends the statement */
        if (p == end || *p == '\n') break;
        if (n == ps->cap_c) {
            uint32_t *bigger = grow(ps, ps->corner, &ps->cap_c, sizeof *ps->corner, "corners in one face");
            if (!bigger) return -1;
            ps->corner = bigger;
        }
        if (parse_corner(ps, &p, end, &ps->corner[n])) return -1;
        if (ps->corner[n] > highest) highest = ps->corner[n];
        n++;
    }
    if (n < 3) return fail(ps, "face has %zu corners, needs at least 3", n);
    size_t first = ps->n_t;
    uint32_t *tri = add_triangles(ps, n - 2);
    if (!tri) return -1;
    obj_polygon_strip(ps->corner, n, tri);
    if (n > 4 && (highest < ps->count[KIND_V] ? cut_face(ps, ps->corner, n, first, line)
                                              : keep_face(ps, first, n, line)))
        return -1;
    *pp = p;
    return 0;
}

/* Whether kw is a statement of the OBJ format (Wavefront's list; all but
 * v, vt, vn and f are skipped), so that a line that starts with none, often
 * a misspelt or capitalised "f", is counted, warned of (cli.c) and, in a
 * file without triangles, named in the error. */
static int obj_keyword(const char *kw, size_t n)
{
    static const char *const known[] = {"v",     "vt",     "vn",    "vp",     "f",      "l",      "p",     "o",
                                        "g",     "s",      "mg",    "usemtl", "mtllib", "cstype", "deg",   "bmat",
                                        "step",  "curv",   "curv2", "surf",   "parm",   "trim",   "hole",  "scrv",
                                        "sp",    "end",    "con",   "maplib", "usemap", "lod",    "bevel", "c_interp",
                                        "d_interp", "ctech", "stech", "shadow_obj", "trace_obj", "call", "csh", "res"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i]) == n && memcmp(known[i], kw, n) == 0) return 1;
    return 0;
}

/* One pass over the text. */
static int parse_pass(obj_parser *ps, const char *p, const char *end)
{
    static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
    if (end - p >= 3 && memcmp(p, bom, 3) == 0) p += 3;
    while (p < end) {
        p = skip_blanks(ps, p, end);
        if (p == end) break;
        if (*p == '\n') {
            p++;
            ps->line++;
            continue;
        }
        const char *kw = p;
        while (p < end && !obj_is_blank(*p) && *p != '\n' && !at_continuation(p, end)) p++; /* "f\" LF: f */
        size_t kw_len = (size_t)(p - kw);
        if (kw_len == 1 && kw[0] == 'v') {
            if (parse_vertex(ps, &p, end)) return -1;
        } else if (kw_len == 1 && kw[0] == 'f') {
            if (parse_face(ps, &p, end)) return -1;
        } else {
            if (kw_len == 2 && kw[0] == 'v' && kw[1] == 't') ps->count[KIND_VT]++;
            if (kw_len == 2 && kw[0] == 'v' && kw[1] == 'n') ps->count[KIND_VN]++;
            if (kw[0] != '#' && !obj_keyword(kw, kw_len) && !ps->n_stranger++) {
                ps->stranger_line = ps->line;
                show_token(ps->stranger, sizeof ps->stranger, kw, kw_len);
            }
            p = skip_statement(ps, p, end);
        }
    }
    return 0;
}

/* Parses the text; then, if some positive index pointed beyond the last
 * element of its kind in the file, parses it again with the totals as
 * limits, which stops at the first such index with its line number. */
static int parse_checked(obj_parser *ps, const char *text, size_t len)
{
    if (parse_pass(ps, text, text + len)) return -1;
    int dangling = 0;
    for (int k = 0; k < N_KINDS; k++) dangling |= ps->max_ref[k] > ps->count[k];
    if (!dangling) return 0;
    obj_parser again;
    parser_init(&again, ps->name, ps->err, ps->errlen, ps->count);
    parse_pass(&again, text, text + len);
    ps->line = again.line; /* the error's line, for hint_cr_only */
    parser_free(&again);
    return -1;
}

/* The faces that named vertices ahead, cut now that every vertex is read. */
static int cut_faces(obj_parser *ps)
{
    for (size_t f = 0; f < ps->n_f; f++) {
        const face_record *r = &ps->face[f];
        if (cut_face(ps, ps->face_c + r->corner, r->n, r->tri, r->line)) return -1;
    }
    return 0;
}

/* Returns the array cut to n bytes, or the array itself if realloc fails. */
static void *shrink(void *array, size_t n)
{
    void *smaller = realloc(array, n);
    return smaller ? smaller : array;
}

/* Lines that end in CR alone (old Mac files) read as one line with the
 * next: the error (often "no triangles", the line being a comment, or a
 * malformed statement where two ran together) says why, where the line it
 * names (`line`; 0: the whole text) holds such a CR.  One CR ending the
 * text is a one-line file's CRLF cut short, not the cause. */
static void hint_cr_only(const char *text, size_t len, size_t line, char *err, size_t errlen)
{
    size_t n = strlen(err);
    const char *from = text, *last = text + len - 1; /* a CR before last has a byte after it */
    for (size_t l = 1; l < line; l++) { /* to the start of that line */
        const char *end = memchr(from, '\n', (size_t)(text + len - from));
        if (!end) return;
        from = end + 1;
    }
    const char *nl = line ? memchr(from, '\n', (size_t)(text + len - from)) : NULL, *to = nl ? nl : last;
    const char *cr = from;
    while (cr < to && (cr = memchr(cr, '\r', (size_t)(to - cr))) && cr[1] == '\n') cr++;
    if (cr && cr < to && n < errlen)
        snprintf(err + n, errlen - n, " (lines of the file end in CR alone, as old Mac files do; OBJ lines end "
                 "in LF or CRLF)");
}

int scene_parse_obj(const char *text, size_t len, const char *name,
                    scene *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char what[96];
    if (len == 0) {
        snprintf(err, errlen, "%s: the file is empty", name);
        return -1;
    }
    if (obj_sniff_not_text((const unsigned char *)text, len, what, sizeof what)) {
        snprintf(err, errlen, "%s: does not look like an OBJ file: it %s", name, what);
        return -1;
    }
    static const uint64_t unlimited[N_KINDS] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
    obj_parser ps;
    parser_init(&ps, name, err, errlen, unlimited);
    if (parse_checked(&ps, text, len) || cut_faces(&ps)) {
        hint_cr_only(text, len, ps.line, err, errlen);
        parser_free(&ps);
        return -1;
    }
    if (ps.n_t == 0) {
        if (ps.stranger_line)
            snprintf(err, errlen, "%s: no triangles (line %zu starts with '%s', which is no OBJ statement; faces "
                     "are 'f' lines)", name, ps.stranger_line, ps.stranger);
        else
            snprintf(err, errlen, "%s: no triangles", name);
        hint_cr_only(text, len, 0, err, errlen);
        parser_free(&ps);
        return -1;
    }
    out->n_skipped = ps.n_stranger;
    out->skipped_line = ps.stranger_line;
    memcpy(out->skipped, ps.stranger, sizeof out->skipped);
    out->n_vertices = (uint32_t)ps.count[KIND_V];
    out->n_triangles = (uint32_t)ps.n_t;
    out->positions = shrink(ps.pos, 3 * sizeof *ps.pos * out->n_vertices);
    out->triangles = shrink(ps.tri, 3 * sizeof *ps.tri * out->n_triangles);
    ps.pos = NULL, ps.tri = NULL; /* the scene's now */
    parser_free(&ps);
    scene_update_bounds(out);
    return 0;
}
