/* test_render.h - what the source files of test_render share: seeded
 * random numbers (splitmix64), small vector algebra of their own, and the
 * scenes, trees and cameras they test with. */
#ifndef KDA_TEST_RENDER_H
#define KDA_TEST_RENDER_H

#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdtree.h"
#include "render.h"
#include "scene.h"
#include "shade.h"
#include "traverse.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_render_" file
#define PI_F 3.14159265f

/* ------------------------------------------------------------------------
 * Deterministic random numbers (splitmix64)
 * ------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t state;
} rng;

static inline uint64_t rng_next(rng *g)
{
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), a multiple of 2^-24. */
static inline float rng_unit(rng *g) { return (float)(rng_next(g) >> 40) * 0x1p-24f; }

static inline float rng_range(rng *g, float lo, float hi) { return lo + (hi - lo) * rng_unit(g); }

static inline uint32_t rng_below(rng *g, uint32_t n) { return (uint32_t)(rng_next(g) % n); }

/* A multiple of 2^-8 in [lo, hi): few enough bits that sums and
 * differences of such numbers stay exact in float. */
static inline float rng_dyadic(rng *g, int lo, int hi)
{
    return (float)lo + (float)rng_below(g, (uint32_t)(hi - lo) * 256u) / 256.0f;
}

/* Uniform on the unit sphere (z uniform, longitude uniform). */
static inline void rng_direction(rng *g, float d[3])
{
    float z = rng_range(g, -1.0f, 1.0f), phi = rng_range(g, 0.0f, 2.0f * PI_F);
    float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    d[0] = r * cosf(phi);
    d[1] = r * sinf(phi);
    d[2] = z;
}

static inline void rng_point_in_box(rng *g, const float lo[3], const float hi[3], float p[3])
{
    for (int a = 0; a < 3; a++) p[a] = rng_range(g, lo[a], hi[a]);
}

/* ------------------------------------------------------------------------
 * Vector helpers
 * ------------------------------------------------------------------------ */

static inline void normalize3(float v[3])
{
    float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++) v[a] /= len;
}

static inline float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void cross3(const float a[3], const float b[3], float c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static inline float box_diagonal(const float lo[3], const float hi[3])
{
    float d = 0.0f;
    for (int a = 0; a < 3; a++) d += (hi[a] - lo[a]) * (hi[a] - lo[a]);
    return sqrtf(d);
}

static inline void box_center(const float lo[3], const float hi[3], float c[3])
{
    for (int a = 0; a < 3; a++) c[a] = 0.5f * (lo[a] + hi[a]);
}

/* ------------------------------------------------------------------------
 * Scenes and trees
 * ------------------------------------------------------------------------ */

static inline scene generated_scene(const char *name, uint64_t n_triangles)
{
    scene s;
    char err[512];
    cr_assert_eq(scene_generate(name, n_triangles, &s, err, sizeof err), 0,
                 "built-in scene \"%s\" is required by this test: %s", name, err);
    return s;
}

/* Loads KDA_SHARED_SCENES/<name>.obj.gz; a missing file fails the test. */
static inline scene real_scene(const char *name)
{
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/%s.obj.gz", KDA_SHARED_SCENES, name);
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "real scene \"%s\" is required by this test: %s",
                 name, err);
    return s;
}

static inline kdtree build_tree(const scene *s)
{
    kdtree t;
    char err[512];
    cr_assert_eq(kdtree_build_cpu(s, &t, NULL, err, sizeof err), 0, "kdtree_build_cpu: %s", err);
    return t;
}

static inline ray_hit trace_tree(const kdtree *t, const scene *s, const ray *r)
{
    trace_scene ts = trace_scene_of(t, s);
    return kdtree_trace(&ts, r);
}

/* A camera that shows the whole scene from outside. */
static inline camera framed_camera(const scene *s, uint32_t width, uint32_t height)
{
    camera c = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, width, height};
    camera_frame(s->lo, s->hi, &c);
    return c;
}


#endif
