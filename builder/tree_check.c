/* tree_check.c - statistics and invariant checks over a finished tree.
 * Both walk the tree top-down with an explicit stack that carries each
 * node's box and depth, so they work for trees from any builder. */
#include "kdtree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk_item {
    uint32_t node;
    uint32_t depth;
    float lo[3], hi[3];
} walk_item;

/* Stack depth bound: one pending sibling per level. */
#define WALK_STACK 128

static void child_boxes(const walk_item *it, kdtree_node n, walk_item *left, walk_item *right)
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

/* In double: the statistic stays finite for any float box (a box of
 * extent 1e30 has an area of 6e60, beyond float). */
static double box_area(const walk_item *it)
{
    double d[3];
    for (int a = 0; a < 3; a++) d[a] = (double)it->hi[a] - (double)it->lo[a];
    return 2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0]);
}

static walk_item root_item(const kdtree *t)
{
    walk_item it = {0, 0, {t->lo[0], t->lo[1], t->lo[2]}, {t->hi[0], t->hi[1], t->hi[2]}};
    return it;
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

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int box_overlaps(const float *tlo, const float *thi, const walk_item *it)
{
    for (int a = 0; a < 3; a++)
        if (thi[a] < it->lo[a] || tlo[a] > it->hi[a]) return 0;
    return 1;
}

static int check_leaf(const kdtree *t, const scene *s, const walk_item *it, kdtree_node n,
                      uint32_t *seen_in_leaf, uint8_t *referenced, char *err, size_t errlen)
{
    uint64_t first = n.first, count = kdtree_count(n);
    if (first + count > t->n_refs)
        return fail(err, errlen, "leaf %u: references %llu..%llu beyond the %u references", it->node,
                    (unsigned long long)first, (unsigned long long)(first + count), t->n_refs);
    for (uint64_t i = first; i < first + count; i++) {
        uint32_t tri = t->refs[i];
        if (tri >= s->n_triangles)
            return fail(err, errlen, "leaf %u: triangle %u out of range (%u triangles)", it->node, tri,
                        s->n_triangles);
        if (seen_in_leaf[tri] == it->node + 1)
            return fail(err, errlen, "leaf %u: triangle %u referenced twice", it->node, tri);
        seen_in_leaf[tri] = it->node + 1;
        referenced[tri] = 1;
        float lo[3], hi[3];
        kdtree_triangle_box(s->positions, s->triangles, tri, lo, hi);
        if (!box_overlaps(lo, hi, it))
            return fail(err, errlen,
                        "leaf %u (depth %u): triangle %u does not overlap the leaf box "
                        "[%g %g %g]-[%g %g %g]",
                        it->node, it->depth, tri, it->lo[0], it->lo[1], it->lo[2], it->hi[0], it->hi[1],
                        it->hi[2]);
    }
    return 0;
}

int kdtree_check(const kdtree *t, const scene *s, char *err, size_t errlen)
{
    if (t->n_nodes == 0) return fail(err, errlen, "tree has no nodes");
    uint32_t limit = (uint32_t)kdtree_max_depth(s->n_triangles);
    uint8_t *reached = calloc(t->n_nodes, 1);
    uint8_t *referenced = calloc(s->n_triangles ? s->n_triangles : 1, 1);
    uint32_t *seen_in_leaf = calloc(s->n_triangles ? s->n_triangles : 1, sizeof *seen_in_leaf);
    int rc = 0;
    if (!reached || !referenced || !seen_in_leaf) {
        rc = fail(err, errlen, "out of memory checking the tree");
        goto done;
    }
    walk_item stack[WALK_STACK];
    int sp = 0;
    stack[sp++] = root_item(t);
    reached[0] = 1;
    while (sp > 0 && rc == 0) {
        walk_item it = stack[--sp];
        kdtree_node n = t->nodes[it.node];
        if (it.depth > limit) {
            rc = fail(err, errlen, "node %u at depth %u exceeds the depth limit %u", it.node, it.depth, limit);
        } else if (kdtree_is_leaf(n)) {
            rc = check_leaf(t, s, &it, n, seen_in_leaf, referenced, err, errlen);
        } else {
            uint32_t left = kdtree_left(n), a = kdtree_axis(n);
            if (left <= it.node || (uint64_t)left + 1 >= t->n_nodes)
                rc = fail(err, errlen, "node %u: child index %u out of range (%u nodes)", it.node, left,
                          t->n_nodes);
            else if (reached[left] || reached[left + 1])
                rc = fail(err, errlen, "node %u: child %u reached twice", it.node, left);
            else if (!(n.split >= it.lo[a] && n.split <= it.hi[a]))
                rc = fail(err, errlen, "node %u: split %g outside its box [%g, %g] on axis %u", it.node,
                          n.split, it.lo[a], it.hi[a], a);
            else {
                reached[left] = reached[left + 1] = 1;
                child_boxes(&it, n, &stack[sp], &stack[sp + 1]);
                sp += 2;
            }
        }
    }
    for (uint32_t i = 0; rc == 0 && i < t->n_nodes; i++)
        if (!reached[i]) rc = fail(err, errlen, "node %u is not reachable from the root", i);
    for (uint32_t i = 0; rc == 0 && i < s->n_triangles; i++)
        if (!referenced[i]) rc = fail(err, errlen, "triangle %u is referenced by no leaf", i);
done:
    free(reached);
    free(referenced);
    free(seen_in_leaf);
    return rc;
}
