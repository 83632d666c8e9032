/* cmd_render.c - `kdalloc render [FILE] -o out.png`: builds the tree and
 * ray-casts a validation image through it, optionally checking rays
 * against brute force. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "render.h"
#include "tree_source.h"
#if KDA_HAVE_CUDA
#include "gpu_render.h"
#endif

static void render_usage(FILE *f)
{
    fprintf(f, "usage: kdalloc render [FILE] -o OUT.png [options]\n\n"
               "Builds the tree of FILE (default: the built-in scene) and ray-casts an\n"
               "image through it.\n\n"
               "  -o, --output PNG    image to write (required)\n"
               "  --width W           image width in pixels (default 1280)\n"
               "  --height H          image height in pixels (default 720)\n"
               "  --eye X,Y,Z         camera position (default: framed on the scene)\n"
               "  --target X,Y,Z      point looked at (default: the scene's centre)\n"
               "  --up X,Y,Z          up direction (default 0,1,0)\n"
               "  --fov DEG           vertical field of view (default 50)\n"
               "  --shade MODE        diffuse (default), steps (heat map of nodes visited\n"
               "                      per ray) or tests (heat map of triangle tests per ray)\n"
               "  --shadows           add shadow rays toward a light above the scene\n"
               "  --validate [N]      compare N camera rays (all pixels if N is omitted)\n"
               "                      with brute force; exit 3 on any mismatch\n"
               "  --frames K          GPU: time K frames after a warm-up (default 5)\n");
    tree_source_usage(f);
    fprintf(f, "  -h, --help          this help\n");
}

typedef struct render_request {
    render_options opt;
    const char *output;
    int eye_set, target_set;
    int validate;
    uint64_t validate_rays;
    uint32_t frames;
} render_request;

static int parse_shade(const char *arg, shade_mode *mode)
{
    if (!strcmp(arg, "diffuse")) *mode = SHADE_DIFFUSE;
    else if (!strcmp(arg, "steps")) *mode = SHADE_STEPS;
    else if (!strcmp(arg, "tests")) *mode = SHADE_TESTS;
    else {
        cli_error("--shade: '%s' is not a mode (diffuse, steps, tests)", arg);
        return -1;
    }
    return 0;
}

static int is_number(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

static int parse_render_args(int argc, char **argv, render_request *rq, tree_source *ts)
{
    enum { OPT_W = 400, OPT_H, OPT_EYE, OPT_TARGET, OPT_UP, OPT_FOV, OPT_SHADE, OPT_SHADOWS, OPT_VALIDATE, OPT_FRAMES };
    struct option opts[TREE_SOURCE_MAX_OPTIONS + 13];
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
    opts[n++] = (struct option){"validate", optional_argument, 0, OPT_VALIDATE};
    opts[n++] = (struct option){"frames", required_argument, 0, OPT_FRAMES};
    opts[n++] = (struct option){"help", no_argument, 0, 'h'};
    opts[n] = (struct option){0, 0, 0, 0};

    camera *cam = &rq->opt.cam;
    uint64_t v;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1;) {
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
            break;
        case OPT_FOV:
            if (cli_parse_float("--fov", optarg, &cam->fov_deg)) return -1;
            break;
        case OPT_SHADE:
            if (parse_shade(optarg, &rq->opt.mode)) return -1;
            break;
        case OPT_SHADOWS: rq->opt.shadows = 1; break;
        case OPT_VALIDATE:
            rq->validate = 1;
            /* --validate N as well as --validate=N */
            if (!optarg && is_number(argv[optind])) optarg = argv[optind++];
            if (optarg && cli_parse_u64("--validate", optarg, 1, UINT64_MAX, &rq->validate_rays)) return -1;
            break;
        case OPT_FRAMES:
            if (cli_parse_u64("--frames", optarg, 1, 1000, &v)) return -1;
            rq->frames = (uint32_t)v;
            break;
        case 'h': render_usage(stdout); exit(0);
        default: render_usage(stderr); return -1;
        }
    }
    if (tree_source_positional(ts, argc, argv, optind)) return -1;
    if (!rq->output) {
        cli_error("render: missing -o OUT.png");
        return -1;
    }
    return 0;
}

