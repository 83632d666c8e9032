/* cmd_render.c - `kdalloc render [FILE] -o out.png`: builds the tree and
 * ray-casts a validation image through it, optionally checking rays
 * against brute force.  The limits the options take are the ones
 * render_usage states. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "outfile.h"
#include "progress.h"
#include "render.h"
#include "shade.h"
#include "tree_source.h"
#if KDA_HAVE_CUDA
#include "gpu_render.h"
#endif

#define VALIDATE_DEFAULT 10000u      /* rays a bare --validate checks */
#define VALIDATE_MAX 1000000000ull  /* the most --validate N takes */
#define FRAMES_MAX 1000u

static void render_usage(FILE *f)
{
    fprintf(f, "usage: kdalloc render [FILE] -o OUT.png [options]\n\n"
               "Builds the tree of FILE (default: the built-in scene) and ray-casts an\n"
               "image through it.\n\n"
               "  -o, --output PNG    image to write (required; - for standard output)\n"
               "  --width W           image width in pixels (1 to %u; default 1280)\n"
               "  --height H          image height in pixels (1 to %u; default 720); at most\n"
               "                      %llu pixels in all\n"
               "  --eye X,Y,Z         camera position\n"
               "  --target X,Y,Z      point looked at\n"
               "  --up X,Y,Z          up direction (default 0,1,0)\n"
               "                      Without these the default view is chosen (outside, or\n"
               "                      inside where the outside view sees mostly the faces of\n"
               "                      the scene's box: a room, or a wide floor); with some, the\n"
               "                      scene is framed from +z for the rest.  The camera used is\n"
               "                      printed.\n"
               "  --fov DEG           vertical field of view, above 0 and below 180, at least\n"
               "                      2.5e-7 radians a pixel of the height (default 50)\n"
               "  --shade MODE        diffuse (default), steps (heat map of nodes visited\n"
               "                      per ray), tests (heat map of triangle tests per ray) or\n"
               "                      ao (ambient occlusion: occlusion rays from every hit)\n"
               "  --ao-rays N         ao: rays per hit, cosine-weighted about the normal and\n"
               "                      the same for a pixel every run (1 to %u; default %u)\n"
               "  --ao-radius R       ao: how far they look, in the file's units (above 0;\n"
               "                      default %g of the scene's bounding-box diagonal)\n"
               "  --shadows           add shadow rays toward a light above the scene, or inside\n"
               "                      its box where the outside view sees mostly the box's faces\n"
               "                      (a room, or a wide floor); the light is printed.\n"
               "                      Shadow and ao rays stop at the first thing they hit\n"
               "  --validate [N|all]  compare N camera rays (1 to %llu; without N, %u, or\n"
               "                      every pixel of a smaller image; all: every pixel) with\n"
               "                      brute force, and the shadow and ao rays of their hits;\n"
               "                      exit 3 on any mismatch.  N at or above the pixel count\n"
               "                      is all: every pixel once\n"
               "  --frames K          GPU: time K frames after a warm-up (1 to %u; default 5);\n"
               "                      with shadow or ao rays, also K frames of the camera rays\n"
               "                      alone (the passes: line)\n"
               "  --json              print the results as one JSON object on stdout (the\n"
               "                      other lines go to stderr); first_image_ms: the build\n"
               "                      and the first frame; primary_ms and secondary_ms: the\n"
               "                      camera rays alone and what the others add (GPU)\n",
            CAMERA_MAX_SIDE, CAMERA_MAX_SIDE, (unsigned long long)CAMERA_MAX_PIXELS, AO_RAYS_MAX, AO_RAYS_DEFAULT,
            (double)AO_RADIUS_DEFAULT, VALIDATE_MAX, VALIDATE_DEFAULT, FRAMES_MAX);
    tree_source_usage(f);
    fprintf(f, "  -h, --help          this help\n");
}

