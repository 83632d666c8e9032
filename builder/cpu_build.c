/* cpu_build.c - the CPU reference builder: exact SAH by event sweep.
 *
 * This is the oracle for the GPU builder, so it favours exactness over
 * speed, yet stays O(N log N) (Wald & Havran 2006):
 *   - every triangle's bounding box gives, per axis, either a START and an
 *     END event (at its low and high coordinate) or one PLANAR event when the
 *     box is flat on that axis;
 *   - the three event lists are sorted once, at the root;
 *   - a node sweeps each list, evaluating the SAH at every distinct event
 *     position strictly inside its box, with the triangles lying in the
 *     candidate plane put on whichever side is cheaper;
 *   - the winning plane classifies the triangles (left / right / both), and
 *     each list is partitioned stably into the children's lists, which are
 *     therefore sorted too.
 * Events use the triangles' own boxes, not boxes clipped to the node: a
 * position outside the node is never a candidate, and for candidates inside
 * it the tests tri_lo < split and tri_hi > split answer the same for clipped
 * and unclipped boxes.  Nodes are numbered depth-first; children are stored
 * as adjacent pairs, as kdtree.h requires.
 */
#include "kdtree.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EV_END = 0, EV_PLANAR = 1, EV_START = 2 };
enum { SIDE_LEFT = 1, SIDE_RIGHT = 2, SIDE_BOTH = 3 };

typedef struct event {
    float pos;
    uint32_t tri_type; /* triangle << 2 | event type */
} event;

static inline uint32_t event_tri(event e) { return e.tri_type >> 2; }
static inline uint32_t event_type(event e) { return e.tri_type & 3u; }

/* The sorted event lists of one node, one per axis, in one allocation. */
typedef struct node_events {
    event *ev[3];
    uint32_t count[3];
    uint32_t n_tris;
} node_events;

typedef struct split_choice {
    float cost;
    float pos;
    int axis;
    int planar_left; /* triangles lying in the plane go left */
    uint32_t n_left, n_right;
} split_choice;

typedef struct builder {
    uint8_t *side; /* per triangle: SIDE_* while its node is being split */
    kdtree_node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t *refs;
    uint64_t n_refs, cap_refs;
    int max_depth;
    int out_of_memory;
} builder;

int kdtree_max_depth(uint32_t n_triangles)
{
    double d = 8.0 + 1.3 * log2(n_triangles > 1 ? (double)n_triangles : 1.0);
    return d > 60.0 ? 60 : (int)d;
}

/* ---- sorting: LSD radix sort on the float bits made order-preserving ---- */

static inline uint32_t sortable_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static void sort_events(event *ev, uint32_t m, event *tmp)
{
    for (int shift = 0; shift < 32; shift += 8) {
        uint32_t hist[257] = {0};
        for (uint32_t i = 0; i < m; i++) hist[((sortable_key(ev[i].pos) >> shift) & 255u) + 1]++;
        if (hist[((sortable_key(ev[0].pos) >> shift) & 255u) + 1] == m) continue; /* one bucket */
        for (int b = 0; b < 256; b++) hist[b + 1] += hist[b];
        for (uint32_t i = 0; i < m; i++) tmp[hist[(sortable_key(ev[i].pos) >> shift) & 255u]++] = ev[i];
        memcpy(ev, tmp, (size_t)m * sizeof *ev);
    }
}

/* ---- output arrays ---- */

static uint32_t push_nodes(builder *b, uint32_t k)
{
    if (b->n_nodes + k > b->cap_nodes) {
        uint64_t cap = b->cap_nodes ? (uint64_t)b->cap_nodes * 2 : 1024;
        kdtree_node *n = cap > KDTREE_MAX_COUNT ? NULL : realloc(b->nodes, cap * sizeof *n);
        if (!n) {
            b->out_of_memory = 1;
            return UINT32_MAX;
        }
        b->nodes = n;
        b->cap_nodes = (uint32_t)cap;
    }
    b->n_nodes += k;
    return b->n_nodes - k;
}

static int push_refs(builder *b, const node_events *ne)
{
    if (b->n_refs + ne->n_tris > b->cap_refs) {
        uint64_t cap = b->cap_refs * 2 + ne->n_tris;
        uint32_t *r = cap > UINT32_MAX ? NULL : realloc(b->refs, cap * sizeof *r);
        if (!r) return -1;
        b->refs = r;
        b->cap_refs = cap;
    }
    /* Each triangle has exactly one START or PLANAR event per axis. */
    for (uint32_t i = 0; i < ne->count[0]; i++)
        if (event_type(ne->ev[0][i]) != EV_END) b->refs[b->n_refs++] = event_tri(ne->ev[0][i]);
    return 0;
}

