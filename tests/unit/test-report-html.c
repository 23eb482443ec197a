// SPDX-License-Identifier: GPL-2.0
/*
 * report --html's page as built into memtrack: its marks, a script that
 * cannot end its own element, and a page whose names from the artifact
 * (command, comm, exe) are text.  The browser tests
 * (tests/shell/report_html*.sh) look at the page itself.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "util/report/report-html.h"
#include "check.h"

extern const char report_html_page[], report_html_script[];

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static int count_nocase(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strcasestr(s, what)); s++)
		n++;
	return n;
}

static void test_assets(void)
{
	CHECK(count(report_html_page, "@MEMTRACK_TITLE@") == 1, "one title");
	CHECK(count(report_html_page, "@MEMTRACK_DATA@") == 1, "one data");
	CHECK(count(report_html_page, "@MEMTRACK_SCRIPT@") == 1, "one script");
	CHECK(count(report_html_page, "@MEMTRACK_NONCE@") == 2, "the policy's nonce and the script's");
	CHECK(count_nocase(report_html_script, "</script") == 0, "the script never ends its element");
	CHECK(count(report_html_script, "<!--") == 0, "nor opens a comment");
	CHECK(count(report_html_script, "innerHTML") == 0, "nor writes markup");
	/* the SVG namespace is a name, not an address that is fetched */
	CHECK(count(report_html_page, "http:") == 0 && count(report_html_page, "https:") == 0 &&
	      count(report_html_page, " src=") == 0 && count(report_html_page, "url(") == 0 &&
	      count(report_html_page, "@import") == 0, "no address in the page");
	CHECK(count(report_html_script, "http:") == count(report_html_script,
							  "\"http://www.w3.org/2000/svg\"") &&
	      count(report_html_script, "https:") == 0 && count(report_html_script, "fetch(") == 0 &&
	      count(report_html_script, "XMLHttpRequest") == 0, "nor in the script");
}

static void test_names(void)
{
	static const char evil[] = "</title><script>alert(1)</script>";
	struct report_process *p;
	struct report_summary s;
	struct report_html h = { .version = "test" };
	char *page = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(!report_summary__init(&s, NULL), "init");
	s.has_meta = true;
	s.meta.command = strdup(evil);
	s.nr_procs = 1;
	s.procs_cap = 1;
	s.procs = calloc(1, sizeof(*s.procs));
	p = &s.procs[0];
	p->pid = 7;
	p->comm = strdup(evil);
	p->exe = strdup("/bin/\"x\"");
	h.run[0] = (struct report_html_run){ .path = "a&b.msgpack", .s = &s };
	f = open_memstream(&page, &len);
	CHECK(!report_html__write(f, &h), "write");
	fclose(f);
	CHECK(count(page, "<title>memtrack: &lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>") == 1,
	      "the title as text");
	CHECK(count(page, "<script") == 2 && count(page, "</script") == 2, "our two scripts only");
	CHECK(count(page, "\\u003c/title\\u003e\\u003cscript\\u003ealert(1)") == 2, "command and comm in the data");
	CHECK(count(page, "a\\u0026b.msgpack") == 1, "the path too");
	CHECK(count(page, "\"exe\":\"/bin/\\\"x\\\"\"") == 1, "quotes escaped as JSON");
	free(page);
	report_summary__exit(&s);
}

int main(void)
{
	test_assets();
	test_names();
	return test_done("test-report-html");
}
