/* polygon_obj.c - the OBJ text of one polygon (polygon_obj.h). */
#include "polygon_obj.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double (*regular_polygon(size_t n))[2]
{
    double(*xy)[2] = malloc(n * sizeof *xy);
    for (size_t i = 0; xy && i < n; i++) {
        double a = 2.0 * 3.14159265358979323846 * (double)i / (double)n;
        xy[i][0] = cos(a), xy[i][1] = sin(a);
    }
    return xy;
}

static size_t face_line(char *text, size_t cap, size_t n)
{
    size_t k = (size_t)snprintf(text, cap, "f");
    for (size_t i = 0; i < n; i++) k += (size_t)snprintf(text + k, cap - k, " %zu", i + 1);
    return k + (size_t)snprintf(text + k, cap - k, "\n");
}

char *fan_obj(size_t n)
{
    double(*xy)[2] = regular_polygon(n + 2);
    char *text = xy ? polygon_obj((const double(*)[2])xy, n + 2, POLYGON_FAN) : NULL;
    free(xy);
    return text;
}

char *polygon_obj(const double (*xy)[2], size_t n, polygon_place place)
{
    size_t cap = n * 104 + 16, k = 0; /* a v line is at most 55 bytes, a corner 21, a fan's f line 46 */
    char *text = malloc(cap);
    if (!text) return NULL;
    if (place == POLYGON_FACE_FIRST) k += face_line(text, cap, n);
    for (size_t i = 0; i < n; i++) {
        double x = xy[i][0], y = xy[i][1];
        double p[3][3] = {{x, y, 0}, {0.5 * x - 0.2 * y, 0.3 * x + y, 0.8 * x}, {y, -0.4 * x, 0.25 * y - x}};
        const double *q = p[place == POLYGON_FACE_FIRST || place == POLYGON_FAN ? POLYGON_XY : place];
        k += (size_t)snprintf(text + k, cap - k, "v %.9g %.9g %.9g\n", q[0], q[1], q[2]);
    }
    if (place == POLYGON_FAN)
        for (size_t i = 2; i < n; i++) k += (size_t)snprintf(text + k, cap - k, "f 1 %zu %zu\n", i, i + 1);
    else if (place != POLYGON_FACE_FIRST)
        face_line(text + k, cap - k, n);
    return text;
}
