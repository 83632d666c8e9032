/* test_render_image.c - the CPU renderer's images: the PNG written and
 * read back, the heat maps of traversal steps and triangle tests, the same
 * input giving the same bytes, and shadows that only darken.
 *
 * Oracles: brute force decides which pixels show the scene, stb_image reads
 * the PNG back, the heat maps' per-pixel counts are recomputed with
 * kdtree_trace and their colours with a palette of every count (only the
 * legend's bottom rows differ), the palette's hues against the documented
 * blue-to-red ramp, and renders of the same scene are compared
 * byte for byte: twice the same, and with shadows against without. */
#include <stb_image.h>
/* stb_easy_font (the legend's font) is a header of static functions, some unused here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-braces"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

#include "test_render.h"

static image render_image(const kdtree *t, const scene *s, const camera *c, shade_mode mode, int shadows)
{
    render_options opt = render_default_options(c);
    opt.mode = mode;
    opt.shadows = shadows;
    image img;
    char err[512];
    cr_assert_eq(render_cpu(t, s, &opt, &img, NULL, err, sizeof err), 0, "render_cpu: %s", err);
    cr_assert_eq(img.width, c->width);
    cr_assert_eq(img.height, c->height);
    return img;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static size_t distinct_colors(const image *img)
{
    size_t n = (size_t)img->width * img->height, distinct = 0;
    uint32_t *packed = malloc(n * sizeof *packed);
    cr_assert_not_null(packed);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = img->rgb + 3 * i;
        packed[i] = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    }
    qsort(packed, n, sizeof *packed, compare_u32);
    for (size_t i = 0; i < n; i++) distinct += i == 0 || packed[i] != packed[i - 1];
    free(packed);
    return distinct;
}

Test(png, round_trips_and_shows_the_scene)
{
    scene s = real_scene("teapot");
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image img = render_image(&t, &s, &c, SHADE_DIFFUSE, 0);
    cr_expect_null(img.counts, "a diffuse render has no counts");

    char err[512];
    cr_assert_eq(image_write_png(&img, TMP("teapot.png"), err, sizeof err), 0, "%s", err);
    int w, h, channels;
    uint8_t *back = stbi_load(TMP("teapot.png"), &w, &h, &channels, 0);
    cr_assert_not_null(back, "stb_image cannot read the PNG: %s", stbi_failure_reason());
    cr_expect_eq(w, 160);
    cr_expect_eq(h, 120);
    cr_expect_eq(channels, 3);
    cr_expect(w == 160 && h == 120 && channels == 3 && memcmp(back, img.rgb, 160 * 120 * 3) == 0,
              "the PNG's pixels differ from the image in memory");
    stbi_image_free(back);
    cr_expect_geq(distinct_colors(&img), 50, "only %zu distinct colours", distinct_colors(&img));

    /* Brute force says which pixels see the teapot: those differ from the
     * background, which depends on the row only. */
    camera_basis b;
    camera_make_basis(&c, s.lo, s.hi, &b);
    uint32_t hits = 0, misses = 0, wrong = 0;
    uint8_t shows[160];
    cr_assert_leq(c.width, sizeof shows);
    for (uint32_t y = 0; y < c.height; y++) {
        const uint8_t *row = img.rgb + 3 * (size_t)y * c.width, *background = NULL;
        for (uint32_t x = 0; x < c.width; x++) {
            ray r = camera_ray(&b, x, y);
            shows[x] = brute_force_trace(s.positions, s.triangles, s.n_triangles, &r).tri != RAY_NO_HIT;
            if (!shows[x] && !background) background = row + 3 * x;
        }
        for (uint32_t x = 0; x < c.width; x++) {
            hits += shows[x];
            misses += !shows[x];
            if (background) wrong += (memcmp(row + 3 * x, background, 3) == 0) == shows[x];
        }
    }
    cr_expect_gt(hits, 1000, "only %u pixels show the teapot", hits);
    cr_expect_gt(misses, 1000, "only %u background pixels", misses);
    cr_expect_eq(wrong, 0, "%u pixels disagree with brute force about showing the scene", wrong);

    image_free(&img);
    kdtree_free(&t);
    scene_free(&s);
}

Test(png, write_to_a_bad_path_fails)
{
    image img;
    char err[512] = "";
    cr_assert_eq(image_alloc(&img, 4, 4, 0, err, sizeof err), 0, "%s", err);
    memset(img.rgb, 128, 4 * 4 * 3);
    cr_expect_eq(image_write_png(&img, TMP("no/such/dir/x.png"), err, sizeof err), -1);
    cr_expect(strstr(err, "no/such/dir/x.png") != NULL, "message does not name the file: \"%s\"", err);
    image_free(&img);
}

