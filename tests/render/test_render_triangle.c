/* test_render_triangle.c - the watertight ray/triangle test (ray_triangle)
 * on hand-made triangles: the exact hit distance, every axis and sign,
 * misses, t_max, parallel rays, back faces, and no ray let through between
 * triangles that share an edge or a vertex.
 *
 * Oracles: triangles whose hit distance is exact in float, shared edges
 * and vertices aimed at through points that are exact in float (a
 * watertight test never lets such a ray through), and Moller-Trumbore in
 * double on random triangles and rays. */
#include "test_render.h"

/* ray_triangle on one ray; returns whether it hits, and the distance. */
static int hit_triangle(const float o[3], const float d[3], const float v0[3], const float v1[3],
                        const float v2[3], float t_max, float *t)
{
    ray r = {{o[0], o[1], o[2]}, {d[0], d[1], d[2]}};
    ray_shear sh = ray_make_shear(&r);
    *t = NAN;
    return ray_triangle(&r, &sh, v0, v1, v2, t_max, t);
}

static const float TRI_V0[3] = {0, 0, 5}, TRI_V1[3] = {1, 0, 5}, TRI_V2[3] = {0, 1, 5};

Test(ray_triangle, hits_at_the_exact_distance)
{
    float t;
    cr_assert(hit_triangle((float[]){0.25f, 0.25f, 0}, (float[]){0, 0, 1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    cr_expect_eq(t, 5.0f, "t = %.9g, want 5", t);
    /* t is in units of |d|: a direction of length 2 halves it. */
    cr_assert(hit_triangle((float[]){0.25f, 0.25f, 0}, (float[]){0, 0, 2}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    cr_expect_eq(t, 2.5f, "t = %.9g, want 2.5", t);
    /* A tilted triangle, z = 4 + x: the ray along z at x = 0.5 meets it at 4.5. */
    cr_assert(hit_triangle((float[]){0.5f, 0.5f, 0}, (float[]){0, 0, 1}, (float[]){0, 0, 4}, (float[]){2, 0, 6},
                           (float[]){0, 2, 4}, INFINITY, &t));
    cr_expect_float_eq(t, 4.5f, 4.5f * 1e-6f, "t = %.9g, want 4.5", t);
}

Test(ray_triangle, every_axis_and_sign)
{
    /* The triangle in the plane x[a] = 3 with the other two coordinates
     * forming a right triangle at the origin, hit along +a and -a. */
    for (int a = 0; a < 3; a++)
        for (int sign = -1; sign <= 1; sign += 2) {
            int b = (a + 1) % 3, c = (a + 2) % 3;
            float v0[3] = {0}, v1[3] = {0}, v2[3] = {0}, o[3] = {0}, d[3] = {0};
            v0[a] = v1[a] = v2[a] = 3.0f;
            v1[b] = 2.0f;
            v2[c] = 2.0f;
            o[a] = sign > 0 ? -1.0f : 10.0f;
            o[b] = o[c] = 0.5f;
            d[a] = (float)sign;
            float t;
            cr_assert(hit_triangle(o, d, v0, v1, v2, INFINITY, &t), "axis %d sign %d: miss", a, sign);
            cr_expect_eq(t, sign > 0 ? 4.0f : 7.0f, "axis %d sign %d: t = %.9g", a, sign, t);
        }
}

Test(ray_triangle, misses)
{
    float t;
    /* Beside the triangle (beyond its hypotenuse). */
    cr_expect_not(hit_triangle((float[]){0.6f, 0.6f, 0}, (float[]){0, 0, 1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    /* Pointing away: the plane is behind the origin. */
    cr_expect_not(hit_triangle((float[]){0.25f, 0.25f, 0}, (float[]){0, 0, -1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    /* The origin is beyond the triangle. */
    cr_expect_not(hit_triangle((float[]){0.25f, 0.25f, 6}, (float[]){0, 0, 1}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
}

Test(ray_triangle, respects_t_max)
{
    float t;
    const float o[3] = {0.25f, 0.25f, 0}, d[3] = {0, 0, 1};
    cr_expect_not(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, 4.0f, &t), "hit before t_max = 4");
    cr_expect_not(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, 5.0f, &t), "t_max is exclusive");
    cr_expect(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, nextafterf(5.0f, INFINITY), &t));
    cr_expect_eq(t, 5.0f);
}

Test(ray_triangle, parallel_rays_miss)
{
    float t;
    /* Above the plane, parallel to it, passing over the triangle. */
    cr_expect_not(hit_triangle((float[]){-1, 0.25f, 4}, (float[]){1, 0, 0}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    /* In the plane itself, crossing the triangle: no proper hit either. */
    cr_expect_not(hit_triangle((float[]){-1, 0.25f, 5}, (float[]){1, 0, 0}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
    cr_expect_not(hit_triangle((float[]){-1, -1, 5}, (float[]){1, 1, 0}, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t));
}

Test(ray_triangle, back_faces_are_hit)
{
    float t, t_back;
    const float o[3] = {0.25f, 0.25f, 10}, d[3] = {0, 0, -1};
    cr_assert(hit_triangle(o, d, TRI_V0, TRI_V1, TRI_V2, INFINITY, &t), "back face culled");
    cr_expect_eq(t, 5.0f);
    /* Reversed winding, same ray: the same hit. */
    cr_assert(hit_triangle(o, d, TRI_V0, TRI_V2, TRI_V1, INFINITY, &t_back));
    cr_expect_eq(t_back, t);
}

/* A folded quad P0 P1 P2 P3 split along the diagonal P0-P2 into (P0, P1, P2)
 * and (P0, P2, P3).  Every coordinate is a small dyadic number, so points
 * P0 + k/1024 (P2 - P0) on the shared edge and the directions toward them
 * from dyadic origins are exact in float.  The triangles slope by at most
 * 0.15 and every ray from quad_origin by at least 0.2, so no ray sees the
 * fold edge-on: around the edge, the two triangles cover both sides. */
static const float QUAD_P0[3] = {-1, -1, 0}, QUAD_P1[3] = {1, -1, -0.0625f}, QUAD_P2[3] = {1, 1, 0.125f},
                   QUAD_P3[3] = {-1, 1, 0.25f};

static int hits_quad(const float o[3], const float target[3])
{
    float d[3], t;
    for (int a = 0; a < 3; a++) d[a] = target[a] - o[a];
    return hit_triangle(o, d, QUAD_P0, QUAD_P1, QUAD_P2, INFINITY, &t) ||
           hit_triangle(o, d, QUAD_P0, QUAD_P2, QUAD_P3, INFINITY, &t);
}

/* An origin 2 to 6 units above or below the quad, anywhere over [-4, 4]^2. */
static void quad_origin(rng *g, int i, float o[3])
{
    o[0] = rng_dyadic(g, -4, 4);
    o[1] = rng_dyadic(g, -4, 4);
    o[2] = (i % 2 ? 1.0f : -1.0f) * rng_dyadic(g, 2, 6);
}

Test(ray_triangle, watertight_on_a_shared_edge)
{
    rng g = {1};
    int leaks = 0, first_leak = -1;
    float first_o[3] = {0}, first_p[3] = {0};
    for (int i = 0; i < 10000; i++) {
        float o[3], p[3];
        quad_origin(&g, i, o);
        /* Inside the edge: its ends are corners of the quad's outline,
         * where a ray may rightly pass outside both triangles. */
        float s = (float)(1 + rng_below(&g, 1023)) / 1024.0f;
        for (int a = 0; a < 3; a++) p[a] = QUAD_P0[a] + s * (QUAD_P2[a] - QUAD_P0[a]);
        if (!hits_quad(o, p) && leaks++ == 0) {
            first_leak = i;
            memcpy(first_o, o, sizeof o);
            memcpy(first_p, p, sizeof p);
        }
    }
    cr_expect_eq(leaks, 0,
                 "%d of 10000 rays aimed at the shared edge hit neither triangle; first: ray %d from "
                 "(%a, %a, %a) toward (%a, %a, %a)",
                 leaks, first_leak, first_o[0], first_o[1], first_o[2], first_p[0], first_p[1], first_p[2]);
}

/* A closed fan of six triangles around a centre vertex, not planar but, as
 * the quad, flatter than any ray from quad_origin. */
static const float FAN_CENTER[3] = {0.25f, -0.125f, 0.5f};
static const float FAN_RIM[6][3] = {{2, 0, 0.5625f},  {1, 2, 0.4375f},  {-1, 2, 0.5625f},
                                    {-2, 0, 0.4375f}, {-1, -2, 0.5f}, {1, -2, 0.53125f}};

static int hits_fan(const float o[3], const float target[3])
{
    float d[3], t;
    for (int a = 0; a < 3; a++) d[a] = target[a] - o[a];
    int hit = 0;
    for (int k = 0; k < 6; k++) hit |= hit_triangle(o, d, FAN_CENTER, FAN_RIM[k], FAN_RIM[(k + 1) % 6], INFINITY, &t);
    return hit;
}

Test(ray_triangle, watertight_at_a_shared_vertex_and_spokes)
{
    rng g = {2};
    int vertex_leaks = 0, spoke_leaks = 0;
    for (int i = 0; i < 10000; i++) {
        float o[3], p[3];
        quad_origin(&g, i, o);
        vertex_leaks += !hits_fan(o, FAN_CENTER);
        const float *rim = FAN_RIM[rng_below(&g, 6)];
        float s = (float)(1 + rng_below(&g, 1023)) / 1024.0f;
        for (int a = 0; a < 3; a++) p[a] = FAN_CENTER[a] + s * (rim[a] - FAN_CENTER[a]);
        spoke_leaks += !hits_fan(o, p);
    }
    cr_expect_eq(vertex_leaks, 0, "%d of 10000 rays aimed at the centre of a closed fan hit none of it",
                 vertex_leaks);
    cr_expect_eq(spoke_leaks, 0, "%d of 10000 rays aimed at a spoke of a closed fan hit none of it", spoke_leaks);
}

/* The published test swaps the sheared x and y where the ray runs down its
 * main axis, to keep the triangles' winding; ray_triangle does not, since a
 * swap only negates u, v, w, the determinant and the distance, exactly.
 * Oracle: the test with the axes and shears swapped, on random rays and on
 * rays aimed at dyadic vertices and edge points (where the double-precision
 * fallback runs) gives the same answer and the same bits of t. */
Test(ray_triangle, swapping_the_sheared_axes_changes_no_answer)
{
    rng g = {3};
    int hits = 0, edge_cases = 0;
    for (int i = 0; i < 200000; i++) {
        float v[3][3], o[3], d[3];
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++) v[k][a] = rng_dyadic(&g, -4, 4);
        for (int a = 0; a < 3; a++) o[a] = rng_dyadic(&g, -8, 8);
        if (i % 2) { /* at a vertex or an edge's midpoint: exact in float */
            int k = (int)rng_below(&g, 3), m = (int)rng_below(&g, 2);
            for (int a = 0; a < 3; a++) d[a] = (m ? 0.5f * (v[k][a] + v[(k + 1) % 3][a]) : v[k][a]) - o[a];
            edge_cases++;
        } else {
            rng_direction(&g, d);
        }
        if (d[0] == 0.0f && d[1] == 0.0f && d[2] == 0.0f) continue;
        ray r = {{o[0], o[1], o[2]}, {d[0], d[1], d[2]}};
        ray_shear s = ray_make_shear(&r), swapped = s;
        swapped.sx = s.sy;
        swapped.sy = s.sx;
        int kx = (s.kz + 1) % 3, ky = (s.kz + 2) % 3;
        float t_max = i % 3 ? INFINITY : rng_range(&g, 0.5f, 3.0f), t = NAN, t_swapped = NAN;
        int hit = ray_triangle(&r, &s, v[0], v[1], v[2], t_max, &t);
        int hit_swapped = ray_triangle_axes(&r, &swapped, v[0], v[1], v[2], t_max, &t_swapped, ky, kx, s.kz);
        cr_assert_eq(hit, hit_swapped, "case %d: hit %d, with the axes swapped %d", i, hit, hit_swapped);
        if (hit) cr_assert_eq(memcmp(&t, &t_swapped, sizeof t), 0, "case %d: t %a, swapped %a", i, t, t_swapped);
        hits += hit;
    }
    cr_expect_gt(hits, 10000, "too few hits (%d) to compare distances", hits);
    cr_expect_gt(edge_cases, 90000);
}

/* Moller-Trumbore in double on the float inputs: where the ray's line meets
 * the triangle's plane, as barycentrics b (of v[0], v[1], v[2]) and the
 * distance t in units of |d|.  Returns 0 for a ray parallel to the plane. */
static int double_plane_hit(const float o[3], const float d[3], const float v[3][3], double b[3], double *t)
{
    double e1[3], e2[3], s[3], p[3], q[3];
    for (int a = 0; a < 3; a++) {
        e1[a] = (double)v[1][a] - v[0][a];
        e2[a] = (double)v[2][a] - v[0][a];
        s[a] = (double)o[a] - v[0][a];
    }
    p[0] = d[1] * e2[2] - d[2] * e2[1];
    p[1] = d[2] * e2[0] - d[0] * e2[2];
    p[2] = d[0] * e2[1] - d[1] * e2[0];
    double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    if (det == 0.0) return 0;
    q[0] = s[1] * e1[2] - s[2] * e1[1];
    q[1] = s[2] * e1[0] - s[0] * e1[2];
    q[2] = s[0] * e1[1] - s[1] * e1[0];
    b[1] = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) / det;
    b[2] = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / det;
    b[0] = 1.0 - b[1] - b[2];
    *t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
    return 1;
}

/* The scales of the float test's rounding, in double: *far, the farthest
 * vertex from the origin (vertices relative to the origin are rounded to
 * about 2^-24 of it); *depth, the longest edge; and the return value kappa
 * = far / h, h the triangle's smallest height seen along the ray (a
 * barycentric is a distance from an edge in that view over a height, so
 * it is off by about kappa 2^-24; infinite for a ray in the plane). */
static double ray_triangle_condition(const float o[3], const float d[3], const float v[3][3], double *far,
                                     double *depth)
{
    double len = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
    double u[3] = {d[0] / len, d[1] / len, d[2] / len}, e[3][3], seen = 0.0;
    *far = *depth = 0.0;
    for (int k = 0; k < 3; k++) {
        double r2 = 0.0, along = 0.0, e2 = 0.0, across2 = 0.0;
        for (int a = 0; a < 3; a++) {
            r2 += ((double)v[k][a] - o[a]) * ((double)v[k][a] - o[a]);
            e[k][a] = (double)v[(k + 1) % 3][a] - v[k][a];
            along += e[k][a] * u[a];
            e2 += e[k][a] * e[k][a];
        }
        for (int a = 0; a < 3; a++) across2 += (e[k][a] - along * u[a]) * (e[k][a] - along * u[a]);
        *far = fmax(*far, sqrt(r2));
        *depth = fmax(*depth, sqrt(e2));
        seen = fmax(seen, sqrt(across2));
    }
    double n[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                   e[0][0] * e[1][1] - e[0][1] * e[1][0]};
    double h = fabs(n[0] * u[0] + n[1] * u[1] + n[2] * u[2]) / seen;
    return *far / h;
}

/* One random triangle: a long edge of length 2^-6..2^6 in a random
 * direction, the third vertex off it by 1/4..1 of that (a quarter of them
 * slivers, 2^-10..2^-2), tilted every way, within [-100, 100]^3. */
static void random_triangle(rng *g, float v[3][3])
{
    float along[3], side[3], c[3];
    rng_direction(g, along);
    rng_direction(g, side);
    float axis[3];
    cross3(along, side, axis);
    cross3(axis, along, side);
    normalize3(side);
    float size = exp2f(rng_range(g, -6.0f, 6.0f)), shift = rng_range(g, -0.5f, 1.5f);
    float height = rng_below(g, 4) == 0 ? exp2f(rng_range(g, -10.0f, -2.0f)) : rng_range(g, 0.25f, 1.0f);
    for (int a = 0; a < 3; a++) c[a] = rng_range(g, -100.0f, 100.0f);
    for (int a = 0; a < 3; a++) {
        v[0][a] = c[a];
        v[1][a] = c[a] + size * along[a];
        v[2][a] = c[a] + size * (shift * along[a] + height * side[a]);
    }
}

/* ray_triangle against Moller-Trumbore in double (another algorithm in a
 * wider type) on 10^5 random triangles, one ray each: a random ray near
 * the triangle, or one from 2^-3..2^6 sizes away aimed at an inside point
 * or just beside an edge (2^-16..2^-4 off, either side); |d| 1/4..4, and a
 * third with a finite t_max.  Where double decides (the barycentrics all
 * above the margin or one below minus it, t farther than the tolerance
 * from 0 and t_max), the hit or miss is the same; where both hit, so is t.
 * Margin max(1e-4, 4 kappa 2^-24) (ray_triangle_condition: the float
 * barycentrics' error, measured below 0.7 kappa 2^-24); tolerance
 * 8 (far + kappa depth) 2^-24 / |d|: the distance's rounding plus the
 * barycentrics' error over the triangle's depth (measured below 1.6 of
 * that unit; a flat 1e-5 of far / |d| fails 47 ill-conditioned hits). */
Test(ray_triangle, agrees_with_double_precision_on_random_triangles)
{
    rng g = {4};
    int decided = 0, hits = 0;
    for (int i = 0; i < 100000; i++) {
        float v[3][3], o[3], d[3];
        random_triangle(&g, v);
        rng_direction(&g, d);
        float size = 0.0f;
        for (int a = 0; a < 3; a++) size = fmaxf(size, fabsf(v[1][a] - v[0][a]));
        if (i % 4 == 0) {
            for (int a = 0; a < 3; a++) o[a] = v[0][a] + size * rng_range(&g, -4.0f, 4.0f);
        } else {
            float b1 = rng_unit(&g), b2 = rng_unit(&g);
            if (b1 + b2 > 1.0f) {
                b1 = 1.0f - b1;
                b2 = 1.0f - b2;
            }
            if (i % 4 == 1) {
                b2 = (rng_below(&g, 2) ? 1.0f : -1.0f) * exp2f(rng_range(&g, -16.0f, -4.0f));
                b1 = rng_unit(&g) * (1.0f - fabsf(b2));
            }
            float away = size * exp2f(rng_range(&g, -3.0f, 6.0f));
            for (int a = 0; a < 3; a++)
                o[a] = v[0][a] + b1 * (v[1][a] - v[0][a]) + b2 * (v[2][a] - v[0][a]) - away * d[a];
        }
        float len = rng_range(&g, 0.25f, 4.0f);
        for (int a = 0; a < 3; a++) d[a] *= len;
        double d_len = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);

        double b[3], want_t, far, depth;
        if (!double_plane_hit(o, d, v, b, &want_t)) continue;
        float t_max = i % 3 ? INFINITY : (float)fabs(want_t) * rng_range(&g, 0.5f, 1.5f), t = NAN;
        double kappa = ray_triangle_condition(o, d, v, &far, &depth);
        double margin = fmax(1e-4, 4.0 * kappa * 0x1p-24);
        double tol = 8.0 * (far + kappa * depth) * 0x1p-24 / d_len;
        int inside = b[0] > margin && b[1] > margin && b[2] > margin;
        int outside = b[0] < -margin || b[1] < -margin || b[2] < -margin;
        int in_range = want_t > tol && want_t < (double)t_max - tol;
        int out_of_range = want_t < -tol || want_t > (double)t_max + tol;
        if (!outside && !(inside && (in_range || out_of_range))) continue;
        decided++;
        int want = inside && in_range;
        ray r = {{o[0], o[1], o[2]}, {d[0], d[1], d[2]}};
        ray_shear s = ray_make_shear(&r);
        int hit = ray_triangle(&r, &s, v[0], v[1], v[2], t_max, &t);
        cr_assert_eq(hit, want, "case %d: hit %d, double says %d (barycentrics %g %g %g, t %g, t_max %g, kappa %g)",
                     i, hit, want, b[0], b[1], b[2], want_t, t_max, kappa);
        if (!hit) continue;
        hits++;
        cr_assert_leq(fabs(t - want_t), tol, "case %d: t %.9g, double %.17g (tolerance %g, kappa %g)", i, t, want_t,
                      tol, kappa);
    }
    cr_expect_gt(decided, 90000, "double decided only %d of 100000 cases", decided);
    cr_expect_gt(hits, 40000, "only %d of %d decided rays hit", hits, decided);
}
