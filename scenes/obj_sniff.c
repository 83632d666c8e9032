/* obj_sniff.c - recognising bytes that are not OBJ text (obj_sniff.h). */
#include "obj_sniff.h"

#include <stdio.h>
#include <string.h>

/* Magic numbers of formats a scene file is mistaken for (obj_sniff.h says
 * why none of them starts an OBJ file). */
static const struct magic {
    const char *bytes;
    size_t len;
    const char *name;
} magics[] = {
    {"\x89PNG\r\n\x1a\n", 8, "a PNG image"},
    {"\xff\xd8\xff", 3, "a JPEG image"},
    {"GIF8", 4, "a GIF image"},
    {"%PDF-", 5, "a PDF document"},
    {"\x7f" "ELF", 4, "an ELF binary (a program or library)"},
    {"\x1f\x8b", 2, "gzip data"},
    {"PK\x03\x04", 4, "a zip archive"},
    {"\xfd" "7zXZ", 5, "xz data"},
    {"\x28\xb5\x2f\xfd", 4, "zstd data"},
    {"\xff\xfe", 2, "UTF-16 text (OBJ is read as ASCII or UTF-8)"},
    {"\xfe\xff", 2, "UTF-16 text (OBJ is read as ASCII or UTF-8)"},
};

int obj_sniff_not_text(const unsigned char *p, size_t n, char *what, size_t whatlen)
{
    for (size_t k = 0; k < sizeof magics / sizeof *magics; k++)
        if (n >= magics[k].len && memcmp(p, magics[k].bytes, magics[k].len) == 0) {
            if (what) snprintf(what, whatlen, "starts like %s", magics[k].name);
            return 1;
        }
    const unsigned char *nul = memchr(p, 0, n < OBJ_SNIFF_BYTES ? n : OBJ_SNIFF_BYTES);
    if (!nul) return 0;
    if (what) snprintf(what, whatlen, "holds a NUL byte at offset %zu (binary data)", (size_t)(nul - p));
    return 1;
}
