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
 * Files: this one (the registry, flat and stacked), gen_atrium.c,
 * gen_spheres.c, gen_extreme.c; gen_shapes.c (frames and primitives) and
 * gen_parts.c (random numbers, the mesh) beneath them.
 *
 * Determinism: same name and size give the same bytes on every machine.
 * Randomness is splitmix64 with fixed seeds; angles go through
 * turn_cos_sin (a Taylor series in double, no libm trigonometry); sizes
 * scale by exact powers of two; everything is IEEE double arithmetic
 * rounded once to float.  The build passes -ffp-contract=off, so no fused
 * multiply-add changes a rounding on machines that have one.
 */
#include "scene.h"
#include "gen_shapes.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



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
                    " triangles of very uneven density (fixed size)",
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
                        "n + 248 triangles: n copies of one triangle (own vertices each) among 248 "
                        "of ground and boxes (default 10000, 1.." STRINGIFY_VALUE(LIMIT_TRIANGLES) ")",
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

int scene_generator_sizes(const char *name, uint64_t *default_size, uint64_t *min_size, uint64_t *max_size)
{
    int k = find_generator(name);
    if (k < 0 || !GENERATORS[k].max_size)
        return -1;
    *default_size = GENERATORS[k].default_size;
    *min_size = GENERATORS[k].min_size;
    *max_size = GENERATORS[k].max_size;
    return 0;
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
