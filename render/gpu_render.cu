/* gpu_render.cu - the GPU ray caster and its brute-force validation. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "gpu_render.h"
#include "shade.h"

static_assert(sizeof(trace_tri) == 48 && alignof(trace_tri) == 16, "a triangle's copy is three 16-byte words");

/* tris[i] = triangle i's vertices (trace_tri): the copy the leaf
 * loop reads (traverse.h).  One thread a triangle.  Indexed by triangle,
 * not by reference slot, so a GPU-built tree's gaps between leaves (words
 * naming no triangle, gpu_build.h) are never read here, and the copy is one
 * per triangle however many leaves share it. */
__global__ void gather_trace_tris(const float *positions, const uint32_t *triangles, uint32_t n_triangles,
                                  trace_tri *tris)
{
    uint32_t tri = blockIdx.x * blockDim.x + threadIdx.x;
    if (tri >= n_triangles) return;
    float4 *out = (float4 *)(void *)(tris + tri);
    const float *v0, *v1, *v2;
    triangle_vertices(positions, triangles, tri, &v0, &v1, &v2);
    out[0] = make_float4(v0[0], v0[1], v0[2], 0.0f);
    out[1] = make_float4(v1[0], v1[1], v1[2], 0.0f);
    out[2] = make_float4(v2[0], v2[1], v2[2], 0.0f);
}

/* The trace_scene of a device tree, with its copy of the triangles made in
 * *tris (48 bytes a triangle; the caller frees it, NULL for a scene without
 * triangles).  -1 on a CUDA error (in err). */
static int trace_scene_make(const gpu_tree *t, const gpu_scene *s, trace_scene *ts, trace_tri **tris, char *err,
                            size_t errlen)
{
    *tris = NULL;
    ts->nodes = t->nodes;
    ts->refs = t->refs;
    ts->positions = s->positions;
    ts->triangles = s->triangles;
    memcpy(ts->lo, t->lo, sizeof ts->lo);
    memcpy(ts->hi, t->hi, sizeof ts->hi);
    if (s->n_triangles) {
        CHECK(cudaMalloc(tris, (size_t)s->n_triangles * sizeof **tris), "allocating the triangles' copy on the GPU");
        gather_trace_tris<<<(unsigned)(((uint64_t)s->n_triangles + 255) / 256), 256>>>(s->positions, s->triangles,
                                                                                       s->n_triangles, *tris);
        CHECK(cudaGetLastError(), "launching the triangles' copy");
    }
    ts->tris = *tris;
    return 0;
fail:
    cudaFree(*tris);
    *tris = NULL;
    return -1;
}

/* One pixel a thread; WITH_AO a constant of each kernel (shade_pixel). */
static __device__ __forceinline__ void render_pixel(const trace_scene *ts, const camera_basis *b,
                                                    const shade_params *sh, int with_ao, uint8_t *rgb,
                                                    uint32_t *counts)
{
    uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= b->width || y >= b->height) return;
    size_t i = (size_t)y * b->width + x;
    uint8_t c[3];
    uint32_t count = shade_pixel(ts, b, sh, with_ao, x, y, c);
    rgb[3 * i + 0] = c[0];
    rgb[3 * i + 1] = c[1];
    rgb[3 * i + 2] = c[2];
    if (counts) counts[i] = count;
}

/* A block of 8 x 16 pixels, so a warp traces 8 x 4 of them: rays closer
 * together than in a 16 x 2 warp walk more of the same nodes (shadow rays
 * most: docs/experiments.md, "The render's block shape").  The render kernel
 * is held to 10 blocks an SM (48 registers): left alone it takes 56, and 9
 * blocks trace slower. */
#define RENDER_BLOCK_W 8
#define RENDER_BLOCK_H 16

__global__ void __launch_bounds__(RENDER_BLOCK_W * RENDER_BLOCK_H, 10)
    render_kernel(trace_scene ts, camera_basis b, shade_params sh, uint8_t *rgb, uint32_t *counts)
{
    render_pixel(&ts, &b, &sh, 0, rgb, counts);
}

__global__ void render_ao_kernel(trace_scene ts, camera_basis b, shade_params sh, uint8_t *rgb, uint32_t *counts)
{
    render_pixel(&ts, &b, &sh, 1, rgb, counts);
}

