/* gen_parts.c - random numbers and the growing mesh of the generators. */
#include "gen_parts.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* splitmix64 */
uint64_t rng_next(rng *g)
{
    uint64_t z = (g->state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
double rng_unit(rng *g)
{
    return (double)(rng_next(g) >> 11) * 0x1p-53;
}

double rng_range(rng *g, double lo, double hi)
{
    return lo + (hi - lo) * rng_unit(g);
}

/* lo * 2^u for u uniform in [0, octaves), with 2^frac replaced by the exact
 * 1 + frac: piecewise log-uniform, free of libm's exp. */
double rng_octaves(rng *g, double lo, double octaves)
{
    double u = rng_range(g, 0.0, octaves);
    int whole = (int)u;
    return lo * ldexp(1.0 + (u - whole), whole);
}

/* ------------------------------------------------------------------------
 * Growing indexed mesh
 * ---------------------------------------------------------------------- */

/* Grows `*items`, 3 values of `value_size` bytes per item, to hold
 * `needed` items: at least doubling, or exactly `needed` when that is more
 * (so that one reservation up front allocates the exact size). */
static bool grow_array(void **items, size_t *capacity, size_t needed, size_t value_size)
{
    if (needed <= *capacity)
        return true;
    size_t wanted = *capacity * 2 > needed ? *capacity * 2 : needed;
    void *grown = realloc(*items, wanted * 3 * value_size);
    if (!grown)
        return false;
    *items = grown;
    *capacity = wanted;
    return true;
}

/* Makes room for `vertices` more vertices and `triangles` more triangles;
 * false (and the mesh marked failed) when memory runs out. */
bool mesh_reserve(mesh *m, size_t vertices, size_t triangles)
{
    if (m->out_of_memory)
        return false;
    if (!grow_array((void **)&m->positions, &m->vertex_capacity,
                    m->n_vertices + vertices, sizeof(float)) ||
        !grow_array((void **)&m->triangles, &m->triangle_capacity,
                    m->n_triangles + triangles, sizeof(uint32_t)))
        m->out_of_memory = true;
    return !m->out_of_memory;
}

uint32_t mesh_vertex(mesh *m, const double p[3])
{
    assert(m->n_vertices < m->vertex_capacity);
    float *out = m->positions + 3 * m->n_vertices;
    for (int a = 0; a < 3; a++)
        out[a] = (float)p[a];
    return (uint32_t)m->n_vertices++;
}

void mesh_triangle(mesh *m, uint32_t a, uint32_t b, uint32_t c)
{
    assert(m->n_triangles < m->triangle_capacity);
    uint32_t *out = m->triangles + 3 * m->n_triangles++;
    out[0] = a;
    out[1] = b;
    out[2] = c;
}
