/* image.c - image buffers, heat-map colouring with a labelled scale, PNG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "render.h"

/* stb_easy_font is a header of static functions, some unused here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-braces"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop
#include <stb_image_write.h>

int image_alloc(image *img, uint32_t width, uint32_t height, int with_counts, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    size_t pixels = (size_t)width * height;
    img->rgb = malloc(pixels * 3);
    img->counts = with_counts ? malloc(pixels * sizeof *img->counts) : NULL;
    if (!img->rgb || (with_counts && !img->counts)) {
        image_free(img);
        snprintf(err, errlen, "out of memory for a %ux%u image", width, height);
        return -1;
    }
    img->width = width;
    img->height = height;
    return 0;
}

void image_free(image *img)
{
    free(img->rgb);
    free(img->counts);
    memset(img, 0, sizeof *img);
}

/* Blue - cyan - green - yellow - red ramp for x in [0, 1]. */
static void heat_color(float x, uint8_t rgb[3])
{
    static const float stops[5][3] = {{0.05f, 0.05f, 0.45f}, {0.0f, 0.65f, 0.95f}, {0.1f, 0.85f, 0.2f},
                                      {0.98f, 0.9f, 0.1f},   {0.85f, 0.05f, 0.05f}};
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    float f = x * 4.0f;
    int i = f >= 4.0f ? 3 : (int)f;
    float w = f - (float)i;
    for (int c = 0; c < 3; c++) {
        float v = stops[i][c] * (1.0f - w) + stops[i + 1][c] * w;
        rgb[c] = (uint8_t)(v * 255.0f + 0.5f);
    }
}

static void fill_rect(image *img, int x0, int y0, int x1, int y1, const uint8_t rgb[3])
{
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < (int)img->height; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < (int)img->width; x++)
            memcpy(img->rgb + 3 * ((size_t)y * img->width + x), rgb, 3);
}

/* Draws text with stb_easy_font's quads, scaled by an integer factor. */
static void draw_text(image *img, int x, int y, int scale, const char *text)
{
    static char quads[64 * 1024];
    static const uint8_t white[3] = {255, 255, 255};
    int n = stb_easy_font_print(0.0f, 0.0f, (char *)text, NULL, quads, (int)sizeof quads);
    const float *v = (const float *)quads; /* 4 vertices of x, y, z, colour */
    for (int q = 0; q < n; q++, v += 16)
        fill_rect(img, x + scale * (int)v[0], y + scale * (int)v[1], x + scale * (int)v[8],
                  y + scale * (int)v[9], white);
}

void image_colorize_counts(image *img, shade_mode mode)
{
    uint32_t max = 1;
    size_t pixels = (size_t)img->width * img->height;
    for (size_t i = 0; i < pixels; i++)
        if (img->counts[i] > max) max = img->counts[i];
    for (size_t i = 0; i < pixels; i++) heat_color((float)img->counts[i] / (float)max, img->rgb + 3 * i);

    /* The scale: a colour bar along the bottom, labelled 0 and max. */
    int scale = img->width >= 1200 ? 2 : 1;
    int bar_h = 10 * scale, margin = 8 * scale;
    int x0 = margin, x1 = (int)img->width - margin;
    int y1 = (int)img->height - margin, y0 = y1 - bar_h;
    if (x1 - x0 < 64 || y0 < 4 * bar_h) return; /* too small an image for a legend */
    static const uint8_t black[3] = {0, 0, 0};
    fill_rect(img, x0 - 2, y0 - 14 * scale, x1 + 2, y1 + 2, black);
    for (int x = x0; x < x1; x++) {
        uint8_t rgb[3];
        heat_color((float)(x - x0) / (float)(x1 - x0 - 1), rgb);
        fill_rect(img, x, y0, x + 1, y1, rgb);
    }
    char caption[96], top[16];
    snprintf(caption, sizeof caption, "0 %s per ray", mode == SHADE_STEPS ? "inner nodes visited" : "triangle tests");
    snprintf(top, sizeof top, "%u", max);
    int top_w = scale * stb_easy_font_width(top);
    if (scale * stb_easy_font_width(caption) + 8 * scale + top_w > x1 - x0) /* the two would overlap: 0 alone */
        snprintf(caption, sizeof caption, "0");
    draw_text(img, x0, y0 - 12 * scale, scale, caption);
    draw_text(img, x1 - top_w, y0 - 12 * scale, scale, top);
}

/* stb's writer hands over the encoded bytes through this. */
static void write_to_outfile(void *context, void *data, int size)
{
    outfile_write(context, data, (size_t)size);
}

int image_write_png(const image *img, const char *path, char *err, size_t errlen)
{
    outfile o;
    if (outfile_open(&o, path, "PNG", err, errlen)) return -1;
    if (!stbi_write_png_to_func(write_to_outfile, &o, (int)img->width, (int)img->height, 3, img->rgb,
                                (int)img->width * 3)) {
        outfile_abort(&o);
        snprintf(err, errlen, "%s: cannot write PNG: out of memory to encode it", path);
        return -1;
    }
    return outfile_commit(&o, err, errlen);
}
