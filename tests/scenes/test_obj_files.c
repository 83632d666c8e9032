/* test_obj_files.c - loading OBJ files: plain, gzip, gzip content under a
 * plain name (sniffed), gzip of several members; truncated and corrupt
 * gzip, missing and unreadable files, empty files, files that are not OBJ
 * text (a PNG, an ELF binary, binary data, endless zeros) said to be so, and errors that
 * name the path and line.
 *
 * Oracles: the scene parsed from the same text in memory, compared field
 * by field, and the exact message of every error. */
#include <errno.h>
#include <unistd.h>
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

Test(files, empty_files_say_so)
{
    write_bytes(TMP("empty.obj"), "", 0);
    expect_load_error(TMP("empty.obj"), TMP("empty.obj") ": the file is empty");
    write_gz(TMP("empty.obj.gz"), "wb", "", 0); /* a whole gzip file of no bytes */
    expect_load_error(TMP("empty.obj.gz"), TMP("empty.obj.gz") ": the file is empty");
}

/* The first bytes of a PNG file: signature and the start of IHDR.  Its
 * lines (split at the LF in the signature) are no OBJ statement, so
 * without the sniffing this was "no triangles". */
static const unsigned char png_head[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D',
                                         'R',  0,   0,   1,   0,    0,    0,    1,    0, 8, 2, 0,  0,  0};

Test(files, a_png_is_not_an_obj_file)
{
#define LOOKS_LIKE_PNG ": does not look like an OBJ file: it starts like a PNG image"
    write_bytes(TMP("image.obj"), png_head, sizeof png_head);
    expect_load_error(TMP("image.obj"), TMP("image.obj") LOOKS_LIKE_PNG);
    /* under a .gz name, and gzip-compressed */
    write_bytes(TMP("image_named.obj.gz"), png_head, sizeof png_head);
    expect_load_error(TMP("image_named.obj.gz"), TMP("image_named.obj.gz") LOOKS_LIKE_PNG);
    write_gz(TMP("image.obj.gz"), "wb", (const char *)png_head, sizeof png_head);
    expect_load_error(TMP("image.obj.gz"), TMP("image.obj.gz") LOOKS_LIKE_PNG);
#undef LOOKS_LIKE_PNG
}

Test(files, an_elf_binary_is_not_an_obj_file)
{
    /* An ELF header's first bytes: magic, 64-bit, little-endian, version 1. */
    static const unsigned char elf_head[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0x3e, 0};
    write_bytes(TMP("program.obj"), elf_head, sizeof elf_head);
    expect_load_error(TMP("program.obj"), TMP("program.obj") ": does not look like an OBJ file: "
                                                             "it starts like an ELF binary (a program or library)");
}

/* A NUL byte means binary data, wherever a file of no known format has it
 * among its first bytes; even one that starts like OBJ text. */
Test(files, binary_data_is_not_an_obj_file)
{
    static const char text[] = TRI3 "f 1 2 3\n\0\x01\x02";
    write_bytes(TMP("binary.obj"), text, sizeof text - 1);
    expect_load_error(TMP("binary.obj"), TMP("binary.obj") ": does not look like an OBJ file: "
                                                           "it holds a NUL byte at offset 32 (binary data)");
}

/* Endless or enormous zeros (/dev/zero; a sparse file of 64 GiB) are
 * refused after their first bytes, not read to the end (which would take
 * all memory, or never come). */
Test(files, zeros_without_end_are_refused_at_once, .timeout = 20)
{
    expect_load_error("/dev/zero", "/dev/zero: does not look like an OBJ file: it holds a NUL byte at offset 0 "
                                   "(binary data)");
    FILE *f = fopen(TMP("sparse.obj"), "wb");
    cr_assert_not_null(f);
    cr_assert_eq(ftruncate(fileno(f), (off_t)64 << 30), 0, "ftruncate: %s", strerror(errno));
    fclose(f);
    expect_load_error(TMP("sparse.obj"), TMP("sparse.obj") ": does not look like an OBJ file: it holds a NUL byte "
                                                           "at offset 0 (binary data)");
    unlink(TMP("sparse.obj"));
}

