/* embree_bench.c - kdalloc-embree: Embree 3's BVH builds (medium and high
 * quality, all cores) and its ray rate over the camera rays of `kdalloc
 * render`, for bench/compare's side-by-side with kdalloc's GPU figures. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "embree_scene.h"
#include "stdout_status.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: kdalloc-embree [FILE] [options]\n\n"
               "Builds Embree's BVH over FILE (.obj or .obj.gz; default: the built-in scene)\n"
               "with all cores, times the builds, and casts the primary rays of\n"
               "`kdalloc render` (its default camera) through it.\n\n"
               "  --scene NAME        a built-in scene instead of FILE (see `kdalloc gen --help`)\n"
               "  --triangles N       its size, for the scalable scenes (1 to %llu; each\n"
               "                      scene's range: `kdalloc gen --help`)\n"
               "  --quality Q         medium (default), high or both\n"
               "  --repeat R          time R builds and R ray casts after a warm-up\n"
               "                      (median, min, max; 1 to 1000, default 5)\n"
               "  --width W           image width in pixels (1 to %u; default 1280)\n"
               "  --height H          image height in pixels (1 to %u; default 720)\n"
               "  --json              one JSON object per quality on stdout (the other\n"
               "                      lines go to stderr)\n"
               "  -h, --help          this help\n"
               "  --version           print the version and Embree's\n",
            (unsigned long long)cli_triangles_max(), CAMERA_MAX_SIDE, CAMERA_MAX_SIDE);
}

typedef struct request {
    scene_source src;
    int medium, high;
    uint32_t repeat, width, height;
    int json;
} request;

static int parse_args(int argc, char **argv, request *rq)
{
    enum { OPT_SCENE = 300, OPT_TRIS, OPT_QUALITY, OPT_REPEAT, OPT_W, OPT_H, OPT_JSON, OPT_VERSION };
    static const struct option opts[] = {
        {"scene", required_argument, 0, OPT_SCENE},   {"triangles", required_argument, 0, OPT_TRIS},
        {"quality", required_argument, 0, OPT_QUALITY}, {"repeat", required_argument, 0, OPT_REPEAT},
        {"width", required_argument, 0, OPT_W},       {"height", required_argument, 0, OPT_H},
        {"json", no_argument, 0, OPT_JSON},           {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, OPT_VERSION},     {0, 0, 0, 0}};
    uint64_t v;
    opterr = 0; /* cli_option_error and the messages below say which option was wrong */
    for (int c; (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1;) {
        switch (c) {
        case OPT_SCENE: rq->src.generator = optarg; break;
        case OPT_TRIS:
            if (cli_parse_u64("--triangles", optarg, 1, cli_triangles_max(), &rq->src.triangles)) return -1;
            break;
        case OPT_QUALITY:
            rq->medium = !strcmp(optarg, "medium") || !strcmp(optarg, "both");
            rq->high = !strcmp(optarg, "high") || !strcmp(optarg, "both");
            if (!rq->medium && !rq->high) {
                cli_usage_error("--quality takes medium, high or both, not '%s'", optarg);
                return -1;
            }
            break;
        case OPT_REPEAT:
            if (cli_parse_u64("--repeat", optarg, 1, 1000, &v)) return -1;
            rq->repeat = (uint32_t)v;
            break;
        case OPT_W:
        case OPT_H:
            if (cli_parse_u64(c == OPT_W ? "--width" : "--height", optarg, 1, CAMERA_MAX_SIDE, &v)) return -1;
            *(c == OPT_W ? &rq->width : &rq->height) = (uint32_t)v;
            break;
        case OPT_JSON: rq->json = 1; break;
        case 'h': usage(stdout); exit(stdout_status("kdalloc-embree", 0));
        case OPT_VERSION:
            printf("kdalloc-embree %s, Embree %d.%d.%d\n", KDA_VERSION, RTC_VERSION_MAJOR, RTC_VERSION_MINOR,
                   RTC_VERSION_PATCH);
            exit(stdout_status("kdalloc-embree", 0));
        default: return cli_option_error(c, argv, opts);
        }
    }
    return cli_scene_positional(&rq->src, argc, argv, optind);
}

typedef struct timing {
    double median, min, max;
} timing;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static timing summarize(double *ms, uint32_t n)
{
    qsort(ms, n, sizeof *ms, compare_double);
    timing t = {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms[0], ms[n - 1]};
    return t;
}

/* What one quality measured. */
typedef struct result {
    const char *quality;
    timing build, cast;
    uint64_t hits;
} result;

