/* gpu_render.h - the GPU ray caster: one ray per thread through a tree in
 * device memory (as gpu_build leaves it), with the traversal, triangle test
 * and shading of the CPU caster (traverse.h, shade.h), so that both give
 * the same image. */
#ifndef KDA_GPU_RENDER_H
#define KDA_GPU_RENDER_H

#include "gpu_build.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpu_render_stats {
    double ms_median, ms_min, ms_max; /* one frame, over the timed frames */
    double ms_first;                  /* the first frame (the warm-up) with the copy of the triangles the
                                       * leaves read (traverse.h): what a first image waits for */
    uint32_t frames;
    double mrays_per_s;               /* render_rays_per_pixel's rays, median frame */
    /* The primary pass apart: the median of as many frames of camera rays
     * alone (diffuse shading, no secondary rays), and what the secondary
     * rays add to the median frame (ms_median - ms_primary; 0 without
     * secondary rays).  The frame casts both in one kernel: the secondary
     * share is a difference of medians, so it is noisy where it is small. */
    double ms_primary, ms_secondary;
} gpu_render_stats;

/* Renders `frames` timed frames after a warm-up and copies the last one to
 * `out`; with secondary rays, also `frames` frames of the camera rays alone
 * (ms_primary).  Besides the image it takes 48 bytes of device memory a
 * triangle (the copy of the triangles the leaves read), as the validation
 * does for each part.  Returns 0, or -1 (bad camera, out of memory, CUDA
 * error). */
int render_gpu(const gpu_tree *t, const gpu_scene *s, const render_options *opt, uint32_t frames, image *out,
               gpu_render_stats *st, char *err, size_t errlen);

/* The GPU counterpart of validate_camera_rays_cpu: both casts run on the
 * device, the comparison on the host. */
int validate_camera_rays_gpu(const gpu_tree *t, const gpu_scene *s, const render_options *opt, uint64_t n_rays,
                             validation *v, char *err, size_t errlen);
/* Rays [first, first + count) of those, added to v (validate_camera_rays_cpu_part). */
int validate_camera_rays_gpu_part(const gpu_tree *t, const gpu_scene *s, const render_options *opt,
                                  uint64_t n_rays, uint64_t first, uint64_t count, validation *v, char *err,
                                  size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