/* Fills in what the user left out: framing, target, up. */
static void complete_camera(render_request *rq, const scene *s)
{
    camera framed = rq->opt.cam;
    camera_frame(s->lo, s->hi, &framed);
    camera *cam = &rq->opt.cam;
    if (!rq->eye_set) memcpy(cam->eye, framed.eye, sizeof cam->eye);
    if (!rq->target_set) memcpy(cam->target, framed.target, sizeof cam->target);
}

static int report_validation(const validation *v)
{
    printf("validation: %llu rays, %llu hits, %llu mismatches against brute force\n",
           (unsigned long long)v->rays, (unsigned long long)v->hits, (unsigned long long)v->mismatches);
    if (v->mismatches) {
        cli_error("validation failed: %s", v->first);
        return 3;
    }
    return 0;
}

/* Renders with the device the tree was built on; prints the timing line. */
static int render_image(const render_request *rq, const tree_result *r, const scene *s, image *img)
{
    char err[CLI_ERR];
    double rays_per_frame = (double)rq->opt.cam.width * rq->opt.cam.height * (rq->opt.shadows ? 2.0 : 1.0);
#if KDA_HAVE_CUDA
    if (r->on_gpu) {
        gpu_render_stats st;
        if (render_gpu(&r->gpu, &r->gpu_scene, &rq->opt, rq->frames, img, &st, err, sizeof err)) {
            cli_error("%s", err);
            return -1;
        }
        printf("render: %ux%u on the GPU, median of %u frames %.3f ms (min %.3f, max %.3f): %.0f Mrays/s\n",
               img->width, img->height, st.frames, st.ms_median, st.ms_min, st.ms_max, st.mrays_per_s);
        return 0;
    }
#endif
    double ms = 0.0;
    if (render_cpu(&r->host, s, &rq->opt, img, &ms, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    printf("render: %ux%u on the CPU in %.1f ms: %.2f Mrays/s\n", img->width, img->height, ms,
           rays_per_frame / (ms * 1e3));
    return 0;
}

static int validate(const render_request *rq, const tree_result *r, const scene *s, validation *v)
{
    char err[CLI_ERR];
    int rc;
#if KDA_HAVE_CUDA
    if (r->on_gpu)
        rc = validate_camera_rays_gpu(&r->gpu, &r->gpu_scene, &rq->opt.cam, rq->validate_rays, v, err, sizeof err);
    else
#endif
        rc = validate_camera_rays_cpu(&r->host, s, &rq->opt.cam, rq->validate_rays, v, err, sizeof err);
    if (rc) cli_error("%s", err);
    return rc;
}

int cmd_render(int argc, char **argv)
{
    render_request rq = {0};
    rq.opt.cam = (camera){{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, 1280, 720};
    rq.frames = 5;
    tree_source ts;
    tree_source_init(&ts);
    if (parse_render_args(argc, argv, &rq, &ts)) return 2;

    scene s;
    char label[256], err[CLI_ERR];
    if (cli_load_scene(&ts.scene, &s, label, sizeof label)) return 1;
    complete_camera(&rq, &s);
    if (camera_check(&rq.opt.cam, err, sizeof err)) {
        cli_error("%s", err);
        scene_free(&s);
        return 2;
    }
    tree_result r;
    int rc = tree_build(&ts, &s, &r) ? 1 : 0;
    image img = {0};
    if (rc == 0) {
        printf("tree: %u nodes, %.2f references per triangle, built in %.3f ms\n", r.stats.n_nodes,
               r.stats.refs_per_triangle, r.stats.build_ms);
        rc = render_image(&rq, &r, &s, &img) ? 1 : 0;
    }
    if (rc == 0) {
        if (image_write_png(&img, rq.output, err, sizeof err)) {
            cli_error("%s", err);
            rc = 1;
        } else {
            printf("wrote %s\n", rq.output);
        }
    }
    if (rc == 0 && rq.validate) {
        validation v;
        rc = validate(&rq, &r, &s, &v) ? 1 : report_validation(&v);
    }
    image_free(&img);
    tree_result_free(&r);
    scene_free(&s);
    return rc;
}
