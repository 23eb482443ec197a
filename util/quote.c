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

/* one character of a string, or one byte that starts none */
struct utf8_char {
	const unsigned char *p;
	size_t n;		/* its bytes; 1 for an invalid byte */
	uint32_t cp;
	bool valid;
};

struct utf8_iter {
	const unsigned char *p;
	size_t len;
};

static struct utf8_iter utf8_iter(const char *s, size_t len)
{
	return (struct utf8_iter){ (const unsigned char *)s, len };
}

/* the next character into *c; false at the end */
static bool utf8_next(struct utf8_iter *it, struct utf8_char *c)
{
	if (!it->len)
		return false;
	c->p = it->p;
	c->n = utf8_seq(it->p, it->len, &c->cp);
	c->valid = c->n != 0;
	if (!c->valid)
		c->n = 1;
	it->p += c->n;
	it->len -= c->n;
	return true;
}

int utf8_valid(const char *s, size_t len)
{
	struct utf8_iter it = utf8_iter(s, len);
	struct utf8_char c;

	while (utf8_next(&it, &c))
		if (!c.valid)
			return 0;
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
	struct utf8_iter it = utf8_iter(s, strlen(s));
	struct utf8_char c;

	fputc('\'', out);
	while (utf8_next(&it, &c)) {
		if (!c.valid)
			fputc('?', out);
		else if (c.cp == '\'')
			fputs("' . \"'\" . '", out);
		else if (c.cp >= 0x20 && c.cp != 0x7f && (c.cp < 0x80 || c.cp > 0x9f))
			fwrite(c.p, 1, c.n, out);
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
	struct utf8_iter it = utf8_iter(s, strlen(s));
	struct utf8_char c;

	while (utf8_next(&it, &c))
		if (!c.valid || term_unsafe(c.cp) || c.cp == '"' || c.cp == '\\')
			return true;
	return false;
}

/* the escape of one character or invalid byte, into buf (at least 8 bytes) */
static size_t term_escape_one(char *buf, const struct utf8_char *c, bool quoting)
{
	static const char names[] = "abtnvfr";
	uint32_t cp = c->cp;

	if (!c->valid)
		return sprintf(buf, "\\x%02x", c->p[0]);
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
	memcpy(buf, c->p, c->n);
	return c->n;
}

static size_t escape_into(char *dst, size_t size, const char *src, bool quoting)
{
	struct utf8_iter it = utf8_iter(src, strlen(src));
	struct utf8_char c;
	size_t used = 0, k;
	char buf[16];

	while (utf8_next(&it, &c)) {
		k = term_escape_one(buf, &c, quoting);
		if (used + k >= size)
			break;
		memcpy(dst + used, buf, k);
		used += k;
	}
	dst[used] = '\0';
	return used;
}

void quote_term_fputs(const char *s, FILE *out)
{
	struct utf8_iter it = utf8_iter(s, strlen(s));
	struct utf8_char c;
	char buf[16];

	while (utf8_next(&it, &c))
		fwrite(buf, 1, term_escape_one(buf, &c, false), out);
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
	size_t len = strlen(s), used = 0;
	struct utf8_iter it = utf8_iter(s, len);
	struct utf8_char c;
	char *out;

	errno = 0;
	if (utf8_valid(s, len))
		return NULL;
	out = malloc(len * 3 + 1);	/* U+FFFD is 3 bytes */
	if (!out)
		return NULL;
	while (utf8_next(&it, &c)) {
		if (c.valid) {
			memcpy(out + used, c.p, c.n);
			used += c.n;
		} else {
			memcpy(out + used, "\xef\xbf\xbd", 3);
			used += 3;
		}
	}
	out[used] = '\0';
	return out;
}

void quote_json(FILE *out, const char *s)
{
	struct utf8_iter it = utf8_iter(s, strlen(s));
	struct utf8_char c;

	fputc('"', out);
	while (utf8_next(&it, &c)) {
		if (!c.valid)
			fputs("\xef\xbf\xbd", out);
		else if (c.cp == '"' || c.cp == '\\')
			fprintf(out, "\\%c", (char)c.cp);
		else if (c.cp < 0x20 || c.cp == 0x7f)
			fprintf(out, "\\u%04x", c.cp);
		else
			fwrite(c.p, 1, c.n, out);
	}
	fputc('"', out);
}

void quote_html(FILE *out, const char *s)
{
	struct utf8_iter it = utf8_iter(s, strlen(s));
	struct utf8_char c;

	while (utf8_next(&it, &c)) {
		if (!c.valid || (c.cp < 0x20 && c.cp != '\t' && c.cp != '\n') || c.cp == 0x7f)
			fputs("\xef\xbf\xbd", out);
		else if (c.cp == '&')
			fputs("&amp;", out);
		else if (c.cp == '<')
			fputs("&lt;", out);
		else if (c.cp == '>')
			fputs("&gt;", out);
		else if (c.cp == '"')
			fputs("&quot;", out);
		else if (c.cp == '\'')
			fputs("&#39;", out);
		else
			fwrite(c.p, 1, c.n, out);
	}
}

void quote_html_script(FILE *out, const char *json)
{
	struct utf8_iter it = utf8_iter(json, strlen(json));
	struct utf8_char c;

	while (utf8_next(&it, &c)) {
		if (!c.valid)
			fputs("\\ufffd", out);
		else if (c.cp == '<' || c.cp == '>' || c.cp == '&' ||
			 c.cp == 0x2028 || c.cp == 0x2029)
			fprintf(out, "\\u%04x", c.cp);
		else
			fwrite(c.p, 1, c.n, out);
	}
}
