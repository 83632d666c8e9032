/* scene.c - scene bookkeeping shared by the loader and the generators. */
#include "scene.h"
#include "outfile.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int scene_write_obj(const scene *s, const char *path, char *err, size_t errlen)
{
    outfile o;
    if (outfile_open(&o, path, "OBJ", err, errlen)) return -1;
    static char buf[1 << 16];
    setvbuf(o.f, buf, _IOFBF, sizeof buf);
    outfile_printf(&o, "# written by kdalloc: %u vertices, %u triangles\n", s->n_vertices, s->n_triangles);
    /* After a failed write the rest do nothing; outfile_commit reports it. */
    for (uint32_t v = 0; v < s->n_vertices && !o.error; v++) {
        const float *p = s->positions + 3 * (size_t)v;
        /* %.9g round-trips every float exactly. */
        outfile_printf(&o, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]);
    }
    for (uint32_t t = 0; t < s->n_triangles && !o.error; t++) {
        const uint32_t *i = s->triangles + 3 * (size_t)t;
        outfile_printf(&o, "f %u %u %u\n", i[0] + 1, i[1] + 1, i[2] + 1);
    }
    return outfile_commit(&o, err, errlen);
}
