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
 * The lists of the nodes on the path being built live on one stack: a left
 * child's lists are its parent's, compacted in place, and a right child's
 * are pushed above them; the stack top drops back when a subtree is done.
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

#include "kdalloc/detail/check.h"

enum { EV_END = 0, EV_PLANAR = 1, EV_START = 2 };
enum { SIDE_LEFT = 1, SIDE_RIGHT = 2, SIDE_BOTH = 3 };

typedef struct event {
    float pos;
    uint32_t tri_type; /* triangle << 2 | event type */
} event;

static inline uint32_t event_tri(event e) { return e.tri_type >> 2; }
static inline uint32_t event_type(event e) { return e.tri_type & 3u; }

/* The sorted event lists of one node, one per axis, as offsets into the
 * builder's event stack (which may move when it grows). */
typedef struct node_events {
    size_t first[3];
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
    event *events; /* stack of the event lists of the nodes being built */
    size_t n_events, cap_events;
    kdtree_node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t *refs;
    uint64_t n_refs, cap_refs;
    int max_depth;
    int out_of_memory;
    const char *layout_full; /* "nodes" or "references": more than the layout indexes */
} builder;

/* ---- sorting: LSD radix sort on the float bits made order-preserving ---- */

static inline uint32_t sortable_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static void sort_events(event *ev, uint32_t m, event *tmp)
{
    uint32_t hist[4][256] = {{0}}; /* all four digits' histograms in one pass */
    for (uint32_t i = 0; i < m; i++)
        for (int d = 0; d < 4; d++) hist[d][(sortable_key(ev[i].pos) >> 8 * d) & 255u]++;
    event *src = ev, *dst = tmp;
    for (int d = 0; d < 4; d++) {
        if (hist[d][(sortable_key(ev[0].pos) >> 8 * d) & 255u] == m) continue; /* one bucket */
        for (uint32_t b = 0, sum = 0; b < 256; b++) {
            uint32_t h = hist[d][b];
            hist[d][b] = sum;
            sum += h;
        }
        for (uint32_t i = 0; i < m; i++) dst[hist[d][(sortable_key(src[i].pos) >> 8 * d) & 255u]++] = src[i];
        event *t = src;
        src = dst;
        dst = t;
    }
    if (src != ev) memcpy(ev, src, (size_t)m * sizeof *ev);
}

/* ---- output arrays ---- */

/* An array's capacity when `need` outgrows it: doubled, at least `need`,
 * at most `limit`; 0 when `need` passes `limit`. */
static uint64_t grown(uint64_t cap, uint64_t need, uint64_t limit)
{
    if (need > limit) return 0;
    uint64_t c = cap * 2 > need ? cap * 2 : need;
    return c < limit ? c : limit;
}

