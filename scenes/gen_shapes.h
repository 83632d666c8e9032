/* gen_shapes.h - what the procedural scenes build from (gen_shapes.c):
 * deterministic angles and bells, placement frames, and primitives emitted
 * into a mesh.  Internal to the scenes library. */
#ifndef KDA_GEN_SHAPES_H
#define KDA_GEN_SHAPES_H

#include "gen_parts.h"

#define MAX_SEGMENTS 1024 /* around a lathe's axis */
#define MAX_PROFILE 1024 /* points of a lathe's profile */

typedef struct frame {
    double origin[3];
    double axis[3][3];
} frame;

/* A lathe profile: points (r, y), r >= 0 the distance from the axis, in
 * order.  An open profile whose end points lie on the axis (r == 0) gets a
 * single pole vertex there; a closed one (a torus) joins last to first. */
typedef struct profile {
    double r[MAX_PROFILE], y[MAX_PROFILE];
    int n;
    bool closed;
} profile;

/* The world's own frame. */
extern const frame WORLD;

/* Roughly bell-shaped in [-1.5, 1.5]: a sum of three uniforms.  (Draws
 * are sequenced one statement each throughout: the order in which the
 * operands or arguments of one expression are evaluated is unspecified in C,
 * and compilers do differ.) */
double rng_bell(rng *g);

/* cos and sin of `turns` full turns.  The argument is reduced exactly to
 * the nearest quarter turn, leaving |x| <= pi/4, where Taylor series to
 * x^15 and x^16 are accurate to double precision. */
void turn_cos_sin(double turns, double *c, double *s);

void frame_point(const frame *f, double x, double y, double z, double out[3]);

/* An axis-aligned frame at (x, y, z) scaled by (sx, sy, sz). */
frame frame_at(double x, double y, double z, double sx, double sy, double sz);

/* `f` with its origin moved to its local point (x, y, z). */
frame frame_moved(const frame *f, double x, double y, double z);

/* `f` turned by `turns` about its y axis (from x towards z). */
frame frame_turned(const frame *f, double turns);

/* A world frame at `origin`, oriented by the unit `basis`, scaled per axis. */
frame frame_oriented(const double origin[3], const double basis[3][3], double sx, double sy, double sz);

void cross(const double u[3], const double v[3], double out[3]);

void normalize(double v[3]);

/* A random right-handed orthonormal basis: a random axis 1 (rejection
 * sampled in the unit ball) and a random spin of axes 0 and 2 around it. */
void random_basis(rng *g, double basis[3][3]);

/* A unit cube [-1, 1]^3 in `f`: 8 vertices, 12 triangles. */
void emit_box(mesh *m, const frame *f);

/* The box spanning local [x0, x1] x [y0, y1] x [z0, z1] of `f`. */
void emit_block(mesh *m, const frame *f, double x0, double y0, double z0, double x1, double y1, double z1);

/* The number of vertices in row r of a grid of `n` triangles (see
 * emit_grid): full rows use columns + 1; a partial row of `rest` triangles
 * uses (rest + 1) / 2 + 1 below and rest / 2 + 1 above. */
uint64_t grid_row_width(uint64_t n, uint64_t columns, uint64_t r);

uint64_t grid_rows(uint64_t n, uint64_t columns);

uint64_t grid_vertex_count(uint64_t n, uint64_t columns);

/* Exactly `n` triangles on unit cells of the local x-z plane of `f`, two
 * per cell, `columns` cells per row; the last row may stop short, even
 * half way through a cell.  Only the vertices used are emitted. */
void emit_grid(mesh *m, uint64_t n, uint64_t columns, const frame *f);

/* The number of grid columns that makes `n` triangles roughly square. */
uint64_t square_grid_columns(uint64_t n);

/* Appends (r, y) unless it (nearly) repeats the previous point: rings
 * that close would collapse into zero-area triangles once in float. */
void profile_point(profile *p, double r, double y);

/* Appends `steps` + 1 points of the arc around (cr, cy) of `radius` from
 * `turn0` to `turn1` (turn 0 points away from the axis, 1/4 up). */
void profile_arc(profile *p, double cr, double cy, double radius, double turn0, double turn1, int steps);

/* Unit sphere from pole to pole in `bands` latitude bands. */
void sphere_profile(profile *p, int bands);

/* Torus cross-section: circle of `sides` points and radius `tube` around
 * (1, 0); scaled by the frame, 1 is the major radius. */
void torus_profile(profile *p, double tube, int sides);

/* Revolves `p` about the local y axis of `f` by `sweep` turns (1 = closed
 * surface) in `segments` steps, starting from local +x towards local +z. */
void emit_lathe(mesh *m, const profile *p, int segments, double sweep, const frame *f);

/* A sphere of `radius` at (x, y, z), `bands` latitude bands. */
void emit_sphere(mesh *m, double x, double y, double z, double radius, int bands);

/* A torus of major radius 1 in `f` (scale the frame for other sizes). */
void emit_torus(mesh *m, const frame *f, double tube, int sides, int segments);

#endif