static void launch_render(dim3 grid, dim3 block, trace_scene ts, camera_basis b, shade_params sh, uint8_t *rgb,
                          uint32_t *counts)
{
    if (sh.mode == SHADE_AO) render_ao_kernel<<<grid, block>>>(ts, b, sh, rgb, counts);
    else render_kernel<<<grid, block>>>(ts, b, sh, rgb, counts);
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of ms[0 .. frames-1], which it sorts. */
static double median_ms(float *ms, uint32_t frames)
{
    qsort(ms, frames, sizeof *ms, compare_float);
    return frames % 2 ? ms[frames / 2] : 0.5 * (ms[frames / 2 - 1] + ms[frames / 2]);
}

/* Times `frames` launches of the render with shading sh, one event pair
 * each, into ms.  -1 on a CUDA error (in err). */
static int time_frames(dim3 grid, dim3 block, trace_scene ts, camera_basis b, shade_params sh, uint8_t *rgb,
                       uint32_t *counts, uint32_t frames, cudaEvent_t e0, cudaEvent_t e1, float *ms, char *err,
                       size_t errlen)
{
    for (uint32_t f = 0; f < frames; f++) {
        CHECK(cudaEventRecord(e0), "cudaEventRecord");
        launch_render(grid, block, ts, b, sh, rgb, counts);
        CHECK(cudaGetLastError(), "launching the render kernel");
        CHECK(cudaEventRecord(e1), "cudaEventRecord");
        CHECK(cudaEventSynchronize(e1), "rendering");
        CHECK(cudaEventElapsedTime(&ms[f], e0, e1), "cudaEventElapsedTime");
    }
    return 0;
fail:
    return -1;
}

extern "C" int render_gpu(const gpu_tree *t, const gpu_scene *s, const render_options *opt, uint32_t frames,
                          image *out, gpu_render_stats *st, char *err, size_t errlen)
{
    uint8_t *d_rgb = NULL;
    uint32_t *d_counts = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float *ms = NULL;
    camera_basis basis;
    trace_scene ts;
    trace_tri *d_tris = NULL;
    size_t pixels = (size_t)opt->cam.width * opt->cam.height;
    dim3 block(RENDER_BLOCK_W, RENDER_BLOCK_H);
    dim3 grid((opt->cam.width + RENDER_BLOCK_W - 1) / RENDER_BLOCK_W,
              (opt->cam.height + RENDER_BLOCK_H - 1) / RENDER_BLOCK_H);
    int heat = shade_is_heat_map(opt->mode);
    shade_params sh = render_shade_params(opt);
    memset(st, 0, sizeof *st);
    if (frames == 0) frames = 1;

    if (camera_check(&opt->cam, err, errlen)) return -1;
    if (image_alloc(out, opt->cam.width, opt->cam.height, heat, err, errlen)) return -1;
    camera_make_basis(&opt->cam, s->lo, s->hi, &basis);
    if (opt->light_set) memcpy(basis.light, opt->light, sizeof basis.light);
    ms = (float *)malloc(frames * sizeof *ms);
    if (!ms) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    CHECK(cudaMalloc(&d_rgb, pixels * 3), "allocating the image on the GPU");
    if (heat) CHECK(cudaMalloc(&d_counts, pixels * sizeof *d_counts), "allocating the image on the GPU");
    CHECK(cudaEventCreate(&e0), "cudaEventCreate");
    CHECK(cudaEventCreate(&e1), "cudaEventCreate");
    CHECK(cudaEventRecord(e0), "cudaEventRecord");
    if (trace_scene_make(t, s, &ts, &d_tris, err, errlen)) goto fail; /* part of the first image's time */
    launch_render(grid, block, ts, basis, sh, d_rgb, d_counts); /* warm-up, timed as the first image's frame */
    CHECK(cudaGetLastError(), "launching the render kernel");
    CHECK(cudaEventRecord(e1), "cudaEventRecord");
    CHECK(cudaEventSynchronize(e1), "rendering");
    {
        float first;
        CHECK(cudaEventElapsedTime(&first, e0, e1), "cudaEventElapsedTime");
        st->ms_first = first;
    }
    if (render_rays_per_pixel(opt) > 1.0) { /* the camera rays alone first: the image is the full frames' */
        shade_params primary = sh;
        primary.mode = SHADE_DIFFUSE;
        primary.shadows = 0;
        launch_render(grid, block, ts, basis, primary, d_rgb, d_counts); /* its own kernel's warm-up (ao) */
        CHECK(cudaGetLastError(), "launching the render kernel");
        if (time_frames(grid, block, ts, basis, primary, d_rgb, d_counts, frames, e0, e1, ms, err, errlen)) goto fail;
        st->ms_primary = median_ms(ms, frames);
    }
    if (time_frames(grid, block, ts, basis, sh, d_rgb, d_counts, frames, e0, e1, ms, err, errlen)) goto fail;
    CHECK(cudaMemcpy(out->rgb, d_rgb, pixels * 3, cudaMemcpyDeviceToHost), "downloading the image");
    if (heat) {
        CHECK(cudaMemcpy(out->counts, d_counts, pixels * sizeof *d_counts, cudaMemcpyDeviceToHost),
              "downloading the image");
        image_colorize_counts(out, opt->mode);
    }
    st->frames = frames;
    st->ms_median = median_ms(ms, frames);
    st->ms_min = ms[0];
    st->ms_max = ms[frames - 1];
    st->mrays_per_s = (double)pixels * render_rays_per_pixel(opt) / (st->ms_median * 1e3);
    if (render_rays_per_pixel(opt) > 1.0) st->ms_secondary = st->ms_median - st->ms_primary;
    else st->ms_primary = st->ms_median;
    free(ms);
    cudaFree(d_tris);
    cudaFree(d_rgb);
    cudaFree(d_counts);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 0;
fail:
    free(ms);
    cudaFree(d_tris);
    cudaFree(d_rgb);
    cudaFree(d_counts);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    image_free(out);
    return -1;
}

typedef struct ray_pair {
    float tree_t, brute_t;
    uint32_t tree_tri, brute_tri;
    occlusion_check occlusion;
} ray_pair;

__global__ void validate_kernel(trace_scene ts, camera_basis b, shade_params sh, uint32_t n_triangles, uint64_t first,
                                uint64_t count, uint64_t n_rays, ray_pair *out)
{
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i >= count) return;
    uint64_t px = validation_pixel(first + i, n_rays, b.width, b.height);
    ray r = camera_ray(&b, (uint32_t)(px % b.width), (uint32_t)(px / b.width));
    ray_hit tree = kdtree_trace(&ts, &r);
    ray_hit brute = brute_force_trace(ts.positions, ts.triangles, n_triangles, &r);
    out[i].tree_t = tree.t;
    out[i].tree_tri = tree.tri;
    out[i].brute_t = brute.t;
    out[i].brute_tri = brute.tri;
    out[i].occlusion = check_occlusion(&ts, &b, &sh, n_triangles, px, &r, &tree);
}

