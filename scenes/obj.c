/* obj.c - Wavefront OBJ loader: scene_load and scene_parse_obj.
 *
 * Statements read (one per line; the keyword is the line's first token):
 *   v x y z [w]     a vertex.  Every v line is kept, in file order.  w is
 *                   read and discarded, as are the colours of the common
 *                   "v x y z r g b" extension: a v line has 3, 4 or 6 numbers.
 *   f c1 c2 c3 ...  a face of 3 or more corners, each one of  i  i/t  i/t/n
 *                   i//n  (forms may differ between corners), fan-triangulated
 *                   into (c1 c2 c3) (c1 c3 c4) ... (c1 cn-1 cn).
 *   vt, vn          counted, so that t and n indices can be range-checked;
 *                   their numbers are not read.
 *   # ...           a comment.
 * Every other statement is ignored without error: o g s usemtl mtllib vp l p,
 * free-form geometry (cstype deg curv surf ...) and vendor extensions carry
 * nothing a triangle mesh of positions needs.  (So a misspelt keyword is
 * skipped silently too; "#" starts a comment only as a line's first token.)
 *
 * Lexical rules: tokens are separated by spaces, tabs, CR, VT and FF, so CRLF
 * files read like LF ones; blank lines, leading and trailing blanks and a
 * missing final newline are fine; a backslash ending a line (before LF or
 * CRLF) joins it to the next, comments included; a UTF-8 byte-order mark at
 * the start is skipped.  Numbers are decimal, [+-]digits[.digits][(e|E)[+-]
 * digits] with at least one mantissa digit; "nan", "inf" (non-finite),
 * hexadecimal floats (malformed) and values beyond the float range (about
 * 3.4e38) are errors, while underflow rounds to a subnormal or zero as
 * strtof does.  Indices are 1-based; a negative one
 * counts back from the elements of its kind read so far (-1 = the latest); a
 * positive one may point forward but must not exceed the number of elements
 * of its kind in the whole file.
 *
 * Errors read "FILE:LINE: what", LINE being the 1-based line of the offending
 * token.  Errors about the whole file have no line: "FILE: no triangles" (a
 * file with no faces is an error), "FILE: the file is empty", "FILE: does
 * not look like an OBJ file: it starts like a PNG image" (or holds a NUL
 * byte: obj_sniff.c), "FILE: cannot open: ...", "FILE: cannot read: ..." and
 * "FILE: truncated or corrupt gzip data[: zlib's reason]".
 * On error the scene is left zeroed.
 *
 * Invariants of a loaded scene: n_triangles >= 1; every index < n_vertices;
 * every coordinate finite; both counts <= UINT32_MAX; degenerate triangles
 * are kept; bounds and n_degenerate come from scene_update_bounds.
 *
 * Floats equal strtof's exactly.  A mantissa of at most 2^53 with a decimal
 * exponent in [-22, 22] is converted with one correctly rounded double
 * multiplication or division (both operands exact), then rounded to float;
 * that double rounding can only differ from direct rounding when the double
 * lands exactly on a midpoint between two floats, and that case, like every
 * longer or wider number, goes to strtof (which assumes the C locale).
 */
#include "scene.h"
#include "obj_sniff.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------------------
 * Parser state
 * ------------------------------------------------------------------------ */

enum { KIND_V, KIND_VT, KIND_VN, N_KINDS };

static const char *const kind_name[N_KINDS] = {"vertex", "texture coordinate", "normal"};

