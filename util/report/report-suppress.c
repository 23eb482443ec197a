// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/quote.h"
#include "util/report/report-suppress.h"
#include "util/util.h"

#define SUPPRESSIONS_MAX_FILE	(16u << 20)
#define NO_RULE			UINT32_MAX

struct rule {
	struct report_suppression_rule r;
	char *pattern;			/* NULL for a built-in rule */
	bool (*matches)(const struct report_frame *const *frames, uint32_t nr);
};

struct report_suppressions {
	struct rule *rules;
	size_t nr, cap;
	uint32_t *site_rule;		/* call site -> rule index, or NO_RULE */
	size_t nr_sites, cap_sites;
};

/* ---- patterns ---------------------------------------------------------------- */

/* p[0..plen) against s, '*' any run; open ends: as if p began or ended with '*' */
static bool glob(const char *p, size_t plen, const char *s, bool open_start, bool open_end)
{
	const char *back_s = open_start ? s : NULL;
	size_t pi = 0, back_p = 0;

	for (;;) {
		if (pi < plen && p[pi] == '*') {
			back_p = ++pi;
			back_s = s;
			continue;
		}
		if (pi == plen && (open_end || !*s))
			return true;
		if (pi < plen && *s && p[pi] == *s) {
			pi++;
			s++;
			continue;
		}
		/* a mismatch: the last '*' takes one more character */
		if (!back_s || !*back_s)
			return false;
		pi = back_p;
		s = ++back_s;
	}
}

bool suppression_pattern__match(const char *pattern, const char *s)
{
	bool start = pattern[0] == '^';
	size_t len;

	if (!s || !*s)
		return false;
	pattern += start;
	len = strlen(pattern);
	if (len && pattern[len - 1] == '$')
		return glob(pattern, len - 1, s, !start, false);
	return glob(pattern, len, s, !start, true);
}

/* ---- built-in rules ---------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool symbol_known(const struct report_frame *f)
{
	return f->symbol && f->symbol[0] != '[';
}

/* the dynamic loader running a library's constructors */
static bool loader_init(const struct report_frame *f)
{
	if (f->symbol && (!strcmp(f->symbol, "call_init") || !strcmp(f->symbol, "_dl_init")))
		return true;
	return f->module && !strncmp(base_name(f->module), "ld-", 3);
}

/*
 * libstdc++'s emergency pool for exceptions thrown when malloc fails
 * (libsupc++/eh_alloc.cc), allocated once by the library's constructor and
 * never freed: 72704 bytes with GCC 12 on x86-64.  The constructor is not
 * an exported symbol: without debug info its frame is libstdc++ with no
 * symbol, and its caller the dynamic loader (or nothing: a frame-pointer
 * walk does not get past libstdc++).  Exported functions of libstdc++
 * (std::string's, operator new) have their names, and do not match.
 */
static bool libstdcxx_emergency_pool(const struct report_frame *const *frames, uint32_t nr)
{
	const struct report_frame *f = nr ? frames[0] : NULL;

	if (!f || !f->module || !strstr(base_name(f->module), "libstdc++.so"))
		return false;
	if (f->file && strstr(f->file, "eh_alloc.cc"))
		return true;
	if (symbol_known(f))
		return false;
	return nr == 1 || loader_init(frames[1]);
}

static const struct {
	const char *name;
	bool (*matches)(const struct report_frame *const *frames, uint32_t nr);
} defaults[] = {
	{ "libstdc++'s emergency exception pool", libstdcxx_emergency_pool },
};

/* ---- the rules ---------------------------------------------------------------- */

static struct rule *add_rule(struct report_suppressions *sup)
{
	struct rule *r;

	if (grow_array((void **)&sup->rules, &sup->cap, sup->nr + 1, sizeof(*sup->rules)))
		return NULL;
	r = &sup->rules[sup->nr++];
	memset(r, 0, sizeof(*r));
	return r;
}

struct report_suppressions *report_suppressions__new(bool with_defaults)
{
	struct report_suppressions *sup = calloc(1, sizeof(*sup));
	size_t i;

	if (!sup)
		return NULL;
	for (i = 0; with_defaults && i < ARRAY_SIZE(defaults); i++) {
		struct rule *r = add_rule(sup);

		if (!r) {
			report_suppressions__delete(sup);
			return NULL;
		}
		r->r.text = defaults[i].name;
		r->r.source = "built in";
		r->matches = defaults[i].matches;
	}
	return sup;
}

