/* obj_sniff.h - recognising bytes that are not OBJ text, so that the OBJ
 * loader says what a file is (a PNG image, an ELF binary, binary data)
 * instead of "no triangles" or a line error about its bytes.
 *
 * Invariants: only the first OBJ_SNIFF_BYTES bytes are looked at; an answer
 * of 0 never rules a file out (the parser decides); an answer of 1 is only
 * given for bytes OBJ text does not hold (a NUL byte) or start with (a
 * known format's magic number: binary, or for GIF and PDF an ASCII word no
 * OBJ writer puts first). */
#ifndef KDA_OBJ_SNIFF_H
#define KDA_OBJ_SNIFF_H

#include <stddef.h>

#define OBJ_SNIFF_BYTES 4096

/* Returns 1 and writes into what (at most whatlen bytes) how the bytes look
 * ("starts like a PNG image", "holds a NUL byte at offset 12 (binary
 * data)"), or returns 0 when they may be OBJ text.  what may be NULL. */
int obj_sniff_not_text(const unsigned char *p, size_t n, char *what, size_t whatlen);

#endif
