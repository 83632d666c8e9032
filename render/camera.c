/* camera.c - framing, checking and the image-plane basis of the camera. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "shade.h"

#define PI_D 3.14159265358979323846

void camera_frame(const float lo[3], const float hi[3], camera *c)
{
    /* From +z, raised by about 20 degrees. */
    const double dir[3] = {0.0, sin(20.0 * PI_D / 180.0), cos(20.0 * PI_D / 180.0)};
    camera_frame_from(lo, hi, dir, c);
}

void camera_frame_from(const float lo[3], const float hi[3], const double dir[3], camera *c)
{
    double center[3], radius = 0.0;
    for (int a = 0; a < 3; a++) {
        center[a] = 0.5 * ((double)lo[a] + (double)hi[a]);
        double h = 0.5 * ((double)hi[a] - (double)lo[a]);
        radius += h * h;
    }
    radius = sqrt(radius);
    if (radius == 0.0) radius = 1.0;
    double fov = c->fov_deg > 0.0f && c->fov_deg < 180.0f ? c->fov_deg : 50.0;
    /* Far enough that the bounding sphere fits the narrower field of view. */
    double aspect = c->height ? (double)c->width / c->height : 1.0;
    double half = tan(0.5 * fov * PI_D / 180.0);
    if (aspect < 1.0) half *= aspect;
    double dist = 1.05 * radius / sin(atan(half));
    for (int a = 0; a < 3; a++) {
        c->target[a] = (float)center[a];
        c->eye[a] = (float)(center[a] + dist * dir[a]);
        c->up[a] = a == 1 ? 1.0f : 0.0f;
    }
}

static int all_finite(const float *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

int camera_check(const camera *c, char *err, size_t errlen)
{
    if (!all_finite(c->eye, 3) || !all_finite(c->target, 3) || !all_finite(c->up, 3)) {
        snprintf(err, errlen, "camera: eye, target and up must be finite numbers");
        return -1;
    }
    double f[3], cross[3];
    for (int a = 0; a < 3; a++) f[a] = (double)c->target[a] - c->eye[a];
    if (f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0) {
        snprintf(err, errlen, "camera: eye and target are the same point");
        return -1;
    }
    cross[0] = f[1] * c->up[2] - f[2] * c->up[1];
    cross[1] = f[2] * c->up[0] - f[0] * c->up[2];
    cross[2] = f[0] * c->up[1] - f[1] * c->up[0];
    double cl = sqrt(cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]);
    double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    double ul = sqrt((double)c->up[0] * c->up[0] + (double)c->up[1] * c->up[1] + (double)c->up[2] * c->up[2]);
    if (ul == 0.0 || cl <= 1e-6 * fl * ul) {
        snprintf(err, errlen, "camera: up vector is zero or parallel to the view direction");
        return -1;
    }
    if (!(c->fov_deg > 0.0f && c->fov_deg < 180.0f)) {
        snprintf(err, errlen, "camera: field of view %g is outside (0, 180) degrees", c->fov_deg);
        return -1;
    }
    if (camera_check_size(c, err, errlen)) return -1;
    if (c->fov_deg * (PI_D / 180.0) / c->height < CAMERA_PIXEL_RADIANS_MIN) {
        snprintf(err, errlen, "camera: field of view %g over %u rows makes pixels finer than a ray's float direction "
                 "resolves (%g radians): over %u rows it must be at least %.4g degrees, or the image lower",
                 c->fov_deg, c->height, CAMERA_PIXEL_RADIANS_MIN, c->height,
                 CAMERA_PIXEL_RADIANS_MIN * c->height * (180.0 / PI_D) * 1.0001); /* rounded up */
        return -1;
    }
    return 0;
}

int camera_check_size(const camera *c, char *err, size_t errlen)
{
    if (c->width == 0 || c->height == 0) {
        snprintf(err, errlen, "camera: image size %ux%u has no pixels", c->width, c->height);
        return -1;
    }
    if (c->width > CAMERA_MAX_SIDE || c->height > CAMERA_MAX_SIDE) {
        snprintf(err, errlen, "camera: image size %ux%u: a side may be at most %u pixels", c->width, c->height,
                 CAMERA_MAX_SIDE);
        return -1;
    }
    if ((uint64_t)c->width * c->height > CAMERA_MAX_PIXELS) {
        snprintf(err, errlen, "camera: image size %ux%u is %llu pixels, more than the %llu an image may have",
                 c->width, c->height, (unsigned long long)c->width * c->height,
                 (unsigned long long)CAMERA_MAX_PIXELS);
        return -1;
    }
    return 0;
}

void camera_make_basis(const camera *c, const float lo[3], const float hi[3], camera_basis *b)
{
    double f[3], r[3], u[3];
    for (int a = 0; a < 3; a++) f[a] = (double)c->target[a] - c->eye[a];
    double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int a = 0; a < 3; a++) f[a] /= fl;
    r[0] = f[1] * c->up[2] - f[2] * c->up[1];
    r[1] = f[2] * c->up[0] - f[0] * c->up[2];
    r[2] = f[0] * c->up[1] - f[1] * c->up[0];
    double rl = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int a = 0; a < 3; a++) r[a] /= rl;
    u[0] = r[1] * f[2] - r[2] * f[1];
    u[1] = r[2] * f[0] - r[0] * f[2];
    u[2] = r[0] * f[1] - r[1] * f[0];
    double half_h = tan(0.5 * c->fov_deg * PI_D / 180.0);
    double half_w = half_h * (double)c->width / (double)c->height;
    double size = 0.0;
    for (int a = 0; a < 3; a++) size += ((double)hi[a] - lo[a]) * ((double)hi[a] - lo[a]);
    size = sqrt(size);
    for (int a = 0; a < 3; a++) {
        b->eye[a] = c->eye[a];
        b->forward[a] = (float)f[a];
        b->right[a] = (float)(r[a] * half_w);
        b->up[a] = (float)(u[a] * half_h);
        /* Above the scene, in front of it and a little to the camera's left. */
        b->light[a] = (float)(0.5 * ((double)lo[a] + hi[a]) + size * (0.9 * u[a] - 0.3 * r[a] - 0.8 * f[a]));
    }
    b->width = c->width;
    b->height = c->height;
}
