/* polygon_obj.h - the OBJ text of one polygon in one f line, for the tests
 * of how the loader cuts a face into triangles and of what the builders
 * make of them. */
#ifndef KDA_POLYGON_OBJ_H
#define KDA_POLYGON_OBJ_H

#include <stddef.h>

/* Where a polygon written in the plane is placed in space, each by an
 * affine map: the xy plane; a tilted plane; another, mirrored; the xy
 * plane with the f line before the vertices it names; the xy plane, cut
 * as a fan from its first corner into n - 2 triangles, an f line each
 * (`f 1 i i+1`: slivers that all meet at that corner). */
typedef enum polygon_place {
    POLYGON_XY,
    POLYGON_TILTED,
    POLYGON_MIRRORED,
    POLYGON_FACE_FIRST,
    POLYGON_FAN
} polygon_place;

/* n corners on the unit circle, counter-clockwise from (1, 0): an array to
 * free(), or NULL without memory. */
double (*regular_polygon(size_t n))[2];

/* A fan of n slivers that meet at one corner: polygon_obj of the regular
 * (n + 2)-gon with POLYGON_FAN.  Text to free(), or NULL without memory. */
char *fan_obj(size_t n);

/* The corners xy[0..n-1] as n v lines (%.9g) placed by `place`, and one f
 * line naming them in order (the fan's n - 2): text to free(), or NULL
 * without memory. */
char *polygon_obj(const double (*xy)[2], size_t n, polygon_place place);

#endif
