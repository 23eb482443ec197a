// SPDX-License-Identifier: GPL-2.0
/*
 * report --pprof: see report-pprof.h.  The profile is built as arrays of
 * protobuf-c structs that grow while the sites are walked, then pointed at
 * each other and packed once; strings are the sites' own (not copied).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/quote.h"
#include "util/report/report-pprof.h"
#include "util/report/strtab.h"
#include "util/u64-map.h"
#include "util/util.h"
#include "util/report/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#define NR_TYPES	(sizeof(type_names) / sizeof(type_names[0]))

static const char *const type_names[][2] = {
#define PPROF_TYPE_NAME(name, unit, field)	{ #name, #unit },
	REPORT_PPROF_TYPES(PPROF_TYPE_NAME)
#undef PPROF_TYPE_NAME
};

/* a location as built: its lines are lines[first .. first + n) */
struct loc {
	pb_location pb;
	size_t first_line;
	uint64_t first_frame;		/* the id of its innermost frame */
};

/* a sample as built: its location ids and values are in the shared arrays */
struct sample {
	size_t first_loc, nr_locs;
	int64_t values[NR_TYPES];
};

struct pprof {
	struct strtab strings;
	char **repaired;		/* copies of strings made valid UTF-8 */
	size_t nr_repaired, cap_repaired;
	pb_function *functions;
	size_t nr_functions, cap_functions;
	struct u64_map function_index;	/* name << 32 | file -> functions[] index */
	pb_mapping *mappings;
	size_t nr_mappings, cap_mappings;
	struct u64_map mapping_index;	/* module's string -> mappings[] index */
	struct loc *locs;
	size_t nr_locs, cap_locs;
	struct u64_map loc_index;	/* its outermost frame id -> locs[] index */
	uint64_t pseudo_loc[3];		/* location id of each site kind without frames */
	pb_line *lines;
	size_t nr_lines, cap_lines;
	struct sample *samples;
	size_t nr_samples, cap_samples;
	uint64_t *loc_ids;		/* every sample's location ids */
	size_t nr_loc_ids, cap_loc_ids;
};

static void pprof__exit(struct pprof *p)
{
	size_t i;

	for (i = 0; i < p->nr_repaired; i++)
		free(p->repaired[i]);
	free(p->repaired);
	strtab__exit(&p->strings);
	free(p->functions);
	free(p->mappings);
	free(p->locs);
	free(p->lines);
	free(p->samples);
	free(p->loc_ids);
	u64_map__exit(&p->function_index);
	u64_map__exit(&p->mapping_index);
	u64_map__exit(&p->loc_index);
}

/*
 * The index of s in the string table ("" for NULL); -ENOMEM or -E2BIG.
 * protobuf's strings are UTF-8, and decoders refuse a profile whose are
 * not: bytes of a name that are not become U+FFFD.
 */
static int64_t string(struct pprof *p, const char *s)
{
	char *copy;
	int64_t i;

	s = s ? s : "";
	if (!utf8_valid(s, strlen(s))) {
		if (grow_array((void **)&p->repaired, &p->cap_repaired, p->nr_repaired + 1,
			       sizeof(*p->repaired)))
			return -ENOMEM;
		copy = utf8_repair(s);
		if (!copy)
			return -ENOMEM;
		p->repaired[p->nr_repaired++] = copy;
		s = copy;
	}
	i = strtab__intern(&p->strings, s);
	return i > UINT32_MAX ? -E2BIG : i;
}

/* the id of the function of name and file, added when new; 0 when out of memory */
static uint64_t function_id(struct pprof *p, const char *name, const char *system_name,
			    const char *file)
{
	int64_t n = string(p, name), sys = string(p, system_name ? system_name : name);
	int64_t f = string(p, file);
	pb_function *fn;
	bool added;

	if (n < 0 || sys < 0 || f < 0)
		return 0;
	fn = u64_map__element(&p->function_index, (uint64_t)n << 32 | (uint64_t)f,
			      (void **)&p->functions, &p->nr_functions, &p->cap_functions,
			      sizeof(*fn), &added);
	if (!fn)
		return 0;
	if (added) {
		perftools__profiles__function__init(fn);
		fn->id = p->nr_functions;
		fn->name = n;
		fn->system_name = sys;
		fn->filename = f;
	}
	return fn->id;
}

