/* obj_lex.h - the lexical classes of OBJ text that the statement parser
 * (obj.c) and the number parser (obj_number.c) share.
 *
 * Invariants: blanks are space, tab, CR, VT and FF (so CRLF text reads like
 * LF text); LF ends a line; a token (a keyword, a number, a face corner)
 * ends at a blank, a LF, a backslash (which may continue the line) or the
 * end of the text.  Nothing here reads past `end`. */
#ifndef KDA_OBJ_LEX_H
#define KDA_OBJ_LEX_H

static inline int obj_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* True where a number or face corner may end: a blank, the end of the line or
 * text, or a backslash (which the statement parser treats as a continuation). */
static inline int obj_at_token_end(const char *p, const char *end)
{
    return p == end || obj_is_blank(*p) || *p == '\n' || *p == '\\';
}

#endif