/* ---- the SAH sweep ---- */

static void sweep_axis(const node_events *ne, int a, const float lo[3], const float hi[3],
                       float inv_area, split_choice *best)
{
    const event *ev = ne->ev[a];
    uint32_t m = ne->count[a];
    int o1 = (a + 1) % 3, o2 = (a + 2) % 3;
    float cross = (hi[o1] - lo[o1]) * (hi[o2] - lo[o2]);
    float girth = (hi[o1] - lo[o1]) + (hi[o2] - lo[o2]);
    uint32_t n_left = 0, n_right = ne->n_tris;
    for (uint32_t i = 0; i < m;) {
        float p = ev[i].pos;
        uint32_t ends = 0, planars = 0, starts = 0;
        for (; i < m && ev[i].pos == p; i++) {
            uint32_t t = event_type(ev[i]);
            ends += t == EV_END;
            planars += t == EV_PLANAR;
            starts += t == EV_START;
        }
        n_right -= ends + planars;
        if (p > lo[a] && p < hi[a]) {
            float p_left = 2.0f * (cross + (p - lo[a]) * girth) * inv_area;
            float p_right = 2.0f * (cross + (hi[a] - p) * girth) * inv_area;
            float with_left = kdtree_split_cost(p_left, p_right, n_left + planars, n_right);
            if (with_left < best->cost)
                *best = (split_choice){with_left, p, a, 1, n_left + planars, n_right};
            if (planars) {
                float with_right = kdtree_split_cost(p_left, p_right, n_left, n_right + planars);
                if (with_right < best->cost)
                    *best = (split_choice){with_right, p, a, 0, n_left, n_right + planars};
            }
        }
        n_left += starts + planars;
    }
}

/* Marks every triangle of the node with the side(s) it goes to, in one pass
 * over the split axis: a triangle's START comes before its END there. */
static void classify(builder *b, const node_events *ne, const split_choice *c)
{
    const event *ev = ne->ev[c->axis];
    uint32_t m = ne->count[c->axis];
    for (uint32_t i = 0; i < m; i++) {
        float p = ev[i].pos;
        uint8_t *side = &b->side[event_tri(ev[i])];
        switch (event_type(ev[i])) {
        case EV_START: /* tri_lo >= split: nothing reaches left */
            *side = p >= c->pos ? SIDE_RIGHT : SIDE_BOTH;
            break;
        case EV_END: /* tri_hi <= split: nothing reaches right */
            if (p <= c->pos) *side = SIDE_LEFT;
            break;
        default:
            *side = (p < c->pos || (p == c->pos && c->planar_left)) ? SIDE_LEFT : SIDE_RIGHT;
        }
    }
}

static int alloc_events(node_events *ne, const uint32_t capacity[3])
{
    event *buf = malloc(((size_t)capacity[0] + capacity[1] + capacity[2] + 1) * sizeof *buf);
    if (!buf) return -1;
    ne->ev[0] = buf;
    ne->ev[1] = buf + capacity[0];
    ne->ev[2] = buf + capacity[0] + capacity[1];
    return 0;
}

static void free_events(node_events *ne) { free(ne->ev[0]); }

/* Stable partition of every axis list by the sides classify() chose. */
static int partition(const builder *b, const node_events *ne, const split_choice *c, node_events *left,
                     node_events *right)
{
    if (alloc_events(left, ne->count) || alloc_events(right, ne->count)) {
        free_events(left);
        return -1;
    }
    for (int a = 0; a < 3; a++) {
        uint32_t nl = 0, nr = 0;
        const event *ev = ne->ev[a];
        for (uint32_t i = 0; i < ne->count[a]; i++) {
            uint8_t side = b->side[event_tri(ev[i])];
            if (side & SIDE_LEFT) left->ev[a][nl++] = ev[i];
            if (side & SIDE_RIGHT) right->ev[a][nr++] = ev[i];
        }
        left->count[a] = nl;
        right->count[a] = nr;
    }
    left->n_tris = c->n_left;
    right->n_tris = c->n_right;
    return 0;
}

