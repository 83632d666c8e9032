/* gen_atrium.c - the default scene, "atrium" (gen.c describes it): an arcaded
 * courtyard of turned columns, arches, galleries, a fountain and clutter. */
#include "gen_shapes.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * atrium
 * ---------------------------------------------------------------------- */

#define ATRIUM_SEED 0x41747269756D2031u

static const double ARCADE_BAY = 2.0; /* column spacing */
static const double GROUND_COLUMN = 4.0; /* column heights, storey 1 and 2 */
static const double UPPER_COLUMN = 3.2;
static const double UPPER_FLOOR = 6.0; /* top of the gallery floor */
static const double GALLERY_ROOF = 11.2; /* top of the upper gallery roof */
static const double WALL_HEIGHT = 15.0;

typedef struct window_row {
    double bottom, top;
} window_row;

/* A wall along local x of `wall` (y up, z through its thickness) in
 * [0, length] x [0, height] x [0, thickness], pierced by rows of `bays`
 * windows each, every window with a sill: a few big boxes. */
static void add_windowed_wall(mesh *m, const frame *wall, double length, double height, double thickness, int bays,
                              double window_width, const window_row *rows, int n_rows)
{
    double below = 0.0, bay = length / bays, half = window_width / 2;
    for (int r = 0; r < n_rows; r++) {
        double y0 = rows[r].bottom, y1 = rows[r].top, left = 0.0;
        emit_block(m, wall, 0, below, 0, length, y0, thickness);
        for (int b = 0; b < bays; b++) {
            double centre = (b + 0.5) * bay;
            emit_block(m, wall, left, y0, 0, centre - half, y1, thickness);
            emit_block(m, wall, centre - half - 0.1, y0 - 0.12, -0.12, centre + half + 0.1, y0, thickness + 0.12);
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
        {0.78, -0.3}, {1.0, -0.3}, {1.0, -0.2}, {1.08, -0.2}, {1.08, 0.2}, {1.0, 0.2}, {1.0, 0.3}, {0.78, 0.3},
    };
    p->n = 0;
    p->closed = true;
    for (size_t k = 0; k < sizeof points / sizeof points[0]; k++) profile_point(p, points[k][0], points[k][1]);
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
static void add_arcade(mesh *m, const frame *line, int bays, bool skip_first_column, double column_height,
                       bool balustrade)
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
        if (balustrade) add_balustrade(m, line, b * ARCADE_BAY, (b + 1) * ARCADE_BAY);
    }
    emit_block(m, line, -0.45, column_height + 1.0, -0.3, bays * ARCADE_BAY + 0.45, column_height + 1.6, 0.3);
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
    for (int k = 0; k <= 20; k++) profile_point(&p, 0.34 - 0.2 * k / 20, 3.1 + 1.2 * k / 20);
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
        profile_point(p, (1 - t) * foot + t * neck + (belly - (foot + neck) / 2) * s, 0.05 + t * height * 0.8);
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
            frame at = frame_at(-18 + 3 * k + rng_range(g, -0.4, 0.4), storey ? UPPER_FLOOR : 0.0, -8.9, 1, 1, 1);
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
        emit_block(m, &table, k % 2 ? 0.5 : -0.56, 0.0, k < 2 ? 0.3 : -0.36, k % 2 ? 0.56 : -0.5, 0.78,
                   k < 2 ? 0.36 : -0.3);

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

void build_atrium(mesh *m, uint64_t n_triangles)
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
