/* test_obj_polygons.c - the OBJ loader's faces of more than three corners
 * (scenes/obj.c, obj_polygon.c): a quad cut by its first diagonal, a
 * convex face as a strip, any other simple face by ear clipping.
 *
 * Oracles: exact triangles for small faces; for the others, polygons
 * written in the plane and placed in space by an affine map, then checked
 * in their own plane, in double: n - 2 triangles of the face's corners,
 * each turning as the face turns or flat (corners in a line), each
 * centroid inside the face (even-odd rule), their areas adding up to the
 * face's (the shoelace formula). */
#include <math.h>
#include <stdlib.h>

#include "polygon_obj.h"
#include "test_obj.h"

/* A quad as a fan cuts it; more corners as a strip from both ends. */
Test(polygons, small_convex_faces_cut_as_a_strip)
{
    scene s = parse_ok("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 1 0\nv -1 0 0\n"
                       "f 1 2 3 4\n"
                       "f 1 2 3 4 5\n"
                       "f 6/1 5/1 4/1 3/1 2/1 1/1\n"
                       "vt 0 0\n");
    const uint32_t want[] = {0, 1, 2, 0, 2, 3,
                             0, 1, 2, 0, 2, 4, 2, 3, 4,
                             5, 4, 3, 5, 3, 0, 3, 2, 0, 2, 1, 0};
    expect_triangles(&s, want, 9);
    scene_free(&s);
}

/* A quad is cut by its first diagonal even where that leaves the face: the
 * cut the shared scenes' figures were measured with. */
Test(polygons, a_dart_quad_keeps_its_first_diagonal)
{
    scene s = parse_ok("v 0 0 0\nv 2 0 0\nv 1 0.5 0\nv 1 2 0\nf 1 2 3 4\n");
    const uint32_t want[] = {0, 1, 2, 0, 2, 3};
    expect_triangles(&s, want, 2);
    scene_free(&s);
}