static uint32_t push_nodes(builder *b, uint32_t k)
{
    if ((uint64_t)b->n_nodes + k > b->cap_nodes) {
        uint64_t cap = grown(b->cap_nodes ? b->cap_nodes : 512, (uint64_t)b->n_nodes + k, KDTREE_MAX_COUNT);
        kdtree_node *n = cap ? realloc(b->nodes, cap * sizeof *n) : NULL;
        if (!n) {
            b->out_of_memory = 1;
            if (!cap) b->layout_full = "nodes";
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
    if (b->n_refs + ne->n_tris + 1 > b->cap_refs) { /* + 1: see below */
        uint64_t cap = grown(b->cap_refs, b->n_refs + ne->n_tris + 1, UINT32_MAX);
        uint32_t *r = cap ? realloc(b->refs, cap * sizeof *r) : NULL;
        if (!r) {
            if (!cap) b->layout_full = "references";
            return -1;
        }
        b->refs = r;
        b->cap_refs = cap;
    }
    /* Each triangle has exactly one START or PLANAR event per axis.  Every
     * event is written, an END's to be overwritten: the last may land one
     * past the leaf's references. */
    const event *ev = b->events + ne->first[0];
    uint32_t *refs = b->refs + b->n_refs, k = 0;
    for (uint32_t i = 0; i < ne->count[0]; i++) {
        refs[k] = event_tri(ev[i]);
        k += event_type(ev[i]) != EV_END;
    }
    KDA_ASSERT(k == ne->n_tris, "a leaf holds one reference to each of its node's triangles");
    b->n_refs += k;
    KDA_ASSERT(b->n_refs <= b->cap_refs, "a leaf's references lie within the reference array");
    return 0;
}

/* ---- the SAH sweep ----
 * A sweep takes its list in chunks.  A first pass over a chunk's events,
 * free of data-dependent branches, notes the running event counts at the
 * last event of every distinct position; a second pass costs those
 * candidates, in loops the compiler vectorises; the chunk's cheapest
 * candidate is then found by value.  The winner is the first candidate of
 * the lowest cost, exactly what a candidate-by-candidate sweep keeping the
 * strictly cheaper one finds. */

enum { SWEEP_CHUNK = 256 };

/* The candidate planes of one chunk, numbered from 1: running counts of the
 * list's events up to and including each candidate's position.  Entry 0
 * holds the counts up to the position before the first candidate. */
typedef struct candidates {
    float pos[SWEEP_CHUNK + 1];
    uint32_t starts[SWEEP_CHUNK + 1]; /* START and PLANAR events: tri_lo <= pos */
    uint32_t ends[SWEEP_CHUNK + 1];   /* END and PLANAR events: tri_hi <= pos */
    uint32_t planars[SWEEP_CHUNK + 1];
    float with_left[SWEEP_CHUNK + 1];  /* the cost with the triangles in the plane left */
    float with_right[SWEEP_CHUNK + 1]; /* ... and right */
} candidates;

/* What the children's areas at a plane on one axis depend on. */
typedef struct plane_geometry {
    float lo, hi;        /* the node's extent on the axis */
    float cross, girth;  /* the product and the sum of its other two extents */
    float inv_area;      /* 1 / the node's area */
} plane_geometry;

static inline float area_below(const plane_geometry *g, float p)
{
    return 2.0f * (g->cross + (p - g->lo) * g->girth) * g->inv_area;
}

static inline float area_above(const plane_geometry *g, float p)
{
    return 2.0f * (g->cross + (g->hi - p) * g->girth) * g->inv_area;
}

/* Lowest of v[0 .. k), in eight lanes the compiler vectorises; NaN is never
 * the lowest. */
static float lowest(const float *v, uint32_t k)
{
    float lane[8] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    uint32_t j = 0;
    for (; j + 8 <= k; j += 8)
        for (int l = 0; l < 8; l++) lane[l] = v[j + l] < lane[l] ? v[j + l] : lane[l];
    for (; j < k; j++) lane[0] = v[j] < lane[0] ? v[j] : lane[0];
    float low = lane[0];
    for (int l = 1; l < 8; l++) low = lane[l] < low ? lane[l] : low;
    return low;
}

/* Costs candidates 1 .. k-1 of a node of n triangles; returns the lowest. */
static float cost_candidates(candidates *c, uint32_t k, uint32_t n, const plane_geometry *g)
{
    for (uint32_t j = 1; j < k; j++) {
        uint32_t in_plane = c->planars[j] - c->planars[j - 1];
        c->with_left[j] = kdtree_split_cost(area_below(g, c->pos[j]), area_above(g, c->pos[j]),
                                            c->starts[j - 1] + in_plane, n - c->ends[j]);
    }
    float low = lowest(c->with_left + 1, k - 1);
    if (c->planars[k - 1] == c->planars[0]) { /* no triangle in any plane: both costs agree */
        memcpy(c->with_right + 1, c->with_left + 1, (k - 1) * sizeof *c->with_right);
        return low;
    }
    for (uint32_t j = 1; j < k; j++) {
        uint32_t in_plane = c->planars[j] - c->planars[j - 1];
        c->with_right[j] = kdtree_split_cost(area_below(g, c->pos[j]), area_above(g, c->pos[j]),
                                             c->starts[j - 1], n - c->ends[j] + in_plane);
    }
    float low_right = lowest(c->with_right + 1, k - 1);
    return low_right < low ? low_right : low;
}

/* Number of events of a sorted list below x (or at or below x), found
 * without data-dependent branches. */
static uint32_t count_below(const event *ev, uint32_t m, float x, int or_at)
{
    if (m == 0) return 0;
    const event *e = ev;
    for (uint32_t n = m; n > 1; n -= n / 2) { /* the answer lies in [e, e + n] */
        float p = e[n / 2].pos;
        int below = or_at ? p <= x : p < x;
        e += below ? n / 2 : 0;
    }
    return (uint32_t)(e - ev) + (or_at ? e->pos <= x : e->pos < x);
}

static void sweep_axis(const event *ev, const node_events *ne, int a, const float lo[3], const float hi[3],
                       float inv_area, split_choice *best)
{
    uint32_t m = ne->count[a], n = ne->n_tris;
    int o1 = (a + 1) % 3, o2 = (a + 2) % 3;
    plane_geometry g = {lo[a], hi[a], (hi[o1] - lo[o1]) * (hi[o2] - lo[o2]),
                        (hi[o1] - lo[o1]) + (hi[o2] - lo[o2]), inv_area};
    /* Candidates lie strictly inside the box: at events [first, end). */
    uint32_t first = count_below(ev, m, g.lo, 1), end = count_below(ev, m, g.hi, 0);
    uint32_t starts = 0, ends = 0, planars = 0;
    for (uint32_t i = 0; i < first; i++) {
        uint32_t t = event_type(ev[i]);
        starts += t != EV_END;
        ends += t != EV_START;
        planars += t == EV_PLANAR;
    }
    candidates c;
    c.starts[0] = starts;
    c.planars[0] = planars;
    for (uint32_t i = first; i < end;) {
        /* Every event fills entry k; the last at its position keeps it. */
        uint32_t stop = end - i > SWEEP_CHUNK ? i + SWEEP_CHUNK : end, k = 1;
        for (; i < stop; i++) {
            uint32_t t = event_type(ev[i]);
            starts += t != EV_END;
            ends += t != EV_START;
            planars += t == EV_PLANAR;
            c.pos[k] = ev[i].pos;
            c.starts[k] = starts;
            c.ends[k] = ends;
            c.planars[k] = planars;
            uint32_t next = i + 1 < m ? i + 1 : i;
            k += (ev[next].pos != ev[i].pos) | (next == i);
        }
        float low = cost_candidates(&c, k, n, &g);
        if (low < best->cost) {
            uint32_t j = 1;
            while (c.with_left[j] != low && c.with_right[j] != low) j++;
            int planar_left = c.with_left[j] == low;
            uint32_t in_plane = c.planars[j] - c.planars[j - 1];
            /* The position is the first event's: -0 and +0 make one position. */
            *best = (split_choice){low, ev[count_below(ev, m, c.pos[j], 0)].pos, a, planar_left,
                                   c.starts[j - 1] + (planar_left ? in_plane : 0),
                                   n - c.ends[j] + (planar_left ? 0 : in_plane)};
        }
        c.starts[0] = c.starts[k - 1];
        c.planars[0] = c.planars[k - 1];
    }
}

/* Marks every triangle of the node with the side(s) it goes to, from the
 * split axis.  The sorted list falls into the events below the plane, in it
 * and above it; written in the order above, below, in, the last write to a
 * triangle is the right one (a START comes before its END), and no write
 * depends on the event type through a branch. */
static void classify(builder *b, const node_events *ne, const split_choice *c)
{
    const event *ev = b->events + ne->first[c->axis];
    uint32_t m = ne->count[c->axis];
    uint32_t below = count_below(ev, m, c->pos, 0), above = count_below(ev, m, c->pos, 1);
    uint8_t *side = b->side;
    for (uint32_t i = above; i < m; i++) side[event_tri(ev[i])] = SIDE_RIGHT;
    /* Below: a START reaches both sides unless its END is below too.  (In
     * arithmetic: a conditional here compiles to an unpredictable branch.) */
    for (uint32_t i = 0; i < below; i++)
        side[event_tri(ev[i])] = (uint8_t)(SIDE_LEFT + SIDE_RIGHT * (event_type(ev[i]) == EV_START));
    for (uint32_t i = below; i < above; i++) {
        uint32_t t = event_type(ev[i]);
        side[event_tri(ev[i])] =
            t == EV_START ? SIDE_RIGHT : t == EV_END || c->planar_left ? SIDE_LEFT : SIDE_RIGHT;
    }
}

/* Makes room for k more events on the event stack. */
static int reserve_events(builder *b, size_t k)
{
    if (b->n_events + k <= b->cap_events) return 0;
    size_t cap = b->cap_events * 2 > b->n_events + k ? b->cap_events * 2 : b->n_events + k;
    event *e = realloc(b->events, cap * sizeof *e);
    if (!e) return -1;
    b->events = e;
    b->cap_events = cap;
    return 0;
}

/* Stable partition of every axis list by the sides classify() chose: the
 * left child's lists are compacted in place, the right child's are pushed
 * on the event stack.  Every event is copied to both; a child's count only
 * moves past it when it belongs there (no branch on the side). */
static int partition(builder *b, const node_events *ne, const split_choice *c, node_events *left,
                     node_events *right)
{
    if (reserve_events(b, (size_t)ne->count[0] + ne->count[1] + ne->count[2])) return -1;
    size_t top = b->n_events;
    for (int a = 0; a < 3; a++) {
        event *ev = b->events + ne->first[a], *r = b->events + top;
        uint32_t nl = 0, nr = 0;
        for (uint32_t i = 0; i < ne->count[a]; i++) { /* nl <= i: the write never passes the read */
            uint32_t side = b->side[event_tri(ev[i])];
            r[nr] = ev[i];
            ev[nl] = ev[i];
            nl += (side & SIDE_LEFT) != 0;
            nr += (side & SIDE_RIGHT) != 0;
        }
        left->first[a] = ne->first[a];
        left->count[a] = nl;
        right->first[a] = top;
        right->count[a] = nr;
        top += nr;
    }
    b->n_events = top;
    KDA_ASSERT(c->n_left <= ne->n_tris && c->n_right <= ne->n_tris && c->n_left + c->n_right >= ne->n_tris,
               "a child's references are a subset of its parent's, and the two hold every one");
    left->n_tris = c->n_left;
    right->n_tris = c->n_right;
    return 0;
}

/* Builds the subtree of `node`, at `level` (kdtree.h: its depth and
 * reference budget); leaves the event stack as it found it. */
static void build_node(builder *b, uint32_t node, const node_events *ne, const float lo[3], const float hi[3],
                       uint32_t level)
{
    split_choice best = {kdtree_leaf_cost(ne->n_tris), 0.0f, -1, 0, 0, 0};
    float d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    float area = kdtree_box_area(d);
    if ((int)kdtree_level_depth(level) < b->max_depth && ne->n_tris > 0 && area > 0.0f)
        for (int a = 0; a < 3; a++) sweep_axis(b->events + ne->first[a], ne, a, lo, hi, 1.0f / area, &best);
    if (best.axis >= 0 && !kdtree_budget_allows(level, ne->n_tris, best.n_left, best.n_right))
        best.axis = -1; /* the budget is spent: a leaf */

    KDA_ASSERT(best.cost >= 0.0f, "an SAH cost is not negative");
    if (b->out_of_memory) { /* give up quietly: the caller reports it */
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
        return;
    }
    size_t top = b->n_events;
    node_events left, right;
    classify(b, ne, &best);
    uint32_t child = partition(b, ne, &best, &left, &right) ? UINT32_MAX : push_nodes(b, 2);
    if (child == UINT32_MAX) {
        b->out_of_memory = 1;
        b->n_events = top;
        b->nodes[node] = kdtree_make_leaf(0, 0);
        return;
    }
    KDA_ASSERT(child > node && child + 1 < b->n_nodes && child + 1 <= KDTREE_MAX_COUNT,
               "an inner node's children follow it, within the node array");
    KDA_ASSERT(best.pos >= lo[best.axis] && best.pos <= hi[best.axis], "the split plane lies within the node's box");
    b->nodes[node] = kdtree_make_inner((uint32_t)best.axis, best.pos, child);
    float left_hi[3] = {hi[0], hi[1], hi[2]}, right_lo[3] = {lo[0], lo[1], lo[2]};
    left_hi[best.axis] = best.pos;
    right_lo[best.axis] = best.pos;
    uint32_t below = kdtree_level_child(level, ne->n_tris, best.n_left, best.n_right);
    build_node(b, child, &left, lo, left_hi, below);
    build_node(b, child + 1, &right, right_lo, hi, below);
    b->n_events = top;
}

/* Events of every triangle, each list sorted: the bottom of the event stack.
 * Room is left above them for the lists of the nodes below the root. */
static int root_events(builder *b, const scene *s, node_events *ne)
{
    uint32_t n = s->n_triangles;
    if (reserve_events(b, (size_t)12 * n)) return -1;
    event *tmp = malloc((size_t)2 * n * sizeof *tmp);
    if (!tmp) return -1;
    event *ev[3];
    for (int a = 0; a < 3; a++) {
        ne->first[a] = (size_t)2 * n * a;
        ne->count[a] = 0;
        ev[a] = b->events + ne->first[a];
    }
    for (uint32_t t = 0; t < n; t++) {
        float lo[3], hi[3];
        kdtree_triangle_box(s->positions, s->triangles, t, lo, hi);
        for (int a = 0; a < 3; a++) {
            if (lo[a] == hi[a]) {
                ev[a][ne->count[a]++] = (event){lo[a], t << 2 | EV_PLANAR};
            } else {
                ev[a][ne->count[a]++] = (event){lo[a], t << 2 | EV_START};
                ev[a][ne->count[a]++] = (event){hi[a], t << 2 | EV_END};
            }
        }
    }
    for (int a = 0; a < 3; a++) sort_events(ev[a], ne->count[a], tmp);
    free(tmp);
    b->n_events = (size_t)6 * n;
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
    if (!b.side || push_nodes(&b, 1) == UINT32_MAX || root_events(&b, s, &root)) {
        free(b.side);
        free(b.events);
        free(b.nodes);
        snprintf(err, errlen, "out of memory building the tree of %u triangles", s->n_triangles);
        return -1;
    }
    build_node(&b, 0, &root, s->lo, s->hi, kdtree_level_root());
    free(b.side);
    free(b.events);
    if (b.out_of_memory) {
        free(b.nodes);
        free(b.refs);
        if (b.layout_full)
            snprintf(err, errlen, "the tree of %u triangles needs more %s than the layout holds (%u): its triangles "
                     "are cut into very many pieces", s->n_triangles, b.layout_full,
                     b.layout_full[0] == 'n' ? KDTREE_MAX_COUNT : UINT32_MAX - 1);
        else
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