/* Warm-up build, then R timed builds; the last one stays for the rays. */
static int time_builds(embree_scene *e, enum RTCBuildQuality q, uint32_t repeat, double *ms, timing *out)
{
    char err[512];
    double warm;
    if (embree_build(e, q, &warm, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    for (uint32_t i = 0; i < repeat; i++)
        if (embree_build(e, q, &ms[i], err, sizeof err)) {
            cli_error("%s", err);
            return -1;
        }
    *out = summarize(ms, repeat);
    return 0;
}

static void time_rays(const embree_scene *e, const camera *c, int threads, uint32_t repeat, double *ms,
                      result *r)
{
    double warm;
    r->hits = embree_cast(e, c, threads, NULL, NULL, &warm);
    for (uint32_t i = 0; i < repeat; i++) embree_cast(e, c, threads, NULL, NULL, &ms[i]);
    r->cast = summarize(ms, repeat);
}

static double mrays(const camera *c, double ms)
{
    return ms > 0.0 ? (double)c->width * c->height / (ms * 1e3) : 0.0;
}

static void print_json(const char *label, const scene *s, int threads, const char *version, const camera *c,
                       const char *view, const request *rq, const result *r)
{
    printf("{");
    cli_json_string("scene", label);
    cli_json_scene_notes(s);
    printf(", \"n_tris\": %u, \"threads\": %d, ", s->n_triangles, threads);
    cli_json_string("embree", version);
    printf(", ");
    cli_json_string("quality", r->quality);
    printf(", \"build_ms\": %.6f, \"build_ms_min\": %.6f, \"build_ms_max\": %.6f, \"repeat\": %u, ",
           r->build.median, r->build.min, r->build.max, rq->repeat);
    printf("\"width\": %u, \"height\": %u, ", c->width, c->height);
    cli_json_string("view", view);
    printf(", \"rays\": %llu, \"hits\": %llu, \"render_ms\": %.6f, \"render_ms_min\": %.6f, "
           "\"render_ms_max\": %.6f, \"mrays_per_s\": %.6f}\n",
           (unsigned long long)c->width * c->height, (unsigned long long)r->hits, r->cast.median, r->cast.min,
           r->cast.max, mrays(c, r->cast.median));
}

static void print_table(const camera *c, const request *rq, const result *r)
{
    printf("%-22s %s\n", "quality", r->quality);
    printf("%-22s %.3f ms (median of %u: min %.3f, max %.3f)\n", "build time", r->build.median, rq->repeat,
           r->build.min, r->build.max);
    printf("%-22s %llu (%ux%u), %llu hits\n", "rays", (unsigned long long)c->width * c->height, c->width,
           c->height, (unsigned long long)r->hits);
    printf("%-22s %.3f ms (median of %u: min %.3f, max %.3f)\n", "ray casting", r->cast.median, rq->repeat,
           r->cast.min, r->cast.max);
    printf("%-22s %.2f Mrays/s\n", "ray rate", mrays(c, r->cast.median));
}

int main(int argc, char **argv)
{
    cli_program = cli_command = "kdalloc-embree";
    setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it is printed, into a pipe too */
    request rq = {.repeat = 5, .width = 1280, .height = 720};
    if (parse_args(argc, argv, &rq)) return 2;
    if (!rq.medium && !rq.high) rq.medium = 1;
    /* The default camera of `kdalloc render`: framed from +z, then the
     * default view chosen (render/view.c), through Embree's rays here. */
    camera cam = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, rq.width, rq.height};
    char err[512], label[512], version[32];
    scene s;
    if (cli_load_scene(&rq.src, &s, label, sizeof label)) return 1;
    camera_frame(s.lo, s.hi, &cam);
    if (camera_check(&cam, err, sizeof err)) {
        cli_error("%s", err);
        scene_free(&s);
        return 2;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 1 ? 1 : (cores > 256 ? 256 : (int)cores);
    embree_scene e;
    if (embree_open(&e, &s, err, sizeof err)) {
        cli_error("%s", err);
        scene_free(&s);
        return 1;
    }
    embree_version(&e, version, sizeof version);
    double *ms = malloc(rq.repeat * sizeof *ms);
    if (!ms) {
        cli_error("out of memory");
        embree_close(&e);
        scene_free(&s);
        return 1;
    }
    FILE *info = rq.json ? stderr : stdout; /* with --json, stdout holds the JSON only */
    fprintf(info, "%-22s %s\n%-22s %u\n%-22s Embree %s, %d threads\n", "scene", label, "triangles", s.n_triangles,
            "builder", version, threads);
    const struct {
        int on;
        const char *name;
        enum RTCBuildQuality q;
    } qualities[] = {{rq.medium, "medium", RTC_BUILD_QUALITY_MEDIUM}, {rq.high, "high", RTC_BUILD_QUALITY_HIGH}};
    const char *view = NULL;
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        if (!qualities[i].on) continue;
        result r = {.quality = qualities[i].name};
        if (time_builds(&e, qualities[i].q, rq.repeat, ms, &r.build)) {
            rc = 1;
            break;
        }
        if (!view) {
            view = camera_choose_view_with(embree_trace, &e, &s, &cam);
            fprintf(info, "%-22s --eye %.9g,%.9g,%.9g --target %.9g,%.9g,%.9g (%s)\n", "camera",
                    ldexpf(cam.eye[0], -s.scale_log2), ldexpf(cam.eye[1], -s.scale_log2),
                    ldexpf(cam.eye[2], -s.scale_log2), ldexpf(cam.target[0], -s.scale_log2),
                    ldexpf(cam.target[1], -s.scale_log2), ldexpf(cam.target[2], -s.scale_log2), view);
        }
        time_rays(&e, &cam, threads, rq.repeat, ms, &r);
        if (rq.json) print_json(label, &s, threads, version, &cam, view, &rq, &r);
        else print_table(&cam, &rq, &r);
        fflush(stdout);
    }
    free(ms);
    embree_close(&e);
    scene_free(&s);
    return rc;
}
