/* kdtree.c - the tree layout's own functions (kdtree.h): the depth limit
 * every builder keeps to, and freeing a tree (its statistics:
 * tree_stats.c).  The builders call these; these call no builder. */
#include "kdtree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int kdtree_max_depth(uint32_t n_triangles)
{
    double d = 8.0 + 1.3 * log2(n_triangles > 1 ? (double)n_triangles : 1.0);
    return d > 60.0 ? 60 : (int)d;
}

void kdtree_free(kdtree *t)
{
    free(t->nodes);
    free(t->refs);
    memset(t, 0, sizeof *t);
}