/* The colour the heat map gives each count 0..max: a one-row image of
 * those counts, too small to get a legend. */
static uint8_t *heat_palette(uint32_t max, shade_mode mode)
{
    image ramp;
    char err[512];
    cr_assert_eq(image_alloc(&ramp, max + 1, 1, 1, err, sizeof err), 0, "%s", err);
    for (uint32_t i = 0; i <= max; i++) ramp.counts[i] = i;
    image_colorize_counts(&ramp, mode);
    uint8_t *palette = malloc(3 * ((size_t)max + 1));
    cr_assert_not_null(palette);
    memcpy(palette, ramp.rgb, 3 * ((size_t)max + 1));
    image_free(&ramp);
    return palette;
}

static void expect_heat_map(shade_mode mode, const char *name)
{
    scene s = real_scene("teapot");
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image img = render_image(&t, &s, &c, mode, 0);
    cr_assert_not_null(img.counts, "%s: no counts", name);

    /* Each count is what the traversal reports for that pixel's ray. */
    camera_basis b;
    camera_make_basis(&c, s.lo, s.hi, &b);
    uint32_t min = UINT32_MAX, max = 0, wrong_counts = 0;
    for (uint32_t y = 0; y < c.height; y++)
        for (uint32_t x = 0; x < c.width; x++) {
            ray r = camera_ray(&b, x, y);
            ray_hit h = trace_tree(&t, &s, &r);
            uint32_t want = mode == SHADE_STEPS ? h.steps : h.tests, got = img.counts[y * c.width + x];
            wrong_counts += got != want;
            min = got < min ? got : min;
            max = got > max ? got : max;
        }
    cr_expect_eq(wrong_counts, 0, "%s: %u pixels have the wrong count", name, wrong_counts);
    cr_assert_lt(min, max, "%s: flat heat map (every count %u)", name, min);

    /* Colours are a function of the count (blue = few, red = many), except
     * where the legend is drawn: in the bottom rows only. */
    uint8_t *palette = heat_palette(max, mode);
    const uint8_t *few = palette, *many = palette + 3 * (size_t)max;
    cr_expect(few[2] > few[0], "%s: count 0 is not blue: %u %u %u", name, few[0], few[1], few[2]);
    cr_expect(many[0] > many[2], "%s: the largest count is not red: %u %u %u", name, many[0], many[1], many[2]);
    uint32_t legend_top = 0, legend_bottom = 0;
    for (uint32_t y = 0; y < c.height; y++)
        for (uint32_t x = 0; x < c.width; x++) {
            size_t i = (size_t)y * c.width + x;
            if (memcmp(img.rgb + 3 * i, palette + 3 * (size_t)img.counts[i], 3) == 0) continue;
            if (y < c.height * 2 / 3) legend_top++;
            else legend_bottom++;
        }
    cr_expect_eq(legend_top, 0, "%s: %u pixels in the top two thirds are not coloured by their count", name,
                 legend_top);
    cr_expect_gt(legend_bottom, c.width, "%s: no legend in the bottom rows (%u pixels differ)", name,
                 legend_bottom);

    free(palette);
    image_free(&img);
    kdtree_free(&t);
    scene_free(&s);
}

Test(heat_map, steps) { expect_heat_map(SHADE_STEPS, "steps"); }

/* Where the caption and the largest count's label would meet (160 pixels,
 * a count of 5 digits), the caption gives way: in the label rows no white
 * pixel lies in the 3 columns before the label (right-aligned to the bar's
 * end, 8 pixels in). */
Test(heat_map, labels_keep_apart_on_a_narrow_image)
{
    image img;
    char err[512];
    cr_assert_eq(image_alloc(&img, 160, 90, 1, err, sizeof err), 0, "%s", err);
    for (uint32_t i = 0; i < 160u * 90u; i++) img.counts[i] = i % 160 == 0 ? 12345 : i % 7;
    image_colorize_counts(&img, SHADE_STEPS);
    int label_x = 160 - 8 - stb_easy_font_width("12345"), crowded = 0;
    for (uint32_t y = 90 - 8 - 10 - 14; y < 90 - 8 - 10; y++)
        for (int x = label_x - 3; x < label_x; x++) {
            const uint8_t *p = img.rgb + 3 * ((size_t)y * 160 + (size_t)x);
            crowded += p[0] == 255 && p[1] == 255 && p[2] == 255;
        }
    cr_expect_eq(crowded, 0, "%d white pixels run into the label at column %d", crowded, label_x);
    image_free(&img);
}

Test(heat_map, tests) { expect_heat_map(SHADE_TESTS, "tests"); }