/* where the module was mapped (the frames' addresses are in there) and its build id */
static int describe_mapping(struct pprof *p, pb_mapping *m, const struct report_module *mod)
{
	int64_t b;

	if (!mod)
		return 0;
	m->memory_start = mod->start;
	m->memory_limit = mod->end;
	m->file_offset = mod->offset;
	b = string(p, mod->build_id);
	if (b < 0)
		return b;
	m->build_id = b;
	return 0;
}

/* the mapping of a frame's module (0: none), its flags updated by the frame */
static int mapping_id(struct pprof *p, const struct report_frame *f, uint64_t *id)
{
	int64_t s;
	int err;
	pb_mapping *m;
	bool added;

	*id = 0;
	if (!f->module)
		return 0;
	s = string(p, f->module);
	if (s < 0)
		return s;
	m = u64_map__element(&p->mapping_index, s, (void **)&p->mappings, &p->nr_mappings,
			     &p->cap_mappings, sizeof(*m), &added);
	if (!m)
		return -ENOMEM;
	if (added) {
		perftools__profiles__mapping__init(m);
		m->id = p->nr_mappings;
		m->filename = s;
		err = describe_mapping(p, m, f->map);
		if (err)
			return err;
	}
	m->has_functions |= f->symbol != NULL;
	m->has_filenames |= f->file != NULL;
	m->has_line_numbers |= f->line != 0;
	m->has_inline_frames |= f->inlined;
	*id = m->id;
	return 0;
}

static int add_line(struct pprof *p, const struct report_frame *f)
{
	const char *name = f->symbol ? f->symbol : f->name;
	pb_line *l;

	if (grow_array((void **)&p->lines, &p->cap_lines, p->nr_lines + 1, sizeof(*p->lines)))
		return -ENOMEM;
	l = &p->lines[p->nr_lines];
	perftools__profiles__line__init(l);
	l->function_id = function_id(p, name, f->raw_symbol, f->file);
	l->line = f->line;
	if (!l->function_id)
		return -ENOMEM;
	p->nr_lines++;
	return 0;
}

static struct loc *new_loc(struct pprof *p)
{
	struct loc *l;

	if (grow_array((void **)&p->locs, &p->cap_locs, p->nr_locs + 1, sizeof(*p->locs)))
		return NULL;
	l = &p->locs[p->nr_locs++];
	memset(l, 0, sizeof(*l));
	perftools__profiles__location__init(&l->pb);
	l->pb.id = p->nr_locs;
	l->first_line = p->nr_lines;
	return l;
}

/*
 * The location of frames f[0..n): functions inlined (f[0..n-1), when n > 1)
 * into f[n-1]'s.  One per frame of code: found by f[n-1]'s id.
 */
static int location_id(struct pprof *p, const struct report_frame *const *f, uint32_t n,
		       uint64_t *id)
{
	const struct report_frame *code = f[n - 1];
	uint64_t *idx = u64_map__find(&p->loc_index, code->id);
	struct loc *l;
	uint32_t i;
	int err;

	/* the inlined functions at an ip are the same wherever it is met */
	if (idx && p->locs[*idx].pb.n_line == n && p->locs[*idx].first_frame == f[0]->id) {
		*id = p->locs[*idx].pb.id;
		return 0;
	}
	l = new_loc(p);
	if (!l)
		return -ENOMEM;
	l->first_frame = f[0]->id;
	l->pb.address = code->ip;
	err = mapping_id(p, code, &l->pb.mapping_id);
	for (i = 0; !err && i < n; i++)
		err = add_line(p, f[i]);
	if (err)
		return err;
	l = &p->locs[p->nr_locs - 1];
	l->pb.n_line = n;
	*id = l->pb.id;
	if (!idx) {
		idx = u64_map__get(&p->loc_index, code->id);
		if (!idx)
			return -ENOMEM;
		*idx = p->nr_locs - 1;
	}
	return 0;
}

