/* cmd_gen.c - `kdalloc gen NAME -o FILE`: writes a procedural scene. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "outfile.h"
#include "progress.h"

static void gen_usage(FILE *f)
{
    fprintf(f, "usage: kdalloc gen NAME -o FILE.obj [--triangles N]\n\n"
               "Writes a built-in procedural scene as Wavefront OBJ text: a comment line, then\n"
               "one 'v x y z' line per vertex and one 'f a b c' line per triangle, nothing\n"
               "else.  Scenes, and the triangles each file holds (n: --triangles N, within\n"
               "the range given; a scene without one has a fixed size):\n");
    for (const char *const *n = scene_generator_names(); *n; n++)
        fprintf(f, "  %-10s %s\n", *n, scene_generator_help(*n));
    fprintf(f, "\n  -o, --output FILE   where to write (required; - for standard output; a name\n"
               "                      ending in .gz is written gzip-compressed)\n"
               "  --triangles N       size of a scalable scene (1 to %llu, within its range)\n"
               "  -h, --help          this help\n",
            (unsigned long long)cli_triangles_max());
}

int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"triangles", required_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *output = NULL;
    scene_source src = {0};
    cli_command = "kdalloc gen";
    optind = 1;
    opterr = 0; /* cli_option_error says what was wrong */
    for (int c; (c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1;) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'n':
            if (cli_parse_u64("--triangles", optarg, 1, cli_triangles_max(), &src.triangles)) return 2;
            break;
        case 'h': gen_usage(stdout); return 0;
        default: cli_option_error(c, argv, opts); return 2;
        }
    }
    if (optind >= argc) {
        cli_usage_error("gen: missing the scene NAME");
        return 2;
    }
    if (optind != argc - 1) {
        cli_usage_error("gen: one scene name expected, got '%s' too", argv[argc - 1]);
        return 2;
    }
    src.generator = argv[optind];
    src.as_generated = 1; /* the file holds the coordinates the scene's help gives */
    if (cli_scene_check(&src)) return 2;
    if (!output) {
        cli_usage_error("gen: missing -o FILE");
        return 2;
    }
    scene s;
    char label[256], err[CLI_ERR];
    if (outfile_check(output, err, sizeof err)) { /* before the scene is made */
        cli_error("%s", err);
        return 1;
    }
    if (cli_load_scene(&src, &s, label, sizeof label)) return 1;
    progress p;
    char doing[300];
    snprintf(doing, sizeof doing, "writing %s", outfile_name(output));
    progress_begin(&p, doing, 0);
    int rc = scene_write_obj(&s, output, err, sizeof err);
    progress_end(&p);
    if (rc) cli_error("%s", err);
    else fprintf(stderr, "wrote %s\n", outfile_name(output));
    scene_free(&s);
    return rc ? 1 : 0;
}
