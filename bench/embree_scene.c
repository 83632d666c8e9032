/* embree_scene.c - the project's scene in Embree 3: builds and ray casts. */
#include "embree_scene.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shade.h"

static void on_error(void *user, enum RTCError code, const char *what)
{
    embree_scene *e = user;
    snprintf(e->error, sizeof e->error, "Embree error %d: %s", (int)code, what ? what : "(no message)");
}

/* -1 with Embree's message in err when the device reports an error. */
static int check(embree_scene *e, const char *doing, char *err, size_t errlen)
{
    if (rtcGetDeviceError(e->device) == RTC_ERROR_NONE) return 0;
    snprintf(err, errlen, "%s: %s", doing, e->error[0] ? e->error : "Embree reported an error");
    return -1;
}

int embree_open(embree_scene *e, const scene *s, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->src = s;
    e->device = rtcNewDevice(NULL);
    if (!e->device) {
        snprintf(err, errlen, "Embree: cannot create a device (error %d)", (int)rtcGetDeviceError(NULL));
        return -1;
    }
    rtcSetDeviceErrorFunction(e->device, on_error, e);
    /* Embree reads vertices with 16-byte loads: the last one needs a float
     * of padding after it, which the scene's own array does not have. */
    size_t n = 3 * (size_t)s->n_vertices;
    e->vertices = malloc((n + 1) * sizeof *e->vertices);
    if (!e->vertices) {
        snprintf(err, errlen, "Embree: out of memory for %u vertices", s->n_vertices);
        embree_close(e);
        return -1;
    }
    memcpy(e->vertices, s->positions, n * sizeof *e->vertices);
    e->vertices[n] = 0.0f;
    return 0;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int embree_build(embree_scene *e, enum RTCBuildQuality quality, double *ms, char *err, size_t errlen)
{
    if (e->scene) rtcReleaseScene(e->scene);
    /* A new scene and geometry each time: committing an unchanged scene
     * again builds nothing.  Only the commit is timed. */
    e->scene = rtcNewScene(e->device);
    RTCGeometry g = rtcNewGeometry(e->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    rtcSetSharedGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, e->vertices, 0,
                               3 * sizeof(float), e->src->n_vertices);
    rtcSetSharedGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, e->src->triangles, 0,
                               3 * sizeof(uint32_t), e->src->n_triangles);
    rtcCommitGeometry(g);
    rtcAttachGeometry(e->scene, g);
    rtcReleaseGeometry(g);
    rtcSetSceneBuildQuality(e->scene, quality);
    if (check(e, "Embree: setting up the scene", err, errlen)) return -1;
    double t0 = now_ms();
    rtcCommitScene(e->scene);
    *ms = now_ms() - t0;
    return check(e, "Embree: building the BVH", err, errlen);
}

static uint32_t intersect(RTCScene scene, const float o[3], const float d[3], float *t)
{
    struct RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    struct RTCRayHit rh;
    rh.ray.org_x = o[0];
    rh.ray.org_y = o[1];
    rh.ray.org_z = o[2];
    rh.ray.dir_x = d[0];
    rh.ray.dir_y = d[1];
    rh.ray.dir_z = d[2];
    rh.ray.tnear = 0.0f;
    rh.ray.tfar = INFINITY;
    rh.ray.time = 0.0f;
    rh.ray.mask = 0xffffffffu;
    rh.ray.id = 0;
    rh.ray.flags = 0;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene, &context, &rh);
    *t = rh.ray.tfar;
    return rh.hit.geomID == RTC_INVALID_GEOMETRY_ID ? RAY_NO_HIT : rh.hit.primID;
}

uint32_t embree_trace(void *ctx, const float o[3], const float d[3], float *t)
{
    const embree_scene *e = ctx;
    return intersect(e->scene, o, d, t);
}

typedef struct cast_job {
    RTCScene scene;
    camera_basis basis;
    uint32_t *tri;
    float *t;
    atomic_uint next_row; /* rows handed out one at a time: the threads stay busy to the end */
    atomic_ullong hits;
} cast_job;

static void *cast_rows(void *p)
{
    cast_job *job = p;
    uint32_t w = job->basis.width, h = job->basis.height;
    uint64_t hits = 0;
    for (uint32_t y; (y = atomic_fetch_add(&job->next_row, 1u)) < h;)
        for (uint32_t x = 0; x < w; x++) {
            ray r = camera_ray(&job->basis, x, y);
            float t;
            uint32_t tri = intersect(job->scene, r.o, r.d, &t);
            hits += tri != RAY_NO_HIT;
            size_t i = (size_t)y * w + x;
            if (job->tri) job->tri[i] = tri;
            if (job->t) job->t[i] = t;
        }
    atomic_fetch_add(&job->hits, hits);
    return NULL;
}

uint64_t embree_cast(const embree_scene *e, const camera *c, int threads, uint32_t *tri, float *t, double *ms)
{
    cast_job job = {.scene = e->scene, .tri = tri, .t = t};
    camera_make_basis(c, e->src->lo, e->src->hi, &job.basis);
    atomic_init(&job.next_row, 0u);
    atomic_init(&job.hits, 0ull);
    pthread_t workers[256];
    int started = 0;
    if (threads > 256) threads = 256;
    double t0 = now_ms();
    /* This thread is one of the workers; those that fail to start leave
     * their rows to the others. */
    while (started < threads - 1 && pthread_create(&workers[started], NULL, cast_rows, &job) == 0) started++;
    cast_rows(&job);
    for (int i = 0; i < started; i++) pthread_join(workers[i], NULL);
    *ms = now_ms() - t0;
    return atomic_load(&job.hits);
}

void embree_version(const embree_scene *e, char *out, size_t len)
{
    snprintf(out, len, "%d.%d.%d", (int)rtcGetDeviceProperty(e->device, RTC_DEVICE_PROPERTY_VERSION_MAJOR),
             (int)rtcGetDeviceProperty(e->device, RTC_DEVICE_PROPERTY_VERSION_MINOR),
             (int)rtcGetDeviceProperty(e->device, RTC_DEVICE_PROPERTY_VERSION_PATCH));
}

void embree_close(embree_scene *e)
{
    if (e->scene) rtcReleaseScene(e->scene);
    if (e->device) rtcReleaseDevice(e->device);
    free(e->vertices);
    memset(e, 0, sizeof *e);
}
