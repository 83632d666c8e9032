/* obj_polygon.c - an OBJ face cut into triangles (obj_polygon.h): the strip
 * for a convex face, ear clipping for the others.  Geometry is in double,
 * in the plane the face most faces, turned so that the face runs
 * counter-clockwise there: a corner that turns left (positive) is convex. */
#include "obj_polygon.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

void obj_polygon_strip(const uint32_t *c, size_t n, uint32_t *out)
{
    uint32_t *t = out;
#define EMIT(x, y, z) (t[0] = (x), t[1] = (y), t[2] = (z), t += 3)
    EMIT(c[0], c[1], c[2]);
    if (n > 3) EMIT(c[0], c[2], c[n - 1]);
    /* Left: the polygon c[front] .. c[back]; its ears alternate from the front. */
    int at_front = 1;
    for (size_t front = 2, back = n - 1; back - front >= 2; at_front = !at_front) {
        if (at_front) EMIT(c[front], c[front + 1], c[back]), front++;
        else EMIT(c[front], c[back - 1], c[back]), back--;
    }
#undef EMIT
}

/* The plane a face is seen in: coordinates u and v of each vertex, v times
 * `flip` so that the face runs counter-clockwise; flat: no area at all. */
typedef struct face_plane {
    int u, v, flat;
    double flip;
} face_plane;

static face_plane plane_of(const float *pos, const uint32_t *c, size_t n)
{
    double nrm[3] = {0, 0, 0}; /* Newell's normal: twice the area projected on each axis's plane */
    for (size_t i = 0; i < n; i++) {
        const float *a = pos + 3 * (size_t)c[i], *b = pos + 3 * (size_t)c[(i + 1) % n];
        nrm[0] += ((double)a[1] - b[1]) * ((double)a[2] + b[2]);
        nrm[1] += ((double)a[2] - b[2]) * ((double)a[0] + b[0]);
        nrm[2] += ((double)a[0] - b[0]) * ((double)a[1] + b[1]);
    }
    int ax = fabs(nrm[0]) >= fabs(nrm[1]) ? (fabs(nrm[0]) >= fabs(nrm[2]) ? 0 : 2) : (fabs(nrm[1]) >= fabs(nrm[2]) ? 1 : 2);
    face_plane p = {(ax + 1) % 3, (ax + 2) % 3, nrm[ax] == 0.0, nrm[ax] < 0 ? -1.0 : 1.0};
    return p;
}

static void corner_xy(const float *pos, uint32_t vertex, const face_plane *p, double xy[2])
{
    xy[0] = pos[3 * (size_t)vertex + p->u];
    xy[1] = p->flip * pos[3 * (size_t)vertex + p->v];
}

/* Twice the signed area of (a b c): positive where b turns left. */
static double turn(const double a[2], const double b[2], const double c[2])
{
    return (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
}

/* How far a turn may fall below zero from float coordinates' rounding
 * alone: each coordinate is off by up to half a float step of the largest
 * one, and the turn moves by that times the two edges. */
static double turn_noise(const double a[2], const double b[2], const double c[2])
{
    double m = 0;
    for (int k = 0; k < 2; k++) m = fmax(m, fmax(fabs(a[k]), fmax(fabs(b[k]), fabs(c[k]))));
    double edges = hypot(b[0] - a[0], b[1] - a[1]) + hypot(c[0] - b[0], c[1] - b[1]);
    return 4.0 * FLT_EPSILON * m * edges;
}

int obj_polygon_convex(const float *pos, const uint32_t *c, size_t n)
{
    face_plane p = plane_of(pos, c, n);
    if (p.flat) return 1;
    double a[2], b[2], d[2];
    corner_xy(pos, c[n - 1], &p, a);
    corner_xy(pos, c[0], &p, b);
    for (size_t i = 0; i < n; i++) {
        corner_xy(pos, c[(i + 1) % n], &p, d);
        if (turn(a, b, d) < -turn_noise(a, b, d)) return 0;
        a[0] = b[0], a[1] = b[1], b[0] = d[0], b[1] = d[1];
    }
    return 1;
}

/* Whether corner b, between a and d, is an ear: it turns left by more than
 * rounding (a flat corner would make a triangle of no area) and no other
 * corner left lies in or on its triangle. */
static int is_ear(double (*xy)[2], const uint32_t *next, uint32_t a, uint32_t b, uint32_t d)
{
    if (turn(xy[a], xy[b], xy[d]) <= turn_noise(xy[a], xy[b], xy[d])) return 0;
    for (uint32_t j = next[d]; j != a; j = next[j])
        if (turn(xy[a], xy[b], xy[j]) >= 0 && turn(xy[b], xy[d], xy[j]) >= 0 && turn(xy[d], xy[a], xy[j]) >= 0)
            return 0;
    return 1;
}

int obj_polygon_ears(const float *pos, const uint32_t *c, size_t n, uint32_t *out)
{
    if (n < 4) { /* one triangle, or none */
        if (n == 3) obj_polygon_strip(c, n, out);
        return 0;
    }
    double(*xy)[2] = malloc(n * sizeof *xy);
    uint32_t *prev = malloc(2 * n * sizeof *prev), *next = prev ? prev + n : NULL;
    if (!xy || !prev) {
        free(xy);
        free(prev);
        return -1;
    }
    face_plane p = plane_of(pos, c, n);
    for (size_t i = 0; i < n; i++) {
        corner_xy(pos, c[i], &p, xy[i]);
        prev[i] = (uint32_t)((i + n - 1) % n);
        next[i] = (uint32_t)((i + 1) % n);
    }
    uint32_t *t = out, b = 0;
    for (size_t left = n, misses = 0; left > 3;) {
        uint32_t a = prev[b], d = next[b];
        if (misses < left && !is_ear(xy, next, a, b, d)) { /* after a lap without an ear, cut b all the same */
            b = d;
            misses++;
            continue;
        }
        t[0] = c[a], t[1] = c[b], t[2] = c[d], t += 3;
        next[a] = d;
        prev[d] = a;
        b = d;
        left--;
        misses = 0;
    }
    t[0] = c[prev[b]], t[1] = c[b], t[2] = c[next[b]];
    free(xy);
    free(prev);
    return 0;
}
