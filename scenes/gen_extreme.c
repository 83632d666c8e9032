/* gen_extreme.c - procedural scenes at the numeric extremes, for the tests
 * of scaling, degenerate boxes and flat scenes (a scene loaded from a file
 * may look like any of them).
 *
 * huge        Coordinates up to 1e30: a ground quad of half-width 1e30 and
 *             boxes of log-uniform sizes 1e27..3e29 on it.  Squared extents
 *             overflow float: what scene_normalize is for.
 * wide        1e-6 next to 1e6 in one scene: a ground quad of half-width
 *             1e6 and boxes whose sizes and distances from the origin are
 *             both log-uniform over 1e-6..1e6, so the tiny ones sit near
 *             the origin and the big ones far out (and tiny ones far out
 *             round to degenerate boxes, as they would in a file).
 * tilted      A grid of unit cells in a plane tilted against every axis
 *             (normal 0.48, -0.64, 0.6): planar, yet no axis is flat.
 * coincident  n copies of one triangle, each with its own three vertices,
 *             above a ground grid between four boxes: the copies share one
 *             leaf, the surroundings make a real tree around it.
 *
 * Determinism as in gen.c: fixed seeds, double arithmetic rounded once to
 * float, no libm transcendental functions.
 */
#include "gen_parts.h"

/* A quad of corners p0, p1, p2, p3 (in order around it): two triangles. */
static void emit_quad(mesh *m, const double p[4][3])
{
    if (!mesh_reserve(m, 4, 2)) return;
    uint32_t v[4];
    for (int k = 0; k < 4; k++) v[k] = mesh_vertex(m, p[k]);
    mesh_triangle(m, v[0], v[1], v[2]);
    mesh_triangle(m, v[0], v[2], v[3]);
}

/* An axis-aligned box from lo to hi: 8 vertices, 12 triangles. */
static void emit_box(mesh *m, const double lo[3], const double hi[3])
{
    static const uint32_t faces[6][4] = {{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1},
                                         {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
    if (!mesh_reserve(m, 8, 12)) return;
    uint32_t first = 0;
    for (int k = 0; k < 8; k++) { /* corner k: bit 0 picks x, bit 1 y, bit 2 z */
        double p[3] = {(k & 1) ? hi[0] : lo[0], (k & 2) ? hi[1] : lo[1], (k & 4) ? hi[2] : lo[2]};
        uint32_t v = mesh_vertex(m, p);
        if (k == 0) first = v;
    }
    for (int f = 0; f < 6; f++) {
        const uint32_t *q = faces[f];
        mesh_triangle(m, first + q[0], first + q[1], first + q[2]);
        mesh_triangle(m, first + q[0], first + q[2], first + q[3]);
    }
}

static void emit_ground(mesh *m, double half_width)
{
    const double h = half_width;
    const double p[4][3] = {{-h, 0, -h}, {-h, 0, h}, {h, 0, h}, {h, 0, -h}};
    emit_quad(m, p);
}

/* A ground quad and (n - 2) / 12 boxes standing on it; the box sizes are
 * log-uniform from `size` over `octaves` octaves, and their centres lie at
 * distances log-uniform from `reach` over `reach_octaves` octaves, in x and
 * z each (either sign). */
static void boxes_on_ground(mesh *m, uint64_t n, uint64_t seed, double ground, double size, double octaves,
                            double reach, double reach_octaves)
{
    rng g = {seed};
    emit_ground(m, ground);
    for (uint64_t b = 0; b < (n - 2) / 12; b++) {
        double s = rng_octaves(&g, size, octaves);
        double c[2];
        for (int k = 0; k < 2; k++) {
            double d = rng_octaves(&g, reach, reach_octaves);
            double sign = rng_unit(&g) < 0.5 ? -1.0 : 1.0;
            c[k] = sign * d;
        }
        double lo[3] = {c[0] - 0.5 * s, 0.0, c[1] - 0.5 * s}, hi[3] = {c[0] + 0.5 * s, s, c[1] + 0.5 * s};
        emit_box(m, lo, hi);
    }
}

void build_huge(mesh *m, uint64_t n)
{
    /* Sizes 1e27 * 2^[0, 8); centres up to 0.9e30 away (1e27 * 2^[0, 9.8)). */
    boxes_on_ground(m, n, 0x4855474501ull, 1e30, 1e27, 8.0, 1e27, 9.8);
}

void build_wide(mesh *m, uint64_t n)
{
    /* Sizes and distances 1e-6 * 2^[0, 40): 1e-6 .. 1.1e6. */
    boxes_on_ground(m, n, 0x5749444502ull, 1e6, 1e-6, 40.0, 1e-6, 39.0);
}

void build_tilted(mesh *m, uint64_t n)
{
    static const double e1[3] = {0.8, 0.6, 0.0}, e2[3] = {-0.36, 0.48, 0.8}; /* orthonormal */
    uint64_t columns = 1;
    while (2 * columns * columns < n) columns++;
    if (!mesh_reserve(m, 0, n)) return;
    for (uint64_t t = 0; t < n; t += 2) {
        uint64_t cell = t / 2;
        double u = (double)(cell % columns), v = (double)(cell / columns);
        double corner[4][2] = {{u, v}, {u + 1, v}, {u + 1, v + 1}, {u, v + 1}};
        double p[4][3];
        for (int k = 0; k < 4; k++)
            for (int a = 0; a < 3; a++) p[k][a] = corner[k][0] * e1[a] + corner[k][1] * e2[a];
        if (t + 1 < n) {
            emit_quad(m, p);
        } else if (mesh_reserve(m, 3, 1)) { /* odd n: half a cell */
            uint32_t v0 = mesh_vertex(m, p[0]), v1 = mesh_vertex(m, p[1]), v2 = mesh_vertex(m, p[2]);
            mesh_triangle(m, v0, v1, v2);
        }
    }
}

void build_coincident(mesh *m, uint64_t n)
{
    /* Surroundings: a 10 x 10 ground grid over [-5, 5]^2 and four boxes. */
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) {
            double x = i - 5.0, z = j - 5.0;
            const double p[4][3] = {{x, 0, z}, {x, 0, z + 1}, {x + 1, 0, z + 1}, {x + 1, 0, z}};
            emit_quad(m, p);
        }
    static const double box_at[4][2] = {{-3.5, -3.5}, {2.5, -3.5}, {-3.5, 2.5}, {2.5, 2.5}};
    for (int b = 0; b < 4; b++) {
        double lo[3] = {box_at[b][0], 0.0, box_at[b][1]}, hi[3] = {box_at[b][0] + 1.0, 2.0, box_at[b][1] + 1.0};
        emit_box(m, lo, hi);
    }
    static const double tri[3][3] = {{-0.5, 1.0, 0.0}, {0.5, 1.0, 0.0}, {0.0, 2.0, 0.25}};
    if (!mesh_reserve(m, 3 * n, n)) return;
    for (uint64_t t = 0; t < n; t++) {
        uint32_t v0 = mesh_vertex(m, tri[0]), v1 = mesh_vertex(m, tri[1]), v2 = mesh_vertex(m, tri[2]);
        mesh_triangle(m, v0, v1, v2);
    }
}
