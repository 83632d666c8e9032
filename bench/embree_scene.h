/* embree_scene.h - a scene in Embree 3 (one triangle geometry) for the
 * side-by-side of bench/embree_bench.c and its test: BVH builds of a
 * chosen quality, timed, and the camera rays of `kdalloc render` cast
 * through them on all cores. */
#ifndef KDA_EMBREE_SCENE_H
#define KDA_EMBREE_SCENE_H

#include <embree3/rtcore.h>
#include <stddef.h>
#include <stdint.h>

#include "render.h"
#include "scene.h"

typedef struct embree_scene {
    RTCDevice device;
    RTCScene scene;   /* the last build; NULL before the first */
    const scene *src;
    float *vertices;  /* the positions, padded as Embree needs (see embree_open) */
    char error[256];  /* Embree's last error message, from its error callback */
} embree_scene;

/* Opens a device with the default configuration (all cores).  Returns 0,
 * or -1 with a message in err. */
int embree_open(embree_scene *e, const scene *s, char *err, size_t errlen);

/* Builds a new BVH of the quality asked for, replacing the last one;
 * `ms` receives the wall time of rtcCommitScene alone (the build). */
int embree_build(embree_scene *e, enum RTCBuildQuality quality, double *ms, char *err, size_t errlen);

/* Casts one ray per pixel of camera c (camera_ray, as `kdalloc render`)
 * with rtcIntersect1 on `threads` threads.  When not NULL, tri and t
 * receive each pixel's triangle (RAY_NO_HIT for none) and distance, in
 * row-major order.  Returns the number of hits; `ms` receives the wall time. */
uint64_t embree_cast(const embree_scene *e, const camera *c, int threads, uint32_t *tri, float *t, double *ms);

/* A view_tracer (render.h) over the last build: ctx is the embree_scene. */
uint32_t embree_trace(void *ctx, const float o[3], const float d[3], float *t);

/* "3.13.5": the version of the library loaded. */
void embree_version(const embree_scene *e, char *out, size_t len);

void embree_close(embree_scene *e);

#endif
