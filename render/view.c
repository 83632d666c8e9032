/* view.c - the default camera and light: a view that shows the scene's
 * structure, and a light that reaches what the view sees.
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
 *
 * The same test decides the light: above an open scene (camera_make_basis
 * places it), inside a shell, whose walls and ceiling would shadow all of
 * it from a light above.  Inside, the light goes to the point of a grid
 * over the upper part of the box whose rays in every direction hit the
 * most distinct triangles: a point in open space sees much, one inside a
 * solid part (a pillar, a wall, above a ceiling) sees little.  The first
 * of equal points wins, so this choice is deterministic too.
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
    ray_hit h = kdtree_trace(ctx, &r);
    *t = h.t;
    return h.tri;
}

void camera_view_score(const kdtree *t, const scene *s, const camera *c, view_score *out)
{
    trace_scene ts = trace_scene_of(t, s);
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
    trace_scene ts = trace_scene_of(t, s);
    return camera_choose_view_with(trace_kdtree, &ts, s, c);
}

/* Whether the scene is a closed shell, judged by the framed view `c`:
 * its rays see few distinct triangles but many hits (not nothing), and
 * the shell has volume for views and lights inside. */
static int is_shell(view_tracer trace, void *ctx, const scene *s, const camera *c, view_score *score)
{
    camera_view_score_with(trace, ctx, s, c, score);
    int has_volume = s->hi[0] > s->lo[0] && s->hi[1] > s->lo[1] && s->hi[2] > s->lo[2];
    return 2 * score->structure < score->hits && has_volume;
}

const char *camera_choose_view_with(view_tracer trace, void *ctx, const scene *s, camera *c)
{
    camera best = *c, cand = *c;
    const char *name = candidate(s, 0, &best);
    view_score score;
    if (!is_shell(trace, ctx, s, &best, &score)) {
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

/* Rays a candidate light casts (directions spread evenly over the sphere),
 * and the grid of candidates: 3 x 3 over the floor's axes, at 3 heights. */
#define LIGHT_RAYS 1024
#define LIGHT_GRID 3
static const double light_across[LIGHT_GRID] = {0.25, 0.5, 0.75};
static const double light_heights[LIGHT_GRID] = {0.9, 0.75, 0.6};

/* Distinct triangles the rays from p hit. */
static uint32_t light_sees(view_tracer trace, void *ctx, const float p[3])
{
    uint32_t seen[LIGHT_RAYS];
    uint32_t n = 0;
    const double golden = PI_D * (3.0 - sqrt(5.0));
    for (int i = 0; i < LIGHT_RAYS; i++) {
        double y = 1.0 - 2.0 * (i + 0.5) / LIGHT_RAYS, r = sqrt(1.0 - y * y);
        float d[3] = {(float)(r * cos(golden * i)), (float)y, (float)(r * sin(golden * i))}, t;
        uint32_t tri = trace(ctx, p, d, &t);
        if (tri != RAY_NO_HIT) seen[n++] = tri;
    }
    qsort(seen, n, sizeof *seen, compare_u32);
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < n; i++) distinct += i == 0 || seen[i] != seen[i - 1];
    return distinct;
}

int light_choose(const kdtree *t, const scene *s, float light[3])
{
    trace_scene ts = trace_scene_of(t, s);
    return light_choose_with(trace_kdtree, &ts, s, light);
}

int light_choose_with(view_tracer trace, void *ctx, const scene *s, float light[3])
{
    camera framed = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 50.0f, VIEW_SAMPLE_W, VIEW_SAMPLE_H};
    view_score score;
    candidate(s, 0, &framed);
    if (!is_shell(trace, ctx, s, &framed, &score)) return 0;
    uint32_t best = 0;
    for (int h = 0; h < LIGHT_GRID; h++)
        for (int i = 0; i < LIGHT_GRID; i++)
            for (int k = 0; k < LIGHT_GRID; k++) {
                const double at[3] = {light_across[i], light_heights[h], light_across[k]};
                float p[3];
                for (int a = 0; a < 3; a++) p[a] = (float)(s->lo[a] + at[a] * ((double)s->hi[a] - s->lo[a]));
                uint32_t sees = light_sees(trace, ctx, p);
                if (sees > best || (h == 0 && i == 0 && k == 0)) {
                    best = sees;
                    memcpy(light, p, sizeof p);
                }
            }
    return 1;
}
