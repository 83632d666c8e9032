/* render.h - the validation renderer: camera, CPU ray caster, checks
 * against brute force, and PNG output.  The GPU ray caster (gpu_render.h)
 * shares the camera, the traversal and the shading code with this one. */
#ifndef KDA_RENDER_H
#define KDA_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "kdtree.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct camera {
    float eye[3], target[3], up[3];
    float fov_deg; /* vertical field of view */
    uint32_t width, height;
} camera;

/* Largest image side accepted, and largest pixel count (about 1 GiB RGB). */
#define CAMERA_MAX_SIDE 32768u
#define CAMERA_MAX_PIXELS (1ull << 28)
/* The finest pixel accepted, in radians of the field of view a row: a unit
 * float direction moves in steps of about 1.2e-7 radians, so finer pixels
 * share ray directions and the image is wrong (the flat scene at 5.5e-8: a
 * tenth more hits; right at 8e-8).  Two steps. */
#define CAMERA_PIXEL_RADIANS_MIN 2.5e-7

/* Sets eye, target and up so that the box is in view from its +z side,
 * slightly above; keeps fov, width and height. */
void camera_frame(const float lo[3], const float hi[3], camera *c);

/* The same from the unit direction `dir` (from the box's centre to the eye). */
void camera_frame_from(const float lo[3], const float hi[3], const double dir[3], camera *c);

/* What a camera sees, from a grid of VIEW_SAMPLE_W x VIEW_SAMPLE_H rays
 * traced through the tree (default-view choice, and its tests). */
#define VIEW_SAMPLE_W 64
#define VIEW_SAMPLE_H 36
typedef struct view_score {
    uint32_t rays, hits;
    uint32_t on_shell;  /* hits on the faces of the scene's bounding box */
    uint32_t structure; /* distinct triangles hit off those faces */
} view_score;

void camera_view_score(const kdtree *t, const scene *s, const camera *c, view_score *out);

/* Another ray caster's closest hit (bench/embree_bench.c chooses the same
 * default view through Embree): the triangle the ray from o along unit d
 * hits first, or 0xffffffff for none, and its distance in *t. */
typedef uint32_t (*view_tracer)(void *ctx, const float o[3], const float d[3], float *t);
void camera_view_score_with(view_tracer trace, void *ctx, const scene *s, const camera *c, view_score *out);

/* Chooses the default camera (docs/builder.md, "Default view"): the
 * framed outside view, unless that shows mostly the scene's bounding box
 * (a closed shell such as a room), in which case the candidate, outside or
 * inside, that sees the most structure.  Keeps fov, width and height; sets
 * eye, target and up.  Returns the chosen view's name. */
const char *camera_choose_view(const kdtree *t, const scene *s, camera *c);
const char *camera_choose_view_with(view_tracer trace, void *ctx, const scene *s, camera *c);

/* Rejects NaN/Inf values, eye == target, up parallel to the view direction,
 * fov outside (0, 180), sizes of zero or above the limits, and pixels finer
 * than CAMERA_PIXEL_RADIANS_MIN. */
int camera_check(const camera *c, char *err, size_t errlen);
/* The size part of camera_check alone (no scene needed). */
int camera_check_size(const camera *c, char *err, size_t errlen);

/* What a pixel shows. */
typedef enum shade_mode {
    SHADE_DIFFUSE, /* grey, headlight diffuse from the geometric normal */
    SHADE_STEPS,   /* heat map of inner nodes visited per ray */
    SHADE_TESTS,   /* heat map of ray/triangle tests per ray (leaf sizes) */
    SHADE_AO       /* ambient occlusion: the share of ao_rays occlusion rays a hit sends that escape */
} shade_mode;

#define AO_RAYS_DEFAULT 4
#define AO_RAYS_MAX 64
#define AO_RADIUS_DEFAULT 0.1f /* of the scene's bounding-box diagonal */

typedef struct render_options {
    camera cam;
    shade_mode mode;
    int shadows;    /* one shadow ray per hit toward the light */
    int light_set;  /* the light is at `light`; else camera_make_basis's, above the scene */
    float light[3];
    uint32_t ao_rays; /* SHADE_AO: occlusion rays per hit (1 to AO_RAYS_MAX) */
    float ao_radius;  /* SHADE_AO: how far they look, in the scene's units (> 0) */
} render_options;

