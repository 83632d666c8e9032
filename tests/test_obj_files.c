/* test_obj_files.c - loading OBJ files: plain, gzip, gzip content under a
 * plain name (sniffed), gzip of several members; truncated and corrupt
 * gzip, missing and unreadable files, and errors that name the path and
 * line.
 *
 * Oracles: the scene parsed from the same text in memory, compared field
 * by field, and the exact message of every error. */
#include <zlib.h>

#include "test_obj.h"

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, cap, f);
    cr_assert(feof(f), "%s is larger than the test expects", path);
    fclose(f);
    return buf;
}

/* Writes text as a gzip file of one member, or appends one member. */
static void write_gz(const char *path, const char *mode, const char *text, size_t len)
{
    gzFile gz = gzopen(path, mode);
    cr_assert_not_null(gz, "gzopen %s", path);
    cr_assert_eq(gzwrite(gz, text, (unsigned)len), (int)len);
    cr_assert_eq(gzclose(gz), Z_OK);
}

/* A few hundred lines of OBJ: a grid of quads with vt indices. */
static char *grid_obj(size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    n += (size_t)snprintf(t + n, cap - n, "# grid\nvt 0 0\n");
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 10; x++)
            n += (size_t)snprintf(t + n, cap - n, "v %d.%d %d.25 -%d.0625\n", x, y, y, x + y);
    for (int y = 0; y < 9; y++)
        for (int x = 0; x < 9; x++) {
            int i = 10 * y + x + 1;
            n += (size_t)snprintf(t + n, cap - n, "f %d/1 %d/1 %d/1 %d/1\n", i, i + 1, i + 11,
                                  i + 10);
        }
    cr_assert_lt(n, cap);
    *len = n;
    return t;
}

Test(files, plain_gzip_and_sniffed_gzip_load_the_same_scene)
{
    size_t len;
    char *text = grid_obj(&len);
    scene mem, plain, gz, sniffed;
    cr_assert_eq(scene_parse_obj(text, len, "grid", &mem, err, sizeof err), 0, "%s", err);
    cr_expect_eq(mem.n_vertices, 100);
    cr_expect_eq(mem.n_triangles, 2 * 81);

    write_bytes(TMP("grid.obj"), text, len);
    write_gz(TMP("grid.obj.gz"), "wb9", text, len);
    write_gz(TMP("grid_gzip_content.obj"), "wb1", text, len);
    cr_assert_eq(scene_load(TMP("grid.obj"), &plain, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(TMP("grid.obj.gz"), &gz, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(TMP("grid_gzip_content.obj"), &sniffed, err, sizeof err), 0, "%s",
                 err);
    expect_same_scene(&plain, &mem);
    expect_same_scene(&gz, &mem);
    expect_same_scene(&sniffed, &mem);
    scene_free(&mem);
    scene_free(&plain);
    scene_free(&gz);
    scene_free(&sniffed);
    free(text);
}

Test(files, gzip_of_several_members_is_read_whole)
{
    size_t len;
    char *text = grid_obj(&len);
    size_t half = len / 2;
    while (text[half - 1] != '\n') half++;
    write_gz(TMP("members.obj.gz"), "wb", text, half);
    write_gz(TMP("members.obj.gz"), "ab", text + half, len - half);
    scene mem, gz;
    cr_assert_eq(scene_parse_obj(text, len, "grid", &mem, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scene_load(TMP("members.obj.gz"), &gz, err, sizeof err), 0, "%s", err);
    expect_same_scene(&gz, &mem);
    scene_free(&mem);
    scene_free(&gz);
    free(text);
}

/* Loads path, which must fail with exactly message. */
static void expect_load_error(const char *path, const char *message)
{
    scene s;
    memset(&s, 0xA5, sizeof s);
    err[0] = '\0';
    cr_expect_eq(scene_load(path, &s, err, sizeof err), -1, "%s loaded", path);
    cr_expect_str_eq(err, message);
    expect_empty(&s);
}

Test(files, truncated_gzip_is_an_error)
{
    size_t len, gz_len;
    char *text = grid_obj(&len);
    write_gz(TMP("whole.obj.gz"), "wb9", text, len);
    unsigned char *gz = read_bytes(TMP("whole.obj.gz"), &gz_len);
    const size_t cuts[] = {0, 1, 2, 10, 20, gz_len / 3, gz_len / 2, gz_len - 8, gz_len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        write_bytes(TMP("cut.obj.gz"), gz, cuts[i]);
        expect_load_error(TMP("cut.obj.gz"), TMP("cut.obj.gz") ": truncated or corrupt gzip data");
    }
    free(gz);
    free(text);
}

Test(files, corrupt_gzip_is_an_error)
{
    size_t len, gz_len;
    char *text = grid_obj(&len);
    write_gz(TMP("good.obj.gz"), "wb9", text, len);
    unsigned char *gz = read_bytes(TMP("good.obj.gz"), &gz_len);

    gz[gz_len - 8] ^= 0xFF; /* CRC-32 */
    write_bytes(TMP("bad_crc.obj.gz"), gz, gz_len);
    expect_load_error(TMP("bad_crc.obj.gz"),
                      TMP("bad_crc.obj.gz") ": truncated or corrupt gzip data: incorrect data check");
    gz[gz_len - 8] ^= 0xFF;

    /* Bytes after the last member that are not another member. */
    unsigned char *tail = malloc(gz_len + 4);
    cr_assert_not_null(tail);
    memcpy(tail, gz, gz_len);
    memcpy(tail + gz_len, "junk", 4);
    write_bytes(TMP("trailing.obj.gz"), tail, gz_len + 4);
    expect_load_error(TMP("trailing.obj.gz"),
                      TMP("trailing.obj.gz") ": truncated or corrupt gzip data: incorrect header check");

    /* A ".gz" name promises gzip data. */
    write_bytes(TMP("plain_text.obj.gz"), text, len);
    expect_load_error(TMP("plain_text.obj.gz"),
                      TMP("plain_text.obj.gz") ": truncated or corrupt gzip data: incorrect header check");
    free(tail);
    free(gz);
    free(text);
}

Test(files, unreadable_files)
{
    expect_load_error(TMP("no_such_file.obj"),
                      TMP("no_such_file.obj") ": cannot open: No such file or directory");
    expect_load_error(KDA_TEST_TMPDIR, KDA_TEST_TMPDIR ": cannot read: Is a directory");
}

Test(files, errors_name_the_path_and_line)
{
    const char text[] = TRI3 "f 1 2 3\nv 1 2 3junk\n";
    write_bytes(TMP("bad.obj"), text, sizeof text - 1);
    expect_load_error(TMP("bad.obj"), TMP("bad.obj") ":5: malformed number \"3junk\"");
    write_gz(TMP("bad.obj.gz"), "wb", text, sizeof text - 1);
    expect_load_error(TMP("bad.obj.gz"), TMP("bad.obj.gz") ":5: malformed number \"3junk\"");
}

