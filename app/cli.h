/* cli.h - pieces shared by the kdalloc commands and kdalloc-embree
 * (library kda_cli: scene loading, option parsing, JSON values, messages). */
#ifndef KDA_CLI_H
#define KDA_CLI_H

#include <stdint.h>

#include "scene.h"

#define CLI_ERR 512

/* Where a command's scene comes from: a file, or a built-in generator. */
typedef struct scene_source {
    const char *path;      /* NULL: generator */
    const char *generator; /* default: the first generator */
    uint64_t triangles;    /* size hint for scalable generators, 0 = default */
    int as_generated;      /* 1: not scaled by scene_normalize (what `gen` writes) */
} scene_source;

/* Loads or generates the scene and prints one line saying what was loaded
 * (to stderr, so that --json output stays clean); a scene at the numeric
 * extremes is scaled by scene_normalize, saying so, unless as_generated.  Returns 0 or -1 after
 * printing the error. */
int cli_load_scene(const scene_source *src, scene *s, char *label, size_t label_len);
/* Takes the optional scene FILE from argv[first..] and checks it against
 * --scene and --triangles; -1 (error printed) on extra arguments or a
 * clash. */
int cli_scene_positional(scene_source *src, int argc, char **argv, int first);

/* Prints x as a JSON number on stdout, or null when it is not finite (JSON
 * has no NaN or infinity). */
void cli_json_number(double x);
/* Prints "key": "text" on stdout, quotes and backslashes escaped, control
 * characters dropped. */
void cli_json_string(const char *key, const char *text);

/* Strict number parsing for option values; they print the error. */
int cli_parse_u64(const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_float(const char *opt, const char *text, float *out);
int cli_parse_vec3(const char *opt, const char *text, float out[3]);

/* Prints "<cli_program>: <message>" to stderr. */
void cli_error(const char *fmt, ...);
extern const char *cli_program; /* "kdalloc" unless a program sets it */

int cmd_build(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_gen(int argc, char **argv);

#endif
