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
    double a[2], b[2], d[2], winding = 0;
    corner_xy(pos, c[n - 1], &p, a);
    corner_xy(pos, c[0], &p, b);
    for (size_t i = 0; i < n; i++) {
        corner_xy(pos, c[(i + 1) % n], &p, d);
        double t = turn(a, b, d);
        if (t < -turn_noise(a, b, d)) return 0;
        winding += atan2(t, (b[0] - a[0]) * (d[0] - b[0]) + (b[1] - a[1]) * (d[1] - b[1]));
        a[0] = b[0], a[1] = b[1], b[0] = d[0], b[1] = d[1];
    }
    return winding < 3 * 3.14159265358979323846; /* once around (2 pi), not twice, as a star drawn in one line */
}

/* Ear clipping's state: the corners left, as a ring, each with its place
 * in the plane, whether it turns left by more than rounding, and whether
 * it is an ear now. */
typedef struct ear_ring {
    double (*xy)[2];
    uint32_t *prev, *next;
    unsigned char *convex, *ear;
} ear_ring;

static int convex_at(const ear_ring *r, uint32_t b)
{
    const double *pa = r->xy[r->prev[b]], *pb = r->xy[b], *pd = r->xy[r->next[b]];
    return turn(pa, pb, pd) > turn_noise(pa, pb, pd);
}

static int same_place(const double *p, const double *q) { return p[0] == q[0] && p[1] == q[1]; }

/* Whether b, between a and d, is an ear: convex, and no corner left that
 * is not convex lies in or on its triangle (where any corner lies in it, one
 * that is not convex does).  A corner at the same place as a, b or d does
 * not count: a hole's bridge passes there twice. */
static int ear_at(const ear_ring *r, uint32_t b)
{
    if (!r->convex[b]) return 0;
    uint32_t a = r->prev[b], d = r->next[b];
    const double *pa = r->xy[a], *pb = r->xy[b], *pd = r->xy[d];
    for (uint32_t j = r->next[d]; j != a; j = r->next[j]) {
        const double *pj = r->xy[j];
        if (r->convex[j] || same_place(pj, pa) || same_place(pj, pb) || same_place(pj, pd)) continue;
        if (turn(pa, pb, pj) >= 0 && turn(pb, pd, pj) >= 0 && turn(pd, pa, pj) >= 0) return 0;
    }
    return 1;
}

/* Cost: every corner tested once, then after each cut its two neighbours
 * only (cutting an ear changes no other corner's answer), each test a walk
 * of the ring: O(n^2).  Where no ear is left though corners are (a face
 * that crosses itself, or one whose ears rounding hides), the rest is cut
 * as a strip. */
int obj_polygon_ears(const float *pos, const uint32_t *c, size_t n, uint32_t *out)
{
    if (n < 4) { /* one triangle, or none */
        if (n == 3) obj_polygon_strip(c, n, out);
        return 0;
    }
    ear_ring r;
    r.xy = malloc(n * sizeof *r.xy);
    r.prev = malloc(3 * n * sizeof *r.prev); /* prev, next, and the rest for the strip */
    r.convex = malloc(2 * n);
    if (!r.xy || !r.prev || !r.convex) {
        free(r.xy);
        free(r.prev);
        free(r.convex);
        return -1;
    }
    r.next = r.prev + n;
    r.ear = r.convex + n;
    face_plane p = plane_of(pos, c, n);
    for (size_t i = 0; i < n; i++) {
        corner_xy(pos, c[i], &p, r.xy[i]);
        r.prev[i] = (uint32_t)((i + n - 1) % n);
        r.next[i] = (uint32_t)((i + 1) % n);
    }
    for (uint32_t i = 0; i < n; i++) r.convex[i] = (unsigned char)convex_at(&r, i);
    for (uint32_t i = 0; i < n; i++) r.ear[i] = (unsigned char)ear_at(&r, i);
    uint32_t *t = out, b = 0;
    size_t left = n;
    while (left > 3) {
        for (size_t steps = 0; !r.ear[b] && steps < left; steps++) b = r.next[b];
        if (!r.ear[b]) break;
        uint32_t a = r.prev[b], d = r.next[b];
        t[0] = c[a], t[1] = c[b], t[2] = c[d], t += 3;
        r.next[a] = d;
        r.prev[d] = a;
        left--;
        r.convex[a] = (unsigned char)convex_at(&r, a);
        r.convex[d] = (unsigned char)convex_at(&r, d);
        r.ear[a] = (unsigned char)ear_at(&r, a);
        r.ear[d] = (unsigned char)ear_at(&r, d);
        b = d;
    }
    uint32_t *rest = r.prev + 2 * n; /* the corners left, in order from b */
    for (size_t i = 0; i < left; i++, b = r.next[b]) rest[i] = c[b];
    obj_polygon_strip(rest, left, t);
    free(r.xy);
    free(r.prev);
    free(r.convex);
    return 0;
}
