/* shade.h - camera rays and pixel shading, shared verbatim by the CPU and
 * GPU ray casters so that both produce the same image bits. */
#ifndef KDA_SHADE_H
#define KDA_SHADE_H

#include "render.h"
#include "traverse.h"

/* Precomputed on the host from a camera (camera_make_basis). */
typedef struct camera_basis {
    float eye[3];
    float forward[3], right[3], up[3]; /* right and up scaled to the image plane at distance 1 */
    float light[3];                    /* point light for shadow rays */
    uint32_t width, height;
} camera_basis;

#ifdef __cplusplus
extern "C" {
#endif
/* `lo`/`hi`: the scene bounds, which place the light. */
void camera_make_basis(const camera *c, const float lo[3], const float hi[3], camera_basis *b);
#ifdef __cplusplus
}
#endif

static inline KD_HD float vec_dot(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline KD_HD void vec_normalize(float v[3])
{
    float len = sqrtf(vec_dot(v, v));
    if (len > 0.0f) {
        v[0] /= len;
        v[1] /= len;
        v[2] /= len;
    }
}

static inline KD_HD ray camera_ray(const camera_basis *b, uint32_t x, uint32_t y)
{
    float u = 2.0f * ((float)x + 0.5f) / (float)b->width - 1.0f;
    float v = 1.0f - 2.0f * ((float)y + 0.5f) / (float)b->height;
    ray r;
    for (int a = 0; a < 3; a++) {
        r.o[a] = b->eye[a];
        r.d[a] = b->forward[a] + u * b->right[a] + v * b->up[a];
    }
    vec_normalize(r.d);
    return r;
}

/* Pixel index of the i-th of n sampled rays of a w x h image: every pixel
 * in order when n == 0 or n >= w*h, else a fixed scattered sample
 * (splitmix64 of i; repeats are harmless). */
static inline KD_HD uint64_t validation_pixel(uint64_t i, uint64_t n, uint32_t width, uint32_t height)
{
    uint64_t pixels = (uint64_t)width * height;
    if (n == 0 || n >= pixels) return i % pixels;
    uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % pixels;
}

/* Where the tree lives, for one pixel's rays. */
typedef struct trace_scene {
    const kdtree_node *nodes;
    const uint32_t *refs;
    const float *positions;
    const uint32_t *triangles;
    float lo[3], hi[3];
} trace_scene;

static inline KD_HD ray_hit trace_scene_ray(const trace_scene *ts, const ray *r)
{
    return kdtree_trace(ts->nodes, ts->refs, ts->lo, ts->hi, ts->positions, ts->triangles, r);
}

static inline KD_HD uint8_t shade_quantize(float x)
{
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    return (uint8_t)(x * 255.0f + 0.5f);
}

/* Shades pixel (x, y): writes rgb[3] and returns the count the heat-map
 * modes show (inner nodes visited or triangles tested by the camera ray). */
static inline KD_HD uint32_t shade_pixel(const trace_scene *ts, const camera_basis *b, shade_mode mode,
                                         int shadows, uint32_t x, uint32_t y, uint8_t rgb[3])
{
    ray r = camera_ray(b, x, y);
    ray_hit h = trace_scene_ray(ts, &r);
    uint32_t count = mode == SHADE_STEPS ? h.steps : h.tests;
    if (h.tri == RAY_NO_HIT) { /* background: a dim vertical gradient */
        float g = 0.10f + 0.12f * (float)y / (float)b->height;
        rgb[0] = shade_quantize(g);
        rgb[1] = shade_quantize(g * 1.1f);
        rgb[2] = shade_quantize(g * 1.5f);
        return count;
    }
    const float *v0, *v1, *v2;
    triangle_vertices(ts->positions, ts->triangles, h.tri, &v0, &v1, &v2);
    float e1[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
    float e2[3] = {v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]};
    float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    vec_normalize(n);
    float cosine = fabsf(vec_dot(n, r.d));
    float light = 0.15f + 0.85f * cosine;
    if (shadows) {
        ray s;
        for (int a = 0; a < 3; a++) s.o[a] = r.o[a] + h.t * r.d[a];
        float to_light[3] = {b->light[0] - s.o[0], b->light[1] - s.o[1], b->light[2] - s.o[2]};
        float dist = sqrtf(vec_dot(to_light, to_light));
        for (int a = 0; a < 3; a++) s.d[a] = to_light[a] / dist;
        /* Start a little off the surface, on the side the light is on. */
        float side = vec_dot(n, s.d) >= 0.0f ? 1.0f : -1.0f;
        float eps = 1e-4f * (fabsf(s.o[0]) + fabsf(s.o[1]) + fabsf(s.o[2]) + 1.0f);
        for (int a = 0; a < 3; a++) s.o[a] += side * eps * n[a];
        ray_hit sh = trace_scene_ray(ts, &s);
        if (sh.tri != RAY_NO_HIT && sh.t < dist) light = 0.15f + 0.35f * cosine;
    }
    rgb[0] = shade_quantize(0.92f * light);
    rgb[1] = shade_quantize(0.90f * light);
    rgb[2] = shade_quantize(0.85f * light);
    return count;
}

#endif
