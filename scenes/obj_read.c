/* obj_read.c - scene_load and scene_load_bytes (scene.h): a file's bytes,
 * plain or gzip-compressed, handed whole to the OBJ parser (obj.c).
 *
 * Contract: the file is read whole into memory, then inflated whole when it
 * is gzip (one or more members, nothing after them): by its magic bytes, or
 * by a name ending in ".gz" unless the bytes are plainly another format
 * (obj_sniff.h), which the parser then names.  Nothing is parsed before
 * every byte is in.  Errors, after "FILE: ": "cannot open: REASON",
 * "cannot read: REASON", "out of memory", "truncated or corrupt gzip
 * data[: zlib's reason]"; then the parser's own.  On error the scene is
 * left zeroed and nothing stays allocated.
 */
#include "scene.h"
#include "obj_sniff.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads the whole file into a malloc'ed buffer. */
static int read_file(const char *path, unsigned char **data, size_t *len,
                     char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = (size_t)1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break; /* end of file or error */
        /* Text with a NUL in its first 64 KiB is not OBJ (scene_load_bytes
         * says so): /dev/zero or a sparse file is not read on to the end. */
        if (cap == (size_t)1 << 16 && !(buf[0] == 0x1f && buf[1] == 0x8b) && memchr(buf, 0, n)) break;
        unsigned char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f), saved_errno = errno;
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (failed) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(saved_errno));
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

/* Inflates gzip data (one or more members, nothing after them) into a
 * malloc'ed buffer. */
static int gunzip(const unsigned char *in, size_t in_len, char **text, size_t *len,
                  const char *path, char *err, size_t errlen)
{
    /* The last member's size field (mod 2^32) sizes the buffer; deflate
     * expands data at most about 1032 times, which bounds a bogus one.  The
     * +1 lets the end of the stream be seen without growing. */
    size_t cap = (size_t)1 << 16;
    if (in_len >= 18) {
        const unsigned char *t = in + in_len - 4;
        size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
        if (isize / 1032 <= in_len && isize < SIZE_MAX) cap = isize + 1;
    }
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    char *buf = malloc(cap);
    if (!buf || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        free(buf);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = 0, in_pos = 0;
    int rc;
    for (;;) {
        if (n == cap) {
            char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
            if (!bigger) {
                rc = Z_MEM_ERROR;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        uInt in_chunk = in_len - in_pos < UINT_MAX ? (uInt)(in_len - in_pos) : UINT_MAX;
        uInt out_chunk = cap - n < UINT_MAX ? (uInt)(cap - n) : UINT_MAX;
        zs.next_in = (Bytef *)(in + in_pos);
        zs.avail_in = in_chunk;
        zs.next_out = (Bytef *)(buf + n);
        zs.avail_out = out_chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        in_pos += in_chunk - zs.avail_in;
        n += out_chunk - zs.avail_out;
        if (rc == Z_STREAM_END && in_pos < in_len)
            inflateReset(&zs); /* another member follows */
        else if (rc != Z_OK)
            break;
    }
    /* Z_BUF_ERROR: the input ended mid-stream (there was room for output);
     * Z_DATA_ERROR and others: corrupt data, zlib says why in msg. */
    if (rc == Z_MEM_ERROR)
        snprintf(err, errlen, "%s: out of memory", path);
    else if (rc != Z_STREAM_END && zs.msg)
        snprintf(err, errlen, "%s: truncated or corrupt gzip data: %s", path, zs.msg);
    else if (rc != Z_STREAM_END)
        snprintf(err, errlen, "%s: truncated or corrupt gzip data", path);
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int scene_load_bytes(const unsigned char *raw, size_t raw_len, const char *name, scene *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    int gzip_magic = raw_len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
    /* Bytes of another known format under a .gz name: scene_parse_obj says
     * what they are (rather than zlib's "incorrect header check"). */
    if (!gzip_magic && (!ends_with(name, ".gz") || obj_sniff_not_text(raw, raw_len, NULL, 0)))
        return scene_parse_obj((const char *)raw, raw_len, name, out, err, errlen);
    char *text;
    size_t len;
    if (gunzip(raw, raw_len, &text, &len, name, err, errlen)) return -1;
    int rc = scene_parse_obj(text, len, name, out, err, errlen);
    free(text);
    return rc;
}

int scene_load(const char *path, scene *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    unsigned char *raw;
    size_t raw_len;
    if (read_file(path, &raw, &raw_len, err, errlen)) return -1;
    int rc = scene_load_bytes(raw, raw_len, path, out, err, errlen);
    free(raw);
    return rc;
}