/* The rays a frame casts per pixel, as the ray rates count them: the
 * camera ray and the secondary rays of a hit (a shadow ray, ao_rays
 * occlusion rays), for every pixel: where the background shows, fewer. */
double render_rays_per_pixel(const render_options *opt);

/* An RGB8 image plus, for the heat-map modes, the per-pixel counts. */
typedef struct image {
    uint8_t *rgb;
    uint32_t *counts;
    uint32_t width, height;
} image;

int image_alloc(image *img, uint32_t width, uint32_t height, int with_counts, char *err, size_t errlen);
void image_free(image *img);

/* Turns the counts of a heat-map render into colours (blue = few, red =
 * many, scaled to the largest count) and draws a labelled colour bar. */
void image_colorize_counts(image *img, shade_mode mode);

/* Writes the image as PNG, whole or not at all (io/outfile.h): on error,
 * "PATH: cannot write PNG: REASON", and no partial file is left. */
int image_write_png(const image *img, const char *path, char *err, size_t errlen);

/* Renders on the CPU with all cores.  Returns 0 or -1 (bad camera, out of
 * memory).  `ms`, when not NULL, receives the wall time of the ray casting. */
int render_cpu(const kdtree *t, const scene *s, const render_options *opt, image *out, double *ms,
               char *err, size_t errlen);

/* Comparison of a tree's closest hits, and of its occlusion answers for
 * the shadow and ambient-occlusion rays of the hits, with brute force. */
typedef struct validation {
    uint64_t rays;
    uint64_t hits;       /* rays that hit something (brute force) */
    uint64_t mismatches; /* hit vs miss, or another triangle further than the tolerance */
    uint64_t occlusion_rays, occluded, occlusion_mismatches; /* occluded: by brute force */
    char first[256];     /* the first mismatch, described */
} validation;

/* Two hits agree when they name the same triangle, or their distances
 * differ by at most this fraction (a tie on a shared edge). */
#define VALIDATION_REL_TOLERANCE 1e-5f

/* The options of a plain image from camera c: diffuse, no shadows. */
render_options render_default_options(const camera *c);

/* Picks `n_rays` camera rays (every pixel when 0) of opt's camera and
 * checks them on the CPU, with the shadow and ambient-occlusion rays opt
 * adds to each hit (made from the tree's hit, as the image's are). */
int validate_camera_rays_cpu(const kdtree *t, const scene *s, const render_options *opt, uint64_t n_rays,
                             validation *v, char *err, size_t errlen);
/* Checks rays [first, first + count) of those, adding to v: parts that
 * cover the sample give what one call for all of it gives. */
int validate_camera_rays_cpu_part(const kdtree *t, const scene *s, const render_options *opt, uint64_t n_rays,
                                  uint64_t first, uint64_t count, validation *v, char *err, size_t errlen);

/* Records one comparison into v. */
void validation_record(validation *v, uint64_t ray_index, uint32_t tree_tri, float tree_t, uint32_t brute_tri,
                       float brute_t);
/* Records the occlusion answers of camera ray `ray_index`'s secondary rays:
 * `rays` of them, `occluded` by brute force, `differ` answered otherwise
 * by the tree (the first of those: secondary ray `which`). */
void validation_record_occlusion(validation *v, uint64_t ray_index, uint32_t rays, uint32_t occluded,
                                 uint32_t differ, uint32_t which);

/* The default light of a scene: above it (camera_make_basis's) when it is
 * open; inside it, where the light sees the most, when it is a closed
 * shell such as a room (the test of camera_choose_view), as the light
 * above would reach only its outside.  Returns 1 and sets light[3] for a
 * closed scene, 0 (light untouched) for an open one. */
int light_choose(const kdtree *t, const scene *s, float light[3]);
int light_choose_with(view_tracer trace, void *ctx, const scene *s, float light[3]);

#ifdef __cplusplus
}
#endif
#endif