/* [no stack], [unknown stack], [empty stack]: a location of one function */
static int pseudo_location(struct pprof *p, const struct report_site *s, uint64_t *id)
{
	static const char *const names[] = {
		[REPORT_SITE_STACK] = "[empty stack]",
		[REPORT_SITE_UNRESOLVED] = "[unknown stack]",
		[REPORT_SITE_NO_STACK] = "[no stack]",
	};
	struct loc *l;
	pb_line *line;

	if (p->pseudo_loc[s->kind]) {
		*id = p->pseudo_loc[s->kind];
		return 0;
	}
	if (grow_array((void **)&p->lines, &p->cap_lines, p->nr_lines + 1, sizeof(*p->lines)))
		return -ENOMEM;
	l = new_loc(p);
	if (!l)
		return -ENOMEM;
	line = &p->lines[p->nr_lines++];
	perftools__profiles__line__init(line);
	line->function_id = function_id(p, names[s->kind], NULL, NULL);
	if (!line->function_id)
		return -ENOMEM;
	l->pb.n_line = 1;
	*id = p->pseudo_loc[s->kind] = l->pb.id;
	return 0;
}

static int add_loc_id(struct pprof *p, uint64_t id)
{
	if (grow_array((void **)&p->loc_ids, &p->cap_loc_ids, p->nr_loc_ids + 1,
		       sizeof(*p->loc_ids)))
		return -ENOMEM;
	p->loc_ids[p->nr_loc_ids++] = id;
	return 0;
}

/* a site's stack as location ids, leaf first: frames grouped by frame of code */
static int site_locations(struct pprof *p, const struct report_site *s)
{
	uint32_t i = 0, j;
	uint64_t id;
	int err;

	if (s->kind != REPORT_SITE_STACK || !s->nr_frames) {
		err = pseudo_location(p, s, &id);
		return err ? err : add_loc_id(p, id);
	}
	while (i < s->nr_frames) {
		for (j = i; j + 1 < s->nr_frames && s->frames[j]->inlined; j++)
			;
		err = location_id(p, &s->frames[i], j - i + 1, &id);
		if (!err)
			err = add_loc_id(p, id);
		if (err)
			return err;
		i = j + 1;
	}
	return 0;
}

static int add_sample(struct pprof *p, const struct report_site *s)
{
	const int64_t values[NR_TYPES] = {
#define PPROF_TYPE_VALUE(name, unit, field)	(int64_t)s->field,
		REPORT_PPROF_TYPES(PPROF_TYPE_VALUE)
#undef PPROF_TYPE_VALUE
	};
	struct sample *smp;
	size_t i, first = p->nr_loc_ids;
	int err;

	for (i = 0; i < NR_TYPES && !values[i]; i++)
		;
	if (i == NR_TYPES)
		return 0;
	err = site_locations(p, s);
	if (err)
		return err;
	if (grow_array((void **)&p->samples, &p->cap_samples, p->nr_samples + 1,
		       sizeof(*p->samples)))
		return -ENOMEM;
	smp = &p->samples[p->nr_samples++];
	smp->first_loc = first;
	smp->nr_locs = p->nr_loc_ids - first;
	memcpy(smp->values, values, sizeof(values));
	return 0;
}

/* ---- the message: pointers into the arrays, then packed ------------------- */

struct message {
	pb_profile profile;
	pb_value_type types[NR_TYPES], *type_ptrs[NR_TYPES];
	pb_sample *samples, **sample_ptrs;
	pb_mapping **mapping_ptrs;
	pb_location **location_ptrs;
	pb_line **line_ptrs;
	pb_function **function_ptrs;
	int64_t comments[REPORT_PPROF_MAX_COMMENTS];
};

static void message__exit(struct message *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->mapping_ptrs);
	free(m->location_ptrs);
	free(m->line_ptrs);
	free(m->function_ptrs);
}

static int message__alloc(struct message *m, const struct pprof *p)
{
	m->samples = calloc(p->nr_samples + 1, sizeof(*m->samples));
	m->sample_ptrs = calloc(p->nr_samples + 1, sizeof(*m->sample_ptrs));
	m->mapping_ptrs = calloc(p->nr_mappings + 1, sizeof(*m->mapping_ptrs));
	m->location_ptrs = calloc(p->nr_locs + 1, sizeof(*m->location_ptrs));
	m->line_ptrs = calloc(p->nr_lines + 1, sizeof(*m->line_ptrs));
	m->function_ptrs = calloc(p->nr_functions + 1, sizeof(*m->function_ptrs));
	return m->samples && m->sample_ptrs && m->mapping_ptrs && m->location_ptrs &&
	       m->line_ptrs && m->function_ptrs ? 0 : -ENOMEM;
}

