// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/quote.h"

/*
 * The length of the UTF-8 sequence at s (1 to 4) with its code point in
 * *cp, or 0 when the byte at s does not start a valid one.
 */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

int utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	while (len) {
		n = utf8_seq(p, len, &cp);
		if (!n)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/*
 * gnuplot 5.4 reads a single-quoted string that starts with '' as an empty
 * one, so that '''a' is a syntax error: a quote is never doubled but
 * written apart, "'" joined with '.', and no single-quoted literal ever
 * holds a quote.
 */
void quote_gnuplot(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;
	uint32_t cp;

	fputc('\'', out);
	while (len) {
		n = utf8_seq(p, len, &cp);
		if (!n) {
			fputc('?', out);
			n = 1;
		} else if (cp == '\'') {
			fputs("' . \"'\" . '", out);
		} else if (cp >= 0x20 && cp != 0x7f && (cp < 0x80 || cp > 0x9f)) {
			fwrite(p, 1, n, out);
		}
		p += n;
		len -= n;
	}
	fputc('\'', out);
}

/* what a terminal must not be given as it is: controls, and text that reorders lines */
static bool term_unsafe(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static bool needs_quotes(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;
	uint32_t cp;

	while (len) {
		n = utf8_seq(p, len, &cp);
		if (!n || term_unsafe(cp) || cp == '"' || cp == '\\')
			return true;
		p += n;
		len -= n;
	}
	return false;
}

/* the escape of one character or invalid byte, into buf (at least 8 bytes) */
static size_t term_escape_one(char *buf, const unsigned char *p, size_t n, uint32_t cp,
			      bool quoting)
{
	static const char names[] = "abtnvfr";

	if (!n)
		return sprintf(buf, "\\x%02x", p[0]);
	if (cp >= '\a' && cp <= '\r')
		return sprintf(buf, "\\%c", names[cp - '\a']);
	if (cp == 0x1b)
		return sprintf(buf, "\\033");
	if (cp < 0x20 || cp == 0x7f)
		return sprintf(buf, "\\x%02x", cp);
	if (term_unsafe(cp))
		return sprintf(buf, "\\u%04x", cp);
	if (quoting && (cp == '"' || cp == '\\'))
		return sprintf(buf, "\\%c", (char)cp);
	memcpy(buf, p, n);
	return n;
}

static size_t escape_into(char *dst, size_t size, const char *src, bool quoting)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t len = strlen(src), used = 0, n, k;
	uint32_t cp = 0;
	char buf[16];

	while (len) {
		n = utf8_seq(p, len, &cp);
		k = term_escape_one(buf, p, n, cp, quoting);
		if (used + k >= size)
			break;
		memcpy(dst + used, buf, k);
		used += k;
		n = n ? n : 1;
		p += n;
		len -= n;
	}
	dst[used] = '\0';
	return used;
}

void quote_term_fputs(const char *s, FILE *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;
	uint32_t cp = 0;
	char buf[16];

	while (len) {
		n = utf8_seq(p, len, &cp);
		fwrite(buf, 1, term_escape_one(buf, p, n, cp, false), out);
		n = n ? n : 1;
		p += n;
		len -= n;
	}
}

void quote_term_escape(char *dst, size_t size, const char *src)
{
	if (size)
		escape_into(dst, size, src, false);
}

const char *quote_term(const char *s)
{
	static char *slots[QUOTE_TERM_SLOTS];
	static unsigned int next;
	size_t size;
	char *q;

	if (!s || !needs_quotes(s))
		return s;
	/* at most 6 bytes ("\u202e") for each byte of s, and the quotes */
	size = strlen(s) * 6 + 3;
	q = realloc(slots[next], size);
	if (!q)
		return "?";
	slots[next] = q;
	next = (next + 1) % QUOTE_TERM_SLOTS;
	q[0] = '"';
	size = 1 + escape_into(q + 1, size - 2, s, true);
	q[size] = '"';
	q[size + 1] = '\0';
	return q;
}

char *utf8_repair(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n, used = 0;
	uint32_t cp;
	char *out;

	errno = 0;
	if (utf8_valid(s, len))
		return NULL;
	out = malloc(len * 3 + 1);	/* U+FFFD is 3 bytes */
	if (!out)
		return NULL;
	while (len) {
		n = utf8_seq(p, len, &cp);
		if (n) {
			memcpy(out + used, p, n);
			used += n;
		} else {
			memcpy(out + used, "\xef\xbf\xbd", 3);
			used += 3;
			n = 1;
		}
		p += n;
		len -= n;
	}
	out[used] = '\0';
	return out;
}

void quote_json(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;
	uint32_t cp;

	fputc('"', out);
	while (len) {
		n = utf8_seq(p, len, &cp);
		if (!n)
			fputs("\xef\xbf\xbd", out);
		else if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (char)cp);
		else if (cp < 0x20 || cp == 0x7f)
			fprintf(out, "\\u%04x", cp);
		else
			fwrite(p, 1, n, out);
		n = n ? n : 1;
		p += n;
		len -= n;
	}
	fputc('"', out);
}

void quote_html(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;
	uint32_t cp;

	while (len) {
		n = utf8_seq(p, len, &cp);
		if (!n || (cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7f)
			fputs("\xef\xbf\xbd", out);
		else if (cp == '&')
			fputs("&amp;", out);
		else if (cp == '<')
			fputs("&lt;", out);
		else if (cp == '>')
			fputs("&gt;", out);
		else if (cp == '"')
			fputs("&quot;", out);
		else if (cp == '\'')
			fputs("&#39;", out);
		else
			fwrite(p, 1, n, out);
		n = n ? n : 1;
		p += n;
		len -= n;
	}
}

void quote_html_script(FILE *out, const char *json)
{
	const unsigned char *p = (const unsigned char *)json;
	size_t len = strlen(json), n;
	uint32_t cp;

	while (len) {
		n = utf8_seq(p, len, &cp);
		if (!n)
			fputs("\\ufffd", out);
		else if (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029)
			fprintf(out, "\\u%04x", cp);
		else
			fwrite(p, 1, n, out);
		n = n ? n : 1;
		p += n;
		len -= n;
	}
}
