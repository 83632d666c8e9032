/* cpu_render.c - the CPU ray caster and its brute-force validation, spread
 * over all cores with POSIX threads (rows and rays interleaved). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "render.h"
#include "shade.h"

static int cpu_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > 256 ? 256 : (int)n);
}

/* Runs job(arg, worker, n_workers) on every core and waits. */
static void run_parallel(void *(*job)(void *), void *args, size_t arg_size, int n)
{
    pthread_t threads[256];
    int started = 0;
    for (int i = 1; i < n; i++)
        if (pthread_create(&threads[i], NULL, job, (char *)args + (size_t)i * arg_size) == 0) started = i;
        else break;
    /* Workers that failed to start: run their share here. */
    for (int i = started + 1; i < n; i++) job((char *)args + (size_t)i * arg_size);
    job(args);
    for (int i = 1; i <= started; i++) pthread_join(threads[i], NULL);
}

typedef struct render_job {
    const trace_scene *ts;
    const camera_basis *basis;
    const shade_params *shade;
    const render_options *opt;
    image *img;
    int worker, n_workers;
} render_job;

static void *render_rows(void *p)
{
    render_job *job = p;
    const image *img = job->img;
    for (uint32_t y = (uint32_t)job->worker; y < img->height; y += (uint32_t)job->n_workers)
        for (uint32_t x = 0; x < img->width; x++) {
            size_t i = (size_t)y * img->width + x;
            uint32_t count = shade_pixel(job->ts, job->basis, job->shade, job->shade->mode == SHADE_AO, x, y,
                                         img->rgb + 3 * i);
            if (img->counts) img->counts[i] = count;
        }
    return NULL;
}

static double elapsed_ms(struct timespec t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
}

int render_cpu(const kdtree *t, const scene *s, const render_options *opt, image *out, double *ms,
               char *err, size_t errlen)
{
    if (camera_check(&opt->cam, err, errlen)) return -1;
    if (image_alloc(out, opt->cam.width, opt->cam.height, shade_is_heat_map(opt->mode), err, errlen)) return -1;
    camera_basis basis;
    camera_make_basis(&opt->cam, s->lo, s->hi, &basis);
    if (opt->light_set) memcpy(basis.light, opt->light, sizeof basis.light);
    trace_scene ts = trace_scene_of(t, s);
    shade_params sh = render_shade_params(opt);
    int n = cpu_threads();
    render_job jobs[256];
    for (int i = 0; i < n; i++) jobs[i] = (render_job){&ts, &basis, &sh, opt, out, i, n};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_parallel(render_rows, jobs, sizeof jobs[0], n);
    if (ms) *ms = elapsed_ms(t0);
    if (shade_is_heat_map(opt->mode)) image_colorize_counts(out, opt->mode);
    return 0;
}

render_options render_default_options(const camera *c)
{
    render_options o;
    memset(&o, 0, sizeof o);
    o.cam = *c;
    o.mode = SHADE_DIFFUSE;
    return o;
}

double render_rays_per_pixel(const render_options *opt)
{
    shade_params sh = render_shade_params(opt);
    return 1.0 + (sh.shadows ? 1.0 : 0.0) + (sh.mode == SHADE_AO ? (double)sh.ao_rays : 0.0);
}

/* ---- validation ---- */

void validation_record(validation *v, uint64_t ray_index, uint32_t tree_tri, float tree_t, uint32_t brute_tri,
                       float brute_t)
{
    v->rays++;
    v->hits += brute_tri != RAY_NO_HIT;
    int same;
    if (tree_tri == RAY_NO_HIT || brute_tri == RAY_NO_HIT) same = tree_tri == brute_tri;
    else same = tree_tri == brute_tri || fabsf(tree_t - brute_t) <= VALIDATION_REL_TOLERANCE * brute_t;
    if (same) return;
    if (v->mismatches++ == 0)
        snprintf(v->first, sizeof v->first,
                 "ray %llu: tree hit triangle %d at t=%.9g, brute force hit triangle %d at t=%.9g",
                 (unsigned long long)ray_index, tree_tri == RAY_NO_HIT ? -1 : (int)tree_tri, tree_t,
                 brute_tri == RAY_NO_HIT ? -1 : (int)brute_tri, brute_t);
}

