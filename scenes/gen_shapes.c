/* gen_shapes.c - the procedural scenes' shapes (gen_shapes.h): numbers
 * bent into angles and bells, placement frames, and primitives (boxes,
 * grids, lathe-turned profiles, spheres, tori) emitted into a mesh.
 * Deterministic, as gen.c says: double arithmetic rounded once to float. */
#include "gen_shapes.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Deterministic numbers
 * ---------------------------------------------------------------------- */

/* Roughly bell-shaped in [-1.5, 1.5]: a sum of three uniforms.  (Draws
 * are sequenced one statement each throughout: the order in which the
 * operands or arguments of one expression are evaluated is unspecified in C,
 * and compilers do differ.) */
double rng_bell(rng *g)
{
    double sum = rng_unit(g);
    sum += rng_unit(g);
    sum += rng_unit(g);
    return sum - 1.5;
}

/* cos and sin of `turns` full turns.  The argument is reduced exactly to
 * the nearest quarter turn, leaving |x| <= pi/4, where Taylor series to
 * x^15 and x^16 are accurate to double precision. */
void turn_cos_sin(double turns, double *c, double *s)
{
    const double two_pi = 6.283185307179586476925;
    double t = turns - floor(turns);
    int quarter = (int)(t * 4.0 + 0.5);
    double x = (t - quarter * 0.25) * two_pi;
    double x2 = x * x;
    double sn =
        x *
        (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110 * (1 - x2 / 156 * (1 - x2 / 210)))))));
    double cs =
        1 -
        x2 / 2 *
            (1 - x2 / 12 *
                     (1 - x2 / 30 * (1 - x2 / 56 * (1 - x2 / 90 * (1 - x2 / 132 * (1 - x2 / 182 * (1 - x2 / 240)))))));
    switch (quarter & 3) {
    case 0:
        *c = cs;
        *s = sn;
        break;
    case 1:
        *c = -sn;
        *s = cs;
        break;
    case 2:
        *c = -cs;
        *s = -sn;
        break;
    default:
        *c = sn;
        *s = -cs;
        break;
    }
}

/* ------------------------------------------------------------------------
 * Placement frames: world = origin + x * axis[0] + y * axis[1] + z * axis[2].
 * Axes carry the scale; y is up for lathes (their axis of revolution).
 * ---------------------------------------------------------------------- */

const frame WORLD = {{0, 0, 0}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};

void frame_point(const frame *f, double x, double y, double z, double out[3])
{
    for (int a = 0; a < 3; a++) out[a] = f->origin[a] + x * f->axis[0][a] + y * f->axis[1][a] + z * f->axis[2][a];
}

/* An axis-aligned frame at (x, y, z) scaled by (sx, sy, sz). */
frame frame_at(double x, double y, double z, double sx, double sy, double sz)
{
    frame f = {{x, y, z}, {{sx, 0, 0}, {0, sy, 0}, {0, 0, sz}}};
    return f;
}

/* `f` with its origin moved to its local point (x, y, z). */
frame frame_moved(const frame *f, double x, double y, double z)
{
    frame moved = *f;
    frame_point(f, x, y, z, moved.origin);
    return moved;
}

/* `f` turned by `turns` about its y axis (from x towards z). */
frame frame_turned(const frame *f, double turns)
{
    double c, s;
    turn_cos_sin(turns, &c, &s);
    frame turned = *f;
    for (int a = 0; a < 3; a++) {
        turned.axis[0][a] = c * f->axis[0][a] + s * f->axis[2][a];
        turned.axis[2][a] = c * f->axis[2][a] - s * f->axis[0][a];
    }
    return turned;
}

/* A world frame at `origin`, oriented by the unit `basis`, scaled per axis. */
frame frame_oriented(const double origin[3], const double basis[3][3], double sx, double sy, double sz)
{
    const double scale[3] = {sx, sy, sz};
    frame f;
    for (int a = 0; a < 3; a++) {
        f.origin[a] = origin[a];
        for (int k = 0; k < 3; k++) f.axis[k][a] = basis[k][a] * scale[k];
    }
    return f;
}

void cross(const double u[3], const double v[3], double out[3])
{
    out[0] = u[1] * v[2] - u[2] * v[1];
    out[1] = u[2] * v[0] - u[0] * v[2];
    out[2] = u[0] * v[1] - u[1] * v[0];
}

void normalize(double v[3])
{
    double length = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++) v[a] /= length;
}

/* A random right-handed orthonormal basis: a random axis 1 (rejection
 * sampled in the unit ball) and a random spin of axes 0 and 2 around it. */
