/* tree_source.h - what `build` and `render` share: where the scene comes
 * from, which builder runs (GPU by default when one is usable, --cpu to
 * force the CPU), and the tree that comes out. */
#ifndef KDA_TREE_SOURCE_H
#define KDA_TREE_SOURCE_H

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "kdtree.h"
#if KDA_HAVE_CUDA
#include "gpu_build.h"
#endif

typedef enum device_choice { DEVICE_AUTO, DEVICE_CPU, DEVICE_GPU } device_choice;
enum { POOL_SIZED_FACTOR = 1, POOL_SIZED_MB = 2 };

typedef struct tree_source {
    scene_source scene;
    device_choice device;
    int pool_asked;      /* --pool: 0 not given, 'a' auto, 'f' fixed */
    int pool_sized;      /* POOL_SIZED_FACTOR, POOL_SIZED_MB: what was given (a fixed pool) */
    double pool_factor;  /* fixed pool = factor x root array bytes, */
    uint64_t pool_mb;    /* or this many MiB (one of the two is given, or neither) */
    double pool_start;   /* --pool auto: start at this factor (0: the default) */
    uint32_t repeat;     /* timed GPU builds after a warm-up */
    double watchdog_s;   /* a GPU build without progress this long is stuck */
    int cpu_given, gpu_given;
    char gpu_only[160];  /* the GPU-only options given, "--repeat, --frames": a CPU build says it ignores them */
} tree_source;

/* A built tree: on the host (CPU builder) or on the device (GPU builder). */
typedef struct tree_result {
    const char *builder; /* "CPU ..." or "GPU ..." */
    int on_gpu;
    kdtree host;
    kdtree_stats stats; /* of the tree; build_ms is the median build */
#if KDA_HAVE_CUDA
    gpu_scene gpu_scene;
    gpu_tree gpu;
    gpu_build_stats gpu_stats;
    char device[160];
#endif
} tree_result;

#define TREE_SOURCE_MAX_OPTIONS 11

void tree_source_init(tree_source *ts);
/* Writes the shared long options into opts; returns how many. */
int tree_source_options(struct option *opts);
void tree_source_usage(FILE *f);
/* Handles option c: 1 when it was a shared option, 0 when not, -1 on a bad
 * value (the error is printed). */
int tree_source_option(tree_source *ts, int c, const char *arg);
/* Notes a command's own GPU-only option (--frames, --profile) as given. */
void tree_source_gpu_only(tree_source *ts, const char *opt);

/* After the options: whether they agree (else the error is printed, -1). */
int tree_source_check(const tree_source *ts);
/* Builds with the chosen device; prints which one it used to stderr (for
 * the CPU, in the same line, that the allocator compiled in is not used
 * and which GPU-only options given do not apply).  Returns 0, or -1 after
 * printing the error. */
int tree_build(const tree_source *ts, const scene *s, tree_result *r);
/* Runs kdtree_check on the result; prints the outcome. */
int tree_result_check(tree_result *r, const scene *s);
void tree_result_print_gpu_table(const tree_result *r);
void tree_result_print_gpu_json(const tree_result *r);
/* The GPU build kernel's time profile (stderr); nothing for a CPU build. */
void tree_result_print_profile(const tree_result *r);
void tree_result_free(tree_result *r);

#endif