void validation_record_occlusion(validation *v, uint64_t ray_index, uint32_t rays, uint32_t occluded,
                                 uint32_t differ, uint32_t which)
{
    v->occlusion_rays += rays;
    v->occluded += occluded;
    if (differ && v->mismatches == 0 && v->occlusion_mismatches == 0)
        snprintf(v->first, sizeof v->first, "ray %llu: the tree's occlusion answer for its secondary ray %u differs "
                 "from brute force's", (unsigned long long)ray_index, which);
    v->occlusion_mismatches += differ;
}

typedef struct validate_job {
    const trace_scene *ts;
    const scene *s;
    const camera_basis *basis;
    const shade_params *shade;
    uint64_t n_rays, first, count;
    validation result;
    int worker, n_workers;
} validate_job;

static void *validate_rays(void *p)
{
    validate_job *job = p;
    const camera_basis *b = job->basis;
    for (uint64_t k = (uint64_t)job->worker; k < job->count; k += (uint64_t)job->n_workers) {
        uint64_t i = job->first + k;
        uint64_t px = validation_pixel(i, job->n_rays, b->width, b->height);
        ray r = camera_ray(b, (uint32_t)(px % b->width), (uint32_t)(px / b->width));
        ray_hit tree = kdtree_trace(job->ts, &r);
        ray_hit brute = brute_force_trace(job->s->positions, job->s->triangles, job->s->n_triangles, &r);
        validation_record(&job->result, i, tree.tri, tree.t, brute.tri, brute.t);
        occlusion_check c = check_occlusion(job->ts, b, job->shade, job->s->n_triangles, px, &r, &tree);
        validation_record_occlusion(&job->result, i, c.rays, c.occluded, c.differ, c.first_differ);
    }
    return NULL;
}

int validate_camera_rays_cpu_part(const kdtree *t, const scene *s, const render_options *opt, uint64_t n_rays,
                                  uint64_t first, uint64_t count, validation *v, char *err, size_t errlen)
{
    if (camera_check(&opt->cam, err, errlen)) return -1;
    camera_basis basis;
    camera_make_basis(&opt->cam, s->lo, s->hi, &basis);
    if (opt->light_set) memcpy(basis.light, opt->light, sizeof basis.light);
    trace_scene ts = trace_scene_of(t, s);
    shade_params sh = render_shade_params(opt);
    int n = cpu_threads();
    validate_job jobs[256];
    for (int i = 0; i < n; i++) jobs[i] = (validate_job){&ts, s, &basis, &sh, n_rays, first, count, {0}, i, n};
    run_parallel(validate_rays, jobs, sizeof jobs[0], n);
    for (int i = 0; i < n; i++) {
        const validation *r = &jobs[i].result;
        if ((r->mismatches || r->occlusion_mismatches) && !v->mismatches && !v->occlusion_mismatches)
            memcpy(v->first, r->first, sizeof v->first);
        v->rays += r->rays;
        v->hits += r->hits;
        v->mismatches += r->mismatches;
        v->occlusion_rays += r->occlusion_rays;
        v->occluded += r->occluded;
        v->occlusion_mismatches += r->occlusion_mismatches;
    }
    return 0;
}

int validate_camera_rays_cpu(const kdtree *t, const scene *s, const render_options *opt, uint64_t n_rays,
                             validation *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    uint64_t pixels = (uint64_t)opt->cam.width * opt->cam.height;
    return validate_camera_rays_cpu_part(t, s, opt, n_rays, 0, n_rays ? n_rays : pixels, v, err, errlen);
}