/* Builds the subtree of `node` and frees `ne`. */
static void build_node(builder *b, uint32_t node, node_events *ne, const float lo[3], const float hi[3],
                       int depth)
{
    split_choice best = {kdtree_leaf_cost(ne->n_tris), 0.0f, -1, 0, 0, 0};
    float d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    float area = kdtree_box_area(d);
    if (depth < b->max_depth && ne->n_tris > 0 && area > 0.0f)
        for (int a = 0; a < 3; a++) sweep_axis(ne, a, lo, hi, 1.0f / area, &best);

    node_events left, right;
    if (b->out_of_memory) { /* give up quietly: the caller reports it */
        free_events(ne);
        b->nodes[node] = kdtree_make_leaf(0, 0);
        return;
    }
    if (best.axis < 0) {
        if (push_refs(b, ne)) {
            b->out_of_memory = 1;
            b->nodes[node] = kdtree_make_leaf(0, 0);
        } else {
            b->nodes[node] = kdtree_make_leaf((uint32_t)(b->n_refs - ne->n_tris), ne->n_tris);
        }
        free_events(ne);
        return;
    }
    classify(b, ne, &best);
    int failed = partition(b, ne, &best, &left, &right);
    free_events(ne);
    uint32_t child = failed ? UINT32_MAX : push_nodes(b, 2);
    if (child == UINT32_MAX) {
        b->out_of_memory = 1;
        if (!failed) {
            free_events(&left);
            free_events(&right);
        }
        b->nodes[node] = kdtree_make_leaf(0, 0);
        return;
    }
    b->nodes[node] = kdtree_make_inner((uint32_t)best.axis, best.pos, child);
    float left_hi[3] = {hi[0], hi[1], hi[2]}, right_lo[3] = {lo[0], lo[1], lo[2]};
    left_hi[best.axis] = best.pos;
    right_lo[best.axis] = best.pos;
    build_node(b, child, &left, lo, left_hi, depth + 1);
    build_node(b, child + 1, &right, right_lo, hi, depth + 1);
}

/* Events of every triangle, each list sorted. */
static int root_events(const scene *s, node_events *ne)
{
    uint32_t n = s->n_triangles;
    uint32_t cap[3] = {2 * n, 2 * n, 2 * n};
    if (alloc_events(ne, cap)) return -1;
    event *tmp = malloc((size_t)2 * n * sizeof *tmp);
    if (!tmp) {
        free_events(ne);
        return -1;
    }
    for (int a = 0; a < 3; a++) ne->count[a] = 0;
    for (uint32_t t = 0; t < n; t++) {
        float lo[3], hi[3];
        kdtree_triangle_box(s->positions, s->triangles, t, lo, hi);
        for (int a = 0; a < 3; a++) {
            event *ev = ne->ev[a];
            if (lo[a] == hi[a]) {
                ev[ne->count[a]++] = (event){lo[a], t << 2 | EV_PLANAR};
            } else {
                ev[ne->count[a]++] = (event){lo[a], t << 2 | EV_START};
                ev[ne->count[a]++] = (event){hi[a], t << 2 | EV_END};
            }
        }
    }
    for (int a = 0; a < 3; a++) sort_events(ne->ev[a], ne->count[a], tmp);
    free(tmp);
    ne->n_tris = n;
    return 0;
}

int kdtree_build_cpu(const scene *s, kdtree *out, kdtree_stats *stats, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (s->n_triangles == 0) {
        snprintf(err, errlen, "cannot build a tree over an empty scene");
        return -1;
    }
    if (s->n_triangles > KDTREE_MAX_COUNT) {
        snprintf(err, errlen, "%u triangles: the tree layout holds at most %u", s->n_triangles,
                 KDTREE_MAX_COUNT);
        return -1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    builder b = {0};
    b.max_depth = kdtree_max_depth(s->n_triangles);
    b.side = malloc(s->n_triangles);
    node_events root;
    if (!b.side || push_nodes(&b, 1) == UINT32_MAX || root_events(s, &root)) {
        free(b.side);
        free(b.nodes);
        snprintf(err, errlen, "out of memory building the tree of %u triangles", s->n_triangles);
        return -1;
    }
    build_node(&b, 0, &root, s->lo, s->hi, 0);
    free(b.side);
    if (b.out_of_memory) {
        free(b.nodes);
        free(b.refs);
        snprintf(err, errlen, "out of memory building the tree of %u triangles", s->n_triangles);
        return -1;
    }
    out->nodes = b.nodes;
    out->n_nodes = b.n_nodes;
    out->refs = b.refs;
    out->n_refs = (uint32_t)b.n_refs;
    memcpy(out->lo, s->lo, sizeof out->lo);
    memcpy(out->hi, s->hi, sizeof out->hi);

    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (stats) {
        kdtree_compute_stats(out, s->n_triangles, stats);
        stats->build_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    }
    return 0;
}

void kdtree_free(kdtree *t)
{
    free(t->nodes);
    free(t->refs);
    memset(t, 0, sizeof *t);
}
