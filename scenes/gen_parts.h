/* gen_parts.h - what the procedural generators share (scenes/gen*.c):
 * deterministic random numbers and a growing indexed mesh.  Internal to
 * the scenes library; scene.h is the public interface. */
#ifndef KDA_GEN_PARTS_H
#define KDA_GEN_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIMIT_TRIANGLES 50000000 /* the most any scalable scene may hold */

typedef struct rng {
    uint64_t state;
} rng;

uint64_t rng_next(rng *g);                       /* splitmix64 */
double rng_unit(rng *g);                         /* uniform in [0, 1), 53 random bits */
double rng_range(rng *g, double lo, double hi);  /* uniform in [lo, hi) */
/* lo * 2^u, u uniform in [0, octaves): piecewise log-uniform, without libm. */
double rng_octaves(rng *g, double lo, double octaves);

typedef struct mesh {
    float *positions;
    uint32_t *triangles;
    size_t n_vertices, n_triangles;
    size_t vertex_capacity, triangle_capacity;
    bool out_of_memory;
} mesh;

/* Makes room for `vertices` more vertices and `triangles` more triangles;
 * false (and the mesh marked failed) when memory runs out. */
bool mesh_reserve(mesh *m, size_t vertices, size_t triangles);
/* Appends a vertex (rounded to float) into reserved room; returns its index. */
uint32_t mesh_vertex(mesh *m, const double p[3]);
void mesh_triangle(mesh *m, uint32_t a, uint32_t b, uint32_t c);

/* The scenes of gen_atrium.c, gen_spheres.c and gen_extreme.c. */
#define ATRIUM_TRIANGLES 354960 /* the atrium's exact count, also in the help line */
void build_atrium(mesh *m, uint64_t n_triangles);
void build_spheres(mesh *m, uint64_t n);
void build_huge(mesh *m, uint64_t n);
void build_wide(mesh *m, uint64_t n);
void build_tilted(mesh *m, uint64_t n);
void build_coincident(mesh *m, uint64_t n);

#endif
