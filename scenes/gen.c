/* gen.c - built-in procedural scenes (scene_generate).
 *
 * All scenes are y-up indexed meshes; every tessellated object shares its
 * vertices and only vertices used by triangles are emitted.
 *
 * atrium   The default, fixed size: 354,960 triangles.  An arcaded
 *          courtyard of about 40 x 15 x 20 units in the spirit of Sponza,
 *          open towards +z so the default camera looks in: a floor of
 *          0.5-unit tiles; outer walls of big boxes pierced by three rows of
 *          windows; two storeys of arcades on three sides (turned columns
 *          with base and capital, semicircular arches swept half a turn,
 *          entablatures, gallery floors, a balustrade of turned balusters);
 *          attic walls and a roof over the galleries, beams over the open
 *          courtyard; a fountain of basins crowned by a statue of stacked
 *          cones, spheres and tori; vases, benches, tables with bowls of
 *          finely tessellated fruit, hanging lamps, planters and pebbles.
 *          Triangle density varies by orders of magnitude: walls are a few
 *          big triangles, fruit, lamps and the statue are dense.
 * spheres  Scalable, exactly n triangles (default 1,000,000, limits
 *          100..50,000,000).  Six big landmark spheres, then spheres,
 *          ellipsoids and tori whose radii are log-uniform over nine
 *          octaves (coarse when small, finer when big), nine in ten gathered
 *          in seven clusters of different spread, the rest strewn over the
 *          ground.  What the objects leave of the budget (at least 5%) is a
 *          ground grid of exactly that many triangles.
 * flat     n triangles (default 10,000) of a grid of unit cells in the
 *          plane z = 0: a degenerate extent for split planes.
 * stacked  n copies (default 1,000) of one triangle over 3 shared vertices:
 *          no split can separate them.
 * huge, wide, tilted, coincident: the numeric extremes, in gen_extreme.c.
 *
 * Determinism: same name and size give the same bytes on every machine.
 * Randomness is splitmix64 with fixed seeds; angles go through
 * turn_cos_sin (a Taylor series in double, no libm trigonometry); sizes
 * scale by exact powers of two; everything is IEEE double arithmetic
 * rounded once to float.  The build passes -ffp-contract=off, so no fused
 * multiply-add changes a rounding on machines that have one.
 */
#include "scene.h"
#include "gen_parts.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGMENTS 1024   /* around a lathe's axis */
#define MAX_PROFILE 1024    /* points of a lathe's profile */


/* ------------------------------------------------------------------------
 * Deterministic numbers
 * ---------------------------------------------------------------------- */

/* Roughly bell-shaped in [-1.5, 1.5]: a sum of three uniforms.  (Draws
 * are sequenced one statement each throughout: the order in which the
 * operands or arguments of one expression are evaluated is unspecified in C,
 * and compilers do differ.) */
static double rng_bell(rng *g)
{
    double sum = rng_unit(g);
    sum += rng_unit(g);
    sum += rng_unit(g);
    return sum - 1.5;
}

/* cos and sin of `turns` full turns.  The argument is reduced exactly to
 * the nearest quarter turn, leaving |x| <= pi/4, where Taylor series to
 * x^15 and x^16 are accurate to double precision. */
static void turn_cos_sin(double turns, double *c, double *s)
{
    const double two_pi = 6.283185307179586476925;
    double t = turns - floor(turns);
    int quarter = (int)(t * 4.0 + 0.5);
    double x = (t - quarter * 0.25) * two_pi;
    double x2 = x * x;
    double sn = x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 *
                (1 - x2 / 110 * (1 - x2 / 156 * (1 - x2 / 210)))))));
    double cs = 1 - x2 / 2 * (1 - x2 / 12 * (1 - x2 / 30 * (1 - x2 / 56 *
                (1 - x2 / 90 * (1 - x2 / 132 * (1 - x2 / 182 * (1 - x2 / 240)))))));
    switch (quarter & 3) {
    case 0: *c = cs; *s = sn; break;
    case 1: *c = -sn; *s = cs; break;
    case 2: *c = -cs; *s = -sn; break;
    default: *c = sn; *s = -cs; break;
    }
}

/* ------------------------------------------------------------------------
 * Placement frames: world = origin + x * axis[0] + y * axis[1] + z * axis[2].
 * Axes carry the scale; y is up for lathes (their axis of revolution).
 * ---------------------------------------------------------------------- */

typedef struct frame {
    double origin[3];
    double axis[3][3];
} frame;

static const frame WORLD = {{0, 0, 0}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};

static void frame_point(const frame *f, double x, double y, double z, double out[3])
{
    for (int a = 0; a < 3; a++)
        out[a] = f->origin[a] + x * f->axis[0][a] + y * f->axis[1][a] + z * f->axis[2][a];
}

/* An axis-aligned frame at (x, y, z) scaled by (sx, sy, sz). */
static frame frame_at(double x, double y, double z, double sx, double sy, double sz)
{
    frame f = {{x, y, z}, {{sx, 0, 0}, {0, sy, 0}, {0, 0, sz}}};
    return f;
}

/* `f` with its origin moved to its local point (x, y, z). */
static frame frame_moved(const frame *f, double x, double y, double z)
{
    frame moved = *f;
    frame_point(f, x, y, z, moved.origin);
    return moved;
}

/* `f` turned by `turns` about its y axis (from x towards z). */
static frame frame_turned(const frame *f, double turns)
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
static frame frame_oriented(const double origin[3], const double basis[3][3],
                            double sx, double sy, double sz)
{
    const double scale[3] = {sx, sy, sz};
    frame f;
    for (int a = 0; a < 3; a++) {
        f.origin[a] = origin[a];
        for (int k = 0; k < 3; k++)
            f.axis[k][a] = basis[k][a] * scale[k];
    }
    return f;
}

static void cross(const double u[3], const double v[3], double out[3])
{
    out[0] = u[1] * v[2] - u[2] * v[1];
    out[1] = u[2] * v[0] - u[0] * v[2];
    out[2] = u[0] * v[1] - u[1] * v[0];
}

static void normalize(double v[3])
{
    double length = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++)
        v[a] /= length;
}

