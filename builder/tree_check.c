/* tree_check.c - the invariant checks over a finished tree, from any
 * builder (tree_walk.h walks it). */
#include "kdtree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree_walk.h"

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
            else if (left % 2 == 0)
                rc = fail(err, errlen, "node %u: left child %u has an even index", it.node, left);
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
