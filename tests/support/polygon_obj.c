/* polygon_obj.c - the OBJ text of one regular polygon (polygon_obj.h). */
#include "polygon_obj.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *polygon_obj(uint32_t n)
{
    size_t cap = (size_t)n * 48 + 16, k = 0; /* a v line is at most 37 bytes, a corner 11 */
    char *text = malloc(cap);
    if (!text) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        double a = 2.0 * 3.14159265358979323846 * i / n;
        k += (size_t)snprintf(text + k, cap - k, "v %.9g %.9g 0\n", cos(a), sin(a));
    }
    k += (size_t)snprintf(text + k, cap - k, "f");
    for (uint32_t i = 0; i < n; i++) k += (size_t)snprintf(text + k, cap - k, " %u", i + 1);
    snprintf(text + k, cap - k, "\n");
    return text;
}
