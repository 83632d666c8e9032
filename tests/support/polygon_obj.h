/* polygon_obj.h - the OBJ text of one regular polygon, for the tests of how
 * the loader cuts a polygon into triangles and of what the builders make
 * of them. */
#ifndef KDA_POLYGON_OBJ_H
#define KDA_POLYGON_OBJ_H

#include <stdint.h>

/* n vertices on the unit circle in the xy plane, counter-clockwise from
 * (1, 0, 0), then one f line naming them in that order.  Returns text to
 * free(), or NULL without memory. */
char *polygon_obj(uint32_t n);

#endif
