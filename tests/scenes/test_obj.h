/* test_obj.h - what the source files of test_obj share: parsing OBJ text
 * held in memory as "t.obj", and checks of the scene it gives (its
 * vertices, its triangles, an error message and the empty scene an error
 * leaves, two scenes equal). */
#ifndef KDA_TEST_OBJ_H
#define KDA_TEST_OBJ_H

#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene.h"

#define TMP(file) KDA_TEST_TMPDIR "/test_obj_" file

/* The loader's last message (each source file has its own). */
static char err[1024];

static inline int parse(const char *text, scene *s)
{
    err[0] = '\0';
    return scene_parse_obj(text, strlen(text), "t.obj", s, err, sizeof err);
}

/* Parses text that must load. */
static inline scene parse_ok(const char *text)
{
    scene s;
    cr_assert_eq(parse(text, &s), 0, "unexpected error \"%s\" for:\n%s", err, text);
    return s;
}

static inline void expect_empty(const scene *s)
{
    cr_expect_null(s->positions);
    cr_expect_null(s->triangles);
    cr_expect_eq(s->n_vertices, 0);
    cr_expect_eq(s->n_triangles, 0);
    cr_expect_eq(s->n_degenerate, 0);
}

/* Parses text that must fail with exactly `message`, leaving s empty. */
static inline void expect_error(const char *text, const char *message)
{
    scene s;
    memset(&s, 0xA5, sizeof s);
    cr_expect_eq(parse(text, &s), -1, "no error for:\n%s", text);
    cr_expect_str_eq(err, message, "for:\n%s", text);
    expect_empty(&s);
}

static inline void expect_positions(const scene *s, const float *want, uint32_t n)
{
    cr_assert_eq(s->n_vertices, n);
    for (uint32_t i = 0; i < 3 * n; i++)
        cr_expect_eq(s->positions[i], want[i], "coordinate %u: %.9g, want %.9g", i,
                     s->positions[i], want[i]);
}

static inline void expect_triangles(const scene *s, const uint32_t *want, uint32_t n)
{
    cr_assert_eq(s->n_triangles, n);
    for (uint32_t i = 0; i < 3 * n; i++)
        cr_expect_eq(s->triangles[i], want[i], "triangle %u corner %u: %u, want %u", i / 3,
                     i % 3, s->triangles[i], want[i]);
}

static inline void expect_same_scene(const scene *a, const scene *b)
{
    cr_assert_eq(a->n_vertices, b->n_vertices);
    cr_assert_eq(a->n_triangles, b->n_triangles);
    cr_expect_eq(memcmp(a->positions, b->positions, 3 * sizeof(float) * a->n_vertices), 0);
    cr_expect_eq(memcmp(a->triangles, b->triangles, 3 * sizeof(uint32_t) * a->n_triangles), 0);
    cr_expect_eq(memcmp(a->lo, b->lo, sizeof a->lo), 0);
    cr_expect_eq(memcmp(a->hi, b->hi, sizeof a->hi), 0);
}

/* Three vertices on lines 1 to 3: a face after them is on line 4. */
#define TRI3 "v 0 0 0\nv 1 0 0\nv 0 1 0\n"

#endif