typedef struct render_request {
    render_options opt;
    const char *output;
    int eye_set, target_set, up_set;
    int ao_set; /* --ao-rays or --ao-radius given */
    int json;
    int validate;
    uint64_t validate_rays; /* 0: every pixel */
    uint32_t frames;
} render_request;

static int parse_shade(const char *arg, shade_mode *mode)
{
    if (!strcmp(arg, "diffuse")) *mode = SHADE_DIFFUSE;
    else if (!strcmp(arg, "steps")) *mode = SHADE_STEPS;
    else if (!strcmp(arg, "tests")) *mode = SHADE_TESTS;
    else if (!strcmp(arg, "ao")) *mode = SHADE_AO;
    else {
        cli_usage_error("--shade takes diffuse, steps, tests or ao, not '%s'", arg);
        return -1;
    }
    return 0;
}

/* What follows a bare --validate is its count when it looks like one (a
 * number, signed or not, or "all"); anything else (the scene FILE, an
 * option) is left to the rest of the command line. */
static int is_count(const char *s)
{
    if (!s) return 0;
    if (!strcasecmp(s, "all")) return 1; /* ALL too: a file of that name would be ambiguous anyway */
    if (*s == '-' || *s == '+') s++;
    return *s >= '0' && *s <= '9';
}

/* --validate's value: all, or N (a count of rays, 0 meaning every pixel). */
static int parse_validate(const char *arg, uint64_t *rays)
{
    if (!strcasecmp(arg, "all")) {
        *rays = 0;
        return 0;
    }
    char *end;
    unsigned long long v = strtoull(arg, &end, 10);
    if (!(arg[0] >= '0' && arg[0] <= '9') || *end || v < 1 || v > VALIDATE_MAX) {
        cli_usage_error("--validate takes a count of rays from 1 to %llu, or all (every pixel), not '%s'",
                        VALIDATE_MAX, arg);
        return -1;
    }
    *rays = v;
    return 0;
}

