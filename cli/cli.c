/* cli.c - scene loading, option parsing, JSON values and messages shared
 * by the kdalloc commands and kdalloc-embree (cli.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "progress.h"

const char *cli_program = "kdalloc";
const char *cli_command = "kdalloc";

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_program);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", cli_command);
    va_end(ap);
}

/* The long option that `name` (len characters, no "--") names, exactly or
 * as an unambiguous prefix, as getopt_long takes it; NULL when none does,
 * and *matches says how many options start with it. */
static const struct option *find_long(const struct option *opts, const char *name, size_t len, int *matches)
{
    const struct option *found = NULL;
    *matches = 0;
    for (const struct option *o = opts; o->name; o++) {
        if (strncmp(o->name, name, len)) continue;
        if (strlen(o->name) == len) {
            *matches = 1;
            return o;
        }
        found = o;
        ++*matches;
    }
    return *matches == 1 ? found : NULL;
}

int cli_option_error(int c, char **argv, const struct option *opts)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    size_t len = strcspn(arg + (arg[0] ? 2 : 0), "=");
    int matches = 0;
    const struct option *o = strncmp(arg, "--", 2) ? NULL : find_long(opts, arg + 2, len, &matches);
    /* getopt_long leaves optopt 0 for an unknown long option and sets it to
     * a known one's value; any other value is a short option's letter
     * (whose element argv[optind - 1] need not be). */
    int is_long = !strncmp(arg, "--", 2) && (optopt == 0 || (o && o->val == optopt));
    if (!is_long && c == ':') cli_usage_error("-%c needs a value", optopt);
    else if (!is_long) cli_usage_error("unknown option -%c", optopt);
    else if (c == ':') cli_usage_error("--%s needs a value", o ? o->name : arg + 2);
    else if (o && arg[2 + len] == '=') cli_usage_error("--%s takes no value", o->name);
    else if (matches > 1) {
        fprintf(stderr, "%s: ambiguous option %.*s (", cli_program, (int)len + 2, arg);
        const char *sep = "";
        for (const struct option *p = opts; p->name; p++)
            if (!strncmp(p->name, arg + 2, len)) {
                fprintf(stderr, "%s--%s", sep, p->name);
                sep = ", ";
            }
        fprintf(stderr, "; see %s --help)\n", cli_command);
    } else cli_usage_error("unknown option %.*s", (int)len + 2, arg);
    return -1;
}

