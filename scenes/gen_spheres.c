/* gen_spheres.c - the scalable "spheres" scene (gen.c describes it): landmark
 * spheres, clustered blobs of log-uniform sizes, and a ground grid that
 * takes exactly the rest of the triangle budget. */
#include "gen_shapes.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * spheres
 * ---------------------------------------------------------------------- */

#define SPHERES_SIZE_SEED 0x5350484552455331u
#define SPHERES_PLACE_SEED 0x5350484552455332u
#define SPHERES_CLUSTER_SEED 0x5350484552455333u

enum { LANDMARKS = 6, CLUSTERS = 7 };
static const double HALF_WIDTH = 100.0; /* the ground spans +-HALF_WIDTH in x and z */
static const double SMALLEST_RADIUS = 0.02;
static const double RADIUS_OCTAVES = 9.0;

typedef enum blob_kind { BLOB_SPHERE, BLOB_ELLIPSOID, BLOB_TORUS } blob_kind;

typedef struct blob {
    blob_kind kind;
    int bands; /* latitude bands, or torus sides; 2 * bands segments */
    double radius;
} blob;

typedef struct cluster {
    double x, z, spread, weight_below; /* cumulative weight, in [0, 1) */
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
    while (b->bands >= 3 && blob_triangles(b) > budget) b->bands--;
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
        while (clusters[k].weight_below > pick) k--;
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
void build_spheres(mesh *m, uint64_t n)
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
    if (!mesh_reserve(m, vertices + grid_vertex_count(ground, columns), n)) return;

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
