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

const char *cli_program = "kdalloc";

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_program);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_load_scene(const scene_source *src, scene *s, char *label, size_t label_len)
{
    char err[CLI_ERR];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc;
    if (src->path) {
        rc = scene_load(src->path, s, err, sizeof err);
        snprintf(label, label_len, "%s", src->path);
    } else {
        const char *name = src->generator ? src->generator : scene_generator_names()[0];
        rc = scene_generate(name, src->triangles, s, err, sizeof err);
        snprintf(label, label_len, "%s (built-in)", name);
    }
    if (rc) {
        cli_error("%s", err);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    fprintf(stderr, "scene: %s: %u triangles, %u vertices", label, s->n_triangles, s->n_vertices);
    if (s->n_degenerate) fprintf(stderr, ", %u degenerate (zero-area) triangles kept", s->n_degenerate);
    fprintf(stderr, " (%.0f ms)\n", ms);
    if (!src->as_generated && scene_normalize(s))
        fprintf(stderr, "scene: coordinates scaled by 2^%d (exact), as their magnitude is outside [%g, %g] "
                        "where no float product overflows or underflows; cameras are in the file's units\n",
                s->scale_log2, SCENE_RANGE_MIN, SCENE_RANGE_MAX);
    return 0;
}

void cli_json_number(double x)
{
    if (isfinite(x)) printf("%.6f", x);
    else printf("null");
}

void cli_json_string(const char *key, const char *text)
{
    printf("\"%s\": \"", key);
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\') putchar('\\');
        if ((unsigned char)*p >= 0x20) putchar(*p);
    }
    printf("\"");
}

int cli_scene_positional(scene_source *src, int argc, char **argv, int first)
{
    if (first < argc) src->path = argv[first++];
    if (first < argc) {
        cli_error("unexpected argument '%s' (one scene file at most)", argv[first]);
        return -1;
    }
    if (src->path && src->generator) {
        cli_error("give a scene FILE or --scene NAME, not both");
        return -1;
    }
    if (src->triangles && src->path) {
        cli_error("--triangles sizes a built-in scene; it does not apply to %s", src->path);
        return -1;
    }
    return 0;
}

int cli_parse_u64(const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || errno || text[0] == '-' || v < min || v > max) {
        cli_error("%s: '%s' is not a whole number from %llu to %llu", opt, text, (unsigned long long)min,
                  (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_float(const char *opt, const char *text, float *out)
{
    char *end;
    errno = 0;
    float v = strtof(text, &end);
    if (!*text || *end || errno || !isfinite(v)) {
        cli_error("%s: '%s' is not a finite number", opt, text);
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
        errno = 0;
        out[i] = strtof(p, &end);
        if (end == p || errno || !isfinite(out[i]) || *end != (i < 2 ? ',' : '\0')) {
            cli_error("%s: '%s' is not three finite numbers x,y,z", opt, text);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}