void random_basis(rng *g, double basis[3][3])
{
    double *up = basis[1], length2;
    do {
        for (int a = 0; a < 3; a++) up[a] = rng_range(g, -1.0, 1.0);
        length2 = up[0] * up[0] + up[1] * up[1] + up[2] * up[2];
    } while (length2 < 0.01 || length2 > 1.0);
    normalize(up);
    const double helper[3] = {fabs(up[0]) < 0.6 ? 1.0 : 0.0, fabs(up[0]) < 0.6 ? 0.0 : 1.0, 0.0};
    double side[3], front[3];
    cross(up, helper, side);
    normalize(side);
    cross(side, up, front);
    double c, s;
    turn_cos_sin(rng_unit(g), &c, &s);
    for (int a = 0; a < 3; a++) {
        basis[0][a] = c * side[a] + s * front[a];
        basis[2][a] = c * front[a] - s * side[a];
    }
}

/* ------------------------------------------------------------------------
 * Primitives
 * ---------------------------------------------------------------------- */

/* A unit cube [-1, 1]^3 in `f`: 8 vertices, 12 triangles. */
void emit_box(mesh *m, const frame *f)
{
    static const uint8_t faces[6][4] = {
        {0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5},
    };
    if (!mesh_reserve(m, 8, 12)) return;
    uint32_t first = (uint32_t)m->n_vertices;
    for (int k = 0; k < 8; k++) {
        double p[3];
        frame_point(f, k & 1 ? 1 : -1, k & 2 ? 1 : -1, k & 4 ? 1 : -1, p);
        mesh_vertex(m, p);
    }
    for (int q = 0; q < 6; q++) {
        const uint8_t *c = faces[q];
        mesh_triangle(m, first + c[0], first + c[1], first + c[2]);
        mesh_triangle(m, first + c[0], first + c[2], first + c[3]);
    }
}