int cli_load_scene(const scene_source *src, scene *s, char *label, size_t label_len)
{
    char err[CLI_ERR];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc;
    char doing[300];
    progress p;
    if (src->path) {
        snprintf(label, label_len, "%s", src->path);
        snprintf(doing, sizeof doing, "scene: reading %s", label);
        progress_begin(&p, doing, 0);
        rc = scene_load(src->path, s, err, sizeof err);
    } else {
        const char *name = src->generator ? src->generator : scene_generator_names()[0];
        snprintf(label, label_len, "%s (built-in)", name);
        snprintf(doing, sizeof doing, "scene: generating %s", name);
        progress_begin(&p, doing, 0);
        rc = scene_generate(name, src->triangles, s, err, sizeof err);
    }
    progress_end(&p);
    if (rc) {
        cli_error("%s", err);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    fprintf(stderr, "scene: %s: %u triangle%s, %u vertices", label, s->n_triangles, s->n_triangles == 1 ? "" : "s",
            s->n_vertices);
    if (s->n_degenerate) fprintf(stderr, ", %u degenerate (zero-area) triangles kept", s->n_degenerate);
    fprintf(stderr, " (%.0f ms)\n", ms);
    if (s->n_skipped) /* a misspelt "f" drops faces: said, not silent */
        fprintf(stderr, "scene: warning: %s:%llu: '%s' is no OBJ statement; line skipped (%llu such line%s in all; "
                        "faces are 'f' lines)\n",
                label, (unsigned long long)s->skipped_line, s->skipped, (unsigned long long)s->n_skipped,
                s->n_skipped == 1 ? "" : "s");
    if (!src->as_generated && scene_normalize(s))
        fprintf(stderr, "scene: coordinates scaled by 2^%d (exact), as their magnitude is outside [%g, %g] "
                        "where no float product overflows or underflows; cameras are in the file's units\n",
                s->scale_log2, SCENE_RANGE_MIN, SCENE_RANGE_MAX);
    return 0;
}

void cli_json_number(double x)
{
    if (isfinite(x)) printf("%.12g", x); /* a tiny scene's 1e-7 stays itself, not 0.000000 */
    else printf("null");
}

/* The length of the well-formed UTF-8 sequence at p (1-4), or 0 where its
 * bytes are not one (a stray continuation byte, a truncated or overlong
 * sequence, a surrogate, or past U+10FFFF). */
static int utf8_length(const unsigned char *p)
{
    unsigned c = p[0];
    int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0; /* the NUL that ends the string stops here too */
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
        (c == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

void cli_json_string(const char *key, const char *text)
{
    printf("\"%s\": \"", key);
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        int n = utf8_length(p);
        if (n == 0) { /* not UTF-8, which JSON text must be: the replacement character */
            printf("\\ufffd");
            p++;
        } else if (*p < 0x20) {
            printf("\\u%04x", *p++);
        } else {
            if (*p == '"' || *p == '\\') putchar('\\');
            fwrite(p, 1, (size_t)n, stdout);
            p += n;
        }
    }
    printf("\"");
}

void cli_json_scene_notes(const scene *s)
{
    printf(", \"degenerate_triangles\": %u, \"skipped_obj_lines\": %llu", s->n_degenerate,
           (unsigned long long)s->n_skipped);
}

int cli_scene_positional(scene_source *src, int argc, char **argv, int first)
{
    if (first < argc) src->path = argv[first++];
    if (first < argc) {
        cli_usage_error("unexpected argument '%s' (one scene file at most)", argv[first]);
        return -1;
    }
    if (src->path && src->generator) {
        cli_usage_error("give a scene FILE or --scene NAME, not both");
        return -1;
    }
    if (src->triangles && src->path) {
        cli_usage_error("--triangles sizes a built-in scene; it does not apply to %s", src->path);
        return -1;
    }
    return src->path ? 0 : cli_scene_check(src);
}

uint64_t cli_triangles_max(void)
{
    uint64_t most = 0, def, min, max;
    for (const char *const *n = scene_generator_names(); *n; n++)
        if (scene_generator_sizes(*n, &def, &min, &max) == 0 && max > most) most = max;
    return most;
}

int cli_scene_check(const scene_source *src)
{
    const char *name = src->generator ? src->generator : scene_generator_names()[0];
    if (!scene_generator_help(name)) {
        fprintf(stderr, "%s: unknown scene '%s' (scenes:", cli_program, name);
        for (const char *const *n = scene_generator_names(); *n; n++)
            fprintf(stderr, "%s %s", n == scene_generator_names() ? "" : ",", *n);
        fprintf(stderr, "; see kdalloc gen --help)\n");
        return -1;
    }
    uint64_t def, min, max;
    if (!src->triangles) return 0;
    if (scene_generator_sizes(name, &def, &min, &max)) {
        cli_usage_error("--triangles: the %sscene %s has a fixed size%s", src->generator ? "" : "default ", name,
                        src->generator ? "" : "; --scene NAME picks a scalable one");
        return -1;
    }
    if (src->triangles < min || src->triangles > max) {
        cli_usage_error("--triangles: %s takes %llu to %llu triangles (default %llu), not %llu", name,
                        (unsigned long long)min, (unsigned long long)max, (unsigned long long)def,
                        (unsigned long long)src->triangles);
        return -1;
    }
    return 0;
}

int cli_parse_u64(const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!(text[0] >= '0' && text[0] <= '9') || *end || errno || v < min || v > max) {
        cli_usage_error("%s takes a whole number from %llu to %llu, not '%s'", opt, (unsigned long long)min,
                        (unsigned long long)max, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* strtof, finite: an underflow (1e-40) is its nearest float, an overflow
 * or inf/nan is refused.  0 where *end is right after a number. */
static int finite_float(const char *text, char **end, float *out)
{
    errno = 0;
    *out = strtof(text, end);
    return *end == text || !isfinite(*out) || (errno && errno != ERANGE) ? -1 : 0;
}

int cli_parse_float(const char *opt, const char *text, float *out)
{
    char *end;
    float v;
    if (finite_float(text, &end, &v) || *end) {
        cli_usage_error("%s takes a finite number, not '%s'", opt, text);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_vec3(const char *opt, const char *text, float out[3])
{
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (finite_float(p, &end, &out[i]) || *end != (i < 2 ? ',' : '\0')) {
            cli_usage_error("%s takes three finite numbers x,y,z, not '%s'", opt, text);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}
