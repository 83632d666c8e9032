/* tree_source.c - scene and builder options shared by build and render.
 * The limits the options take are the ones tree_source_usage states. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdalloc/kdalloc.h"
#include "progress.h"
#include "tree_source.h"

#define REPEAT_MAX 1000u
#define POOL_FACTOR_MIN 1.0
#define POOL_FACTOR_MAX 100000.0
#define POOL_MB_MAX (1ull << 24)
#define WATCHDOG_MAX 3600u

enum {
    OPT_SCENE = 300,
    OPT_TRIANGLES,
    OPT_CPU,
    OPT_GPU,
    OPT_REPEAT,
    OPT_POOL,
    OPT_POOL_START,
    OPT_POOL_FACTOR,
    OPT_POOL_MB,
    OPT_WATCHDOG
};

void tree_source_init(tree_source *ts)
{
    memset(ts, 0, sizeof *ts);
    ts->device = DEVICE_AUTO;
    ts->pool_factor = 200.0; /* the paper's Table 3 setting */
    ts->repeat = 1;
    ts->watchdog_s = 10.0;
}

int tree_source_options(struct option *o)
{
    int n = 0;
    o[n++] = (struct option){"scene", required_argument, 0, OPT_SCENE};
    o[n++] = (struct option){"triangles", required_argument, 0, OPT_TRIANGLES};
    o[n++] = (struct option){"cpu", no_argument, 0, OPT_CPU};
    o[n++] = (struct option){"gpu", no_argument, 0, OPT_GPU};
    o[n++] = (struct option){"repeat", required_argument, 0, OPT_REPEAT};
    o[n++] = (struct option){"pool", required_argument, 0, OPT_POOL};
    o[n++] = (struct option){"pool-start", required_argument, 0, OPT_POOL_START};
    o[n++] = (struct option){"pool-factor", required_argument, 0, OPT_POOL_FACTOR};
    o[n++] = (struct option){"pool-mb", required_argument, 0, OPT_POOL_MB};
    o[n++] = (struct option){"watchdog", required_argument, 0, OPT_WATCHDOG};
    return n;
}

void tree_source_usage(FILE *f)
{
    fprintf(f, "  --scene NAME        a built-in scene instead of FILE:");
    for (const char *const *n = scene_generator_names(); *n; n++) fprintf(f, " %s", *n);
    fprintf(f, "\n"
               "  --triangles N       size of a scalable built-in scene, 1 to %llu (each scene's\n"
               "                      range and default: kdalloc gen --help)\n"
               "  --cpu               build (and render) on the CPU; the allocator compiled in is\n"
               "                      not used there, nor are the options marked GPU\n"
               "  --gpu               require the GPU (default: GPU when one is usable)\n"
               "  --repeat R          GPU: time R builds after a warm-up (median/min/max; 1 to %u,\n"
               "                      default 1)\n"
               "  --pool auto|fixed   GPU: a pool that grows as the build needs it (default), where the\n"
               "                      allocator can grow; or a fixed pool (--pool-factor, --pool-mb)\n"
               "  --pool-start F      GPU, --pool auto: start at F x the root triangle array (%g to %g;\n"
               "                      default 2, 32 for allocators that never reuse memory)\n"
               "  --pool-factor F     GPU: a fixed pool of F x the root triangle array (%g to %g;\n"
               "                      --pool fixed: 200)\n"
               "  --pool-mb M         GPU: a fixed pool of M MiB instead (1 to %llu)\n"
               "  --watchdog S        GPU: a build without progress for S seconds is stuck (0 to %u;\n"
               "                      default 10; 0: off)\n",
            (unsigned long long)cli_triangles_max(), REPEAT_MAX, POOL_FACTOR_MIN, POOL_FACTOR_MAX, POOL_FACTOR_MIN,
            POOL_FACTOR_MAX, (unsigned long long)POOL_MB_MAX, WATCHDOG_MAX);
}

/* A multiple of the root array. */
static int parse_pool_factor(const char *name, const char *arg, double *out)
{
    float f;
    if (cli_parse_float(name, arg, &f)) return -1;
    if (!(f >= POOL_FACTOR_MIN && f <= POOL_FACTOR_MAX)) {
        cli_usage_error("%s takes a number from %g to %g, not '%s'", name, POOL_FACTOR_MIN, POOL_FACTOR_MAX, arg);
        return -1;
    }
    *out = f;
    return 0;
}

void tree_source_gpu_only(tree_source *ts, const char *opt)
{
    size_t len = strlen(ts->gpu_only), n = strlen(opt);
    for (const char *p = ts->gpu_only; (p = strstr(p, opt)); p += n)
        if (p[n] == ',' || p[n] == '\0') return; /* said already */
    snprintf(ts->gpu_only + len, sizeof ts->gpu_only - len, "%s%s", len ? ", " : "", opt);
}

