/* tree_source.c - scene and builder options shared by build and render. */
#include <stdlib.h>
#include <string.h>

#include "tree_source.h"

enum { OPT_SCENE = 300, OPT_TRIANGLES, OPT_CPU, OPT_GPU, OPT_REPEAT, OPT_POOL_FACTOR, OPT_POOL_MB };

void tree_source_init(tree_source *ts)
{
    memset(ts, 0, sizeof *ts);
    ts->device = DEVICE_AUTO;
    ts->pool_factor = 200.0; /* the paper's Table 3 setting */
    ts->repeat = 1;
}

int tree_source_options(struct option *o)
{
    int n = 0;
    o[n++] = (struct option){"scene", required_argument, 0, OPT_SCENE};
    o[n++] = (struct option){"triangles", required_argument, 0, OPT_TRIANGLES};
    o[n++] = (struct option){"cpu", no_argument, 0, OPT_CPU};
    o[n++] = (struct option){"gpu", no_argument, 0, OPT_GPU};
    o[n++] = (struct option){"repeat", required_argument, 0, OPT_REPEAT};
    o[n++] = (struct option){"pool-factor", required_argument, 0, OPT_POOL_FACTOR};
    o[n++] = (struct option){"pool-mb", required_argument, 0, OPT_POOL_MB};
    return n;
}

void tree_source_usage(FILE *f)
{
    fprintf(f, "  --scene NAME        a built-in scene instead of FILE:");
    for (const char *const *n = scene_generator_names(); *n; n++) fprintf(f, " %s", *n);
    fprintf(f, "\n"
               "  --triangles N       size of a scalable built-in scene (e.g. spheres)\n"
               "  --cpu               build (and render) on the CPU\n"
               "  --gpu               require the GPU (default: GPU when one is usable)\n"
               "  --repeat R          GPU: time R builds after a warm-up (median/min/max)\n"
               "  --pool-factor F     GPU: allocator pool = F x the root triangle array (default 200)\n"
               "  --pool-mb M         GPU: allocator pool of M MiB instead\n");
}

int tree_source_option(tree_source *ts, int c, const char *arg)
{
    uint64_t v;
    float f;
    switch (c) {
    case OPT_SCENE: ts->scene.generator = arg; return 1;
    case OPT_TRIANGLES:
        if (cli_parse_u64("--triangles", arg, 1, UINT32_MAX, &ts->scene.triangles)) return -1;
        return 1;
    case OPT_CPU: ts->device = DEVICE_CPU; return 1;
    case OPT_GPU: ts->device = DEVICE_GPU; return 1;
    case OPT_REPEAT:
        if (cli_parse_u64("--repeat", arg, 1, 1000, &v)) return -1;
        ts->repeat = (uint32_t)v;
        return 1;
    case OPT_POOL_FACTOR:
        if (cli_parse_float("--pool-factor", arg, &f)) return -1;
        if (!(f >= 1.0f && f <= 100000.0f)) {
            cli_error("--pool-factor: %s is outside 1 to 100000", arg);
            return -1;
        }
        ts->pool_factor = f;
        return 1;
    case OPT_POOL_MB:
        if (cli_parse_u64("--pool-mb", arg, 1, 1u << 24, &ts->pool_mb)) return -1;
        return 1;
    default: return 0;
    }
}

int tree_source_positional(tree_source *ts, int argc, char **argv, int first)
{
    if (first < argc) ts->scene.path = argv[first++];
    if (first < argc) {
        cli_error("unexpected argument '%s' (one scene file at most)", argv[first]);
        return -1;
    }
    if (ts->scene.path && ts->scene.generator) {
        cli_error("give a scene FILE or --scene NAME, not both");
        return -1;
    }
    if (ts->scene.triangles && ts->scene.path) {
        cli_error("--triangles sizes a built-in scene; it does not apply to %s", ts->scene.path);
        return -1;
    }
    return 0;
}

static int build_cpu(const scene *s, tree_result *r)
{
    char err[CLI_ERR];
    r->builder = "CPU, exact SAH (event sweep)";
    if (kdtree_build_cpu(s, &r->host, &r->stats, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

int tree_build(const tree_source *ts, const scene *s, tree_result *r)
{
    memset(r, 0, sizeof *r);
    if (ts->device == DEVICE_GPU) {
        cli_error("this kdalloc was built without CUDA: no GPU path (use --cpu, or rebuild with nvcc installed)");
        return -1;
    }
    fprintf(stderr, "device: CPU (%s)\n",
            ts->device == DEVICE_CPU ? "--cpu" : "this kdalloc was built without CUDA");
    return build_cpu(s, r);
}

int tree_result_check(tree_result *r, const scene *s)
{
    char err[CLI_ERR];
    if (kdtree_check(&r->host, s, err, sizeof err)) {
        cli_error("tree check failed: %s", err);
        return -1;
    }
    fprintf(stderr, "check: tree invariants hold\n");
    return 0;
}

void tree_result_print_gpu_table(const tree_result *r) { (void)r; }

void tree_result_print_gpu_json(const tree_result *r) { (void)r; }

void tree_result_free(tree_result *r) { kdtree_free(&r->host); }