typedef struct obj_parser {
    const char *name;           /* for messages */
    char *err;
    size_t errlen;
    size_t line;                /* 1-based line of the current token */
    float *pos;                 /* 3 floats per vertex */
    uint32_t *tri;              /* 3 indices per triangle */
    size_t cap_v, n_t, cap_t;   /* vertex capacity; triangle count, capacity */
    uint64_t count[N_KINDS];    /* v, vt, vn lines read so far */
    uint64_t max_ref[N_KINDS];  /* largest positive index of each kind seen */
    uint64_t limit[N_KINDS];    /* largest positive index allowed */
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

static int push_triangle(obj_parser *ps, uint32_t a, uint32_t b, uint32_t c)
{
    if (ps->n_t == ps->cap_t) {
        uint32_t *bigger = grow(ps, ps->tri, &ps->cap_t, 3 * sizeof *ps->tri, "triangles");
        if (!bigger) return -1;
        ps->tri = bigger;
    }
    uint32_t *t = ps->tri + 3 * ps->n_t++;
    t[0] = a;
    t[1] = b;
    t[2] = c;
    return 0;
}

/* ------------------------------------------------------------------------
 * Lexing
 * ------------------------------------------------------------------------ */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* True where a number or face corner may end: a blank, the end of the line or
 * text, or a backslash (which skip_blanks treats as a continuation). */
static int at_token_end(const char *p, const char *end)
{
    return p == end || is_blank(*p) || *p == '\n' || *p == '\\';
}

/* Length of the token at p, for quoting it in a message (at most 40). */
static int token_len(const char *p, const char *end)
{
    int n = 0;
    while (p + n < end && n < 40 && !is_blank(p[n]) && p[n] != '\n') n++;
    return n;
}

/* Skips blanks and line continuations (a backslash right before LF or CRLF,
 * or ending the text), counting the lines joined. */
static const char *skip_blanks(obj_parser *ps, const char *p, const char *end)
{
    for (;;) {
        while (p < end && is_blank(*p)) p++;
        if (p == end || *p != '\\') return p;
        const char *q = p + 1;
        if (q < end && *q == '\r') q++;
        if (q == end) return end;
        if (*q != '\n') return p;
        p = q + 1;
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
 * Numbers
 * ------------------------------------------------------------------------ */

enum num_status { NUM_OK, NUM_MALFORMED, NUM_OVERFLOW, NUM_NOMEM };

/* Powers of ten that doubles hold exactly. */
static const double exact_pow10[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Converts m * 10^scale (m <= 2^53, |scale| <= 22) to the nearest float.
 * Returns 0 when that needs strtof: see the comment at the top. */
static int decimal_to_float_fast(uint64_t m, int scale, int negative, float *out)
{
    double d = (double)m;
    d = scale < 0 ? d / exact_pow10[-scale] : d * exact_pow10[scale];
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    /* The 29 low mantissa bits are the ones a float drops: 1 then 28 zeros
     * is exactly halfway between two floats. */
    if ((bits & 0x1FFFFFFFu) == 0x10000000u) return 0;
    float f = (float)d;
    *out = negative ? -f : f;
    return 1;
}

/* strtof on the validated number [s, e). */
static enum num_status decimal_to_float_slow(const char *s, const char *e, float *out)
{
    char small[64];
    size_t n = (size_t)(e - s);
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return NUM_NOMEM;
    memcpy(buf, s, n);
    buf[n] = '\0';
    float f = strtof(buf, NULL);
    if (buf != small) free(buf);
    if (!isfinite(f)) return NUM_OVERFLOW; /* a valid decimal number: only overflow makes it infinite */
    *out = f;
    return NUM_OK;
}

/* Parses the number token at *pp (it must end at a token end) into *out and
 * advances *pp past it. */
static enum num_status parse_float(const char **pp, const char *end, float *out)
{
    const char *s = *pp, *p = s;
    int negative = 0;
    if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';

    /* Mantissa digits accumulate in m while it stays below 10^18; a longer
     * mantissa takes the slow path. */
    const uint64_t m_limit = UINT64_C(1000000000000000000);
    uint64_t m = 0;
    int64_t scale = 0;
    int fits = 1;
    size_t digits = 0;
    for (; p < end && is_digit(*p); p++, digits++) {
        if (m < m_limit) m = 10 * m + (uint64_t)(*p - '0');
        else fits = 0;
    }
    if (p < end && *p == '.') {
        for (p++; p < end && is_digit(*p); p++, digits++) {
            if (m < m_limit) {
                m = 10 * m + (uint64_t)(*p - '0');
                scale--;
            } else {
                fits = 0;
            }
        }
    }
    if (digits == 0) return NUM_MALFORMED;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int exp_negative = 0;
        if (p < end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
        if (p == end || !is_digit(*p)) return NUM_MALFORMED;
        int64_t e = 0;
        for (; p < end && is_digit(*p); p++)
            if (e < 1000000) e = 10 * e + (*p - '0');
        scale += exp_negative ? -e : e;
    }
    if (!at_token_end(p, end)) return NUM_MALFORMED;
    *pp = p;
    if (fits && m <= (UINT64_C(1) << 53) && scale >= -22 && scale <= 22 &&
        decimal_to_float_fast(m, (int)scale, negative, out))
        return NUM_OK;
    return decimal_to_float_slow(s, p, out);
}

/* True if the token [p, p+n) spells an infinity or NaN, as strtof reads them
 * ("inf", "-Infinity", "nan"...), so the message can say why it is refused. */
static int names_nonfinite(const char *p, int n)
{
    static const char *const words[] = {"inf", "infinity", "nan"};
    if (n > 0 && (*p == '+' || *p == '-')) {
        p++;
        n--;
    }
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        int k = 0;
        while (k < n && words[w][k] && (p[k] | 0x20) == words[w][k]) k++;
        if (k == n && !words[w][k]) return 1;
    }
    return 0;
}

static int parse_coordinate(obj_parser *ps, const char **pp, const char *end, float *out)
{
    const char *tok = *pp;
    switch (parse_float(pp, end, out)) {
    case NUM_OK:
        return 0;
    case NUM_NOMEM:
        return fail(ps, "out of memory");
    case NUM_OVERFLOW:
        return fail(ps, "coordinate \"%.*s\" is beyond the float range (largest float about 3.4e38)",
                    token_len(tok, end), tok);
    case NUM_MALFORMED:
        if (!names_nonfinite(tok, token_len(tok, end)))
            return fail(ps, "malformed number \"%.*s\"", token_len(tok, end), tok);
        break;
    }
    return fail(ps, "non-finite coordinate \"%.*s\"", token_len(tok, end), tok);
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

/* Reads an optional '-' and at least one digit; returns the position after
 * them, or NULL if there are no digits. */
static const char *scan_index(const char *p, const char *end, corner_index *ix)
{
    const char *s = p;
    int negative = p < end && *p == '-';
    p += negative;
    if (p == end || !is_digit(*p)) return NULL;
    int64_t v = 0;
    for (; p < end && is_digit(*p); p++)
        if (v < INT64_C(1000000000000000)) v = 10 * v + (*p - '0');
    ix->value = negative ? -v : v;
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
    return p && at_token_end(p, end) ? p : NULL;
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
        return fail(ps, "malformed face corner \"%.*s\"", token_len(*pp, end), *pp);
    uint32_t unused;
    if (resolve_index(ps, KIND_V, &ix[KIND_V], vertex)) return -1;
    if (ix[KIND_VT].text && resolve_index(ps, KIND_VT, &ix[KIND_VT], &unused)) return -1;
    if (ix[KIND_VN].text && resolve_index(ps, KIND_VN, &ix[KIND_VN], &unused)) return -1;
    *pp = p;
    return 0;
}

/* After "f": 3 or more corners, fan-triangulated as they are read. */
static int parse_face(obj_parser *ps, const char **pp, const char *end)
{
    const char *p = *pp;
    uint32_t first = 0, prev = 0;
    size_t n = 0;
    for (;;) {
        p = skip_blanks(ps, p, end);
        if (p == end || *p == '\n') break;
        uint32_t v;
        if (parse_corner(ps, &p, end, &v)) return -1;
        if (n == 0) first = v;
        if (n >= 2 && push_triangle(ps, first, prev, v)) return -1;
        prev = v;
        n++;
    }
    if (n < 3) return fail(ps, "face has %zu corners, needs at least 3", n);
    *pp = p;
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
        while (p < end && !is_blank(*p) && *p != '\n') p++;
        size_t kw_len = (size_t)(p - kw);
        if (kw_len == 1 && kw[0] == 'v') {
            if (parse_vertex(ps, &p, end)) return -1;
        } else if (kw_len == 1 && kw[0] == 'f') {
            if (parse_face(ps, &p, end)) return -1;
        } else {
            if (kw_len == 2 && kw[0] == 'v' && kw[1] == 't') ps->count[KIND_VT]++;
            if (kw_len == 2 && kw[0] == 'v' && kw[1] == 'n') ps->count[KIND_VN]++;
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
    parser_free(&again);
    return -1;
}

/* Returns the array cut to n bytes, or the array itself if realloc fails. */
static void *shrink(void *array, size_t n)
{
    void *smaller = realloc(array, n);
    return smaller ? smaller : array;
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
    if (parse_checked(&ps, text, len)) {
        parser_free(&ps);
        return -1;
    }
    if (ps.n_t == 0) {
        snprintf(err, errlen, "%s: no triangles", name);
        parser_free(&ps);
        return -1;
    }
    out->n_vertices = (uint32_t)ps.count[KIND_V];
    out->n_triangles = (uint32_t)ps.n_t;
    out->positions = shrink(ps.pos, 3 * sizeof *ps.pos * out->n_vertices);
    out->triangles = shrink(ps.tri, 3 * sizeof *ps.tri * out->n_triangles);
    scene_update_bounds(out);
    return 0;
}

/* ------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------ */

/* Reads the whole file into a malloc'ed buffer. */
static int read_file(const char *path, unsigned char **data, size_t *len,
                     char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = (size_t)1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break; /* end of file or error */
        unsigned char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f), saved_errno = errno;
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (failed) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(saved_errno));
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

/* Inflates gzip data (one or more members, nothing after them) into a
 * malloc'ed buffer. */
static int gunzip(const unsigned char *in, size_t in_len, char **text, size_t *len,
                  const char *path, char *err, size_t errlen)
{
    /* The last member's size field (mod 2^32) sizes the buffer; deflate
     * expands data at most about 1032 times, which bounds a bogus one.  The
     * +1 lets the end of the stream be seen without growing. */
    size_t cap = (size_t)1 << 16;
    if (in_len >= 18) {
        const unsigned char *t = in + in_len - 4;
        size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
        if (isize / 1032 <= in_len && isize < SIZE_MAX) cap = isize + 1;
    }
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    char *buf = malloc(cap);
    if (!buf || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        free(buf);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = 0, in_pos = 0;
    int rc;
    for (;;) {
        if (n == cap) {
            char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
            if (!bigger) {
                rc = Z_MEM_ERROR;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        uInt in_chunk = in_len - in_pos < UINT_MAX ? (uInt)(in_len - in_pos) : UINT_MAX;
        uInt out_chunk = cap - n < UINT_MAX ? (uInt)(cap - n) : UINT_MAX;
        zs.next_in = (Bytef *)(in + in_pos);
        zs.avail_in = in_chunk;
        zs.next_out = (Bytef *)(buf + n);
        zs.avail_out = out_chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        in_pos += in_chunk - zs.avail_in;
        n += out_chunk - zs.avail_out;
        if (rc == Z_STREAM_END && in_pos < in_len)
            inflateReset(&zs); /* another member follows */
        else if (rc != Z_OK)
            break;
    }
    /* Z_BUF_ERROR: the input ended mid-stream (there was room for output);
     * Z_DATA_ERROR and others: corrupt data, zlib says why in msg. */
    if (rc == Z_MEM_ERROR)
        snprintf(err, errlen, "%s: out of memory", path);
    else if (rc != Z_STREAM_END && zs.msg)
        snprintf(err, errlen, "%s: truncated or corrupt gzip data: %s", path, zs.msg);
    else if (rc != Z_STREAM_END)
        snprintf(err, errlen, "%s: truncated or corrupt gzip data", path);
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int scene_load_bytes(const unsigned char *raw, size_t raw_len, const char *name, scene *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    int gzip_magic = raw_len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
    /* Bytes of another known format under a .gz name: scene_parse_obj says
     * what they are (rather than zlib's "incorrect header check"). */
    if (!gzip_magic && (!ends_with(name, ".gz") || obj_sniff_not_text(raw, raw_len, NULL, 0)))
        return scene_parse_obj((const char *)raw, raw_len, name, out, err, errlen);
    char *text;
    size_t len;
    if (gunzip(raw, raw_len, &text, &len, name, err, errlen)) return -1;
    int rc = scene_parse_obj(text, len, name, out, err, errlen);
    free(text);
    return rc;
}

int scene_load(const char *path, scene *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    unsigned char *raw;
    size_t raw_len;
    if (read_file(path, &raw, &raw_len, err, errlen)) return -1;
    int rc = scene_load_bytes(raw, raw_len, path, out, err, errlen);
    free(raw);
    return rc;
}