/* The GPU-only options, noted as given. */
static int gpu_option(tree_source *ts, int c)
{
    static const struct {
        int c;
        const char *name;
    } gpu[] = {{OPT_REPEAT, "--repeat"},         {OPT_POOL, "--pool"},       {OPT_POOL_START, "--pool-start"},
               {OPT_POOL_FACTOR, "--pool-factor"}, {OPT_POOL_MB, "--pool-mb"}, {OPT_WATCHDOG, "--watchdog"}};
    for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
        if (gpu[i].c == c) tree_source_gpu_only(ts, gpu[i].name);
    return 1;
}

int tree_source_option(tree_source *ts, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case OPT_SCENE: ts->scene.generator = arg; return 1;
    case OPT_TRIANGLES:
        if (cli_parse_u64("--triangles", arg, 1, cli_triangles_max(), &ts->scene.triangles)) return -1;
        return 1;
    case OPT_CPU: ts->cpu_given = 1; ts->device = DEVICE_CPU; return 1;
    case OPT_GPU: ts->gpu_given = 1; ts->device = DEVICE_GPU; return 1;
    case OPT_REPEAT:
        if (cli_parse_u64("--repeat", arg, 1, REPEAT_MAX, &v)) return -1;
        ts->repeat = (uint32_t)v;
        return gpu_option(ts, c);
    case OPT_POOL:
        if (strcmp(arg, "auto") && strcmp(arg, "fixed")) {
            cli_usage_error("--pool takes auto or fixed, not '%s'", arg);
            return -1;
        }
        ts->pool_asked = arg[0];
        return gpu_option(ts, c);
    case OPT_POOL_START:
        if (parse_pool_factor("--pool-start", arg, &ts->pool_start)) return -1;
        return gpu_option(ts, c);
    case OPT_POOL_FACTOR:
        if (parse_pool_factor("--pool-factor", arg, &ts->pool_factor)) return -1;
        ts->pool_sized |= POOL_SIZED_FACTOR;
        return gpu_option(ts, c);
    case OPT_POOL_MB:
        if (cli_parse_u64("--pool-mb", arg, 1, POOL_MB_MAX, &ts->pool_mb)) return -1;
        ts->pool_sized |= POOL_SIZED_MB;
        return gpu_option(ts, c);
    case OPT_WATCHDOG:
        if (cli_parse_u64("--watchdog", arg, 0, WATCHDOG_MAX, &v)) return -1;
        ts->watchdog_s = v ? (double)v : -1.0; /* 0: off (under a debugger or sanitizer) */
        return gpu_option(ts, c);
    default: return 0;
    }
}

