/* test_obj_real.c - the shared real scenes (KDA_SHARED_SCENES, described
 * by its MANIFEST.md): each loads with the vertex, triangle and zero-area
 * triangle counts and the box the MANIFEST gives, every index in range; and
 * every scene the MANIFEST lists is checked here.
 *
 * Oracle: the MANIFEST's counts and boxes (copied below, with the
 * exceptions explained), and its list of scenes read at run time. */
#include "test_obj.h"

typedef struct real_scene {
    const char *name;
    uint32_t n_vertices, n_triangles, n_degenerate;
    float lo[3], hi[3];
} real_scene;

/* Counts and boxes from MANIFEST.md.  The MANIFEST's boxes are of all v
 * lines, the loader's of the vertices that triangles use; they agree for
 * every scene, because the only unreferenced vertices (bunny's 1,113,
 * sibenik's 2) lie inside the box of the others.  Zero-area triangles are
 * those the MANIFEST counts, except sibenik: it says 10, but exactly 9 have a
 * zero cross product (in float, and in double as well).  The MANIFEST gives
 * none for armadillo, buddha, bunny and teapot; they have 0. */
static const real_scene real_scenes[] = {
    {"sponza", 60848, 66450, 6, {-17.4028f, -0.906689f, -7.79851f}, {17.4172f, 15.6533f, 7.80149f}},
    {"sibenik", 40981, 75284, 9, {-20.1411f, -15.3123f, -8.4968f}, {20.1411f, 15.3f, 8.4968f}},
    {"conference", 194399, 331179, 53627, {-1020.13f, -2.7924f, -1055.66f},
     {1685.81f, 650.293f, 668.489f}},
    {"dragon", 437645, 871414, 108, {-0.108324f, 0.0527295f, -0.0504143f},
     {0.0965662f, 0.197173f, 0.0412075f}},
    {"buddha_100k", 49950, 100000, 0, {-0.460955f, -1.00222f, -0.323877f},
     {0.35222f, 0.9775f, 0.490175f}},
    {"armadillo_lowres", 14587, 29170, 0, {-0.434446f, -0.571575f, -0.374793f},
     {0.403139f, 0.426281f, 0.377968f}},
    {"hand", 38219, 76438, 2, {-44.84f, -101.38f, -37.05f}, {42.54f, 100.24f, 38.76f}},
    {"bunny", 35947, 69451, 0, {-0.09469f, 0.032987f, -0.061874f}, {0.061009f, 0.187321f, 0.0588f}},
    {"teapot", 3644, 6320, 0, {-3, 0, -2}, {3.434f, 3.15f, 2}},
};

#define MANIFEST KDA_SHARED_SCENES "/MANIFEST.md"

static char *read_manifest(void)
{
    FILE *f = fopen(MANIFEST, "rb");
    cr_assert_not_null(f, "the shared scenes folder is missing: looked for %s", MANIFEST);
    size_t cap = 1 << 20;
    char *text = calloc(cap, 1);
    cr_assert_not_null(text);
    size_t len = fread(text, 1, cap - 1, f);
    cr_assert(len > 0 && feof(f), "cannot read %s", MANIFEST);
    fclose(f);
    return text;
}

static void check_real_scene(const char *name)
{
    free(read_manifest());
    const real_scene *want = NULL;
    for (size_t i = 0; i < sizeof real_scenes / sizeof *real_scenes; i++)
        if (strcmp(real_scenes[i].name, name) == 0) want = &real_scenes[i];
    cr_assert_not_null(want);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.obj.gz", KDA_SHARED_SCENES, name);
    scene s;
    cr_assert_eq(scene_load(path, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.n_vertices, want->n_vertices);
    cr_expect_eq(s.n_triangles, want->n_triangles);
    cr_expect_eq(s.n_degenerate, want->n_degenerate);
    cr_expect_eq(s.n_skipped, 0, "%s: line %llu starts with '%s', no OBJ statement", name,
                 (unsigned long long)s.skipped_line, s.skipped); /* the exporters write only OBJ statements */
    for (int a = 0; a < 3; a++) {
        cr_expect_leq(fabsf(s.lo[a] - want->lo[a]), 1e-4f * fabsf(want->lo[a]),
                      "%s lo[%d] = %.9g, want %.9g", name, a, s.lo[a], want->lo[a]);
        cr_expect_leq(fabsf(s.hi[a] - want->hi[a]), 1e-4f * fabsf(want->hi[a]),
                      "%s hi[%d] = %.9g, want %.9g", name, a, s.hi[a], want->hi[a]);
    }
    for (size_t i = 0; i < 3 * (size_t)s.n_triangles; i++)
        if (s.triangles[i] >= s.n_vertices)
            cr_assert_fail("%s: index %u out of range", name, s.triangles[i]);
    scene_free(&s);
}

Test(real, sponza) { check_real_scene("sponza"); }
Test(real, sibenik) { check_real_scene("sibenik"); }
Test(real, conference) { check_real_scene("conference"); }
Test(real, dragon) { check_real_scene("dragon"); }
Test(real, buddha_100k) { check_real_scene("buddha_100k"); }
Test(real, armadillo_lowres) { check_real_scene("armadillo_lowres"); }
Test(real, hand) { check_real_scene("hand"); }
Test(real, bunny) { check_real_scene("bunny"); }
Test(real, teapot) { check_real_scene("teapot"); }

Test(real, every_manifest_scene_is_checked)
{
    /* Scene rows start "| `NAME.obj.gz` |". */
    char *text = read_manifest();
    int rows = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (strncmp(line, "| `", 3) != 0) continue;
        const char *name = line + 3, *close = strchr(name, '`');
        size_t n = close ? (size_t)(close - name) : 0;
        if (n <= 7 || strncmp(close - 7, ".obj.gz", 7) != 0) continue;
        n -= 7;
        int known = 0;
        for (size_t i = 0; i < sizeof real_scenes / sizeof *real_scenes; i++)
            known |= strlen(real_scenes[i].name) == n && strncmp(real_scenes[i].name, name, n) == 0;
        cr_expect(known, "MANIFEST lists %.*s.obj.gz, which no test loads", (int)n, name);
        rows++;
    }
    cr_expect_eq(rows, (int)(sizeof real_scenes / sizeof *real_scenes));
    free(text);
}
