/* tree_walk.h - walking a finished tree top-down with an explicit stack
 * that carries each node's box and depth (kdtree.c's statistics,
 * tree_check.c's checks): it works for trees from any builder. */
#ifndef KDA_TREE_WALK_H
#define KDA_TREE_WALK_H

#include "kdtree.h"

typedef struct walk_item {
    uint32_t node;
    uint32_t depth;
    float lo[3], hi[3];
} walk_item;

/* Stack depth bound: one pending sibling per level. */
#define WALK_STACK 128

static inline void child_boxes(const walk_item *it, kdtree_node n, walk_item *left, walk_item *right)
{
    uint32_t a = kdtree_axis(n);
    *left = *it;
    *right = *it;
    left->node = kdtree_left(n);
    right->node = left->node + 1;
    left->depth = right->depth = it->depth + 1;
    left->hi[a] = n.split;
    right->lo[a] = n.split;
}

static inline walk_item root_item(const kdtree *t)
{
    walk_item it = {0, 0, {t->lo[0], t->lo[1], t->lo[2]}, {t->hi[0], t->hi[1], t->hi[2]}};
    return it;
}

#endif