static int build_cpu(const scene *s, tree_result *r)
{
    char err[CLI_ERR];
    r->builder = "CPU, exact SAH (event sweep)";
    progress p;
    progress_begin(&p, "tree: building on the CPU", 0);
    int rc = kdtree_build_cpu(s, &r->host, &r->stats, err, sizeof err);
    progress_end(&p);
    if (rc) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

/* A fixed pool: asked for, or sized. */
static int pool_is_fixed(const tree_source *ts) { return ts->pool_asked == 'f' || ts->pool_sized; }

int tree_source_check(const tree_source *ts)
{
    if (ts->cpu_given && ts->gpu_given) {
        cli_usage_error("give --cpu or --gpu, not both");
        return -1;
    }
    if (ts->pool_sized == (POOL_SIZED_FACTOR | POOL_SIZED_MB)) {
        cli_usage_error("--pool-factor and --pool-mb both size the pool: give one");
        return -1;
    }
    if (ts->pool_asked == 'a' && ts->pool_sized) {
        cli_usage_error("--pool auto grows the pool: --pool-factor and --pool-mb size a fixed one");
        return -1;
    }
    if (ts->pool_start > 0 && pool_is_fixed(ts)) {
        cli_usage_error("--pool-start is where --pool auto starts; this pool is fixed (--pool fixed, --pool-factor "
                        "or --pool-mb)");
        return -1;
    }
    return 0;
}

/* The device line of a CPU build: why the CPU, and what is not used there. */
static void say_cpu(const tree_source *ts, const char *why)
{
    fprintf(stderr, "device: CPU (%s); the CPU build does not use the allocator compiled in (%s)", why,
            kda_allocator_name());
    if (ts->gpu_only[0]) fprintf(stderr, "; GPU only, not applied: %s", ts->gpu_only);
    fputc('\n', stderr);
}

#if KDA_HAVE_CUDA
/* The builder's message for a build that failed, with what to change on
 * this command line where the pool ran short: the builder names the cause
 * and the sizes (g->pool_short), the options are this program's. */
static void say_build_failed(const tree_source *ts, const gpu_build_stats *g, const char *err)
{
    switch (g->pool_short) {
    case GPU_POOL_EXHAUSTED:
    case GPU_POOL_OVERWRITTEN:
        if (g->pool_raised) /* what was asked is not what ran short: the allocator's minimum pool did */
            cli_error("%s; rerun with --pool-mb > %llu (the allocator's minimum pool, taken instead of the one asked "
                      "for)", err, (unsigned long long)((g->pool_bytes + (1u << 20) - 1) >> 20));
        else if (ts->pool_mb) cli_error("%s; rerun with --pool-mb > %llu", err, (unsigned long long)ts->pool_mb);
        else cli_error("%s; rerun with --pool-factor > %g", err, ts->pool_factor);
        break;
    case GPU_POOL_WRAPPED: cli_error("%s; rerun with a larger --pool-factor or --pool-mb", err); break;
    default: cli_error("%s", err); break; /* a growable pool at its limit: the GPU's memory, no option */
    }
}

static int build_gpu(const tree_source *ts, const scene *s, tree_result *r)
{
    char err[CLI_ERR];
    gpu_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.pool_factor = ts->pool_factor;
    opt.pool_bytes = ts->pool_mb << 20;
    opt.pool_auto = !pool_is_fixed(ts);
    opt.pool_start = ts->pool_start;
    opt.repeat = ts->repeat;
    opt.watchdog_s = ts->watchdog_s;
    r->builder = "GPU, binned + exact SAH, one persistent kernel";
    r->on_gpu = 1;
    if (gpu_scene_upload(s, &r->gpu_scene, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    int rc = gpu_build(&r->gpu_scene, &opt, &r->gpu, &r->gpu_stats, err, sizeof err);
    if (rc == GPU_BUILD_STALLED) { /* the stuck kernel ends with the process, not before */
        cli_error("%s", err);
        fflush(stdout);
        _exit(1);
    }
    if (rc) {
        say_build_failed(ts, &r->gpu_stats, err);
        return -1;
    }
    if (gpu_tree_download(&r->gpu, &r->host, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    if (r->gpu_stats.pool_fixed_why)
        fprintf(stderr, "note: %s cannot grow its pool (%s): a fixed pool of %.0fx the root array instead\n",
                r->gpu_stats.allocator, r->gpu_stats.pool_fixed_why, r->gpu_stats.pool_factor);
    if (r->gpu_stats.pool_raised)
        fprintf(stderr, "note: pool raised to %s's minimum of %.4g MiB (the paper did the same)\n",
                r->gpu_stats.allocator, (double)r->gpu_stats.pool_bytes / (1 << 20));
    if (r->gpu_stats.pool_wrapped && kdtree_check(&r->host, s, err, sizeof err)) {
        cli_error("%s wrapped around its %.1f MiB pool and overwrote live arrays: the tree is invalid (%s); "
                  "rerun with a larger --pool-factor or --pool-mb",
                  r->gpu_stats.allocator, (double)r->gpu_stats.pool_bytes / (1 << 20), err);
        return -1;
    }
    kdtree_compute_stats(&r->host, s->n_triangles, &r->stats);
    r->stats.build_ms = r->gpu_stats.tree.build_ms;
    r->gpu_stats.tree = r->stats;
    return 0;
}
#endif

int tree_build(const tree_source *ts, const scene *s, tree_result *r)
{
    memset(r, 0, sizeof *r);
    if (ts->device == DEVICE_CPU) {
        say_cpu(ts, "--cpu");
        return build_cpu(s, r);
    }
#if KDA_HAVE_CUDA
    const char *cannot;
    if (!kda_allocator_builds(&cannot)) { /* before looking for a GPU: the answer is the same without one */
        cli_error("%s cannot serve the k-d tree build: %s; build with --cpu, or with another allocator "
                  "(-DKDA_ALLOCATOR)", kda_allocator_name(), cannot);
        return -1;
    }
    char why[256];
    if (gpu_device_check(why, sizeof why)) {
        if (ts->device == DEVICE_GPU) {
            cli_error("--gpu: %s (use --cpu to build on the CPU)", why);
            return -1;
        }
        char reason[320];
        snprintf(reason, sizeof reason, "%s; --gpu requires one", why);
        say_cpu(ts, reason);
        return build_cpu(s, r);
    }
    gpu_device_name(r->device, sizeof r->device);
    fprintf(stderr, "device: GPU %s, allocator %s\n", r->device, kda_allocator_name());
    return build_gpu(ts, s, r);
#else
    if (ts->device == DEVICE_GPU) {
        cli_error("this kdalloc was built without CUDA: no GPU path (use --cpu, or rebuild with nvcc installed)");
        return -1;
    }
    say_cpu(ts, "this kdalloc was built without CUDA");
    return build_cpu(s, r);
#endif
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

void tree_result_print_gpu_table(const tree_result *r)
{
#if KDA_HAVE_CUDA
    if (!r->on_gpu) return;
    const gpu_build_stats *g = &r->gpu_stats;
    printf("%-22s %s\n", "GPU", r->device);
    printf("%-22s %s\n", "allocator", g->allocator);
    printf("%-22s %d per thread (%u blocks x %u threads)\n", "registers", g->registers, g->blocks,
           g->threads_per_block);
    printf("%-22s %llu\n", "allocations (N_alloc)", (unsigned long long)g->n_alloc);
    printf("%-22s mean %.1f B, sigma %.1f B\n", "allocation size", g->alloc_mean, g->alloc_sigma);
    /* An allocator that frees holds at most the arrays live at once; one
     * that never frees holds every request (as bench/compare counts it). */
    int frees = kda_allocator_frees();
    double used = frees ? (double)g->peak_pool_bytes : (double)g->n_alloc * g->alloc_mean;
    const char *label = frees ? "peak pool use" : "pool use (no frees)";
    if (g->pool_grows) {
        printf("%-22s %.1f MiB of %.1f MiB mapped (grown from %.1f MiB in %u steps, %.3f ms)\n", label,
               used / (1 << 20), (double)g->pool_bytes / (1 << 20), (double)g->pool_start_bytes / (1 << 20),
               g->grow_steps, g->grow_ms);
    } else {
        printf("%-22s %.1f MiB of %.1f MiB (pool factor %.0f)\n", label, used / (1 << 20),
               (double)g->pool_bytes / (1 << 20), g->pool_factor);
    }
    printf("%-22s median of %u: min %.3f ms, max %.3f ms\n", "timed builds", g->builds_timed, g->ms_min, g->ms_max);
#else
    (void)r;
#endif
}

void tree_result_print_gpu_json(const tree_result *r)
{
#if KDA_HAVE_CUDA
    if (!r->on_gpu) return;
    const gpu_build_stats *g = &r->gpu_stats;
    printf(", \"gpu\": \"%s\", \"allocator\": \"%s\", \"registers\": %d, \"n_alloc\": %llu, \"alloc_mean\": ",
           r->device, g->allocator, g->registers, (unsigned long long)g->n_alloc);
    cli_json_number(g->alloc_mean);
    printf(", \"alloc_sigma\": ");
    cli_json_number(g->alloc_sigma);
    printf(", \"peak_pool_bytes\": %llu, \"pool_bytes\": %llu, \"pool_factor\": ",
           (unsigned long long)g->peak_pool_bytes, (unsigned long long)g->pool_bytes);
    cli_json_number(g->pool_factor);
    printf(", \"pool\": \"%s\", \"pool_start_bytes\": %llu, \"grow_steps\": %u, \"grow_ms\": ",
           g->pool_grows ? "auto" : "fixed", (unsigned long long)g->pool_start_bytes, g->grow_steps);
    cli_json_number(g->grow_ms);
    printf(", \"builds_timed\": %u, \"build_ms_min\": ", g->builds_timed);
    cli_json_number(g->ms_min);
    printf(", \"build_ms_max\": ");
    cli_json_number(g->ms_max);
#else
    (void)r;
#endif
}

void tree_result_print_profile(const tree_result *r)
{
#if KDA_HAVE_CUDA
    if (!r->on_gpu) return; /* the device line said --profile is GPU only */
    const gpu_build_stats *g = &r->gpu_stats;
    double total = g->cycles_idle + g->cycles_node + g->cycles_chunk;
    if (total <= 0.0) total = 1.0;
    fprintf(stderr,
            "profile of the warm-up build (share of all warps' cycles):\n"
            "  waiting for work     %5.1f%%\n"
            "  nodes by one warp    %5.1f%%  (kda_malloc %.1f%%, kda_free %.1f%%)\n"
            "  chunks of big nodes  %5.1f%%\n"
            "  %llu nodes by single warps, %llu chunks, %llu queue pops, %llu tasks shared\n",
            100.0 * g->cycles_idle / total, 100.0 * g->cycles_node / total, 100.0 * g->cycles_alloc / total,
            100.0 * g->cycles_free / total, 100.0 * g->cycles_chunk / total, (unsigned long long)g->nodes_by_warps,
            (unsigned long long)g->chunks, (unsigned long long)g->queue_pops, (unsigned long long)g->tasks_shared);
#else
    (void)r;
#endif
}

void tree_result_free(tree_result *r)
{
    kdtree_free(&r->host);
#if KDA_HAVE_CUDA
    if (r->on_gpu) {
        gpu_tree_free(&r->gpu);
        gpu_scene_free(&r->gpu_scene);
    }
#endif
}