/* Twice the signed area of (a b c) in the plane. */
static double turn(const double *a, const double *b, const double *c)
{
    return (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
}

/* Even-odd rule: whether p lies inside the polygon xy[0..n-1]. */
static int inside(const double (*xy)[2], size_t n, const double p[2])
{
    int in = 0;
    for (size_t i = 0, j = n - 1; i < n; j = i++)
        if ((xy[i][1] > p[1]) != (xy[j][1] > p[1]) &&
            p[0] < xy[j][0] + (p[1] - xy[j][1]) * (xy[i][0] - xy[j][0]) / (xy[i][1] - xy[j][1]))
            in = !in;
    return in;
}

static void expect_cut(const double (*xy)[2], size_t n, const char *what)
{
    double face = 0;
    for (size_t i = 0, j = n - 1; i < n; j = i++) face += xy[j][0] * xy[i][1] - xy[i][0] * xy[j][1];
    double sign = face > 0 ? 1 : -1;
    for (int m = POLYGON_XY; m <= POLYGON_FACE_FIRST; m++) {
        char *text = polygon_obj(xy, n, (polygon_place)m);
        cr_assert_not_null(text);
        scene s = parse_ok(text);
        free(text);
        cr_assert_eq(s.n_triangles, n - 2, "%s, map %d: %u triangles of %zu corners", what, m, s.n_triangles, n);
        double covered = 0;
        for (uint32_t t = 0; t < s.n_triangles; t++) {
            const uint32_t *c = s.triangles + 3 * t;
            cr_assert(c[0] < n && c[1] < n && c[2] < n);
            double area = sign * turn(xy[c[0]], xy[c[1]], xy[c[2]]);
            cr_assert_geq(area, -1e-12 * fabs(face), "%s, map %d: triangle %u (%u %u %u) turned over", what, m, t, c[0],
                          c[1], c[2]);
            if (area <= 1e-12 * fabs(face)) continue; /* flat: corners in a line, as ears can leave them */
            double centroid[2] = {(xy[c[0]][0] + xy[c[1]][0] + xy[c[2]][0]) / 3,
                                  (xy[c[0]][1] + xy[c[1]][1] + xy[c[2]][1]) / 3};
            cr_assert(inside(xy, n, centroid), "%s, map %d: triangle %u (%u %u %u) lies outside the face", what, m,
                      t, c[0], c[1], c[2]);
            covered += area;
        }
        cr_expect(fabs(covered - fabs(face)) <= 1e-9 * fabs(face), "%s, map %d: triangles cover %.15g of %.15g",
                  what, m, covered / 2, fabs(face) / 2);
        scene_free(&s);
    }
}

/* A comb of k teeth: a base, then teeth down from the right. */
static double (*comb(size_t k, size_t *n))[2]
{
    *n = 2 * k + 3;
    double(*xy)[2] = malloc(*n * sizeof *xy);
    cr_assert_not_null(xy);
    size_t i = 0;
    xy[i][0] = 0, xy[i++][1] = 0;
    xy[i][0] = (double)k, xy[i++][1] = 0;
    for (size_t t = k; t >= 1; t--) {
        xy[i][0] = (double)t, xy[i++][1] = 2;
        xy[i][0] = t - 0.5, xy[i++][1] = 1;
    }
    xy[i][0] = 0, xy[i][1] = 2;
    return xy;
}

Test(polygons, faces_that_are_not_convex_cut_by_their_ears)
{
    static const double ell[6][2] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};
    double ell_cw[6][2], star[10][2];
    for (size_t i = 0; i < 6; i++) ell_cw[i][0] = ell[5 - i][0], ell_cw[i][1] = ell[5 - i][1];
    for (size_t i = 0; i < 10; i++) {
        double a = 2 * 3.14159265358979323846 * (double)i / 10, r = i % 2 ? 0.4 : 1.0;
        star[i][0] = r * cos(a), star[i][1] = r * sin(a);
    }
    expect_cut(ell, 6, "an L");
    expect_cut((const double(*)[2])ell_cw, 6, "an L, clockwise");
    expect_cut((const double(*)[2])star, 10, "a star");
    /* a square with a square hole, joined by a bridge walked both ways:
     * corners (0 0) and (1 1) come twice */
    static const double holed[10][2] = {{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0},
                                        {1, 1}, {1, 3}, {3, 3}, {3, 1}, {1, 1}};
    expect_cut(holed, 10, "a square with a hole");
    for (size_t k = 1; k <= 300; k *= 5) {
        size_t n;
        double(*xy)[2] = comb(k, &n);
        char what[32];
        snprintf(what, sizeof what, "a comb of %zu teeth", k);
        expect_cut((const double(*)[2])xy, n, what);
        free(xy);
    }
}

/* A convex face of any size (a regular polygon): the strip, which covers it. */
Test(polygons, convex_faces_of_many_corners)
{
    static const uint32_t sizes[] = {5, 6, 7, 16, 17, 100, 1001};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        double(*xy)[2] = regular_polygon(n);
        cr_assert_not_null(xy);
        char what[32];
        snprintf(what, sizeof what, "a %zu-gon", n);
        expect_cut((const double(*)[2])xy, n, what);
        free(xy);
    }
}

/* Ear clipping takes time as the square of the corners: a face that is
 * not convex may have at most OBJ_POLYGON_EARS_MAX; a convex one any. */
Test(polygons, too_many_corners_for_a_face_that_is_not_convex)
{
    size_t n;
    double(*xy)[2] = comb(8200, &n);
    char *text = polygon_obj((const double(*)[2])xy, n, POLYGON_XY);
    free(xy);
    cr_assert_not_null(text);
    char want[128];
    snprintf(want, sizeof want, "t.obj:%zu: face of %zu corners is not convex: such a face may have at most 16384",
             n + 1, n);
    expect_error(text, want);
    free(text);
    xy = regular_polygon(20000);
    cr_assert_not_null(xy);
    text = polygon_obj((const double(*)[2])xy, 20000, POLYGON_XY);
    free(xy);
    cr_assert_not_null(text);
    scene s = parse_ok(text);
    cr_expect_eq(s.n_triangles, 19998);
    scene_free(&s);
    free(text);
}