extern "C" int validate_camera_rays_gpu_part(const gpu_tree *t, const gpu_scene *s, const render_options *opt,
                                             uint64_t n_rays, uint64_t part_first, uint64_t part_count, validation *v,
                                             char *err, size_t errlen)
{
    const camera *c = &opt->cam;
    shade_params sh = render_shade_params(opt);
    enum { BATCH = 1 << 18 }; /* rays per launch: keeps each launch short */
    ray_pair *d = NULL, *h = NULL;
    camera_basis basis;
    trace_scene ts;
    trace_tri *d_tris = NULL;
    uint64_t total = part_first + part_count;
    if (camera_check(c, err, errlen)) return -1;
    camera_make_basis(c, s->lo, s->hi, &basis);
    if (opt->light_set) memcpy(basis.light, opt->light, sizeof basis.light);
    h = (ray_pair *)malloc(BATCH * sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    if (trace_scene_make(t, s, &ts, &d_tris, err, errlen)) goto fail;
    CHECK(cudaMalloc(&d, BATCH * sizeof *d), "allocating validation buffers on the GPU");
    for (uint64_t first = part_first; first < total; first += BATCH) {
        uint64_t count = total - first < BATCH ? total - first : BATCH;
        validate_kernel<<<(unsigned)((count + 127) / 128), 128>>>(ts, basis, sh, s->n_triangles, first, count, n_rays,
                                                                  d);
        CHECK(cudaGetLastError(), "launching the validation kernel");
        CHECK(cudaMemcpy(h, d, count * sizeof *h, cudaMemcpyDeviceToHost), "validating rays on the GPU");
        for (uint64_t i = 0; i < count; i++) {
            const occlusion_check *o = &h[i].occlusion;
            validation_record(v, first + i, h[i].tree_tri, h[i].tree_t, h[i].brute_tri, h[i].brute_t);
            validation_record_occlusion(v, first + i, o->rays, o->occluded, o->differ, o->first_differ);
        }
    }
    cudaFree(d);
    cudaFree(d_tris);
    free(h);
    return 0;
fail:
    cudaFree(d);
    cudaFree(d_tris);
    free(h);
    return -1;
}

extern "C" int validate_camera_rays_gpu(const gpu_tree *t, const gpu_scene *s, const render_options *opt,
                                        uint64_t n_rays, validation *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    uint64_t pixels = (uint64_t)opt->cam.width * opt->cam.height;
    return validate_camera_rays_gpu_part(t, s, opt, n_rays, 0, n_rays ? n_rays : pixels, v, err, errlen);
}