void report_suppressions__delete(struct report_suppressions *sup)
{
	size_t i;

	if (!sup)
		return;
	for (i = 0; i < sup->nr; i++) {
		if (sup->rules[i].pattern) {
			free(sup->rules[i].pattern);
			free((char *)sup->rules[i].r.source);
		}
	}
	free(sup->rules);
	free(sup->site_rule);
	free(sup);
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

/* one line of a file: nothing, or a leak: rule */
static int parse_line(struct report_suppressions *sup, char *line, const char *source,
		      unsigned int n, char *err, size_t errlen)
{
	char *text = trim(line), *colon, *pattern;
	struct rule *r;

	if (!*text || *text == '#')
		return 0;
	colon = strchr(text, ':');
	if (!colon) {
		snprintf(err, errlen, "%s:%u: expected leak:<pattern>, not '%.64s'", source, n,
			 text);
		return -EINVAL;
	}
	*colon = 0;
	if (strcmp(trim(text), "leak")) {
		snprintf(err, errlen, "%s:%u: unknown suppression type '%.32s' (only leak: "
			 "suppressions apply to memtrack)", source, n, trim(text));
		return -EINVAL;
	}
	pattern = trim(colon + 1);
	if (!*pattern) {
		snprintf(err, errlen, "%s:%u: leak: without a pattern", source, n);
		return -EINVAL;
	}
	r = add_rule(sup);
	if (!r)
		return -ENOMEM;
	r->pattern = strdup(pattern);
	r->r.source = strdup(source);
	r->r.line = n;
	r->r.text = r->pattern;
	if (!r->pattern || !r->r.source) {
		free(r->pattern);
		free((char *)r->r.source);
		sup->nr--;
		return -ENOMEM;
	}
	return 0;
}

int report_suppressions__parse(struct report_suppressions *sup, const char *text,
			       const char *source, char *err, size_t errlen)
{
	char *copy = strdup(text), *line, *next;
	unsigned int n = 0;
	int ret = 0;

	if (!copy)
		ret = -ENOMEM;
	for (line = copy; !ret && line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		ret = parse_line(sup, line, source, ++n, err, errlen);
	}
	free(copy);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return ret;
}

int report_suppressions__read(struct report_suppressions *sup, const char *path,
			      char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return ret;
	}
	text = malloc(SUPPRESSIONS_MAX_FILE + 1);
	if (text)
		len = fread(text, 1, SUPPRESSIONS_MAX_FILE + 1, f);
	if (!text || ferror(f) || len > SUPPRESSIONS_MAX_FILE) {
		ret = !text ? -ENOMEM : ferror(f) ? -EIO : -EFBIG;
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-ret));
		fclose(f);
		free(text);
		return ret;
	}
	fclose(f);
	text[len] = 0;
	if (memchr(text, 0, len)) {
		snprintf(err, errlen, "'%s' is not a text file", path);
		free(text);
		return -EINVAL;
	}
	ret = report_suppressions__parse(sup, text, path, err, errlen);
	free(text);
	return ret;
}

/* ---- matching ------------------------------------------------------------------- */

static bool pattern_matches_frame(const char *pattern, const struct report_frame *f)
{
	return (symbol_known(f) ? suppression_pattern__match(pattern, f->symbol) :
				  suppression_pattern__match(pattern, f->name)) ||
	       suppression_pattern__match(pattern, f->module) ||
	       suppression_pattern__match(pattern, f->file);
}

static bool rule_matches(const struct rule *r, const struct report_frame *const *frames,
			 uint32_t nr)
{
	uint32_t i;

	if (r->matches)
		return r->matches(frames, nr);
	for (i = 0; i < nr; i++)
		if (frames[i]->known && pattern_matches_frame(r->pattern, frames[i]))
			return true;
	return false;
}

int report_suppressions__match(const struct report_suppressions *sup,
			       const struct report_frame *const *frames, uint32_t nr)
{
	size_t i;

	for (i = 0; i < sup->nr; i++)
		if (rule_matches(&sup->rules[i], frames, nr))
			return i;
	return -1;
}

/* site_rule[] up to site, the sites before it not suppressed */
static int grow_sites(struct report_suppressions *sup, uint32_t site)
{
	if (site < sup->nr_sites)
		return 0;
	if (grow_array((void **)&sup->site_rule, &sup->cap_sites, (size_t)site + 1,
		       sizeof(*sup->site_rule)))
		return -ENOMEM;
	while (sup->nr_sites <= site)
		sup->site_rule[sup->nr_sites++] = NO_RULE;
	return 0;
}

static int decide_site(uint32_t site, const struct report_frame *const *frames,
		       uint32_t nr, void *arg)
{
	struct report_suppressions *sup = arg;
	int rule = report_suppressions__match(sup, frames, nr);

	if (rule < 0)
		return 0;
	if (grow_sites(sup, site))
		return -ENOMEM;
	sup->site_rule[site] = rule;
	return 0;
}

int report_suppressions__prepare(struct report_suppressions *sup, struct report_sites *ss)
{
	size_t i;

	for (i = 0; i < sup->nr; i++)
		sup->rules[i].r.count = sup->rules[i].r.bytes = 0;
	sup->nr_sites = 0;
	if (!ss || !sup->nr)
		return 0;
	return report_sites__each_stack(ss, decide_site, sup);
}

bool report_suppressions__take(void *arg, uint32_t site, uint64_t size)
{
	struct report_suppressions *sup = arg;
	struct rule *r;

	if (site >= sup->nr_sites || sup->site_rule[site] == NO_RULE)
		return false;
	r = &sup->rules[sup->site_rule[site]];
	r->r.count++;
	r->r.bytes += size;
	return true;
}

size_t report_suppressions__nr_rules(const struct report_suppressions *sup)
{
	return sup->nr;
}

const struct report_suppression_rule *
report_suppressions__rule(const struct report_suppressions *sup, size_t i)
{
	return &sup->rules[i].r;
}

void report_suppressions__print(const struct report_suppressions *sup, FILE *out)
{
	char bytes[32];
	size_t i;

	fprintf(out, "  %8s %11s  %s\n", "BLOCKS", "BYTES", "RULE");
	for (i = 0; i < sup->nr; i++) {
		const struct report_suppression_rule *r = &sup->rules[i].r;

		if (!r->count)
			continue;
		fprintf(out, "  %8" PRIu64 " %11s  ", r->count,
			human_bytes(r->bytes, bytes, sizeof(bytes)));
		if (sup->rules[i].pattern) {
			fputs("leak:", out);
			quote_term_fputs(r->text, out);
			fputs(" (", out);
			quote_term_fputs(r->source, out);
			fprintf(out, ":%u)\n", r->line);
		} else {
			fprintf(out, "%s (%s)\n", r->text, r->source);
		}
	}
}
