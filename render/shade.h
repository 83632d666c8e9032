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

/* How a pixel is shaded (render_options' part that the ray casters need). */
typedef struct shade_params {
    shade_mode mode;
    int shadows;      /* one shadow ray per hit toward the light */
    uint32_t ao_rays; /* SHADE_AO: occlusion rays per hit */
    float ao_radius;  /* SHADE_AO: how far they look */
} shade_params;

/* A camera ray's hit: the point, and the unit geometric normal turned
 * toward the ray's origin (the side the camera sees). */
typedef struct surface_point {
    float p[3], n[3];
} surface_point;

static inline KD_HD surface_point shade_surface(const trace_scene *ts, const ray *r, const ray_hit *h)
{
    surface_point sp;
    const float *v0, *v1, *v2;
    triangle_vertices(ts->positions, ts->triangles, h->tri, &v0, &v1, &v2);
    float e1[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
    float e2[3] = {v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]};
    sp.n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    sp.n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    sp.n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    vec_normalize(sp.n);
    float facing = vec_dot(sp.n, r->d) <= 0.0f ? 1.0f : -1.0f;
    for (int a = 0; a < 3; a++) {
        sp.n[a] *= facing;
        sp.p[a] = r->o[a] + h->t * r->d[a];
    }
    return sp;
}

/* A secondary ray from the surface along unit d, started a little off it
 * on d's side, so that it does not hit its own triangle. */
static inline KD_HD ray surface_ray(const surface_point *sp, const float d[3])
{
    ray s;
    float side = vec_dot(sp->n, d) >= 0.0f ? 1.0f : -1.0f;
    float eps = 1e-4f * (fabsf(sp->p[0]) + fabsf(sp->p[1]) + fabsf(sp->p[2]) + 1.0f);
    for (int a = 0; a < 3; a++) {
        s.o[a] = sp->p[a] + side * eps * sp->n[a];
        s.d[a] = d[a];
    }
    return s;
}

/* The shadow ray toward the light, and the light's distance in *dist. */
static inline KD_HD ray shadow_ray(const surface_point *sp, const float light[3], float *dist)
{
    float to_light[3] = {light[0] - sp->p[0], light[1] - sp->p[1], light[2] - sp->p[2]};
    *dist = sqrtf(vec_dot(to_light, to_light));
    for (int a = 0; a < 3; a++) to_light[a] /= *dist;
    return surface_ray(sp, to_light);
}

/* Ambient-occlusion ray k of pixel `pixel`: a cosine-weighted direction
 * about the normal (Malley's method: a point of the unit disk, lifted to
 * the hemisphere), deterministic per pixel and k.  The disk's point comes
 * from a hash by rejection, with no trigonometry, so that the CPU and the
 * GPU make the same bits. */
static inline KD_HD ray ao_ray(const surface_point *sp, uint64_t pixel, uint32_t k)
{
    uint64_t z = (pixel << 8 | k) * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    float x = 0.0f, y = 0.0f;
    for (int tries = 0; tries < 16; tries++) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x = (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
        y = (float)(z >> 16 & 0xffffffu) * (2.0f / 16777216.0f) - 1.0f;
        if (x * x + y * y < 1.0f) break;
        x = y = 0.0f; /* after 16 misses (1 in 2^35): straight along the normal */
    }
    float h = sqrtf(1.0f - (x * x + y * y));
    /* An orthonormal basis about n (Duff et al. 2017, branch-free). */
    const float *n = sp->n;
    float sign = n[2] >= 0.0f ? 1.0f : -1.0f, a = -1.0f / (sign + n[2]), b = n[0] * n[1] * a;
    float t[3] = {1.0f + sign * n[0] * n[0] * a, sign * b, -sign * n[0]};
    float u[3] = {b, sign + n[1] * n[1] * a, -n[1]};
    float d[3];
    for (int i = 0; i < 3; i++) d[i] = x * t[i] + y * u[i] + h * n[i];
    vec_normalize(d);
    return surface_ray(sp, d);
}

static inline KD_HD uint8_t shade_quantize(float x)
{
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    return (uint8_t)(x * 255.0f + 0.5f);
}

static inline KD_HD int shade_is_heat_map(shade_mode m) { return m == SHADE_STEPS || m == SHADE_TESTS; }