static void link_tables(struct message *m, struct pprof *p)
{
	pb_profile *pr = &m->profile;
	size_t i;

	for (i = 0; i < p->nr_lines; i++)
		m->line_ptrs[i] = &p->lines[i];
	for (i = 0; i < p->nr_locs; i++) {
		p->locs[i].pb.line = &m->line_ptrs[p->locs[i].first_line];
		m->location_ptrs[i] = &p->locs[i].pb;
	}
	for (i = 0; i < p->nr_mappings; i++)
		m->mapping_ptrs[i] = &p->mappings[i];
	for (i = 0; i < p->nr_functions; i++)
		m->function_ptrs[i] = &p->functions[i];
	for (i = 0; i < p->nr_samples; i++) {
		pb_sample *s = &m->samples[i];

		perftools__profiles__sample__init(s);
		s->n_location_id = p->samples[i].nr_locs;
		s->location_id = &p->loc_ids[p->samples[i].first_loc];
		s->n_value = NR_TYPES;
		s->value = p->samples[i].values;
		m->sample_ptrs[i] = s;
	}
	pr->n_sample = p->nr_samples;
	pr->sample = m->sample_ptrs;
	pr->n_mapping = p->nr_mappings;
	pr->mapping = m->mapping_ptrs;
	pr->n_location = p->nr_locs;
	pr->location = m->location_ptrs;
	pr->n_function = p->nr_functions;
	pr->function = m->function_ptrs;
	pr->n_string_table = p->strings.nr;
	pr->string_table = (char **)p->strings.v;
}

/* sample types, default type and comments: strings added before the table is linked */
static int describe(struct message *m, struct pprof *p, const struct report_pprof_info *info)
{
	pb_profile *pr = &m->profile;
	int64_t s, u;
	size_t i;

	for (i = 0; i < NR_TYPES; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		s = string(p, type_names[i][0]);
		u = string(p, type_names[i][1]);
		if (s < 0 || u < 0)
			return s < 0 ? s : u;
		m->types[i].type = s;
		m->types[i].unit = u;
		m->type_ptrs[i] = &m->types[i];
	}
	pr->n_sample_type = NR_TYPES;
	pr->sample_type = m->type_ptrs;
	pr->default_sample_type = string(p, REPORT_PPROF_DEFAULT_TYPE);
	if (pr->default_sample_type < 0)
		return pr->default_sample_type;
	pr->duration_nanos = info->duration_ns;
	for (i = 0; i < REPORT_PPROF_MAX_COMMENTS && info->comments[i]; i++) {
		m->comments[i] = string(p, info->comments[i]);
		if (m->comments[i] < 0)
			return m->comments[i];
	}
	pr->n_comment = i;
	pr->comment = m->comments;
	return 0;
}

/* data gzipped into *out (malloc'd); 0 or -ENOMEM */
static int gzip(const uint8_t *data, size_t len, void **out, size_t *out_len)
{
	z_stream z = { 0 };
	uLong bound;
	int ret;

	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, len);
	*out = malloc(bound);
	if (!*out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = len;
	z.next_out = *out;
	z.avail_out = bound;
	ret = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int pack(struct message *m, void **buf, size_t *len)
{
	size_t n = perftools__profiles__profile__get_packed_size(&m->profile);
	uint8_t *raw = malloc(n ? n : 1);
	int err;

	if (!raw)
		return -ENOMEM;
	perftools__profiles__profile__pack(&m->profile, raw);
	err = gzip(raw, n, buf, len);
	free(raw);
	return err;
}

int report_pprof__encode(const struct report_site_list *sites,
			 const struct report_pprof_info *info, void **buf, size_t *len)
{
	struct pprof p = { 0 };
	struct message m = { 0 };
	size_t i;
	int err;

	*buf = NULL;
	*len = 0;
	perftools__profiles__profile__init(&m.profile);
	/* string_table[0] is "" */
	err = string(&p, "") < 0 ? -ENOMEM : 0;
	for (i = 0; !err && i < sites->nr; i++)
		err = add_sample(&p, &sites->sites[i]);
	if (!err)
		err = describe(&m, &p, info);
	if (!err)
		err = message__alloc(&m, &p);
	if (!err) {
		link_tables(&m, &p);
		err = pack(&m, buf, len);
	}
	message__exit(&m);
	pprof__exit(&p);
	return err;
}
