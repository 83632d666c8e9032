/* fuzz_obj.c - libFuzzer target for the OBJ loader (KDA_FUZZ=ON, clang):
 * every input is loaded as plain OBJ (gzip if it starts with gzip's magic
 * bytes) and once more as a .gz file.  The loader must return 0 with a
 * well-formed scene or -1 with a message, and never crash, hang, leak or
 * trip AddressSanitizer or UndefinedBehaviorSanitizer.  Seeds:
 * tests/scenes/fuzz_corpus/.  Run: build-fuzz/fuzz_obj -max_total_time=60
 * -rss_limit_mb=2048 CORPUS_DIR tests/scenes/fuzz_corpus */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scene.h"

static void load(const uint8_t *data, size_t size, const char *name)
{
    scene s;
    char err[256];
    if (scene_load_bytes(data, size, name, &s, err, sizeof err) == 0) {
        for (uint32_t t = 0; t < 3 * s.n_triangles; t++)
            if (s.triangles[t] >= s.n_vertices) abort(); /* a triangle names a vertex that is not there */
        scene_free(&s);
    } else if (!err[0]) {
        abort(); /* an error without a message */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size, "fuzz.obj");
    load(data, size, "fuzz.obj.gz");
    return 0;
}