/* 0: parsed; 1: the help was printed; -1: a usage error, said on stderr. */
static int parse_render_args(int argc, char **argv, render_request *rq, tree_source *ts)
{
    enum { OPT_W = 400, OPT_H, OPT_EYE, OPT_TARGET, OPT_UP, OPT_FOV, OPT_SHADE, OPT_SHADOWS, OPT_VALIDATE, OPT_FRAMES,
           OPT_JSON, OPT_AO_RAYS, OPT_AO_RADIUS };
    struct option opts[TREE_SOURCE_MAX_OPTIONS + 16];
    int n = tree_source_options(opts);
    opts[n++] = (struct option){"output", required_argument, 0, 'o'};
    opts[n++] = (struct option){"width", required_argument, 0, OPT_W};
    opts[n++] = (struct option){"height", required_argument, 0, OPT_H};
    opts[n++] = (struct option){"eye", required_argument, 0, OPT_EYE};
    opts[n++] = (struct option){"target", required_argument, 0, OPT_TARGET};
    opts[n++] = (struct option){"up", required_argument, 0, OPT_UP};
    opts[n++] = (struct option){"fov", required_argument, 0, OPT_FOV};
    opts[n++] = (struct option){"shade", required_argument, 0, OPT_SHADE};
    opts[n++] = (struct option){"shadows", no_argument, 0, OPT_SHADOWS};
    opts[n++] = (struct option){"ao-rays", required_argument, 0, OPT_AO_RAYS};
    opts[n++] = (struct option){"ao-radius", required_argument, 0, OPT_AO_RADIUS};
    opts[n++] = (struct option){"validate", optional_argument, 0, OPT_VALIDATE};
    opts[n++] = (struct option){"frames", required_argument, 0, OPT_FRAMES};
    opts[n++] = (struct option){"json", no_argument, 0, OPT_JSON};
    opts[n++] = (struct option){"help", no_argument, 0, 'h'};
    opts[n] = (struct option){0, 0, 0, 0};

    camera *cam = &rq->opt.cam;
    uint64_t v;
    int validate_bare = 0;
    cli_command = "kdalloc render";
    optind = 1;
    opterr = 0; /* cli_option_error says what was wrong */
    for (int c; (c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1;) {
        int r = tree_source_option(ts, c, optarg);
        if (r == 1) continue;
        if (r < 0) return -1;
        switch (c) {
        case 'o': rq->output = optarg; break;
        case OPT_W:
        case OPT_H:
            if (cli_parse_u64(c == OPT_W ? "--width" : "--height", optarg, 1, CAMERA_MAX_SIDE, &v)) return -1;
            *(c == OPT_W ? &cam->width : &cam->height) = (uint32_t)v;
            break;
        case OPT_EYE:
            if (cli_parse_vec3("--eye", optarg, cam->eye)) return -1;
            rq->eye_set = 1;
            break;
        case OPT_TARGET:
            if (cli_parse_vec3("--target", optarg, cam->target)) return -1;
            rq->target_set = 1;
            break;
        case OPT_UP:
            if (cli_parse_vec3("--up", optarg, cam->up)) return -1;
            rq->up_set = 1;
            break;
        case OPT_FOV:
            if (cli_parse_float("--fov", optarg, &cam->fov_deg)) return -1;
            if (!(cam->fov_deg > 0.0f && cam->fov_deg < 180.0f)) {
                cli_usage_error("--fov takes a field of view in degrees above 0 and below 180, not '%s'", optarg);
                return -1;
            }
            break;
        case OPT_SHADE:
            if (parse_shade(optarg, &rq->opt.mode)) return -1;
            break;
        case OPT_SHADOWS: rq->opt.shadows = 1; break;
        case OPT_AO_RAYS:
            if (cli_parse_u64("--ao-rays", optarg, 1, AO_RAYS_MAX, &v)) return -1;
            rq->opt.ao_rays = (uint32_t)v;
            rq->ao_set = 1;
            break;
        case OPT_AO_RADIUS:
            if (cli_parse_float("--ao-radius", optarg, &rq->opt.ao_radius)) return -1;
            if (!(rq->opt.ao_radius > 0.0f) || !isfinite(rq->opt.ao_radius)) {
                cli_usage_error("--ao-radius takes a distance above 0, not '%s'", optarg);
                return -1;
            }
            rq->ao_set = 1;
            break;
        case OPT_JSON: rq->json = 1; break;
        case OPT_VALIDATE:
            rq->validate = 1;
            /* --validate N as well as --validate=N */
            if (!optarg && is_count(argv[optind])) optarg = argv[optind++];
            if (optarg && parse_validate(optarg, &rq->validate_rays)) return -1;
            validate_bare = !optarg;
            break;
        case OPT_FRAMES:
            if (cli_parse_u64("--frames", optarg, 1, FRAMES_MAX, &v)) return -1;
            rq->frames = (uint32_t)v;
            tree_source_gpu_only(ts, "--frames");
            break;
        case 'h': render_usage(stdout); return 1;
        default: cli_option_error(c, argv, opts); return -1;
        }
    }
    if (cli_scene_positional(&ts->scene, argc, argv, optind) || tree_source_check(ts)) return -1;
    if (!rq->output) {
        cli_usage_error("render: missing -o OUT.png");
        return -1;
    }
    if (rq->ao_set && rq->opt.mode != SHADE_AO) {
        cli_usage_error("--ao-rays and --ao-radius go with --shade ao");
        return -1;
    }
    uint64_t pixels = (uint64_t)cam->width * cam->height;
    if (validate_bare) /* VALIDATE_DEFAULT rays, or every pixel of a smaller image */
        rq->validate_rays = pixels <= VALIDATE_DEFAULT ? 0 : VALIDATE_DEFAULT;
    else if (rq->validate_rays >= pixels) /* more would check pixels again, the same rays */
        rq->validate_rays = 0;
    return 0;
}


/* Takes the user's points into the scene's (possibly scaled) units and
 * frames the scene from +z for what the user left out. */
static void complete_camera(render_request *rq, const scene *s)
{
    camera *cam = &rq->opt.cam;
    for (int a = 0; a < 3; a++) {
        cam->eye[a] = ldexpf(cam->eye[a], s->scale_log2);
        cam->target[a] = ldexpf(cam->target[a], s->scale_log2);
    }
    if (rq->opt.ao_radius > 0.0f) rq->opt.ao_radius = ldexpf(rq->opt.ao_radius, s->scale_log2);
    else {
        float d[3] = {s->hi[0] - s->lo[0], s->hi[1] - s->lo[1], s->hi[2] - s->lo[2]};
        rq->opt.ao_radius = AO_RADIUS_DEFAULT * sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (!(rq->opt.ao_radius > 0.0f)) rq->opt.ao_radius = 1.0f; /* a scene flat in every direction */
    }
    camera framed = *cam;
    camera_frame(s->lo, s->hi, &framed);
    if (!rq->eye_set) memcpy(cam->eye, framed.eye, sizeof cam->eye);
    if (!rq->target_set) memcpy(cam->target, framed.target, sizeof cam->target);
}

/* The camera in the file's units, as options that repeat it. */
static void print_camera(FILE *f, const camera *c, int scale_log2, const char *view)
{
    fprintf(f, "camera: --eye %.9g,%.9g,%.9g --target %.9g,%.9g,%.9g --up %.9g,%.9g,%.9g --fov %.9g "
               "--width %u --height %u (%s)\n",
            ldexpf(c->eye[0], -scale_log2), ldexpf(c->eye[1], -scale_log2), ldexpf(c->eye[2], -scale_log2),
            ldexpf(c->target[0], -scale_log2), ldexpf(c->target[1], -scale_log2),
            ldexpf(c->target[2], -scale_log2), c->up[0], c->up[1], c->up[2], c->fov_deg, c->width, c->height,
            view);
}

/* The shadows' light: inside a closed scene, else above it (as
 * camera_make_basis places it for this camera); printed in the file's
 * units. */
static void choose_light(FILE *info, render_options *opt, const tree_result *r, const scene *s)
{
    const char *where = "inside the scene's box: the outside view sees mostly its faces";
    if (light_choose(&r->host, s, opt->light)) {
        opt->light_set = 1;
    } else {
        camera_basis b;
        camera_make_basis(&opt->cam, s->lo, s->hi, &b);
        memcpy(opt->light, b.light, sizeof opt->light);
        where = "above the scene, on the camera's side and to its left";
    }
    fprintf(info, "light: %.9g,%.9g,%.9g (%s)\n", ldexpf(opt->light[0], -s->scale_log2),
            ldexpf(opt->light[1], -s->scale_log2), ldexpf(opt->light[2], -s->scale_log2), where);
}

static void json_vec3(const char *key, const float v[3], int scale_log2)
{
    printf("\"%s\": [", key);
    for (int a = 0; a < 3; a++) {
        if (a) printf(", ");
        cli_json_number(ldexpf(v[a], -scale_log2));
    }
    printf("]");
}

static int report_validation(FILE *info, const render_request *rq, const validation *v)
{
    fprintf(info, "validation: %llu rays%s, %llu hits, %llu mismatches against brute force\n",
            (unsigned long long)v->rays, rq->validate_rays ? "" : " (every pixel)", (unsigned long long)v->hits,
            (unsigned long long)v->mismatches);
    if (v->occlusion_rays)
        fprintf(info, "validation: %llu shadow and ao rays, %llu occluded, %llu mismatches against brute force\n",
                (unsigned long long)v->occlusion_rays, (unsigned long long)v->occluded,
                (unsigned long long)v->occlusion_mismatches);
    if (v->mismatches || v->occlusion_mismatches) {
        cli_error("validation failed: %s", v->first);
        return 3;
    }
    return 0;
}

/* How long one frame took, and the ray rate (0 when too fast to time);
 * first_ms: the first frame (on the GPU its warm-up, with the copy of the
 * triangles the leaves read), what the first image waits for after the
 * build; on the GPU, the primary pass apart (gpu_render_stats), NAN on the
 * CPU. */
typedef struct frame_timing {
    double ms, mrays_per_s, first_ms;
    double primary_ms, secondary_ms;
} frame_timing;

/* Mrays/s of `rays` in `ms` (0 when too fast to time). */
static double mrays_per_s(double rays, double ms) { return ms > 0.0 ? rays / (ms * 1e3) : 0.0; }

/* Renders with the device the tree was built on; prints the timing line. */
static int render_image(FILE *info, const render_request *rq, const tree_result *r, const scene *s, image *img,
                        frame_timing *ft)
{
    char err[CLI_ERR];
    double rays_per_frame = (double)rq->opt.cam.width * rq->opt.cam.height * render_rays_per_pixel(&rq->opt);
#if KDA_HAVE_CUDA
    if (r->on_gpu) {
        gpu_render_stats st;
        if (render_gpu(&r->gpu, &r->gpu_scene, &rq->opt, rq->frames, img, &st, err, sizeof err)) {
            cli_error("%s", err);
            return -1;
        }
        ft->ms = st.ms_median;
        ft->first_ms = st.ms_first;
        ft->primary_ms = st.ms_primary;
        ft->secondary_ms = st.ms_secondary;
        ft->mrays_per_s = mrays_per_s(rays_per_frame, st.ms_median);
        fprintf(info, "render: %ux%u on the GPU, median of %u frames %.3f ms (min %.3f, max %.3f): %.0f Mrays/s\n",
                img->width, img->height, st.frames, st.ms_median, st.ms_min, st.ms_max, ft->mrays_per_s);
        if (st.ms_secondary != 0.0) {
            double pixels = (double)img->width * img->height;
            fprintf(info, "passes: camera rays alone %.3f ms (%.0f Mrays/s); the secondary rays add %.3f ms (%.0f "
                    "Mrays/s)\n", st.ms_primary, mrays_per_s(pixels, st.ms_primary), st.ms_secondary,
                    mrays_per_s(rays_per_frame - pixels, st.ms_secondary));
        }
        return 0;
    }
#endif
    if (render_cpu(&r->host, s, &rq->opt, img, &ft->ms, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    ft->first_ms = ft->ms;
    ft->primary_ms = ft->secondary_ms = NAN; /* one pass on the CPU, not timed apart */
    ft->mrays_per_s = mrays_per_s(rays_per_frame, ft->ms);
    fprintf(info, "render: %ux%u on the CPU in %.1f ms: %.2f Mrays/s\n", img->width, img->height, ft->ms,
            ft->mrays_per_s);
    return 0;
}

/* Checks the rays in parts, so that a terminal can show how far it got. */
static int validate(const render_request *rq, const tree_result *r, const scene *s, validation *v)
{
    char err[CLI_ERR];
    const camera *c = &rq->opt.cam;
    uint64_t n = rq->validate_rays, total = n ? n : (uint64_t)c->width * c->height;
    uint64_t part = r->on_gpu ? 1u << 20 : 1024u;
    int rc = 0;
    progress p;
    memset(v, 0, sizeof *v);
    progress_begin(&p, "validation: rays checked", total);
    for (uint64_t first = 0; first < total && rc == 0; first += part) {
        uint64_t count = total - first < part ? total - first : part;
#if KDA_HAVE_CUDA
        if (r->on_gpu)
            rc = validate_camera_rays_gpu_part(&r->gpu, &r->gpu_scene, &rq->opt, n, first, count, v, err, sizeof err);
        else
#endif
            rc = validate_camera_rays_cpu_part(&r->host, s, &rq->opt, n, first, count, v, err, sizeof err);
        progress_set(&p, first + count);
    }
    progress_end(&p);
    if (rc) cli_error("%s", err);
    return rc;
}

static void print_json(const render_request *rq, const char *label, const scene *s, const tree_result *r,
                       const char *view, const frame_timing *ft, const validation *v)
{
    const camera *c = &rq->opt.cam;
    printf("{");
    cli_json_string("scene", label);
    cli_json_scene_notes(s);
    printf(", \"scale_log2\": %d, ", s->scale_log2);
    cli_json_string("builder", r->builder);
    printf(", \"nodes\": %u, \"refs_per_tri\": ", r->stats.n_nodes);
    cli_json_number(r->stats.refs_per_triangle);
    printf(", \"sah_cost\": ");
    cli_json_number(r->stats.sah_cost);
    printf(", \"build_ms\": ");
    cli_json_number(r->stats.build_ms);
    printf(", \"camera\": {");
    json_vec3("eye", c->eye, s->scale_log2);
    printf(", ");
    json_vec3("target", c->target, s->scale_log2);
    printf(", ");
    json_vec3("up", c->up, 0);
    printf(", \"fov\": ");
    cli_json_number(c->fov_deg);
    printf(", \"width\": %u, \"height\": %u, ", c->width, c->height);
    cli_json_string("view", view);
    printf("}");
    if (rq->opt.shadows) {
        printf(", ");
        json_vec3("light", rq->opt.light, s->scale_log2);
    }
    if (rq->opt.mode == SHADE_AO) {
        printf(", \"ao_rays\": %u, \"ao_radius\": ", render_shade_params(&rq->opt).ao_rays);
        cli_json_number(ldexpf(rq->opt.ao_radius, -s->scale_log2));
    }
    printf(", \"rays_per_pixel\": ");
    cli_json_number(render_rays_per_pixel(&rq->opt));
    printf(", \"render_ms\": ");
    cli_json_number(ft->ms);
    printf(", \"first_frame_ms\": ");
    cli_json_number(ft->first_ms);
    printf(", \"first_image_ms\": ");
    cli_json_number(r->stats.build_ms + ft->first_ms);
    printf(", \"mrays_per_s\": ");
    cli_json_number(ft->mrays_per_s);
    double pixels = (double)c->width * c->height, secondary = pixels * (render_rays_per_pixel(&rq->opt) - 1.0);
    printf(", \"primary_ms\": ");
    cli_json_number(ft->primary_ms);
    printf(", \"primary_mrays_per_s\": ");
    cli_json_number(isfinite(ft->primary_ms) ? mrays_per_s(pixels, ft->primary_ms) : NAN);
    printf(", \"secondary_ms\": ");
    cli_json_number(ft->secondary_ms);
    printf(", \"secondary_mrays_per_s\": ");
    cli_json_number(isfinite(ft->secondary_ms) && secondary > 0.0 ? mrays_per_s(secondary, ft->secondary_ms) : NAN);
    printf(", ");
    cli_json_string("output", rq->output);
    if (v)
        printf(", \"validation\": {\"rays\": %llu, \"hits\": %llu, \"mismatches\": %llu, \"occlusion_rays\": %llu, "
               "\"occluded\": %llu, \"occlusion_mismatches\": %llu}",
               (unsigned long long)v->rays, (unsigned long long)v->hits, (unsigned long long)v->mismatches,
               (unsigned long long)v->occlusion_rays, (unsigned long long)v->occluded,
               (unsigned long long)v->occlusion_mismatches);
    printf("}\n");
}

/* Whether the output is standard output: "-", or the file it writes to. */
static int output_is_stdout(const render_request *rq)
{
    struct stat out, std;
    if (!strcmp(rq->output, "-")) return 1;
    return stat(rq->output, &out) == 0 && fstat(STDOUT_FILENO, &std) == 0 && std.st_dev == out.st_dev &&
           std.st_ino == out.st_ino;
}

/* An existing output that is the scene file itself, or standard output
 * while --json prints there: a usage error (the render would destroy its
 * input, or the PNG and the JSON would share one stream). */
static int output_conflicts(const render_request *rq, const tree_source *ts)
{
    struct stat out, other;
    if (rq->json && output_is_stdout(rq)) {
        cli_usage_error("-o %s is standard output, where --json prints: write the PNG to a file", rq->output);
        return 1;
    }
    if (stat(rq->output, &out)) return 0; /* a new file, or standard output */
    if (ts->scene.path && stat(ts->scene.path, &other) == 0 && other.st_dev == out.st_dev &&
        other.st_ino == out.st_ino) {
        cli_usage_error("-o %s is the scene file itself: the PNG would overwrite it", rq->output);
        return 1;
    }
    return 0;
}

int cmd_render(int argc, char **argv)
{
    render_request rq = {0};
    rq.opt.cam = (camera){{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, 1280, 720};
    rq.frames = 5;
    tree_source ts;
    tree_source_init(&ts);
    int parsed = parse_render_args(argc, argv, &rq, &ts);
    if (parsed) return parsed < 0 ? 2 : 0; /* a usage error, or the help printed */
    /* With --json stdout holds the JSON only; with -o naming it, the PNG only. */
    FILE *info = rq.json || output_is_stdout(&rq) ? stderr : stdout;

    scene s;
    char label[256], err[CLI_ERR];
    if (outfile_check(rq.output, err, sizeof err)) { /* before the scene is loaded */
        cli_error("%s", err);
        return 1;
    }
    if (output_conflicts(&rq, &ts)) return 2;
    if (camera_check_size(&rq.opt.cam, err, sizeof err)) { /* before the scene is loaded, as -o */
        cli_usage_error("%s", err);
        return 2;
    }
    if (cli_load_scene(&ts.scene, &s, label, sizeof label)) return 1;
    complete_camera(&rq, &s);
    if (camera_check(&rq.opt.cam, err, sizeof err)) {
        cli_usage_error("%s", err);
        scene_free(&s);
        return 2;
    }
    tree_result r;
    int rc = tree_build(&ts, &s, &r) ? 1 : 0;
    image img = {0};
    frame_timing ft = {0, 0, 0, NAN, NAN};
    const char *view = rq.eye_set && rq.target_set ? "given"
                       : rq.eye_set                ? "eye given, looking at the scene's centre"
                       : rq.target_set             ? "target given, eye outside from +z"
                                                   : "outside from +z";
    if (rc == 0) {
        fprintf(info, "tree: %u nodes, %.2f references per triangle, built in %.3f ms\n", r.stats.n_nodes,
                r.stats.refs_per_triangle, r.stats.build_ms);
        if (!rq.eye_set && !rq.target_set && !rq.up_set) view = camera_choose_view(&r.host, &s, &rq.opt.cam);
        print_camera(info, &rq.opt.cam, s.scale_log2, view);
        if (rq.opt.shadows) choose_light(info, &rq.opt, &r, &s);
        if (rq.opt.mode == SHADE_AO)
            fprintf(info, "ao: %u rays a hit, out to %.9g\n", render_shade_params(&rq.opt).ao_rays,
                    ldexpf(rq.opt.ao_radius, -s.scale_log2));
        rc = render_image(info, &rq, &r, &s, &img, &ft) ? 1 : 0;
        if (rc == 0)
            fprintf(info, "first image: %.3f ms (the build %.3f, the first frame %.3f)\n",
                    r.stats.build_ms + ft.first_ms, r.stats.build_ms, ft.first_ms);
    }
    if (rc == 0) {
        if (image_write_png(&img, rq.output, err, sizeof err)) {
            cli_error("%s", err);
            rc = 1;
        } else {
            fprintf(info, "wrote %s\n", outfile_name(rq.output));
        }
    }
    validation v;
    if (rc == 0 && rq.validate) rc = validate(&rq, &r, &s, &v) ? 1 : report_validation(info, &rq, &v);
    if (rq.json && (rc == 0 || rc == 3)) print_json(&rq, label, &s, &r, view, &ft, rq.validate ? &v : NULL);
    image_free(&img);
    tree_result_free(&r);
    scene_free(&s);
    return rc;
}
