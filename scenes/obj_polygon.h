/* obj_polygon.h - an OBJ face of n >= 3 corners cut into n - 2 triangles
 * (obj_polygon.c), for the loader (obj.c).
 *
 * A face is taken as a simple polygon, near planar, its corners in order.
 * It is seen along its Newell normal, in the plane of the two axes that
 * normal points least along.  Every cut writes each triangle's corners in
 * the face's cyclic order, so each keeps the face's winding.
 *   convex (no corner turns against the others, and once around): a strip
 *          from both ends,
 *          (c0 c1 c2) (c0 c2 cn-1) (c2 c3 cn-1) (c3 cn-2 cn-1) ..., whose
 *          triangles lie side by side; a fan from c0 would make slivers
 *          that all meet at c0, which a k-d tree cannot part;
 *   not convex: ear clipping, each ear a convex corner whose triangle holds
 *          no other corner, in O(n^2); where no ear is left (a face that
 *          crosses itself) the rest is cut as a strip. */
#ifndef KDA_OBJ_POLYGON_H
#define KDA_OBJ_POLYGON_H

#include <stddef.h>
#include <stdint.h>

/* Most corners a face that is not convex may have: ear clipping takes
 * time as their square (about a second at this many). */
#define OBJ_POLYGON_EARS_MAX 16384

/* The strip: out gets the 3 (n - 2) vertex indices.  c[i] are the corners'
 * vertex indices. */
void obj_polygon_strip(const uint32_t *c, size_t n, uint32_t *out);

/* 1 when no corner of the face turns against the others and the face goes
 * around once (pos: 3 floats a vertex); a face with no area counts as
 * convex. */
int obj_polygon_convex(const float *pos, const uint32_t *c, size_t n);

/* Ear clipping into out (3 (n - 2) indices); n <= OBJ_POLYGON_EARS_MAX.
 * Returns 0, or -1 without memory. */
int obj_polygon_ears(const float *pos, const uint32_t *c, size_t n, uint32_t *out);

#endif
