/* tree_stats.c - the statistics of a finished tree (kdtree.h): node,
 * leaf and reference counts, depth, and the SAH cost, from a walk of the
 * tree (tree_walk.h) that works for trees from any builder. */
#include "kdtree.h"

#include <string.h>

#include "tree_walk.h"

/* In double: the statistic stays finite for any float box (a box of
 * extent 1e30 has an area of 6e60, beyond float). */
static double box_area(const walk_item *it)
{
    double d[3];
    for (int a = 0; a < 3; a++) d[a] = (double)it->hi[a] - (double)it->lo[a];
    return 2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0]);
}

double kdtree_sah_cost(const kdtree *t)
{
    walk_item stack[WALK_STACK];
    int sp = 0;
    stack[sp++] = root_item(t);
    double root_area = box_area(&stack[0]);
    if (root_area <= 0.0) root_area = 1.0;
    double cost = 0.0;
    while (sp > 0) {
        walk_item it = stack[--sp];
        kdtree_node n = t->nodes[it.node];
        double rel = box_area(&it) / root_area;
        if (kdtree_is_leaf(n)) {
            cost += KDTREE_COST_INTERSECT * (double)kdtree_count(n) * rel;
        } else {
            cost += KDTREE_COST_TRAVERSAL * rel;
            child_boxes(&it, n, &stack[sp], &stack[sp + 1]);
            sp += 2;
        }
    }
    return cost;
}

void kdtree_compute_stats(const kdtree *t, uint32_t n_triangles, kdtree_stats *st)
{
    memset(st, 0, sizeof *st);
    st->n_triangles = n_triangles;
    st->n_nodes = t->n_nodes;
    st->depth_limit = (uint32_t)kdtree_max_depth(n_triangles);
    uint32_t stack[2 * WALK_STACK][2]; /* node, depth */
    int sp = 0;
    stack[sp][0] = 0;
    stack[sp++][1] = 0;
    while (sp > 0) {
        sp--;
        uint32_t node = stack[sp][0], depth = stack[sp][1];
        kdtree_node n = t->nodes[node];
        if (kdtree_is_leaf(n)) {
            st->n_leaves++;
            st->n_empty_leaves += kdtree_count(n) == 0;
            st->n_refs += kdtree_count(n);
            if (depth > st->max_depth) st->max_depth = depth;
        } else {
            for (uint32_t c = 0; c < 2; c++) {
                stack[sp][0] = kdtree_left(n) + c;
                stack[sp++][1] = depth + 1;
            }
        }
    }
    st->refs_per_triangle = n_triangles ? (double)st->n_refs / n_triangles : 0.0;
    st->sah_cost = kdtree_sah_cost(t);
}

