/* test_gen.c - the procedural scene generators (scenes/gen.c). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene.h"

/* The exact size of the fixed default scene.  A change here changes every
 * benchmark made on it: update it (and the help line) deliberately. */
#define ATRIUM_TRIANGLES 354960u

/* FNV-1a of the positions and indices, hashed value by value in
 * little-endian byte order so that the constants hold on any machine.
 * Computed once from this generator (and found equal under gcc and clang,
 * -O0 to -O3 -march=native): they guard that the default scenes stay
 * byte-identical across versions, compilers and machines. */
#define ATRIUM_FNV1A 0x0d1400dbb4665844u
#define SPHERES_DEFAULT_FNV1A 0x90bdc7f0c392aa68u

static scene generate(const char *name, uint64_t n)
{
    scene s;
    char err[256] = "";
    int rc = scene_generate(name, n, &s, err, sizeof err);
    cr_assert_eq(rc, 0, "scene_generate(%s, %llu): %s", name, (unsigned long long)n, err);
    return s;
}

static void expect_failure(const char *name, uint64_t n, const char *message)
{
    scene s;
    char err[256] = "";
    cr_assert_eq(scene_generate(name, n, &s, err, sizeof err), -1);
    cr_assert(strstr(err, message), "error '%s' lacks '%s'", err, message);
    cr_assert_null(s.positions);
    cr_assert_null(s.triangles);
    cr_assert_eq(s.n_triangles, 0);
    cr_assert_eq(s.n_vertices, 0);
}

static uint64_t fnv1a_words(uint64_t hash, const void *words, size_t count)
{
    const unsigned char *bytes = words;
    for (size_t k = 0; k < count; k++) {
        uint32_t word;
        memcpy(&word, bytes + 4 * k, 4);
        for (int b = 0; b < 4; b++) {
            hash ^= (word >> (8 * b)) & 0xFFu;
            hash *= 0x100000001B3u;
        }
    }
    return hash;
}

static uint64_t scene_fnv1a(const scene *s)
{
    uint64_t hash = 0xCBF29CE484222325u;
    hash = fnv1a_words(hash, s->positions, 3 * (size_t)s->n_vertices);
    return fnv1a_words(hash, s->triangles, 3 * (size_t)s->n_triangles);
}

static void expect_identical(const scene *a, const scene *b)
{
    cr_assert_eq(a->n_vertices, b->n_vertices);
    cr_assert_eq(a->n_triangles, b->n_triangles);
    cr_assert_eq(memcmp(a->positions, b->positions, 3 * sizeof(float) * a->n_vertices), 0);
    cr_assert_eq(memcmp(a->triangles, b->triangles, 3 * sizeof(uint32_t) * a->n_triangles), 0);
}

/* Indices in range, every vertex used, every coordinate finite, bounds
 * finite and equal to a recomputation, and so is the count of zero-area
 * triangles. */
static void expect_indexed(const scene *s)
{
    cr_assert_gt(s->n_triangles, 0);
    char *used = calloc(s->n_vertices, 1);
    cr_assert_not_null(used);
    for (size_t k = 0; k < 3 * (size_t)s->n_triangles; k++) {
        cr_assert_lt(s->triangles[k], s->n_vertices, "index %zu out of range", k);
        used[s->triangles[k]] = 1;
    }
    for (uint32_t v = 0; v < s->n_vertices; v++)
        cr_assert(used[v], "vertex %u unused", v);
    free(used);
    for (size_t k = 0; k < 3 * (size_t)s->n_vertices; k++)
        cr_assert(isfinite(s->positions[k]), "coordinate %zu is %g", k, s->positions[k]);

    scene again = *s;
    scene_update_bounds(&again);
    cr_assert_eq(s->n_degenerate, again.n_degenerate);
    for (int a = 0; a < 3; a++) {
        cr_assert(isfinite(s->lo[a]) && isfinite(s->hi[a]));
        cr_assert_leq(s->lo[a], s->hi[a]);
        cr_assert_eq(s->lo[a], again.lo[a]);
        cr_assert_eq(s->hi[a], again.hi[a]);
    }
}

/* expect_indexed, and no zero-area triangle. */
static void expect_well_formed(const scene *s)
{
    expect_indexed(s);
    cr_assert_eq(s->n_degenerate, 0);
}

Test(gen, default_scene_is_atrium)
{
    const char *const *names = scene_generator_names();
    cr_assert_str_eq(names[0], "atrium");
    int count = 0;
    for (; names[count]; count++)
        cr_assert_not_null(scene_generator_help(names[count]), "%s has no help", names[count]);
    cr_assert_geq(count, 2);
    cr_assert_str_eq(names[1], "spheres");
    cr_assert_null(scene_generator_help("nosuch"));
}

