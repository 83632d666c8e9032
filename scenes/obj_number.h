/* obj_number.h - the numbers of OBJ text (obj_number.c): decimal
 * coordinates converted to float exactly as strtof does, and the integer
 * indices of face corners.
 *
 * Contract: a coordinate is [+-]digits[.digits][(e|E)[+-]digits] with at
 * least one mantissa digit, ending at a token end (obj_lex.h); nothing else
 * is a number ("nan", "inf" and hexadecimal floats are malformed).  Its
 * float is strtof's (round to nearest, underflow to a subnormal or zero);
 * one beyond the float range is refused, never infinite.  Nothing is read
 * past `end`; on failure the output is left as it was. */
#ifndef KDA_OBJ_NUMBER_H
#define KDA_OBJ_NUMBER_H

#include <stdint.h>

enum obj_num_status { OBJ_NUM_OK, OBJ_NUM_MALFORMED, OBJ_NUM_OVERFLOW, OBJ_NUM_NOMEM };

/* Parses the coordinate at *pp (it must end at a token end) into *out and
 * advances *pp past it. */
enum obj_num_status obj_parse_float(const char **pp, const char *end, float *out);

/* True if the token [p, p+n) spells an infinity or NaN, as strtof reads them
 * ("inf", "-Infinity", "nan"...), so that a message can say why it is refused. */
int obj_names_nonfinite(const char *p, int n);

/* Reads an optional '-' and at least one digit into *value (saturated far
 * beyond any valid index, its sign kept); returns the position after them,
 * or NULL if there are no digits.  What follows is the caller's to check. */
const char *obj_scan_index(const char *p, const char *end, int64_t *value);

#endif
