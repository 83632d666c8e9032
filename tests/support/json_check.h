/* json_check.h - checking what a program prints with --json.
 *
 * Contract: expect_json passes when the text is exactly one JSON object
 * (blanks around it allowed) whose numbers are all finite: "nan", "inf"
 * and "-inf", which printf writes for non-finite doubles, are not JSON and
 * fail, as does anything after the object.  It checks through Criterion's
 * cr_expect, so it is called from tests only; `what` names the output in
 * the message. */
#ifndef KDA_JSON_CHECK_H
#define KDA_JSON_CHECK_H

void expect_json(const char *text, const char *what);

#endif