Test(gen, unknown_name_lists_valid_ones)
{
    scene s;
    char err[256];
    cr_assert_eq(scene_generate("x", 0, &s, err, sizeof err), -1);
    cr_assert_str_eq(err, "unknown scene 'x'; valid: atrium, spheres, flat, stacked, huge, wide, tilted, coincident");
    expect_failure("Atrium", 0, "unknown scene 'Atrium'");
    expect_failure("", 0, "valid: atrium, spheres");
}

Test(gen, atrium_has_its_exact_size)
{
    scene s = generate("atrium", 0);
    cr_assert_geq(s.n_triangles, 200000);
    cr_assert_leq(s.n_triangles, 400000);
    cr_assert_eq(s.n_triangles, ATRIUM_TRIANGLES);
    char count[32];
    snprintf(count, sizeof count, "%u triangles", ATRIUM_TRIANGLES);
    cr_assert(strstr(scene_generator_help("atrium"), count), "help does not say '%s'", count);
    scene_free(&s);
}

Test(gen, atrium_ignores_the_size)
{
    scene a = generate("atrium", 0), b = generate("atrium", 123456);
    expect_identical(&a, &b);
    scene_free(&a);
    scene_free(&b);
}

Test(gen, atrium_is_well_formed)
{
    scene s = generate("atrium", 0);
    expect_well_formed(&s);
    /* About 40 x 15 x 20 units, standing on y = 0. */
    cr_assert_eq(s.lo[1], 0.0f);
    cr_assert(s.hi[0] - s.lo[0] > 39 && s.hi[0] - s.lo[0] < 42);
    cr_assert(s.hi[1] - s.lo[1] > 14 && s.hi[1] - s.lo[1] < 16);
    cr_assert(s.hi[2] - s.lo[2] > 19 && s.hi[2] - s.lo[2] < 22);
    scene_free(&s);
}

Test(gen, atrium_is_deterministic)
{
    scene a = generate("atrium", 0), b = generate("atrium", 0);
    expect_identical(&a, &b);
    cr_assert_eq(scene_fnv1a(&a), ATRIUM_FNV1A, "checksum 0x%016llx",
                 (unsigned long long)scene_fnv1a(&a));
    scene_free(&a);
    scene_free(&b);
}

/* Counts triangles (by centroid) in an 8 x 8 x 8 grid over the bounds. */
static void count_in_grid(const scene *s, uint32_t cells[512])
{
    memset(cells, 0, 512 * sizeof cells[0]);
    for (uint32_t t = 0; t < s->n_triangles; t++) {
        int cell = 0;
        for (int a = 0; a < 3; a++) {
            float centroid = 0.0f;
            for (int k = 0; k < 3; k++)
                centroid += s->positions[3 * (size_t)s->triangles[3 * (size_t)t + k] + a] / 3;
            int i = (int)((centroid - s->lo[a]) / (s->hi[a] - s->lo[a]) * 8);
            cell = cell * 8 + (i < 0 ? 0 : i > 7 ? 7 : i);
        }
        cells[cell]++;
    }
}

