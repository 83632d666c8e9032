/* cli.h - pieces shared by the kdalloc commands and kdalloc-embree
 * (library kda_cli: scene loading, option parsing, JSON values, messages).
 * A usage error is one line on stderr, "<program>: <cause> (see <command>
 * --help)", and the command exits 2; the functions here print it and the
 * caller returns 2. */
#ifndef KDA_CLI_H
#define KDA_CLI_H

#include <getopt.h>
#include <stdint.h>

#include "scene.h"

/* An error message's room: a path as long as Linux allows (4096 bytes)
 * and what went wrong, so that a long path never cuts off the cause. */
#define CLI_ERR 4608

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
 * --scene and --triangles (cli_scene_check); -1 (usage error printed) on
 * extra arguments or a clash. */
int cli_scene_positional(scene_source *src, int argc, char **argv, int first);
/* A built-in scene must exist, and --triangles must be within its sizes
 * (a fixed-size scene takes none); -1 after the usage error. */
int cli_scene_check(const scene_source *src);
/* The most triangles --triangles takes for any built-in scene. */
uint64_t cli_triangles_max(void);

/* Prints x as a JSON number on stdout, or null when it is not finite (JSON
 * has no NaN or infinity). */
void cli_json_number(double x);
/* Prints "key": "text" on stdout, quotes and backslashes escaped, control
 * characters as \u00XX, and each byte that is not part of well-formed
 * UTF-8 as \ufffd (a file name may hold any bytes; JSON text is UTF-8). */
void cli_json_string(const char *key, const char *text);
/* Prints ", "degenerate_triangles": N, "skipped_obj_lines": N" on stdout:
 * what cli_load_scene warns of, for a reader of --json alone. */
void cli_json_scene_notes(const scene *s);

/* Strict number parsing for option values; they print the usage error. */
int cli_parse_u64(const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_float(const char *opt, const char *text, float *out);
int cli_parse_vec3(const char *opt, const char *text, float out[3]);

/* Prints "<cli_program>: <message>" to stderr. */
void cli_error(const char *fmt, ...);
/* Prints "<cli_program>: <message> (see <cli_command> --help)" to stderr. */
void cli_usage_error(const char *fmt, ...);
/* The usage error for getopt_long's '?' (unknown option, or a value given
 * to one that takes none) or ':' (missing value), for an option string
 * that starts with ':' and opterr = 0.  Returns -1. */
int cli_option_error(int c, char **argv, const struct option *opts);
extern const char *cli_program; /* "kdalloc" unless a program sets it */
extern const char *cli_command; /* whose --help the usage errors name: "kdalloc render" */

#endif