/* A colour's hue in degrees (red 0, yellow 60, green 120, cyan 180, blue
 * 240; below 0 toward magenta) and its chroma, max - min of the channels. */
static double hue_degrees(const uint8_t p[3], double *chroma)
{
    double r = p[0], g = p[1], b = p[2], hi = fmax(r, fmax(g, b));
    *chroma = hi - fmin(r, fmin(g, b));
    if (hi == r) return 60.0 * (g - b) / *chroma;
    if (hi == g) return 60.0 * (2.0 + (b - r) / *chroma);
    return 60.0 * (4.0 + (r - g) / *chroma);
}

/* The palette is the documented ramp (render.h: blue = few, red = many;
 * image.c: blue - cyan - green - yellow - red between its five stops).
 * Oracle: hues computed here.  Count 0 and the largest count are the end
 * stops exactly ((0.05, 0.05, 0.45) and (0.85, 0.05, 0.05) times 255,
 * rounded); the quarter counts of 4 are cyan, green and yellow (within 25
 * degrees); and over every count of 4, 1000 and 100000 the hue never rises
 * (the red and blue channels alone are not monotone: the stops dip in red
 * from blue to cyan and rise in blue).  Rounding a channel to 8 bits moves
 * a hue by up to about 60 / chroma degrees, so two neighbours may rise by
 * 120 / chroma. */
Test(heat_map, palette_runs_from_blue_to_red)
{
    static const uint8_t blue[3] = {13, 13, 115}, red[3] = {217, 13, 13};
    static const double named[3] = {180.0, 120.0, 60.0}; /* cyan, green, yellow */
    static const uint32_t maxes[3] = {4, 1000, 100000};
    for (int m = 0; m < 3; m++) {
        uint32_t max = maxes[m];
        uint8_t *palette = heat_palette(max, SHADE_STEPS);
        const uint8_t *last = palette + 3 * (size_t)max;
        cr_expect_arr_eq(palette, blue, 3, "max %u: count 0 is %u %u %u", max, palette[0], palette[1], palette[2]);
        cr_expect_arr_eq(last, red, 3, "max %u: count %u is %u %u %u", max, max, last[0], last[1], last[2]);
        double chroma, prev_chroma = 0.0, prev = 0.0;
        for (uint32_t i = 0; i <= max; i++) {
            const uint8_t *p = palette + 3 * (size_t)i;
            double hue = hue_degrees(p, &chroma);
            cr_assert_gt(chroma, 0.0, "max %u: count %u is grey (%u %u %u)", max, i, p[0], p[1], p[2]);
            if (i > 0)
                cr_assert_leq(hue, prev + 120.0 / fmin(chroma, prev_chroma),
                              "max %u: the hue rises from %.2f to %.2f at count %u", max, prev, hue, i);
            if (max == 4 && i > 0 && i < 4)
                cr_expect_leq(fabs(hue - named[i - 1]), 25.0, "count %u of 4: hue %.1f, want about %.0f", i, hue,
                              named[i - 1]);
            prev = hue;
            prev_chroma = chroma;
        }
        free(palette);
    }
}

/* ------------------------------------------------------------------------
 * Determinism and shadows
 * ------------------------------------------------------------------------ */

Test(render, same_input_same_bytes)
{
    scene s = generated_scene("atrium", 0);
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image first = render_image(&t, &s, &c, SHADE_DIFFUSE, 1);
    image second = render_image(&t, &s, &c, SHADE_DIFFUSE, 1);
    cr_expect(memcmp(first.rgb, second.rgb, 160 * 120 * 3) == 0, "two renders of atrium differ");
    image_free(&first);
    image_free(&second);
    kdtree_free(&t);
    scene_free(&s);
}

Test(render, shadows_only_darken)
{
    scene s = generated_scene("atrium", 0);
    kdtree t = build_tree(&s);
    camera c = framed_camera(&s, 160, 120);
    image lit = render_image(&t, &s, &c, SHADE_DIFFUSE, 0);
    image shadowed = render_image(&t, &s, &c, SHADE_DIFFUSE, 1);
    uint32_t darker = 0, brighter = 0;
    for (size_t i = 0; i < 160 * 120 * 3; i++) {
        darker += shadowed.rgb[i] < lit.rgb[i];
        brighter += shadowed.rgb[i] > lit.rgb[i];
    }
    cr_expect_gt(darker, 0, "shadows changed nothing in atrium");
    cr_expect_eq(brighter, 0, "%u channel values got brighter with shadows", brighter);
    image_free(&lit);
    image_free(&shadowed);
    kdtree_free(&t);
    scene_free(&s);
}