/* A random right-handed orthonormal basis: a random axis 1 (rejection
 * sampled in the unit ball) and a random spin of axes 0 and 2 around it. */
static void random_basis(rng *g, double basis[3][3])
{
    double *up = basis[1], length2;
    do {
        for (int a = 0; a < 3; a++)
            up[a] = rng_range(g, -1.0, 1.0);
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
static void emit_box(mesh *m, const frame *f)
{
    static const uint8_t faces[6][4] = {
        {0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
        {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5},
    };
    if (!mesh_reserve(m, 8, 12))
        return;
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
static void emit_block(mesh *m, const frame *f, double x0, double y0, double z0,
                       double x1, double y1, double z1)
{
    const double half[3] = {(x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2};
    frame box = frame_moved(f, (x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2);
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++)
            box.axis[k][a] = f->axis[k][a] * half[k];
    emit_box(m, &box);
}

/* The number of vertices in row r of a grid of `n` triangles (see
 * emit_grid): full rows use columns + 1; a partial row of `rest` triangles
 * uses (rest + 1) / 2 + 1 below and rest / 2 + 1 above. */
static uint64_t grid_row_width(uint64_t n, uint64_t columns, uint64_t r)
{
    uint64_t full_rows = n / (2 * columns), rest = n % (2 * columns);
    if (full_rows > 0 && r <= full_rows)
        return columns + 1;
    return r == 0 ? (rest + 1) / 2 + 1 : rest / 2 + 1;
}

static uint64_t grid_rows(uint64_t n, uint64_t columns)
{
    return n / (2 * columns) + (n % (2 * columns) != 0);
}

static uint64_t grid_vertex_count(uint64_t n, uint64_t columns)
{
    uint64_t count = 0;
    for (uint64_t r = 0; r <= grid_rows(n, columns); r++)
        count += grid_row_width(n, columns, r);
    return count;
}

/* Exactly `n` triangles on unit cells of the local x-z plane of `f`, two
 * per cell, `columns` cells per row; the last row may stop short, even
 * half way through a cell.  Only the vertices used are emitted. */
static void emit_grid(mesh *m, uint64_t n, uint64_t columns, const frame *f)
{
    uint64_t rows = grid_rows(n, columns);
    if (!mesh_reserve(m, grid_vertex_count(n, columns), n))
        return;
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
static uint64_t square_grid_columns(uint64_t n)
{
    uint64_t columns = (uint64_t)sqrt((double)n / 2);
    while (2 * columns * columns < n)
        columns++;
    return columns;
}

/* A lathe profile: points (r, y), r >= 0 the distance from the axis, in
 * order.  An open profile whose end points lie on the axis (r == 0) gets a
 * single pole vertex there; a closed one (a torus) joins last to first. */
typedef struct profile {
    double r[MAX_PROFILE], y[MAX_PROFILE];
    int n;
    bool closed;
} profile;

/* Appends (r, y) unless it (nearly) repeats the previous point: rings
 * that close would collapse into zero-area triangles once in float. */
static void profile_point(profile *p, double r, double y)
{
    assert(p->n < MAX_PROFILE);
    if (p->n > 0 && fabs(p->r[p->n - 1] - r) + fabs(p->y[p->n - 1] - y) < 1e-6)
        return;
    p->r[p->n] = r;
    p->y[p->n] = y;
    p->n++;
}

/* Appends `steps` + 1 points of the arc around (cr, cy) of `radius` from
 * `turn0` to `turn1` (turn 0 points away from the axis, 1/4 up). */
static void profile_arc(profile *p, double cr, double cy, double radius,
                        double turn0, double turn1, int steps)
{
    for (int k = 0; k <= steps; k++) {
        double c, s;
        turn_cos_sin(turn0 + (turn1 - turn0) * k / steps, &c, &s);
        profile_point(p, cr + radius * c, cy + radius * s);
    }
}

/* Unit sphere from pole to pole in `bands` latitude bands. */
static void sphere_profile(profile *p, int bands)
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
static void torus_profile(profile *p, double tube, int sides)
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
static void emit_lathe(mesh *m, const profile *p, int segments, double sweep, const frame *f)
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
    if (!mesh_reserve(m, vertices, triangles))
        return;

    double around[MAX_SEGMENTS + 1][3];
    for (int j = 0; j < columns; j++) {
        double c, s;
        turn_cos_sin(sweep * j / segments, &c, &s);
        for (int a = 0; a < 3; a++)
            around[j][a] = c * f->axis[0][a] + s * f->axis[2][a];
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
            for (int a = 0; a < 3; a++)
                p3[a] = on_axis[a] + p->r[i] * around[j][a];
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
    for (int j = 0; top_pole && j < segments; j++)
        mesh_triangle(m, top, last_ring + (j + 1) % columns, last_ring + j);
}

/* A sphere of `radius` at (x, y, z), `bands` latitude bands. */
static void emit_sphere(mesh *m, double x, double y, double z, double radius, int bands)
{
    profile p;
    sphere_profile(&p, bands);
    frame f = frame_at(x, y, z, radius, radius, radius);
    emit_lathe(m, &p, 2 * bands, 1.0, &f);
}

/* A torus of major radius 1 in `f` (scale the frame for other sizes). */
static void emit_torus(mesh *m, const frame *f, double tube, int sides, int segments)
{
    profile p;
    torus_profile(&p, tube, sides);
    emit_lathe(m, &p, segments, 1.0, f);
}

/* ------------------------------------------------------------------------
 * atrium
 * ---------------------------------------------------------------------- */

#define ATRIUM_SEED 0x41747269756D2031u
#define ATRIUM_TRIANGLES 354960 /* the exact count, also in the help line */

static const double ARCADE_BAY = 2.0;       /* column spacing */
static const double GROUND_COLUMN = 4.0;    /* column heights, storey 1 and 2 */
static const double UPPER_COLUMN = 3.2;
static const double UPPER_FLOOR = 6.0;      /* top of the gallery floor */
static const double GALLERY_ROOF = 11.2;    /* top of the upper gallery roof */
static const double WALL_HEIGHT = 15.0;

typedef struct window_row {
    double bottom, top;
} window_row;

/* A wall along local x of `wall` (y up, z through its thickness) in
 * [0, length] x [0, height] x [0, thickness], pierced by rows of `bays`
 * windows each, every window with a sill: a few big boxes. */
static void add_windowed_wall(mesh *m, const frame *wall, double length, double height,
                              double thickness, int bays, double window_width,
                              const window_row *rows, int n_rows)
{
    double below = 0.0, bay = length / bays, half = window_width / 2;
    for (int r = 0; r < n_rows; r++) {
        double y0 = rows[r].bottom, y1 = rows[r].top, left = 0.0;
        emit_block(m, wall, 0, below, 0, length, y0, thickness);
        for (int b = 0; b < bays; b++) {
            double centre = (b + 0.5) * bay;
            emit_block(m, wall, left, y0, 0, centre - half, y1, thickness);
            emit_block(m, wall, centre - half - 0.1, y0 - 0.12, -0.12,
                       centre + half + 0.1, y0, thickness + 0.12);
            left = centre + half;
        }
        emit_block(m, wall, left, y0, 0, length, y1, thickness);
        below = y1;
    }
    emit_block(m, wall, 0, below, 0, length, height, thickness);
}

/* The interior floor: 78 x 39 tiles of 0.5 units. */
static void add_floor(mesh *m)
{
    const frame tiles = {{-19.5, 0, -9.5}, {{0.5, 0, 0}, {0, 1, 0}, {0, 0, 0.5}}};
    emit_grid(m, 2 * 78 * 39, 78, &tiles);
}

/* Back and side walls with two storeys of windows and a clerestory row;
 * the +z side stays open. */
static void add_outer_walls(mesh *m)
{
    static const window_row rows[] = {{1.3, 4.3}, {7.0, 9.8}, {12.0, 14.0}};
    const frame back = {{-20, 0, -10}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    const frame left = {{-20, 0, -10}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
    const frame right = {{19.5, 0, -10}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
    add_windowed_wall(m, &back, 40, WALL_HEIGHT, 0.5, 10, 1.5, rows, 3);
    add_windowed_wall(m, &left, 20, WALL_HEIGHT, 0.5, 5, 1.5, rows, 3);
    add_windowed_wall(m, &right, 20, WALL_HEIGHT, 0.5, 5, 1.5, rows, 3);
}

/* A column `height` tall: plinth, torus moulding, tapering shaft,
 * astragal ring, flaring capital and abacus. */
static void column_profile(profile *p, double height)
{
    double shaft_top = height - 0.55;
    p->n = 0;
    p->closed = false;
    profile_point(p, 0.0, 0.0);
    profile_point(p, 0.42, 0.0);
    profile_point(p, 0.42, 0.16);
    profile_arc(p, 0.33, 0.25, 0.09, -0.25, 0.25, 4);
    for (int k = 0; k <= 4; k++) {
        double t = k / 4.0;
        profile_point(p, 0.26 - 0.04 * t * t, 0.38 + t * (shaft_top - 0.38));
    }
    profile_arc(p, 0.22, shaft_top + 0.04, 0.04, -0.25, 0.25, 4);
    for (int k = 0; k <= 3; k++) {
        double t = k / 3.0;
        profile_point(p, 0.22 + 0.18 * t * t, shaft_top + 0.1 + 0.28 * t);
    }
    profile_point(p, 0.44, height - 0.16);
    profile_point(p, 0.44, height);
    profile_point(p, 0.0, height);
}

/* Cross-section of an arch ring of radius ~1: a band with a raised
 * moulding (r outwards, y across the arcade). */
static void arch_profile(profile *p)
{
    static const double points[][2] = {
        {0.78, -0.3}, {1.0, -0.3}, {1.0, -0.2}, {1.08, -0.2},
        {1.08, 0.2}, {1.0, 0.2}, {1.0, 0.3}, {0.78, 0.3},
    };
    p->n = 0;
    p->closed = true;
    for (size_t k = 0; k < sizeof points / sizeof points[0]; k++)
        profile_point(p, points[k][0], points[k][1]);
}

/* A turned baluster 0.75 tall. */
static void baluster_profile(profile *p)
{
    p->n = 0;
    p->closed = false;
    profile_point(p, 0.0, 0.0);
    profile_point(p, 0.07, 0.0);
    profile_point(p, 0.07, 0.06);
    for (int k = 0; k <= 8; k++) {
        double c, s;
        turn_cos_sin(0.5 * k / 8, &c, &s);
        profile_point(p, 0.035 + 0.04 * s, 0.1 + 0.45 * k / 8);
    }
    profile_point(p, 0.05, 0.62);
    profile_point(p, 0.06, 0.68);
    profile_point(p, 0.06, 0.75);
    profile_point(p, 0.0, 0.75);
}

/* Between two columns of a storey's arcade: plinth, rail and balusters. */
static void add_balustrade(mesh *m, const frame *line, double x0, double x1)
{
    profile baluster;
    baluster_profile(&baluster);
    emit_block(m, line, x0 + 0.3, 0.0, -0.12, x1 - 0.3, 0.1, 0.12);
    emit_block(m, line, x0 + 0.3, 0.85, -0.14, x1 - 0.3, 0.97, 0.14);
    for (int k = 0; k < 4; k++) {
        frame at = frame_moved(line, x0 + 0.5 + (x1 - x0 - 1.0) * k / 3, 0.1, 0);
        emit_lathe(m, &baluster, 10, 1.0, &at);
    }
}

/* One storey of arcade along local x of `line` (y up, z across), its
 * first column at the origin: columns every ARCADE_BAY, semicircular
 * arches between them and an entablature on top. */
static void add_arcade(mesh *m, const frame *line, int bays, bool skip_first_column,
                       double column_height, bool balustrade)
{
    profile column, arch;
    column_profile(&column, column_height);
    arch_profile(&arch);
    for (int b = skip_first_column; b <= bays; b++) {
        frame at = frame_moved(line, b * ARCADE_BAY, 0, 0);
        emit_lathe(m, &column, 24, 1.0, &at);
    }
    for (int b = 0; b < bays; b++) {
        /* The arch revolves about the arcade's z, sweeping from +x over +y. */
        frame at = frame_moved(line, (b + 0.5) * ARCADE_BAY, column_height, 0);
        for (int a = 0; a < 3; a++) {
            at.axis[1][a] = line->axis[2][a];
            at.axis[2][a] = line->axis[1][a];
        }
        emit_lathe(m, &arch, 24, 0.5, &at);
        if (balustrade)
            add_balustrade(m, line, b * ARCADE_BAY, (b + 1) * ARCADE_BAY);
    }
    emit_block(m, line, -0.45, column_height + 1.0, -0.3,
               bays * ARCADE_BAY + 0.45, column_height + 1.6, 0.3);
}

/* Slabs over the galleries, from the arcades to `inset` inside the
 * outer faces of the walls (0: over the walls too). */
static void add_gallery_slabs(mesh *m, double y0, double y1, double inset)
{
    double x = 20.0 - inset, z = -10.0 + inset;
    emit_block(m, &WORLD, -x, y0, z, x, y1, -5.7);
    emit_block(m, &WORLD, -x, y0, -5.7, -15.7, y1, 10);
    emit_block(m, &WORLD, 15.7, y0, -5.7, x, y1, 10);
}

/* Arcades on the lines z = -6 (x from -16 to 16) and x = +-16 (z from -6
 * to 10), two storeys; gallery floor, gallery roof and windowed attic walls. */
static void add_arcades(mesh *m)
{
    static const window_row attic_rows[] = {{0.9, 2.9}};
    for (int storey = 0; storey < 2; storey++) {
        double base = storey ? UPPER_FLOOR : 0.0;
        double height = storey ? UPPER_COLUMN : GROUND_COLUMN;
        const frame back = {{-16, base, -6}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
        const frame left = {{-16, base, -6}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
        const frame right = {{16, base, -6}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
        add_arcade(m, &back, 16, false, height, storey == 1);
        add_arcade(m, &left, 8, true, height, storey == 1);
        add_arcade(m, &right, 8, true, height, storey == 1);
    }
    add_gallery_slabs(m, GROUND_COLUMN + 1.6, UPPER_FLOOR, 0.5);
    add_gallery_slabs(m, UPPER_FLOOR + UPPER_COLUMN + 1.6, GALLERY_ROOF, 0.5);

    const frame back = {{-16.15, GALLERY_ROOF, -6.15}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    const frame left = {{-16.15, GALLERY_ROOF, -5.85}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
    const frame right = {{15.85, GALLERY_ROOF, -5.85}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
    double attic = WALL_HEIGHT - GALLERY_ROOF;
    add_windowed_wall(m, &back, 32.3, attic, 0.3, 8, 1.6, attic_rows, 1);
    add_windowed_wall(m, &left, 15.85, attic, 0.3, 4, 1.6, attic_rows, 1);
    add_windowed_wall(m, &right, 15.85, attic, 0.3, 4, 1.6, attic_rows, 1);
}

/* Roof over the galleries; over the courtyard only beams, open between. */
static void add_roof(mesh *m)
{
    add_gallery_slabs(m, WALL_HEIGHT, WALL_HEIGHT + 0.3, 0.0);
    for (int k = 0; k < 3; k++) {
        double z = -2.0 + 4.0 * k;
        emit_block(m, &WORLD, -15.85, WALL_HEIGHT - 0.4, z - 0.2, 15.85, WALL_HEIGHT, z + 0.2);
    }
    emit_block(m, &WORLD, -0.2, WALL_HEIGHT - 0.8, -5.85, 0.2, WALL_HEIGHT - 0.4, 10);
}

/* Lower basin, pedestal, upper basin and a statue of stacked primitives,
 * ringed by water jets and spray droplets, centred at (x, 0, z). */
static void add_fountain(mesh *m, rng *g, double x, double z)
{
    profile p = {.n = 0};
    profile_point(&p, 0.0, 0.0);
    profile_point(&p, 3.1, 0.0);
    profile_point(&p, 3.1, 0.12);
    profile_point(&p, 3.0, 0.18);
    profile_arc(&p, 2.9, 0.7, 0.1, 0.0, 0.5, 8);
    profile_point(&p, 2.8, 0.45);
    profile_point(&p, 0.0, 0.45);
    frame base = frame_at(x, 0, z, 1, 1, 1);
    emit_lathe(m, &p, 96, 1.0, &base);

    p.n = 0;
    profile_point(&p, 0.0, 0.45);
    profile_point(&p, 0.5, 0.45);
    profile_arc(&p, 0.5, 0.6, 0.15, -0.25, 0.25, 6);
    for (int k = 0; k <= 6; k++) {
        double c, s;
        turn_cos_sin(0.5 * k / 6, &c, &s);
        profile_point(&p, 0.32 - 0.1 * s, 0.8 + 1.2 * k / 6);
    }
    profile_point(&p, 0.0, 2.0);
    emit_lathe(m, &p, 64, 1.0, &base);

    p.n = 0;
    profile_point(&p, 0.0, 2.0);
    profile_point(&p, 0.3, 2.0);
    profile_arc(&p, 0.3, 2.9, 0.9, -0.25, 0.0, 8);
    profile_arc(&p, 1.28, 2.9, 0.08, 0.0, 0.5, 6);
    profile_point(&p, 1.1, 2.7);
    profile_point(&p, 0.0, 2.7);
    emit_lathe(m, &p, 96, 1.0, &base);

    /* Statue: plinth, robed body (a cone), belt, head with curls, halo,
     * orb: the most finely tessellated spot of the scene. */
    p.n = 0;
    profile_point(&p, 0.0, 2.7);
    profile_point(&p, 0.32, 2.7);
    profile_point(&p, 0.32, 3.1);
    for (int k = 0; k <= 20; k++)
        profile_point(&p, 0.34 - 0.2 * k / 20, 3.1 + 1.2 * k / 20);
    profile_point(&p, 0.0, 4.3);
    emit_lathe(m, &p, 96, 1.0, &base);
    frame belt = frame_at(x, 3.7, z, 0.27, 0.27, 0.27);
    emit_torus(m, &belt, 0.2, 24, 128);
    emit_sphere(m, x, 4.52, z, 0.22, 64);
    for (int k = 0; k < 48; k++) {
        double c, s, up = rng_range(g, 0.1, 0.95);
        double around = sqrt(1 - up * up) * 0.22;
        turn_cos_sin(rng_unit(g), &c, &s);
        emit_sphere(m, x + around * c, 4.52 + up * 0.22, z + around * s, 0.035, 8);
    }
    frame halo = {{x, 4.85, z - 0.12}, {{0.3, 0, 0}, {0, 0.25, 0.15}, {0, -0.15, 0.25}}};
    emit_torus(m, &halo, 0.08, 16, 128);
    emit_sphere(m, x + 0.3, 3.9, z + 0.25, 0.12, 48);

    for (int k = 0; k < 8; k++) {
        double c, s;
        turn_cos_sin(k / 8.0, &c, &s);
        emit_sphere(m, x + 2.2 * c, 1.0, z + 2.2 * s, 0.14, 16);
    }
    for (int k = 0; k < 60; k++) {
        double c, s;
        turn_cos_sin(rng_unit(g), &c, &s);
        double reach = rng_range(g, 0.5, 2.6);
        double height = rng_range(g, 0.5, 3.2);
        double radius = rng_octaves(g, 0.01, 2.0);
        emit_sphere(m, x + reach * c, height, z + reach * s, radius, 6);
    }
}

/* A vase of random proportions: foot, belly, neck and lip. */
static void vase_profile(profile *p, rng *g)
{
    double height = rng_range(g, 0.5, 1.1);
    double belly = rng_range(g, 0.15, 0.3);
    double foot = belly * rng_range(g, 0.5, 0.8);
    double neck = belly * rng_range(g, 0.3, 0.6);
    p->n = 0;
    p->closed = false;
    profile_point(p, 0.0, 0.0);
    profile_point(p, foot, 0.0);
    for (int k = 1; k <= 12; k++) {
        double t = k / 12.0, c, s;
        turn_cos_sin(0.5 * t, &c, &s);
        profile_point(p, (1 - t) * foot + t * neck + (belly - (foot + neck) / 2) * s,
                      0.05 + t * height * 0.8);
    }
    profile_point(p, neck * 1.35, height * 0.95);
    profile_point(p, neck * 1.35, height);
    profile_point(p, neck * 1.1, height);
    profile_point(p, 0.0, height * 0.9);
}

/* Vases along the back wall of both galleries. */
static void add_vases(mesh *m, rng *g)
{
    profile p;
    for (int storey = 0; storey < 2; storey++)
        for (int k = 0; k < 13; k++) {
            vase_profile(&p, g);
            frame at = frame_at(-18 + 3 * k + rng_range(g, -0.4, 0.4),
                                storey ? UPPER_FLOOR : 0.0, -8.9, 1, 1, 1);
            emit_lathe(m, &p, 32, 1.0, &at);
        }
}

/* A bench of four boxes in `f` (local x along the seat, z to the back). */
static void add_bench(mesh *m, const frame *f)
{
    emit_block(m, f, -0.8, 0.42, -0.22, 0.8, 0.5, 0.22);
    emit_block(m, f, -0.7, 0.0, -0.18, -0.6, 0.42, 0.18);
    emit_block(m, f, 0.6, 0.0, -0.18, 0.7, 0.42, 0.18);
    emit_block(m, f, -0.8, 0.5, 0.17, 0.8, 0.95, 0.22);
}

/* Benches facing the fountain along the back arcade and the sides. */
static void add_benches(mesh *m)
{
    for (int k = 0; k < 4; k++) {
        double x = k < 2 ? -10.0 + 4 * k : 6.0 + 4 * (k - 2);
        const frame back = {{x, 0, -4.6}, {{1, 0, 0}, {0, 1, 0}, {0, 0, -1}}};
        add_bench(m, &back);
        const frame side = {{k < 2 ? -14.4 : 14.4, 0, k % 2 ? 5.0 : 0.0},
                            {{0, 0, 1}, {0, 1, 0}, {k < 2 ? -1 : 1, 0, 0}}};
        add_bench(m, &side);
    }
}

/* A table with a bowl of fruit and grapes, at (x, 0, z). */
static void add_fruit_table(mesh *m, rng *g, double x, double z)
{
    const frame table = frame_at(x, 0, z, 1, 1, 1);
    emit_block(m, &table, -0.6, 0.78, -0.4, 0.6, 0.86, 0.4);
    for (int k = 0; k < 4; k++)
        emit_block(m, &table, k % 2 ? 0.5 : -0.56, 0.0, k < 2 ? 0.3 : -0.36,
                   k % 2 ? 0.56 : -0.5, 0.78, k < 2 ? 0.36 : -0.3);

    profile bowl = {.n = 0};
    profile_point(&bowl, 0.0, 0.86);
    profile_point(&bowl, 0.08, 0.86);
    profile_arc(&bowl, 0.0, 1.1, 0.24, -0.2, 0.0, 6);
    profile_arc(&bowl, 0.0, 1.1, 0.22, 0.0, -0.22, 6);
    profile_point(&bowl, 0.0, 0.88);
    frame at = frame_at(x, 0, z, 1, 1, 1);
    emit_lathe(m, &bowl, 48, 1.0, &at);

    for (int k = 0; k < 7; k++) {
        double c, s, radius = rng_range(g, 0.05, 0.07);
        turn_cos_sin(k / 6.0 + rng_range(g, 0.0, 0.05), &c, &s);
        double reach = k < 6 ? 0.11 : 0.0;
        emit_sphere(m, x + reach * c, k < 6 ? 0.99 : 1.07, z + reach * s, radius, 14);
    }
    for (int k = 0; k < 18; k++) {
        double dx = rng_range(g, -0.06, 0.06);
        double dz = rng_range(g, -0.05, 0.05);
        emit_sphere(m, x + 0.3 + dx, 0.88 + 0.025 * (k % 4), z - 0.1 + dz, 0.018, 5);
    }
}

/* Tables in both side galleries and the back gallery. */
static void add_fruit_tables(mesh *m, rng *g)
{
    for (int k = 0; k < 3; k++) {
        add_fruit_table(m, g, -17.8, -3.0 + 4 * k);
        add_fruit_table(m, g, 17.8, -3.0 + 4 * k);
    }
    add_fruit_table(m, g, -6.0, -8.0);
    add_fruit_table(m, g, 6.0, -8.0);
}

/* A planter: pot, a leafy bush and scattered leaves, at (x, 0, z). */
static void add_planter(mesh *m, rng *g, double x, double z)
{
    profile pot = {.n = 0};
    profile_point(&pot, 0.0, 0.0);
    profile_point(&pot, 0.35, 0.0);
    profile_point(&pot, 0.5, 0.6);
    profile_point(&pot, 0.56, 0.62);
    profile_point(&pot, 0.56, 0.7);
    profile_point(&pot, 0.5, 0.7);
    profile_point(&pot, 0.0, 0.62);
    frame at = frame_at(x, 0, z, 1, 1, 1);
    emit_lathe(m, &pot, 40, 1.0, &at);
    emit_sphere(m, x, 1.15, z, 0.6, 20);

    profile leaf;
    sphere_profile(&leaf, 5);
    for (int k = 0; k < 30; k++) {
        double basis[3][3], c, s, where[3];
        turn_cos_sin(rng_unit(g), &c, &s);
        double up = rng_range(g, -0.5, 0.9);
        double around = sqrt(1 - up * up) * 0.62;
        where[0] = x + around * c;
        where[1] = 1.15 + up * 0.62;
        where[2] = z + around * s;
        random_basis(g, basis);
        frame f = frame_oriented(where, basis, 0.12, 0.03, 0.07);
        emit_lathe(m, &leaf, 10, 1.0, &f);
    }
}

/* A hanging lamp under the ceiling at `ceiling`: a chain, a ring and
 * eight candles with flames, centred at (x, z). */
static void add_lamp(mesh *m, double x, double ceiling, double z)
{
    profile rod = {.n = 0};
    profile_point(&rod, 0.0, 0.0);
    profile_point(&rod, 1.0, 0.0);
    profile_point(&rod, 1.0, 1.0);
    profile_point(&rod, 0.0, 1.0);
    double ring_y = ceiling - 1.0;
    frame chain = frame_at(x, ring_y, z, 0.02, 1.0, 0.02);
    emit_lathe(m, &rod, 8, 1.0, &chain);
    frame ring = frame_at(x, ring_y, z, 0.35, 0.35, 0.35);
    emit_torus(m, &ring, 0.09, 8, 48);
    const frame hub = frame_at(x, ring_y, z, 1, 1, 1);
    for (int k = 0; k < 3; k++) {
        frame spoke = frame_turned(&hub, k / 6.0);
        emit_block(m, &spoke, -0.35, -0.012, -0.012, 0.35, 0.012, 0.012);
    }
    for (int k = 0; k < 8; k++) {
        double c, s;
        turn_cos_sin(k / 8.0, &c, &s);
        frame candle = frame_at(x + 0.35 * c, ring_y + 0.03, z + 0.35 * s, 0.025, 0.12, 0.025);
        emit_lathe(m, &rod, 8, 1.0, &candle);
        emit_sphere(m, x + 0.35 * c, ring_y + 0.175, z + 0.35 * s, 0.02, 6);
    }
}

/* Pebbles: tiny flat ellipsoids lying on the courtyard floor, turned at
 * random about the vertical. */
static void add_pebbles(mesh *m, rng *g)
{
    profile pebble;
    sphere_profile(&pebble, 5);
    for (int k = 0; k < 220; k++) {
        double radius = rng_octaves(g, 0.02, 2.0);
        double x = rng_range(g, -15, 15);
        double z = rng_range(g, -5, 9.8);
        frame lying = frame_at(x, radius * 0.4, z, radius, radius * 0.4, radius * 0.7);
        frame f = frame_turned(&lying, rng_unit(g));
        emit_lathe(m, &pebble, 10, 1.0, &f);
    }
}

static void build_atrium(mesh *m, uint64_t n_triangles)
{
    (void)n_triangles; /* fixed size */
    rng g = {ATRIUM_SEED};
    add_floor(m);
    add_outer_walls(m);
    add_arcades(m);
    add_roof(m);
    add_fountain(m, &g, 0.0, 2.0);
    add_vases(m, &g);
    add_benches(m);
    add_fruit_tables(m, &g);
    add_planter(m, &g, -12.5, -3.5);
    add_planter(m, &g, 12.5, -3.5);
    add_planter(m, &g, -12.5, 8.0);
    add_planter(m, &g, 12.5, 8.0);
    for (int k = 0; k < 4; k++) {
        add_lamp(m, -12.0 + 8 * k, GROUND_COLUMN + 1.6, -7.8);
        add_lamp(m, -12.0 + 8 * k, UPPER_FLOOR + UPPER_COLUMN + 1.6, -7.8);
    }
    add_pebbles(m, &g);
}

/* ------------------------------------------------------------------------
 * spheres
 * ---------------------------------------------------------------------- */

#define SPHERES_SIZE_SEED 0x5350484552455331u
#define SPHERES_PLACE_SEED 0x5350484552455332u
#define SPHERES_CLUSTER_SEED 0x5350484552455333u

enum { LANDMARKS = 6, CLUSTERS = 7 };
static const double HALF_WIDTH = 100.0;   /* the ground spans +-HALF_WIDTH in x and z */
static const double SMALLEST_RADIUS = 0.02;
static const double RADIUS_OCTAVES = 9.0;

typedef enum blob_kind { BLOB_SPHERE, BLOB_ELLIPSOID, BLOB_TORUS } blob_kind;

typedef struct blob {
    blob_kind kind;
    int bands;        /* latitude bands, or torus sides; 2 * bands segments */
    double radius;
} blob;

typedef struct cluster {
    double x, z, spread, weight_below;   /* cumulative weight, in [0, 1) */
} cluster;

static uint64_t blob_triangles(const blob *b)
{
    uint64_t n = (uint64_t)b->bands;
    return b->kind == BLOB_TORUS ? 4 * n * n : 4 * n * (n - 1);
}

static uint64_t blob_vertices(const blob *b)
{
    uint64_t n = (uint64_t)b->bands;
    return b->kind == BLOB_TORUS ? 2 * n * n : 2 * n * (n - 1) + 2;
}

/* Draws the next small blob's kind and size from `sizes`: detail grows
 * with size, 3 to 11 bands, and shrinks to fit `budget` triangles.  False
 * when not even the coarsest fits.  Takes two numbers from `sizes`
 * whatever happens, so that counting and emitting passes stay in step. */
static bool next_blob(rng *sizes, uint64_t budget, blob *b)
{
    double octave = rng_range(sizes, 0.0, RADIUS_OCTAVES);
    uint64_t pick = rng_next(sizes) % 10;
    int whole = (int)octave;
    b->radius = SMALLEST_RADIUS * ldexp(1.0 + (octave - whole), whole);
    b->kind = pick < 5 ? BLOB_SPHERE : pick < 8 ? BLOB_ELLIPSOID : BLOB_TORUS;
    b->bands = 3 + whole;
    while (b->bands >= 3 && blob_triangles(b) > budget)
        b->bands--;
    return b->bands >= 3;
}

/* Bands of the landmark spheres: together about 3% of n, none below 3. */
static int landmark_bands(uint64_t n)
{
    int bands = (int)sqrt((double)n / 800);
    return bands > MAX_SEGMENTS / 2 ? MAX_SEGMENTS / 2 : bands;
}

static void make_clusters(cluster clusters[CLUSTERS])
{
    rng g = {SPHERES_CLUSTER_SEED};
    double weights[CLUSTERS], total = 0.0, below = 0.0;
    for (int k = 0; k < CLUSTERS; k++) {
        clusters[k].x = rng_range(&g, -70, 70);
        clusters[k].z = rng_range(&g, -70, 70);
        clusters[k].spread = rng_octaves(&g, 3.0, 3.0);
        weights[k] = rng_range(&g, 0.5, 1.5);
        total += weights[k];
    }
    for (int k = 0; k < CLUSTERS; k++) {
        clusters[k].weight_below = below / total;
        below += weights[k];
    }
}

/* Positions, orients and emits blob `b`: one in ten anywhere on the
 * ground, the rest around a weighted random cluster. */
static void place_blob(mesh *m, const blob *b, rng *place, const cluster clusters[CLUSTERS])
{
    double where[3], basis[3][3], u = rng_unit(place);
    if (u < 0.1) {
        where[0] = rng_range(place, -HALF_WIDTH, HALF_WIDTH);
        where[1] = b->radius * rng_range(place, 1.0, 3.0);
        where[2] = rng_range(place, -HALF_WIDTH, HALF_WIDTH);
    } else {
        int k = CLUSTERS - 1;
        double pick = (u - 0.1) / 0.9;
        while (clusters[k].weight_below > pick)
            k--;
        const cluster *c = &clusters[k];
        where[0] = c->x + c->spread * rng_bell(place);
        where[1] = b->radius + c->spread * fabs(rng_bell(place));
        where[2] = c->z + c->spread * rng_bell(place);
    }
    random_basis(place, basis);
    profile p;
    double r = b->radius, squash_y = 1.0, squash_z = 1.0;
    if (b->kind == BLOB_TORUS) {
        torus_profile(&p, rng_range(place, 0.15, 0.45), b->bands);
    } else {
        sphere_profile(&p, b->bands);
        if (b->kind == BLOB_ELLIPSOID) {
            squash_y = rng_range(place, 0.35, 1.0);
            squash_z = rng_range(place, 0.35, 1.0);
        }
    }
    frame f = frame_oriented(where, basis, r, r * squash_y, r * squash_z);
    emit_lathe(m, &p, 2 * b->bands, 1.0, &f);
}

/* Two passes over the same random sequence of blob sizes: the first
 * counts what fits in n minus 5% for the ground, so that the mesh is
 * allocated once at its exact size; the second emits. */
static void build_spheres(mesh *m, uint64_t n)
{
    int big = landmark_bands(n);
    blob landmark = {BLOB_SPHERE, big, 0.0}, b;
    uint64_t landmarks = big >= 3 ? LANDMARKS : 0;
    uint64_t budget = n - n / 20;
    uint64_t used = landmarks * blob_triangles(&landmark);
    uint64_t vertices = landmarks * blob_vertices(&landmark);
    rng sizes = {SPHERES_SIZE_SEED};
    while (next_blob(&sizes, budget - used, &b)) {
        used += blob_triangles(&b);
        vertices += blob_vertices(&b);
    }
    uint64_t ground = n - used, columns = square_grid_columns(ground);
    if (!mesh_reserve(m, vertices + grid_vertex_count(ground, columns), n))
        return;

    cluster clusters[CLUSTERS];
    make_clusters(clusters);
    rng place = {SPHERES_PLACE_SEED};
    for (uint64_t k = 0; k < landmarks; k++) {
        const cluster *c = &clusters[k];
        double radius = rng_range(&place, 8.0, 16.0);
        emit_sphere(m, c->x, radius, c->z, radius, big);
    }
    sizes.state = SPHERES_SIZE_SEED;
    used = landmarks * blob_triangles(&landmark);
    while (next_blob(&sizes, budget - used, &b)) {
        used += blob_triangles(&b);
        place_blob(m, &b, &place, clusters);
    }
    double cell = 2 * HALF_WIDTH / (double)columns;
    const frame floor = {{-HALF_WIDTH, 0, -HALF_WIDTH}, {{cell, 0, 0}, {0, 1, 0}, {0, 0, cell}}};
    emit_grid(m, ground, columns, &floor);
}

/* ------------------------------------------------------------------------
 * flat and stacked
 * ---------------------------------------------------------------------- */

static void build_flat(mesh *m, uint64_t n)
{
    const frame plane = {{0, 0, 0}, {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}};
    emit_grid(m, n, square_grid_columns(n), &plane);
}

static void build_stacked(mesh *m, uint64_t n)
{
    static const double corners[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    if (!mesh_reserve(m, 3, n))
        return;
    for (int k = 0; k < 3; k++)
        mesh_vertex(m, corners[k]);
    for (uint64_t t = 0; t < n; t++)
        mesh_triangle(m, 0, 1, 2);
}

/* ------------------------------------------------------------------------
 * Registry
 * ---------------------------------------------------------------------- */

enum { GEN_ATRIUM, GEN_SPHERES, GEN_FLAT, GEN_STACKED, GEN_HUGE, GEN_WIDE, GEN_TILTED, GEN_COINCIDENT, GEN_COUNT };

typedef struct generator {
    void (*build)(mesh *m, uint64_t n_triangles);
    const char *help;
    uint64_t default_size, min_size, max_size;  /* all 0: fixed size */
} generator;

static const char *const GENERATOR_NAMES[GEN_COUNT + 1] = {
    [GEN_ATRIUM] = "atrium",
    [GEN_SPHERES] = "spheres",
    [GEN_FLAT] = "flat",
    [GEN_STACKED] = "stacked",
    [GEN_HUGE] = "huge",
    [GEN_WIDE] = "wide",
    [GEN_TILTED] = "tilted",
    [GEN_COINCIDENT] = "coincident",
    [GEN_COUNT] = NULL,
};

#define STRINGIFY(x) #x
#define STRINGIFY_VALUE(x) STRINGIFY(x)

static const generator GENERATORS[GEN_COUNT] = {
    [GEN_ATRIUM] = {build_atrium,
                    "arcaded courtyard with fountain, galleries and clutter, "
                    "40 x 15 x 20 units, " STRINGIFY_VALUE(ATRIUM_TRIANGLES)
                    " triangles of very uneven density (size ignored)",
                    0, 0, 0},
    [GEN_SPHERES] = {build_spheres,
                     "clustered spheres, ellipsoids and tori of log-uniform sizes "
                     "on a ground grid: exactly n triangles "
                     "(default 1000000, 100.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                     1000000, 100, LIMIT_TRIANGLES},
    [GEN_FLAT] = {build_flat,
                  "grid of exactly n triangles in the plane z = 0 "
                  "(default 10000, 1.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                  10000, 1, LIMIT_TRIANGLES},
    [GEN_STACKED] = {build_stacked,
                     "n copies of one triangle sharing 3 vertices "
                     "(default 1000, 1.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                     1000, 1, LIMIT_TRIANGLES},
    [GEN_HUGE] = {build_huge,
                  "coordinates up to 1e30: a ground quad and boxes of sizes 1e27..3e29, "
                  "2 + 12 floor((n - 2) / 12) triangles (default 1202, 14.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                  1202, 14, LIMIT_TRIANGLES},
    [GEN_WIDE] = {build_wide,
                  "1e-6 next to 1e6: a ground quad and boxes whose sizes and distances span 1e-6..1e6, "
                  "2 + 12 floor((n - 2) / 12) triangles (default 1202, 14.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                  1202, 14, LIMIT_TRIANGLES},
    [GEN_TILTED] = {build_tilted,
                    "grid of exactly n triangles in a plane tilted against every axis "
                    "(default 10000, 1.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                    10000, 1, LIMIT_TRIANGLES},
    [GEN_COINCIDENT] = {build_coincident,
                        "n copies of one triangle (own vertices each) among 248 triangles of ground "
                        "and boxes (default 10000, 1.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
                        10000, 1, LIMIT_TRIANGLES},
};

static int find_generator(const char *name)
{
    for (int k = 0; name && k < GEN_COUNT; k++)
        if (strcmp(name, GENERATOR_NAMES[k]) == 0)
            return k;
    return -1;
}

const char *const *scene_generator_names(void)
{
    return GENERATOR_NAMES;
}

const char *scene_generator_help(const char *name)
{
    int k = find_generator(name);
    return k < 0 ? NULL : GENERATORS[k].help;
}

/* Writes "unknown scene 'x'; valid: a, b, c" into err. */
static void report_unknown(const char *name, char *err, size_t errlen)
{
    char valid[128] = "";
    for (int k = 0; k < GEN_COUNT; k++) {
        size_t used = strlen(valid);
        snprintf(valid + used, sizeof valid - used, "%s%s", k ? ", " : "", GENERATOR_NAMES[k]);
    }
    snprintf(err, errlen, "unknown scene '%s'; valid: %s", name ? name : "(none)", valid);
}

/* Gives the buffers back at their used size (keeping them when the
 * smaller allocation fails) and hands them to the scene. */
static void move_into_scene(mesh *m, scene *out)
{
    float *positions = realloc(m->positions, m->n_vertices * 3 * sizeof(float));
    uint32_t *triangles = realloc(m->triangles, m->n_triangles * 3 * sizeof(uint32_t));
    out->positions = positions ? positions : m->positions;
    out->triangles = triangles ? triangles : m->triangles;
    out->n_vertices = (uint32_t)m->n_vertices;
    out->n_triangles = (uint32_t)m->n_triangles;
    scene_update_bounds(out);
}

int scene_generate(const char *name, uint64_t n_triangles, scene *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int k = find_generator(name);
    if (k < 0) {
        report_unknown(name, err, errlen);
        return -1;
    }
    const generator *g = &GENERATORS[k];
    uint64_t n = n_triangles ? n_triangles : g->default_size;
    if (g->max_size && (n < g->min_size || n > g->max_size)) {
        snprintf(err, errlen,
                 "scene '%s': %llu triangles is out of range; valid: %llu..%llu (0 = default %llu)",
                 name, (unsigned long long)n, (unsigned long long)g->min_size,
                 (unsigned long long)g->max_size, (unsigned long long)g->default_size);
        return -1;
    }
    mesh m = {0};
    g->build(&m, n);
    if (m.out_of_memory) {
        free(m.positions);
        free(m.triangles);
        snprintf(err, errlen, "scene '%s': out of memory", name);
        return -1;
    }
    move_into_scene(&m, out);
    return 0;
}