/* The ray casters' part of opt; ao_rays 0 (not set) means AO_RAYS_DEFAULT. */
static inline KD_HD shade_params render_shade_params(const render_options *opt)
{
    shade_params sh = {opt->mode, opt->shadows, opt->ao_rays, opt->ao_radius};
    if (sh.mode == SHADE_AO && sh.ao_rays == 0) sh.ao_rays = AO_RAYS_DEFAULT;
    return sh;
}

/* The secondary rays a camera ray's hit sends (its shadow ray, its
 * ambient-occlusion rays), each asked of the tree and of brute force:
 * how many, how many brute force finds occluded, how many the tree
 * answers otherwise, and the first of those. */
typedef struct occlusion_check {
    uint32_t rays, occluded, differ, first_differ;
} occlusion_check;

static inline KD_HD void occlusion_compare(const trace_scene *ts, uint32_t n_triangles, const ray *s, float t_max,
                                           occlusion_check *c)
{
    int brute = brute_force_occluded(ts->positions, ts->triangles, n_triangles, s, t_max);
    if (kdtree_occluded(ts, s, t_max) != brute && c->differ++ == 0) c->first_differ = c->rays;
    c->rays++;
    c->occluded += (uint32_t)brute;
}

static inline KD_HD occlusion_check check_occlusion(const trace_scene *ts, const camera_basis *b,
                                                    const shade_params *sh, uint32_t n_triangles, uint64_t pixel,
                                                    const ray *r, const ray_hit *h)
{
    occlusion_check c = {0, 0, 0, 0};
    if (h->tri == RAY_NO_HIT) return c;
    surface_point sp = shade_surface(ts, r, h);
    if (sh->mode == SHADE_AO)
        for (uint32_t k = 0; k < sh->ao_rays; k++) {
            ray s = ao_ray(&sp, pixel, k);
            occlusion_compare(ts, n_triangles, &s, sh->ao_radius, &c);
        }
    if (sh->shadows) {
        float dist;
        ray s = shadow_ray(&sp, b->light, &dist);
        occlusion_compare(ts, n_triangles, &s, dist, &c);
    }
    return c;
}

/* Shades pixel (x, y): writes rgb[3] and returns the count the heat-map
 * modes show (inner nodes visited or triangles tested by the camera ray).
 * `with_ao`: whether the ambient-occlusion loop is compiled in (SHADE_AO
 * needs it).  The GPU's kernels pass a constant, so that the one without
 * it does not carry the loop's registers into the other modes. */
static inline KD_HD uint32_t shade_pixel(const trace_scene *ts, const camera_basis *b, const shade_params *sh,
                                         int with_ao, uint32_t x, uint32_t y, uint8_t rgb[3])
{
    ray r = camera_ray(b, x, y);
    ray_hit h = kdtree_trace(ts, &r);
    uint32_t count = sh->mode == SHADE_STEPS ? h.steps : h.tests;
    if (h.tri == RAY_NO_HIT) { /* background: a dim vertical gradient */
        float g = 0.10f + 0.12f * (float)y / (float)b->height;
        rgb[0] = shade_quantize(g);
        rgb[1] = shade_quantize(g * 1.1f);
        rgb[2] = shade_quantize(g * 1.5f);
        return count;
    }
    surface_point sp = shade_surface(ts, &r, &h);
    float cosine = fabsf(vec_dot(sp.n, r.d));
    float light = 0.15f + 0.85f * cosine;
    if (with_ao && sh->mode == SHADE_AO) { /* the share of the occlusion rays that escape */
        uint32_t open = 0;
        uint64_t pixel = (uint64_t)y * b->width + x;
        for (uint32_t k = 0; k < sh->ao_rays; k++) {
            ray s = ao_ray(&sp, pixel, k);
            open += !kdtree_occluded(ts, &s, sh->ao_radius);
        }
        light = 0.10f + 0.90f * (float)open / (float)sh->ao_rays;
    }
    if (sh->shadows) {
        float dist;
        ray s = shadow_ray(&sp, b->light, &dist);
        if (kdtree_occluded(ts, &s, dist)) light = sh->mode == SHADE_AO ? 0.35f * light : 0.15f + 0.35f * cosine;
    }
    rgb[0] = shade_quantize(0.92f * light);
    rgb[1] = shade_quantize(0.90f * light);
    rgb[2] = shade_quantize(0.85f * light);
    return count;
}

#endif
