/* cmd_gen.c - `kdalloc gen NAME -o FILE`: writes a procedural scene. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"

static void gen_usage(FILE *f)
{
    fprintf(f, "usage: kdalloc gen NAME -o FILE.obj [--triangles N]\n\n"
               "Writes a built-in procedural scene as Wavefront OBJ.  Scenes:\n");
    for (const char *const *n = scene_generator_names(); *n; n++)
        fprintf(f, "  %-10s %s\n", *n, scene_generator_help(*n));
    fprintf(f, "\n  -o, --output FILE   where to write (required)\n"
               "  --triangles N       size of a scalable scene\n"
               "  -h, --help          this help\n");
}

int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"triangles", required_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *output = NULL;
    scene_source src = {0};
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1;) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'n':
            if (cli_parse_u64("--triangles", optarg, 1, UINT32_MAX, &src.triangles)) return 2;
            break;
        case 'h': gen_usage(stdout); return 0;
        default: gen_usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        cli_error("gen: which scene? (kdalloc gen --help lists them)");
        return 2;
    }
    if (optind != argc - 1) {
        cli_error("gen: one scene name expected, got '%s' too", argv[argc - 1]);
        return 2;
    }
    if (!output) {
        cli_error("gen: missing -o FILE");
        return 2;
    }
    src.generator = argv[optind];
    src.as_generated = 1; /* the file holds the coordinates the scene's help gives */
    scene s;
    char label[256], err[CLI_ERR];
    if (outfile_check(output, err, sizeof err)) { /* before the scene is made */
        cli_error("%s", err);
        return 1;
    }
    if (cli_load_scene(&src, &s, label, sizeof label)) return 1;
    int rc = scene_write_obj(&s, output, err, sizeof err);
    if (rc) cli_error("%s", err);
    else fprintf(stderr, "wrote %s\n", output);
    scene_free(&s);
    return rc ? 1 : 0;
}
