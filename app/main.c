/* main.c - the kdalloc command line: dispatches to build, render and gen. */
#include <stdio.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "cli.h"
#include "cmd.h"
#include "stdout_status.h"

#ifndef KDA_VERSION
#define KDA_VERSION "unknown"
#endif
#ifndef KDA_PEER_ALLOCATOR_LIST
#define KDA_PEER_ALLOCATOR_LIST "none"
#endif

static void print_usage(FILE *f)
{
    fprintf(f,
            "usage: kdalloc <command> [options]\n"
            "\n"
            "Builds SAH k-d trees over triangle scenes on the GPU, allocating the\n"
            "nodes' triangle arrays with a device-side dynamic memory allocator, and\n"
            "renders validation images through them.\n"
            "\n"
            "commands:\n"
            "  build [FILE]          build the tree and print its statistics\n"
            "  render [FILE] -o PNG  build the tree and ray-cast an image through it\n"
            "  gen NAME -o FILE      write a built-in procedural scene as OBJ\n"
            "\n"
            "FILE is a Wavefront .obj or .obj.gz; without one, the built-in scene\n"
            "'%s' is used.  'kdalloc <command> --help' describes each command.\n"
            "\n"
            "  --version             print the version and the allocator compiled in\n"
            "  --help                print this help\n",
            scene_generator_names()[0]);
}

static void print_version(void)
{
    printf("kdalloc %s\n", KDA_VERSION);
    const char *why, *id = kda_allocator_id();
    printf("allocator: %s (%s%s; frees single blocks: %s; grows its pool: %s; k-d tree builds: %s)\n",
           kda_allocator_name(), id, strcmp(id, KDA_DEFAULT_ALLOCATOR_ID) ? "" : ", the default",
           kda_allocator_frees() ? "yes" : "no", kda_allocator_grows(&why) ? "yes" : "no",
           kda_allocator_builds(&why) ? "yes" : "no");
    printf("allocators of this build's list (kdalloc-NAME, -DKDA_ALLOCATOR=NAME): %s\n", kda_allocator_list());
    printf("peer allocators (-DKDA_ALLOCATOR=NAME, or all with -DKDA_PEERS=ON; each needs CUDA and its published "
           "headers): %s\n", KDA_PEER_ALLOCATOR_LIST);
#if KDA_HAVE_CUDA
    printf("GPU path: CUDA, built for %s\n", KDA_CUDA_ARCHS);
#else
    printf("GPU path: not built (no CUDA compiler at configure time)\n");
#endif
}

/* What the command printed must have reached standard output. */
static int stdout_written(int rc) { return stdout_status("kdalloc", rc); }

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it is printed, into a pipe too */
    if (argc < 2) {
        cli_usage_error("usage: kdalloc build|render|gen [options]: which command?");
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_usage(stdout);
        return stdout_written(0);
    }
    if (!strcmp(cmd, "--version")) {
        print_version();
        return stdout_written(0);
    }
    if (!strcmp(cmd, "build")) return stdout_written(cmd_build(argc - 1, argv + 1));
    if (!strcmp(cmd, "render")) return stdout_written(cmd_render(argc - 1, argv + 1));
    if (!strcmp(cmd, "gen")) return stdout_written(cmd_gen(argc - 1, argv + 1));
    cli_usage_error("unknown command '%s'; commands: build, render, gen", cmd);
    return 2;
}
