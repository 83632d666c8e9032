/* scene.h - triangle scenes: Wavefront OBJ loading and procedural generation.
 *
 * A scene is a flat indexed triangle mesh: `positions` holds 3 floats per
 * vertex, `triangles` holds 3 vertex indices (0-based) per triangle.  Nothing
 * else of the OBJ file (normals, texture coordinates, materials, groups) is
 * kept: the k-d tree and the validation renderer need positions only.
 *
 * Every function that can fail returns 0 on success and -1 on failure, after
 * writing a one-line message into `err` (at most `errlen` bytes, always
 * NUL-terminated).  OBJ errors read `file:line: what`.  On failure the scene
 * is left empty (scene_free is safe to call on it).
 */
#ifndef KDA_SCENE_H
#define KDA_SCENE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes a scene or an error message keeps of a token it quotes, with its NUL. */
#define SCENE_TOKEN_SHOWN 48

typedef struct scene {
    float *positions;       /* 3 * n_vertices floats: x y z */
    uint32_t *triangles;    /* 3 * n_triangles vertex indices, 0-based */
    uint32_t n_vertices;
    uint32_t n_triangles;
    uint32_t n_degenerate;  /* zero-area triangles (kept, counted) */
    float lo[3], hi[3];     /* bounds of the vertices used by triangles */
    int scale_log2;         /* positions = the source's coordinates * 2^scale_log2 (scene_normalize) */
    uint64_t n_skipped;     /* OBJ lines whose first token is no OBJ statement, skipped (obj.c) */
    uint64_t skipped_line;  /* the first of them (1-based; 0: none) */
    char skipped[SCENE_TOKEN_SHOWN]; /* its first token, printable: \\ for a backslash, \xNN for bytes outside
                                        printable ASCII, cut with "..." where long */
} scene;

/* Loads `path`: plain OBJ, or gzip-compressed OBJ when the name ends in ".gz"
 * (the content is sniffed too, so a gzip file under another name works). */
int scene_load(const char *path, scene *out, char *err, size_t errlen);

/* The same for bytes held in memory (plain OBJ, or gzip when they start
 * with its magic bytes or `name` ends in ".gz"); `name` names them in
 * error messages. */
int scene_load_bytes(const unsigned char *raw, size_t raw_len, const char *name, scene *out, char *err,
                     size_t errlen);

/* Parses OBJ text held in memory; `name` is used in error messages only. */
int scene_parse_obj(const char *text, size_t len, const char *name,
                    scene *out, char *err, size_t errlen);

/* Generates a built-in procedural scene.  `n_triangles` is a size hint for
 * scalable generators (0 = the generator's default) and ignored by the fixed
 * ones.  The output is deterministic: same name and size, same bytes. */
int scene_generate(const char *name, uint64_t n_triangles, scene *out,
                   char *err, size_t errlen);

/* NULL-terminated list of generator names; the first is the default scene
 * used when a command is given no input file. */
const char *const *scene_generator_names(void);

/* One-line description of a generator, or NULL for an unknown name. */
const char *scene_generator_help(const char *name);

/* The sizes a scalable generator takes: its default, least and most
 * triangle counts, and 0.  -1 for a fixed-size generator or an unknown
 * name (nothing written then). */
int scene_generator_sizes(const char *name, uint64_t *default_size, uint64_t *min_size, uint64_t *max_size);

/* Writes the scene as OBJ text (`v` and `f` lines), gzip-compressed when
 * path ends in ".gz", whole or not at all (io/outfile.h): on error, "PATH:
 * cannot write OBJ: REASON", and no partial file is left. */
int scene_write_obj(const scene *s, const char *path, char *err, size_t errlen);

/* The range of largest coordinate magnitudes the builders and ray casters
 * take as they are: within it no product of the ray/triangle test or the
 * SAH over- or underflows float (1e30 squared is inf). */
#define SCENE_RANGE_MAX 0x1p24f
#define SCENE_RANGE_MIN 0x1p-24f

/* Scales a scene whose largest coordinate magnitude lies outside
 * [SCENE_RANGE_MIN, SCENE_RANGE_MAX] by a power of two, so that it lies in
 * [0.5, 1).  Scaling by 2^k is exact (every coordinate keeps its digits,
 * bar those of coordinates that become subnormal), so trees, hits and
 * costs are those of the source scaled by 2^k.  Adds k to scale_log2 and
 * returns it (0: the scene was left as it is). */
int scene_normalize(scene *s);

/* Recomputes bounds and the degenerate count from positions/triangles. */
void scene_update_bounds(scene *s);

void scene_free(scene *s);

#ifdef __cplusplus
}
#endif
#endif