static int compare_counts(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* What makes the atrium a hard k-d tree input: the densest of 8 x 8 x 8
 * cells holds far more triangles than the typical non-empty one.
 * Measured: densest 21062, median non-empty 630, ratio 33.4; asserted:
 * 20, for margin against small edits of the scene. */
Test(gen, atrium_density_is_uneven)
{
    scene s = generate("atrium", 0);
    uint32_t cells[512], filled[512];
    count_in_grid(&s, cells);
    int n = 0;
    for (int k = 0; k < 512; k++)
        if (cells[k])
            filled[n++] = cells[k];
    qsort(filled, (size_t)n, sizeof filled[0], compare_counts);
    uint32_t median = filled[n / 2], densest = filled[n - 1];
    cr_assert_geq(densest, 20 * median, "densest %u, median %u", densest, median);
    scene_free(&s);
}

Test(gen, spheres_have_exactly_n_triangles)
{
    static const uint64_t sizes[] = {100, 101, 12345, 1000000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        scene s = generate("spheres", sizes[k]);
        /* The contract allows [n, 1.05 n]; the generator is exact. */
        cr_assert_geq(s.n_triangles, sizes[k]);
        cr_assert_leq(s.n_triangles, sizes[k] + sizes[k] / 20);
        cr_assert_eq(s.n_triangles, sizes[k]);
        scene_free(&s);
    }
    scene s = generate("spheres", 0);
    cr_assert_eq(s.n_triangles, 1000000);
    scene_free(&s);
}

Test(gen, spheres_are_well_formed)
{
    static const uint64_t sizes[] = {100, 12345, 1000000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        scene s = generate("spheres", sizes[k]);
        expect_well_formed(&s);
        scene_free(&s);
    }
}

Test(gen, spheres_are_deterministic)
{
    scene a = generate("spheres", 12345), b = generate("spheres", 12345);
    expect_identical(&a, &b);
    scene_free(&a);
    scene_free(&b);
    a = generate("spheres", 0);
    cr_assert_eq(scene_fnv1a(&a), SPHERES_DEFAULT_FNV1A, "checksum 0x%016llx",
                 (unsigned long long)scene_fnv1a(&a));
    scene_free(&a);
}

Test(gen, sizes_out_of_range_are_refused)
{
    expect_failure("spheres", 99, "valid: 100..50000000");
    expect_failure("spheres", 50000001, "valid: 100..50000000");
    expect_failure("flat", 50000001, "valid: 1..50000000");
    expect_failure("stacked", UINT64_MAX, "valid: 1..50000000");
    expect_failure("huge", 13, "valid: 14..50000000");
    expect_failure("wide", 13, "valid: 14..50000000");
    expect_failure("tilted", 50000001, "valid: 1..50000000");
    expect_failure("coincident", 50000001, "valid: 1..50000000");
}

Test(gen, flat_is_a_plane_of_n_triangles)
{
    static const uint64_t sizes[] = {1, 2, 3, 7, 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        scene s = generate("flat", sizes[k]);
        cr_assert_eq(s.n_triangles, sizes[k]);
        expect_well_formed(&s);
        for (uint32_t v = 0; v < s.n_vertices; v++)
            cr_assert_eq(s.positions[3 * (size_t)v + 2], 0.0f);
        scene_free(&s);
    }
    scene s = generate("flat", 0);
    cr_assert_eq(s.n_triangles, 10000);
    scene_free(&s);
}

Test(gen, stacked_repeats_one_triangle)
{
    scene s = generate("stacked", 0);
    cr_assert_eq(s.n_triangles, 1000);
    expect_well_formed(&s);
    cr_assert_eq(s.n_vertices, 3);
    for (size_t k = 3; k < 3 * (size_t)s.n_triangles; k++)
        cr_assert_eq(s.triangles[k], s.triangles[k % 3]);
    scene_free(&s);
    s = generate("stacked", 5);
    cr_assert_eq(s.n_triangles, 5);
    scene_free(&s);
}

/* huge and wide are a ground quad and 12-triangle boxes: their help's
 * 2 + 12 floor((n - 2) / 12) triangles for n, 1202 by default. */
static const uint64_t BOX_SCENE_SIZES[] = {14, 25, 26, 1202, 0};

static uint64_t ground_and_boxes(uint64_t n) { return 2 + 12 * (((n ? n : 1202) - 2) / 12); }

/* A box scene of n asked: its triangle count, and its bounds in x and z
 * those of its ground quad (half-width w, at y = 0, nothing below it). */
static void expect_ground_and_boxes(const scene *s, uint64_t n, float w)
{
    cr_assert_eq(s->n_triangles, ground_and_boxes(n), "n = %llu: %u triangles", (unsigned long long)n,
                 s->n_triangles);
    cr_assert_eq(s->lo[0], -w);
    cr_assert_eq(s->hi[0], w);
    cr_assert_eq(s->lo[2], -w);
    cr_assert_eq(s->hi[2], w);
    cr_assert_eq(s->lo[1], 0.0f);
}

/* huge: well formed, of its size, the ground quad of half-width 1e30 at
 * y = 0 with the boxes (sizes 1e27..3e29) standing on it. */
Test(gen, huge_is_boxes_on_a_ground_of_1e30)
{
    for (size_t k = 0; k < sizeof BOX_SCENE_SIZES / sizeof BOX_SCENE_SIZES[0]; k++) {
        uint64_t n = BOX_SCENE_SIZES[k];
        scene s = generate("huge", n);
        expect_well_formed(&s);
        expect_ground_and_boxes(&s, n, 1e30f);
        cr_assert(s.hi[1] >= 1e27f && s.hi[1] <= 3e29f, "n = %llu: tallest box %g", (unsigned long long)n,
                  s.hi[1]);
        scene_free(&s);
    }
}

/* wide: indexed right and of its size (tiny boxes far out may round to
 * zero-area triangles: the help allows them), the ground quad of
 * half-width 1e6 at y = 0, and by default box heights from under 1e-5 to
 * over 1e5 (1e-6..1.1e6 log-uniform). */
Test(gen, wide_is_boxes_from_1e_6_to_1e6)
{
    for (size_t k = 0; k < sizeof BOX_SCENE_SIZES / sizeof BOX_SCENE_SIZES[0]; k++) {
        uint64_t n = BOX_SCENE_SIZES[k];
        scene s = generate("wide", n);
        expect_indexed(&s);
        expect_ground_and_boxes(&s, n, 1e6f);
        cr_assert_leq(s.hi[1], 1.1e6f);
        if (n == 0) {
            float lowest_top = INFINITY;
            for (uint32_t v = 0; v < s.n_vertices; v++) {
                float y = s.positions[3 * (size_t)v + 1];
                if (y > 0.0f) lowest_top = fminf(lowest_top, y);
            }
            cr_assert_lt(lowest_top, 1e-5f, "lowest box %g", lowest_top);
            cr_assert_gt(s.hi[1], 1e5f, "tallest box %g", s.hi[1]);
        }
        scene_free(&s);
    }
}

/* tilted: exactly n triangles, well formed, no axis flat, and every vertex
 * on the plane 0.48 x - 0.64 y + 0.6 z = 0 within its rounding to float
 * (each coordinate by at most 2^-24 of itself; twice that allowed). */
Test(gen, tilted_is_a_plane_of_n_triangles)
{
    static const uint64_t sizes[] = {1, 2, 3, 7, 12345, 0};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        scene s = generate("tilted", sizes[k]);
        cr_assert_eq(s.n_triangles, sizes[k] ? sizes[k] : 10000);
        expect_well_formed(&s);
        for (int a = 0; a < 3; a++) cr_assert_gt(s.hi[a] - s.lo[a], 0.25f, "n = %llu: axis %d is flat",
                                                 (unsigned long long)sizes[k], a);
        for (uint32_t v = 0; v < s.n_vertices; v++) {
            const float *p = s.positions + 3 * (size_t)v;
            double dist = 0.48 * p[0] - 0.64 * p[1] + 0.6 * p[2];
            double bound = 0x1p-23 * (fabs(p[0]) + fabs(p[1]) + fabs(p[2]));
            cr_assert_leq(fabs(dist), bound, "vertex %u is %g off the plane", v, dist);
        }
        scene_free(&s);
    }
}

