/* obj_number.c - the numbers of OBJ text (obj_number.h): coordinates to
 * float, and face-corner indices.
 *
 * Floats equal strtof's exactly.  A mantissa of at most 2^53 with a decimal
 * exponent in [-22, 22] is converted with one correctly rounded double
 * multiplication or division (both operands exact), then rounded to float;
 * that double rounding can only differ from direct rounding when the double
 * lands exactly on a midpoint between two floats, and that case, like every
 * longer or wider number, goes to strtof (which assumes the C locale) on a
 * copy of the validated number.  The grammar is checked here, before
 * strtof sees the text, so strtof's wider syntax (hexadecimal, "inf",
 * "nan", leading blanks) is never accepted.
 */
#include "obj_number.h"
#include "obj_lex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

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
static enum obj_num_status decimal_to_float_slow(const char *s, const char *e, float *out)
{
    char small[64];
    size_t n = (size_t)(e - s);
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return OBJ_NUM_NOMEM;
    memcpy(buf, s, n);
    buf[n] = '\0';
    float f = strtof(buf, NULL);
    if (buf != small) free(buf);
    if (!isfinite(f)) return OBJ_NUM_OVERFLOW; /* a valid decimal number: only overflow makes it infinite */
    *out = f;
    return OBJ_NUM_OK;
}

enum obj_num_status obj_parse_float(const char **pp, const char *end, float *out)
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
    if (digits == 0) return OBJ_NUM_MALFORMED;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int exp_negative = 0;
        if (p < end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
        if (p == end || !is_digit(*p)) return OBJ_NUM_MALFORMED;
        int64_t e = 0;
        for (; p < end && is_digit(*p); p++)
            if (e < 1000000) e = 10 * e + (*p - '0');
        scale += exp_negative ? -e : e;
    }
    if (!obj_at_token_end(p, end)) return OBJ_NUM_MALFORMED;
    *pp = p;
    if (fits && m <= (UINT64_C(1) << 53) && scale >= -22 && scale <= 22 &&
        decimal_to_float_fast(m, (int)scale, negative, out))
        return OBJ_NUM_OK;
    return decimal_to_float_slow(s, p, out);
}

int obj_names_nonfinite(const char *p, int n)
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

const char *obj_scan_index(const char *p, const char *end, int64_t *value)
{
    int negative = p < end && *p == '-';
    p += negative;
    if (p == end || !is_digit(*p)) return NULL;
    int64_t v = 0;
    for (; p < end && is_digit(*p); p++)
        if (v < INT64_C(1000000000000000)) v = 10 * v + (*p - '0');
    *value = negative ? -v : v;
    return p;
}

