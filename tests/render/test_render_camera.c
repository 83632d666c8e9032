/* test_render_camera.c - the camera: bad cameras rejected with a message,
 * good ones (up to the size limits) accepted, rendering and validation
 * refusing a bad camera, and camera_frame showing the whole box.
 *
 * Oracles: camera_check's verdicts on hand-made cameras at and past each
 * limit, and the scene box's corners projected onto the camera's axes with
 * this file's own vector algebra (test_render.h), with the centre pixel's
 * ray hitting every solid box. */
#include "test_render.h"

static const camera GOOD_CAMERA = {{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 50.0f, 64, 48};

static void expect_rejected(camera c, const char *what)
{
    char err[512] = "";
    cr_expect_eq(camera_check(&c, err, sizeof err), -1, "camera_check accepts %s", what);
    cr_expect_neq(err[0], '\0', "no message for %s", what);
}

Test(camera, rejects_bad_cameras)
{
    camera c;
    for (int a = 0; a < 3; a++) {
        c = GOOD_CAMERA, c.eye[a] = NAN, expect_rejected(c, "NaN in eye");
        c = GOOD_CAMERA, c.target[a] = NAN, expect_rejected(c, "NaN in target");
        c = GOOD_CAMERA, c.up[a] = NAN, expect_rejected(c, "NaN in up");
        c = GOOD_CAMERA, c.eye[a] = INFINITY, expect_rejected(c, "infinite eye");
    }
    c = GOOD_CAMERA, memcpy(c.target, c.eye, sizeof c.eye), expect_rejected(c, "eye == target");
    c = GOOD_CAMERA, memcpy(c.up, (float[]){0, 0, 1}, sizeof c.up), expect_rejected(c, "up along the view");
    c = GOOD_CAMERA, memcpy(c.up, (float[]){0, 0, -3}, sizeof c.up), expect_rejected(c, "up against the view");
    c = GOOD_CAMERA, memset(c.up, 0, sizeof c.up), expect_rejected(c, "zero up");
    const float bad_fov[] = {0.0f, 180.0f, -10.0f, 200.0f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_fov / sizeof bad_fov[0]; i++) {
        c = GOOD_CAMERA, c.fov_deg = bad_fov[i];
        char what[64];
        snprintf(what, sizeof what, "fov %g", bad_fov[i]);
        expect_rejected(c, what);
    }
    c = GOOD_CAMERA, c.width = 0, expect_rejected(c, "width 0");
    c = GOOD_CAMERA, c.height = 0, expect_rejected(c, "height 0");
    c = GOOD_CAMERA, c.width = CAMERA_MAX_SIDE + 1, c.height = 1, expect_rejected(c, "width above the limit");
    c = GOOD_CAMERA, c.width = 1, c.height = CAMERA_MAX_SIDE + 1, expect_rejected(c, "height above the limit");
    c = GOOD_CAMERA, c.width = CAMERA_MAX_SIDE, c.height = CAMERA_MAX_SIDE, expect_rejected(c, "too many pixels");
    c = GOOD_CAMERA, c.width = 1u << 14, c.height = (1u << 14) + 1, expect_rejected(c, "one row too many");
    /* 0.01 degrees over 720 rows: 2.4e-7 radians a pixel */
    c = GOOD_CAMERA, c.fov_deg = 0.01f, c.width = 1280, c.height = 720, expect_rejected(c, "pixels too fine");
}

Test(camera, accepts_good_cameras)
{
    char err[512] = "";
    camera c = GOOD_CAMERA;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c.width = CAMERA_MAX_SIDE, c.height = 1;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c.width = 1u << 14, c.height = 1u << 14; /* exactly CAMERA_MAX_PIXELS */
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c = GOOD_CAMERA, c.fov_deg = 179.0f;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c = GOOD_CAMERA, c.fov_deg = 0.5f;
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
    c = GOOD_CAMERA, c.fov_deg = 0.0104f, c.width = 1280, c.height = 720; /* 2.52e-7 radians a pixel */
    cr_expect_eq(camera_check(&c, err, sizeof err), 0, "%s", err);
}

Test(camera, render_refuses_a_bad_camera)
{
    scene s = real_scene("teapot");
    kdtree t = build_tree(&s);
    camera good = GOOD_CAMERA;
    render_options opt = render_default_options(&good);
    opt.cam.fov_deg = 0.0f;
    image img;
    validation v;
    char err[512] = "";
    cr_expect_eq(render_cpu(&t, &s, &opt, &img, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "camera") != NULL, "render_cpu's message: \"%s\"", err);
    err[0] = '\0';
    cr_expect_eq(validate_camera_rays_cpu(&t, &s, &opt, 10, &v, err, sizeof err), -1);
    cr_expect(strstr(err, "camera") != NULL, "validate_camera_rays_cpu's message: \"%s\"", err);
    kdtree_free(&t);
    scene_free(&s);
}

/* Whether point p is inside the camera's field of view, by projecting it
 * onto the camera's own axes. */
static int in_view(const camera *c, const float p[3])
{
    float f[3], r[3], u[3], v[3];
    for (int a = 0; a < 3; a++) f[a] = c->target[a] - c->eye[a], v[a] = p[a] - c->eye[a];
    normalize3(f);
    cross3(f, c->up, r);
    normalize3(r);
    cross3(r, f, u);
    float depth = dot3(v, f), half_h = tanf(0.5f * c->fov_deg * PI_F / 180.0f);
    float half_w = half_h * (float)c->width / (float)c->height;
    return depth > 0.0f && fabsf(dot3(v, u)) <= half_h * depth && fabsf(dot3(v, r)) <= half_w * depth;
}

Test(camera, frame_shows_the_whole_box)
{
    /* Boxes of every shape, with whether they are solid (thick on every
     * axis): only those must be hit by the centre pixel, which lies half a
     * pixel off the exact centre for even sizes. */
    static const struct {
        float lo[3], hi[3];
        int solid;
    } boxes[] = {{{-1, -1, -1}, {1, 1, 1}, 1},
                 {{1000, 1000, -1001}, {1001, 1002, -1000}, 1},
                 {{-0.1f, 0.03f, -0.06f}, {0.06f, 0.19f, 0.06f}, 1},
                 {{0, 0, 0}, {100, 1, 1}, 0},
                 {{-5, 2, 3}, {5, 2, 3}, 0},
                 {{7, 7, 7}, {7, 7, 7}, 0}};
    static const uint32_t sizes[][2] = {{64, 48}, {48, 64}, {200, 20}, {1, 1}};
    static const float fovs[] = {20.0f, 50.0f, 100.0f};
    for (size_t bi = 0; bi < sizeof boxes / sizeof boxes[0]; bi++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t fi = 0; fi < sizeof fovs / sizeof fovs[0]; fi++) {
                const float *lo = boxes[bi].lo, *hi = boxes[bi].hi;
                camera c = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, fovs[fi], sizes[si][0], sizes[si][1]};
                camera_frame(lo, hi, &c);
                char err[512] = "";
                cr_assert_eq(camera_check(&c, err, sizeof err), 0, "box %zu, %ux%u, fov %g: %s", bi, c.width,
                             c.height, c.fov_deg, err);
                cr_expect(c.fov_deg == fovs[fi] && c.width == sizes[si][0] && c.height == sizes[si][1],
                          "camera_frame changed fov or size");
                for (int k = 0; k < 8; k++) {
                    float corner[3] = {(k & 1 ? hi : lo)[0], (k & 2 ? hi : lo)[1], (k & 4 ? hi : lo)[2]};
                    cr_expect(in_view(&c, corner), "box %zu, %ux%u, fov %g: corner %d out of view", bi, c.width,
                              c.height, c.fov_deg, k);
                }
                if (!boxes[bi].solid) continue;
                camera_basis b;
                camera_make_basis(&c, lo, hi, &b);
                ray r = camera_ray(&b, c.width / 2, c.height / 2);
                float inv_d[3] = {1.0f / r.d[0], 1.0f / r.d[1], 1.0f / r.d[2]}, t0, t1;
                cr_expect(ray_box(&r, inv_d, lo, hi, &t0, &t1) && t0 > 0.0f,
                          "box %zu, %ux%u, fov %g: the centre pixel misses the box", bi, c.width, c.height,
                          c.fov_deg);
            }
}