/* coincident: n + 248 triangles, well formed; the n copies (after the 248
 * of ground and boxes) each on three vertices of its own, all at the same
 * coordinates, above the ground at y = 0. */
Test(gen, coincident_copies_own_their_vertices)
{
    static const uint64_t sizes[] = {1, 2, 1000, 0};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint64_t n = sizes[k] ? sizes[k] : 10000;
        scene s = generate("coincident", sizes[k]);
        cr_assert_eq(s.n_triangles, n + 248);
        expect_well_formed(&s);
        cr_assert_eq(s.lo[1], 0.0f);
        uint32_t *uses = calloc(s.n_vertices, sizeof *uses);
        cr_assert_not_null(uses);
        for (size_t i = 0; i < 3 * (size_t)s.n_triangles; i++) uses[s.triangles[i]]++;
        const uint32_t *first = s.triangles + 3 * 248;
        for (uint32_t t = 248; t < s.n_triangles; t++)
            for (int j = 0; j < 3; j++) {
                uint32_t v = s.triangles[3 * (size_t)t + j];
                const float *p = s.positions + 3 * (size_t)v, *q = s.positions + 3 * (size_t)first[j];
                cr_assert_eq(uses[v], 1, "copy %u shares vertex %u", t - 248, v);
                cr_assert_eq(memcmp(p, q, 3 * sizeof *p), 0, "copy %u differs from the first", t - 248);
                cr_assert_gt(p[1], 0.0f, "copy %u is not above the ground", t - 248);
            }
        free(uses);
        scene_free(&s);
    }
}

static void expect_round_trip(const char *name, uint64_t n)
{
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/gen_round_trip_%s.obj", KDA_TEST_TMPDIR, name);
    scene s = generate(name, n), loaded;
    cr_assert_eq(scene_write_obj(&s, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(path, &loaded, err, sizeof err), 0, "%s", err);
    expect_identical(&s, &loaded);
    remove(path);
    scene_free(&s);
    scene_free(&loaded);
}

Test(gen, atrium_survives_obj_round_trip)
{
    expect_round_trip("atrium", 0);
}

Test(gen, spheres_survive_obj_round_trip)
{
    expect_round_trip("spheres", 12345);
}
