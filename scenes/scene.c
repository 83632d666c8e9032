/* scene.c - scene bookkeeping shared by the loader and the generators. */
#include "scene.h"
#include "outfile.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

void scene_free(scene *s)
{
    free(s->positions);
    free(s->triangles);
    memset(s, 0, sizeof *s);
}

/* In double, so that neither 1e30 (whose square overflows float) nor 1e-30
 * (whose square underflows it) decides; a cross product of zero then means
 * zero area. */
static int triangle_is_degenerate(const float *a, const float *b, const float *c)
{
    double e1[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
    double e2[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
    double n0 = e1[1] * e2[2] - e1[2] * e2[1];
    double n1 = e1[2] * e2[0] - e1[0] * e2[2];
    double n2 = e1[0] * e2[1] - e1[1] * e2[0];
    return n0 == 0.0 && n1 == 0.0 && n2 == 0.0;
}

void scene_update_bounds(scene *s)
{
    for (int a = 0; a < 3; a++) {
        s->lo[a] = FLT_MAX;
        s->hi[a] = -FLT_MAX;
    }
    s->n_degenerate = 0;
    for (uint32_t t = 0; t < s->n_triangles; t++) {
        const float *p[3];
        for (int k = 0; k < 3; k++) {
            p[k] = s->positions + 3 * (size_t)s->triangles[3 * (size_t)t + k];
            for (int a = 0; a < 3; a++) {
                if (p[k][a] < s->lo[a]) s->lo[a] = p[k][a];
                if (p[k][a] > s->hi[a]) s->hi[a] = p[k][a];
            }
        }
        s->n_degenerate += (uint32_t)triangle_is_degenerate(p[0], p[1], p[2]);
    }
    if (s->n_triangles == 0)
        for (int a = 0; a < 3; a++) s->lo[a] = s->hi[a] = 0.0f;
}

int scene_normalize(scene *s)
{
    float m = 0.0f;
    for (int a = 0; a < 3; a++) {
        m = fabsf(s->lo[a]) > m ? fabsf(s->lo[a]) : m;
        m = fabsf(s->hi[a]) > m ? fabsf(s->hi[a]) : m;
    }
    if (m == 0.0f || (m >= SCENE_RANGE_MIN && m <= SCENE_RANGE_MAX)) return 0;
    int e;
    frexpf(m, &e); /* m = f 2^e, 0.5 <= f < 1: after scaling by 2^-e, m lies in [0.5, 1) */
    for (size_t i = 0; i < 3 * (size_t)s->n_vertices; i++) s->positions[i] = ldexpf(s->positions[i], -e);
    s->scale_log2 -= e;
    scene_update_bounds(s);
    return -e;
}

/* Where scene_write_obj's lines go: the file, or zlib's stream on a copy
 * of its descriptor when the name ends in ".gz" (what scene_load reads
 * back by its magic bytes).  After a failed write the rest do nothing;
 * outfile_commit reports the first failure. */
typedef struct obj_sink {
    outfile o;
    gzFile gz;
} obj_sink;

static int gz_cause(gzFile gz)
{
    int zerr;
    gzerror(gz, &zerr);
    return zerr == Z_ERRNO && errno ? errno : EIO;
}

static void sink_line(obj_sink *k, const char *fmt, ...)
{
    if (k->o.error) return;
    char line[160]; /* the longest line, three %.9g floats, is under 60 bytes */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line) { /* no line of this writer is that long */
        k->o.error = EOVERFLOW;
        return;
    }
    if (!k->gz) outfile_write(&k->o, line, (size_t)n);
    else if (errno = 0, gzwrite(k->gz, line, (unsigned)n) != n) k->o.error = gz_cause(k->gz);
}

static int ends_in_gz(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

int scene_write_obj(const scene *s, const char *path, char *err, size_t errlen)
{
    obj_sink k = {.gz = NULL};
    if (outfile_open(&k.o, path, "OBJ", err, errlen)) return -1;
    static char buf[1 << 16];
    setvbuf(k.o.f, buf, _IOFBF, sizeof buf);
    if (ends_in_gz(path)) {
        errno = 0;
        int fd = dup(fileno(k.o.f));
        k.gz = fd < 0 ? NULL : gzdopen(fd, "wb");
        if (!k.gz) {
            k.o.error = errno ? errno : ENOMEM;
            if (fd >= 0) close(fd);
        }
    }
    sink_line(&k, "# written by kdalloc: %u vertices, %u triangles\n", s->n_vertices, s->n_triangles);
    for (uint32_t v = 0; v < s->n_vertices && !k.o.error; v++) {
        const float *p = s->positions + 3 * (size_t)v;
        /* %.9g round-trips every float exactly. */
        sink_line(&k, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]);
    }
    for (uint32_t t = 0; t < s->n_triangles && !k.o.error; t++) {
        const uint32_t *i = s->triangles + 3 * (size_t)t;
        sink_line(&k, "f %u %u %u\n", i[0] + 1, i[1] + 1, i[2] + 1);
    }
    if (k.gz) { /* the stream's end, through its own descriptor, before the file is committed */
        errno = 0;
        int e = gzclose(k.gz);
        if (e != Z_OK && !k.o.error) k.o.error = e == Z_ERRNO && errno ? errno : EIO;
    }
    return outfile_commit(&k.o, err, errlen);
}
