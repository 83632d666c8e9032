/* json_check.c - checking that a program's --json output is one JSON
 * object (json_check.h).  A minimal recursive checker, not a full
 * validator: objects, arrays, strings (an escape's next character is
 * skipped, not decoded), true, false, null, and numbers that start as
 * JSON's do (a digit, or '-' and a digit) and are read on by strtod. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "json_check.h"

/* A minimal JSON checker: returns the end of one value, or NULL. */
static const char *json_value(const char *p);

static const char *json_space(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static const char *json_string_end(const char *p)
{
    if (*p++ != '"') return NULL;
    for (; *p && *p != '"'; p++)
        if (*p == '\\' && !*++p) return NULL;
    return *p == '"' ? p + 1 : NULL;
}

static const char *json_value(const char *p)
{
    p = json_space(p);
    if (*p == '"') return json_string_end(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = json_space(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = json_string_end(json_space(p));
                if (!p || *(p = json_space(p)) != ':') return NULL;
                p++;
            }
            if (!(p = json_value(p))) return NULL;
            p = json_space(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (!strncmp(p, "null", 4) || !strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    /* A number starts with a digit or '-' and a digit: not "nan", "-inf"
     * (which strtod would take). */
    const char *digit = *p == '-' ? p + 1 : p;
    if (*digit < '0' || *digit > '9') return NULL;
    char *end;
    strtod(p, &end);
    return end;
}

/* The text is exactly one JSON object and no number in it is NaN or infinite. */
void expect_json(const char *out, const char *what)
{
    const char *end = json_value(out);
    cr_expect(end && *json_space(end) == '\0' && json_space(out)[0] == '{', "%s: not one JSON object:\n%s", what,
              out);
}
