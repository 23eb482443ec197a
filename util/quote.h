/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_QUOTE_H
#define MEMTRACK_QUOTE_H

/*
 * Strings from artifacts, stats files and file names are data: they reach
 * a terminal, a gnuplot script, JSON or HTML only through these, one per
 * output language.  memtrack runs as root on files other users made.
 */

#include <stddef.h>
#include <stdio.h>

/*
 * gnuplot: s as a string expression of single-quoted literals.  In single
 * quotes gnuplot expands neither backquotes nor @macros and reads
 * backslashes as they are; a quote is written apart, as "'" joined with
 * '.' ('it' . "'" . 's').  Control characters are dropped (a newline would
 * end the command) and bytes that are not UTF-8 become '?'.
 */
void quote_gnuplot(FILE *out, const char *s);

/*
 * A terminal: s itself when it is printable UTF-8 without '"' or '\';
 * otherwise a copy in double quotes with C escapes, as git quotes paths:
 * "a\033[2Jb\n", invalid bytes as \xHH, C1 controls and bidirectional
 * overrides as \uHHHH.  The copy stays valid for the next QUOTE_TERM_SLOTS
 * calls (NULL for NULL; "?" when out of memory).
 */
#define QUOTE_TERM_SLOTS	8
const char *quote_term(const char *s);

/*
 * The same escapes without the quotes, in place of what they stand for, for
 * a message made of our words and other people's strings; dst always ends
 * with a NUL, cut at size - 1 bytes.
 */
void quote_term_escape(char *dst, size_t size, const char *src);
/* the same, written to out: for lines made of names, such as folded stacks */
void quote_term_fputs(const char *s, FILE *out);

/* true when s[0..len) is valid UTF-8 (RFC 3629: no overlong form, no surrogate) */
int utf8_valid(const char *s, size_t len);

/*
 * JSON: a copy of s in which every byte that is not part of valid UTF-8 is
 * U+FFFD, or NULL when s is valid (errno 0) or memory ran out (ENOMEM); for
 * cJSON's output, which passes bytes >= 0x80 through as they are.
 */
char *utf8_repair(const char *s);

/* JSON: s as a string literal, valid UTF-8 whatever s holds (as above) */
void quote_json(FILE *out, const char *s);

/*
 * HTML: s as text, or as the value of an attribute in quotes: & < > " '
 * as character references; control characters (but tab and newline) and
 * bytes that are not UTF-8 as U+FFFD.
 */
void quote_html(FILE *out, const char *s);

/*
 * HTML: JSON text (cJSON's) as the content of a <script> element: '<', '>'
 * and '&' as \u escapes, so that no "</script" or "<!--" in a string ends
 * or changes the element, and U+2028, U+2029 too; bytes that are not UTF-8
 * as \ufffd.  These stand only inside strings of JSON, where the escapes
 * mean the same characters.
 */
void quote_html_script(FILE *out, const char *json);

#endif
