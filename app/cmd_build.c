/* cmd_build.c - `kdalloc build [FILE]`: builds the tree, prints statistics. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "kdtree.h"
#include "tree_source.h"

static void build_usage(FILE *f)
{
    fprintf(f, "usage: kdalloc build [FILE] [options]\n\n"
               "Builds the SAH k-d tree of FILE (.obj or .obj.gz; default: the built-in\n"
               "scene) and prints its statistics.\n\n");
    tree_source_usage(f);
    fprintf(f, "  --json              print the statistics as one JSON object on stdout\n"
               "  --check             also check the tree's invariants (slow for big scenes)\n"
               "  --profile           GPU: where the build kernel's warps spent their time\n"
               "  -h, --help          this help\n");
}

static void print_table(const char *label, int scale_log2, const tree_result *r)
{
    const kdtree_stats *st = &r->stats;
    printf("%-22s %s\n", "scene", label);
    if (scale_log2) printf("%-22s 2^%d (coordinates scaled on load)\n", "scale", scale_log2);
    printf("%-22s %u\n", "triangles", st->n_triangles);
    printf("%-22s %s\n", "builder", r->builder);
    printf("%-22s %u\n", "nodes", st->n_nodes);
    printf("%-22s %u (%u empty)\n", "leaves", st->n_leaves, st->n_empty_leaves);
    printf("%-22s %u (limit %u)\n", "max depth", st->max_depth, st->depth_limit);
    printf("%-22s %llu (%.2f per triangle)\n", "references (N_ref)", (unsigned long long)st->n_refs,
           st->refs_per_triangle);
    printf("%-22s %.2f\n", "SAH cost", st->sah_cost);
    tree_result_print_gpu_table(r);
    printf("%-22s %.3f ms\n", "build time", st->build_ms);
}

static void print_json(const char *label, const scene *s, const tree_result *r)
{
    const kdtree_stats *st = &r->stats;
    printf("{");
    cli_json_string("scene", label);
    cli_json_scene_notes(s);
    printf(", \"scale_log2\": %d, \"builder\": \"%s\", \"n_tris\": %u, \"nodes\": %u, \"leaves\": %u, "
           "\"empty_leaves\": %u, \"max_depth\": %u, \"depth_limit\": %u, \"n_refs\": %llu, \"refs_per_tri\": ",
           s->scale_log2, r->builder, st->n_triangles, st->n_nodes, st->n_leaves, st->n_empty_leaves, st->max_depth,
           st->depth_limit, (unsigned long long)st->n_refs);
    cli_json_number(st->refs_per_triangle);
    printf(", \"sah_cost\": ");
    cli_json_number(st->sah_cost);
    printf(", \"build_ms\": ");
    cli_json_number(st->build_ms);
    tree_result_print_gpu_json(r);
    printf("}\n");
}

int cmd_build(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_CHECK, OPT_PROFILE };
    struct option opts[TREE_SOURCE_MAX_OPTIONS + 5];
    int n = tree_source_options(opts);
    opts[n++] = (struct option){"json", no_argument, 0, OPT_JSON};
    opts[n++] = (struct option){"check", no_argument, 0, OPT_CHECK};
    opts[n++] = (struct option){"profile", no_argument, 0, OPT_PROFILE};
    opts[n++] = (struct option){"help", no_argument, 0, 'h'};
    opts[n] = (struct option){0, 0, 0, 0};

    tree_source ts;
    tree_source_init(&ts);
    int json = 0, check = 0, profile = 0;
    cli_command = "kdalloc build";
    optind = 1;
    opterr = 0; /* cli_option_error says what was wrong */
    for (int c; (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1;) {
        int r = tree_source_option(&ts, c, optarg);
        if (r == 1) continue;
        if (r < 0) return 2;
        switch (c) {
        case OPT_JSON: json = 1; break;
        case OPT_CHECK: check = 1; break;
        case OPT_PROFILE:
            profile = 1;
            tree_source_gpu_only(&ts, "--profile");
            break;
        case 'h': build_usage(stdout); return 0;
        default: cli_option_error(c, argv, opts); return 2;
        }
    }
    if (cli_scene_positional(&ts.scene, argc, argv, optind) || tree_source_check(&ts)) return 2;

    scene s;
    char label[256];
    if (cli_load_scene(&ts.scene, &s, label, sizeof label)) return 1;
    tree_result r;
    int rc = tree_build(&ts, &s, &r);
    if (rc == 0 && check) rc = tree_result_check(&r, &s);
    if (rc == 0) {
        if (json) print_json(label, &s, &r);
        else print_table(label, s.scale_log2, &r);
        if (profile) tree_result_print_profile(&r);
    }
    tree_result_free(&r);
    scene_free(&s);
    return rc ? 1 : 0;
}
