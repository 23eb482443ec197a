// SPDX-License-Identifier: GPL-2.0
/*
 * The escaping helpers: what a string from a file becomes in a gnuplot
 * script, on a terminal, in JSON and in HTML.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "util/quote.h"

static char *gnuplot_of(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	quote_gnuplot(f, s);
	fclose(f);
	return text;
}

static char *json_of(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	quote_json(f, s);
	fclose(f);
	return text;
}

static char *html_of(void (*quote)(FILE *, const char *), const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	quote(f, s);
	fclose(f);
	return text;
}

#define CHECK_HTML(fn, in, want) do {					\
	char *__t = html_of(fn, in);					\
	CHECK_STR(__t, want, #fn);					\
	free(__t);							\
} while (0)

#define CHECK_GNUPLOT(in, want) do {					\
	char *__t = gnuplot_of(in);					\
	CHECK_STR(__t, want, "gnuplot");				\
	free(__t);							\
} while (0)

#define CHECK_JSON(in, want) do {					\
	char *__t = json_of(in);					\
	CHECK_STR(__t, want, "json");					\
	free(__t);							\
} while (0)

static void test_gnuplot(void)
{
	CHECK_GNUPLOT("sort", "'sort'");
	/* gnuplot reads '''a' as '' then junk: a quote is never doubled */
	CHECK_GNUPLOT("it's", "'it' . \"'\" . 's'");
	CHECK_GNUPLOT("'a", "'' . \"'\" . 'a'");
	CHECK_GNUPLOT("''", "'' . \"'\" . '' . \"'\" . ''");
	/* inert in single quotes: kept as they are */
	CHECK_GNUPLOT("a`touch pw`b", "'a`touch pw`b'");
	CHECK_GNUPLOT("@x \\n \"", "'@x \\n \"'");
	/* a newline would end the command: the rest stays in the string */
	CHECK_GNUPLOT("x\nEOD\nsystem('touch pw')",
		      "'xEODsystem(' . \"'\" . 'touch pw' . \"'\" . ')'");
	CHECK_GNUPLOT("a\rb\tc\033d\x7f" "e\xc2\x9b" "f", "'abcdef'");
	CHECK_GNUPLOT("caf\xc3\xa9", "'caf\xc3\xa9'");
	CHECK_GNUPLOT("bad\xff\xc3", "'bad?" "?'");
}

static void test_term(void)
{
	const char *plain = "sort -n /usr/bin/sort";

	CHECK(quote_term(plain) == plain, "plain text is not copied");
	CHECK(quote_term(NULL) == NULL);
	CHECK_STR(quote_term("caf\xc3\xa9"), "caf\xc3\xa9", "UTF-8 stays");
	CHECK_STR(quote_term("a\033[2Jb"), "\"a\\033[2Jb\"", "ESC");
	CHECK_STR(quote_term("two\nlines\t"), "\"two\\nlines\\t\"", "newline, tab");
	CHECK_STR(quote_term("q\"b\\"), "\"q\\\"b\\\\\"", "quote, backslash");
	CHECK_STR(quote_term("x\xff\xc2\x9b"), "\"x\\xff\\u009b\"", "invalid, C1");
	CHECK_STR(quote_term("ab\xe2\x80\xae" "cd"), "\"ab\\u202ecd\"", "bidi override");
	CHECK_STR(quote_term("\x01\x7f"), "\"\\x01\\x7f\"", "other controls");
}

static void test_term_slots(void)
{
	const char *first = quote_term("1\n");
	int i;

	for (i = 1; i < QUOTE_TERM_SLOTS; i++)
		quote_term("other\n");
	CHECK_STR(first, "\"1\\n\"", "a copy lasts QUOTE_TERM_SLOTS calls");
}

static void test_term_escape(void)
{
	char buf[16];

	quote_term_escape(buf, sizeof(buf), "pid 7 (a\nb)");
	CHECK_STR(buf, "pid 7 (a\\nb)", "escaped in place, no quotes");
	quote_term_escape(buf, 7, "abc\033def");
	CHECK_STR(buf, "abc", "an escape is never cut in half");
}

static void test_json(void)
{
	char *fixed;

	CHECK_JSON("a\"b\\c\nd\x01", "\"a\\\"b\\\\c\\u000ad\\u0001\"");
	CHECK_JSON("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	CHECK_JSON("x\xff" "y\xed\xa0\x80" "z", "\"x\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz\"");
	CHECK_JSON("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"");	/* overlong '/' */

	CHECK(utf8_repair("valid \xe2\x82\xac") == NULL && errno == 0);
	fixed = utf8_repair("\xf5 and \xf0\x9f\x98");
	CHECK_STR(fixed, "\xef\xbf\xbd and \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "repair");
	CHECK(fixed && utf8_valid(fixed, strlen(fixed)));
	free(fixed);
	CHECK(utf8_valid("\xf4\x8f\xbf\xbf", 4), "U+10FFFF");
	CHECK(!utf8_valid("\xf4\x90\x80\x80", 4), "past U+10FFFF");
}

static void test_html(void)
{
	CHECK_HTML(quote_html, "<script>alert('x')</script>",
		   "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
	CHECK_HTML(quote_html, "a&b=\"c\"", "a&amp;b=&quot;c&quot;");
	CHECK_HTML(quote_html, "caf\xc3\xa9\ttab\nline", "caf\xc3\xa9\ttab\nline");
	CHECK_HTML(quote_html, "\x1b[2J\xff", "\xef\xbf\xbd[2J\xef\xbf\xbd");

	/* the JSON of a string that would end the script element */
	CHECK_HTML(quote_html_script, "{\"s\":\"</script><script>alert(1)</script>\"}",
		   "{\"s\":\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"}");
	CHECK_HTML(quote_html_script, "[\"<!--\",\"a&b\"]", "[\"\\u003c!--\",\"a\\u0026b\"]");
	CHECK_HTML(quote_html_script, "\"\xe2\x80\xa8\xe2\x80\xa9\xff\"", "\"\\u2028\\u2029\\ufffd\"");
	CHECK_HTML(quote_html_script, "{\"n\":[1,2.5,null]}", "{\"n\":[1,2.5,null]}");
}

int main(void)
{
	test_gnuplot();
	test_term();
	test_term_slots();
	test_term_escape();
	test_json();
	test_html();
	return test_done("test-quote");
}