/* The box spanning local [x0, x1] x [y0, y1] x [z0, z1] of `f`. */
void emit_block(mesh *m, const frame *f, double x0, double y0, double z0, double x1, double y1, double z1)
{
    const double half[3] = {(x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2};
    frame box = frame_moved(f, (x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2);
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++) box.axis[k][a] = f->axis[k][a] * half[k];
    emit_box(m, &box);
}

/* The number of vertices in row r of a grid of `n` triangles (see
 * emit_grid): full rows use columns + 1; a partial row of `rest` triangles
 * uses (rest + 1) / 2 + 1 below and rest / 2 + 1 above. */
uint64_t grid_row_width(uint64_t n, uint64_t columns, uint64_t r)
{
    uint64_t full_rows = n / (2 * columns), rest = n % (2 * columns);
    if (full_rows > 0 && r <= full_rows) return columns + 1;
    return r == 0 ? (rest + 1) / 2 + 1 : rest / 2 + 1;
}

uint64_t grid_rows(uint64_t n, uint64_t columns) { return n / (2 * columns) + (n % (2 * columns) != 0); }

uint64_t grid_vertex_count(uint64_t n, uint64_t columns)
{
    uint64_t count = 0;
    for (uint64_t r = 0; r <= grid_rows(n, columns); r++) count += grid_row_width(n, columns, r);
    return count;
}

/* Exactly `n` triangles on unit cells of the local x-z plane of `f`, two
 * per cell, `columns` cells per row; the last row may stop short, even
 * half way through a cell.  Only the vertices used are emitted. */
void emit_grid(mesh *m, uint64_t n, uint64_t columns, const frame *f)
{
    uint64_t rows = grid_rows(n, columns);
    if (!mesh_reserve(m, grid_vertex_count(n, columns), n)) return;
    uint32_t row_start = (uint32_t)m->n_vertices;
    for (uint64_t r = 0; r <= rows; r++)
        for (uint64_t c = 0; c < grid_row_width(n, columns, r); c++) {
            double p[3];
            frame_point(f, (double)c, 0, (double)r, p);
            mesh_vertex(m, p);
        }
    uint64_t left = n;
    for (uint64_t r = 0; r < rows; r++) {
        uint32_t lo = row_start, hi = lo + (uint32_t)grid_row_width(n, columns, r);
        for (uint32_t c = 0; left > 0 && c < columns; c++) {
            mesh_triangle(m, lo + c, hi + c, lo + c + 1);
            if (--left > 0) {
                mesh_triangle(m, lo + c + 1, hi + c, hi + c + 1);
                left--;
            }
        }
        row_start = hi;
    }
}

/* The number of grid columns that makes `n` triangles roughly square. */
uint64_t square_grid_columns(uint64_t n)
{
    uint64_t columns = (uint64_t)sqrt((double)n / 2);
    while (2 * columns * columns < n) columns++;
    return columns;
}

/* Appends (r, y) unless it (nearly) repeats the previous point: rings
 * that close would collapse into zero-area triangles once in float. */
void profile_point(profile *p, double r, double y)
{
    assert(p->n < MAX_PROFILE);
    if (p->n > 0 && fabs(p->r[p->n - 1] - r) + fabs(p->y[p->n - 1] - y) < 1e-6) return;
    p->r[p->n] = r;
    p->y[p->n] = y;
    p->n++;
}

/* Appends `steps` + 1 points of the arc around (cr, cy) of `radius` from
 * `turn0` to `turn1` (turn 0 points away from the axis, 1/4 up). */
void profile_arc(profile *p, double cr, double cy, double radius, double turn0, double turn1, int steps)
{
    for (int k = 0; k <= steps; k++) {
        double c, s;
        turn_cos_sin(turn0 + (turn1 - turn0) * k / steps, &c, &s);
        profile_point(p, cr + radius * c, cy + radius * s);
    }
}

/* Unit sphere from pole to pole in `bands` latitude bands. */
void sphere_profile(profile *p, int bands)
{
    p->n = 0;
    p->closed = false;
    for (int k = 0; k <= bands; k++) {
        double c, s;
        turn_cos_sin(0.5 * k / bands, &c, &s);
        profile_point(p, k == bands ? 0.0 : s, -c);
    }
}

/* Torus cross-section: circle of `sides` points and radius `tube` around
 * (1, 0); scaled by the frame, 1 is the major radius. */
void torus_profile(profile *p, double tube, int sides)
{
    p->n = 0;
    p->closed = true;
    for (int k = 0; k < sides; k++) {
        double c, s;
        turn_cos_sin((double)k / sides, &c, &s);
        profile_point(p, 1.0 + tube * c, tube * s);
    }
}

/* Revolves `p` about the local y axis of `f` by `sweep` turns (1 = closed
 * surface) in `segments` steps, starting from local +x towards local +z. */
void emit_lathe(mesh *m, const profile *p, int segments, double sweep, const frame *f)
{
    assert(segments >= 3 && segments <= MAX_SEGMENTS && p->n >= 2);
    bool full_turn = sweep >= 1.0;
    int columns = full_turn ? segments : segments + 1;
    int bottom_pole = !p->closed && p->r[0] == 0.0;
    int top_pole = !p->closed && p->r[p->n - 1] == 0.0;
    int rings = p->n - bottom_pole - top_pole;
    int ring_pairs = p->closed ? rings : rings - 1;
    size_t vertices = (size_t)rings * columns + bottom_pole + top_pole;
    size_t triangles = ((size_t)ring_pairs * 2 + bottom_pole + top_pole) * segments;
    if (!mesh_reserve(m, vertices, triangles)) return;

    double around[MAX_SEGMENTS + 1][3];
    for (int j = 0; j < columns; j++) {
        double c, s;
        turn_cos_sin(sweep * j / segments, &c, &s);
        for (int a = 0; a < 3; a++) around[j][a] = c * f->axis[0][a] + s * f->axis[2][a];
    }
    double on_axis[3], p3[3];
    uint32_t bottom = 0, top = 0;
    if (bottom_pole) {
        frame_point(f, 0, p->y[0], 0, on_axis);
        bottom = mesh_vertex(m, on_axis);
    }
    uint32_t first_ring = (uint32_t)m->n_vertices;
    for (int i = bottom_pole; i < bottom_pole + rings; i++) {
        frame_point(f, 0, p->y[i], 0, on_axis);
        for (int j = 0; j < columns; j++) {
            for (int a = 0; a < 3; a++) p3[a] = on_axis[a] + p->r[i] * around[j][a];
            mesh_vertex(m, p3);
        }
    }
    if (top_pole) {
        frame_point(f, 0, p->y[p->n - 1], 0, on_axis);
        top = mesh_vertex(m, on_axis);
    }

    for (int i = 0; i < ring_pairs; i++) {
        uint32_t lo = first_ring + (uint32_t)(i * columns);
        uint32_t hi = first_ring + (uint32_t)((i + 1) % rings * columns);
        for (int j = 0; j < segments; j++) {
            uint32_t next = (uint32_t)((j + 1) % columns);
            mesh_triangle(m, lo + j, hi + next, lo + next);
            mesh_triangle(m, lo + j, hi + j, hi + next);
        }
    }
    uint32_t last_ring = first_ring + (uint32_t)((rings - 1) * columns);
    for (int j = 0; bottom_pole && j < segments; j++)
        mesh_triangle(m, bottom, first_ring + j, first_ring + (j + 1) % columns);
    for (int j = 0; top_pole && j < segments; j++) mesh_triangle(m, top, last_ring + (j + 1) % columns, last_ring + j);
}

/* A sphere of `radius` at (x, y, z), `bands` latitude bands. */
void emit_sphere(mesh *m, double x, double y, double z, double radius, int bands)
{
    profile p;
    sphere_profile(&p, bands);
    frame f = frame_at(x, y, z, radius, radius, radius);
    emit_lathe(m, &p, 2 * bands, 1.0, &f);
}

/* A torus of major radius 1 in `f` (scale the frame for other sizes). */
void emit_torus(mesh *m, const frame *f, double tube, int sides, int segments)
{
    profile p;
    torus_profile(&p, tube, sides);
    emit_lathe(m, &p, segments, 1.0, f);
}
