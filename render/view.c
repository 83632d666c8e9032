/* view.c - the default camera: a view that shows the scene's structure.
 *
 * The framed outside view (camera_frame) shows a closed scene such as a
 * room only as the outside of a box.  A grid of rays through the tree
 * tells: a view's structure is the number of distinct triangles its rays
 * hit off the faces of the scene's bounding box.  When the framed view's
 * structure is under half its hits (it sees a few big faces: a shell),
 * every candidate view, outside from four sides and inside looking along
 * the floor's axes, is scored, and the most structure wins (the first of
 * equal ones, so the choice is deterministic).  Otherwise the framed view
 * stays, as it always was.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "shade.h"

#define PI_D 3.14159265358979323846

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Within 1% of the box's largest extent of one of its faces. */
static int on_box_face(const float p[3], const float lo[3], const float hi[3])
{
    double extent = 0.0;
    for (int a = 0; a < 3; a++)
        if ((double)hi[a] - lo[a] > extent) extent = (double)hi[a] - lo[a];
    double tol = 0.01 * extent;
    for (int a = 0; a < 3; a++)
        if (p[a] - (double)lo[a] <= tol || (double)hi[a] - p[a] <= tol) return 1;
    return 0;
}

/* The view_tracer of a k-d tree: ctx is its trace_scene. */
static uint32_t trace_kdtree(void *ctx, const float o[3], const float d[3], float *t)
{
    ray r;
    memcpy(r.o, o, sizeof r.o);
    memcpy(r.d, d, sizeof r.d);
    ray_hit h = trace_scene_ray(ctx, &r);
    *t = h.t;
    return h.tri;
}

static trace_scene kdtree_trace_scene(const kdtree *t, const scene *s)
{
    trace_scene ts = {t->nodes, t->refs, s->positions, s->triangles, {0}, {0}};
    memcpy(ts.lo, t->lo, sizeof ts.lo);
    memcpy(ts.hi, t->hi, sizeof ts.hi);
    return ts;
}

void camera_view_score(const kdtree *t, const scene *s, const camera *c, view_score *out)
{
    trace_scene ts = kdtree_trace_scene(t, s);
    camera_view_score_with(trace_kdtree, &ts, s, c, out);
}

void camera_view_score_with(view_tracer trace, void *ctx, const scene *s, const camera *c, view_score *out)
{
    memset(out, 0, sizeof *out);
    camera small = *c; /* the same view on a small grid */
    small.width = VIEW_SAMPLE_W;
    small.height = VIEW_SAMPLE_H;
    camera_basis basis;
    camera_make_basis(&small, s->lo, s->hi, &basis);
    uint32_t seen[VIEW_SAMPLE_W * VIEW_SAMPLE_H], n_seen = 0;
    for (uint32_t y = 0; y < VIEW_SAMPLE_H; y++)
        for (uint32_t x = 0; x < VIEW_SAMPLE_W; x++) {
            ray r = camera_ray(&basis, x, y);
            float t;
            uint32_t tri = trace(ctx, r.o, r.d, &t);
            out->rays++;
            if (tri == RAY_NO_HIT) continue;
            out->hits++;
            float p[3];
            for (int a = 0; a < 3; a++) p[a] = r.o[a] + t * r.d[a];
            if (on_box_face(p, s->lo, s->hi)) out->on_shell++;
            else seen[n_seen++] = tri;
        }
    qsort(seen, n_seen, sizeof *seen, compare_u32);
    for (uint32_t i = 0; i < n_seen; i++) out->structure += i == 0 || seen[i] != seen[i - 1];
}

/* An inside view: the eye at fraction `from` of the box along horizontal
 * axis `a` (x or z), centred on the other, at fraction `height` of the
 * box's height, looking level towards fraction `to`. */
static void inside_view(const float lo[3], const float hi[3], int a, double from, double to, double height,
                        camera *c)
{
    int other = a == 0 ? 2 : 0;
    double ext[3];
    for (int k = 0; k < 3; k++) ext[k] = (double)hi[k] - lo[k];
    c->eye[a] = (float)(lo[a] + from * ext[a]);
    c->target[a] = (float)(lo[a] + to * ext[a]);
    c->eye[other] = c->target[other] = (float)(lo[other] + 0.5 * ext[other]);
    c->eye[1] = c->target[1] = (float)(lo[1] + height * ext[1]);
    c->up[0] = c->up[2] = 0.0f;
    c->up[1] = 1.0f;
}

/* Candidate k: 0-3 outside from +z, -z, +x, -x (raised 20 degrees); 4-11
 * inside, from 15% of the box's length to 85% along x, -x, z, -z, at 20%
 * and at 40% of its height (eye height varies: one may be inside a floor). */
static const char *candidate(const scene *s, int k, camera *c)
{
    static const char *const names[] = {
        "outside from +z",   "outside from -z",   "outside from +x",   "outside from -x",
        "inside along +x, low", "inside along -x, low", "inside along +z, low", "inside along -z, low",
        "inside along +x, high", "inside along -x, high", "inside along +z, high", "inside along -z, high"};
    const double rise = sin(20.0 * PI_D / 180.0), run = cos(20.0 * PI_D / 180.0);
    const double dirs[4][3] = {{0, rise, run}, {0, rise, -run}, {run, rise, 0}, {-run, rise, 0}};
    if (k < 4) {
        camera_frame_from(s->lo, s->hi, dirs[k], c);
    } else {
        int j = (k - 4) % 4, forward = j % 2 == 0;
        inside_view(s->lo, s->hi, j < 2 ? 0 : 2, forward ? 0.15 : 0.85, forward ? 0.85 : 0.15,
                    k < 8 ? 0.2 : 0.4, c);
    }
    return names[k];
}

#define N_CANDIDATES 12

const char *camera_choose_view(const kdtree *t, const scene *s, camera *c)
{
    trace_scene ts = kdtree_trace_scene(t, s);
    return camera_choose_view_with(trace_kdtree, &ts, s, c);
}

const char *camera_choose_view_with(view_tracer trace, void *ctx, const scene *s, camera *c)
{
    camera best = *c, cand = *c;
    const char *name = candidate(s, 0, &best);
    view_score score;
    camera_view_score_with(trace, ctx, s, &best, &score);
    /* Not a shell: the rays see many distinct triangles, or nothing.  A
     * shell needs volume for the inside views. */
    int has_volume = s->hi[0] > s->lo[0] && s->hi[1] > s->lo[1] && s->hi[2] > s->lo[2];
    if (2 * score.structure >= score.hits || !has_volume) {
        *c = best;
        return name;
    }
    uint32_t best_structure = score.structure;
    for (int k = 1; k < N_CANDIDATES; k++) {
        const char *n = candidate(s, k, &cand);
        camera_view_score_with(trace, ctx, s, &cand, &score);
        if (score.structure > best_structure) {
            best = cand;
            best_structure = score.structure;
            name = n;
        }
    }
    *c = best;
    return name;
}
