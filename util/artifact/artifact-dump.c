// SPDX-License-Identifier: GPL-2.0
/*
 * report --dump: a record as one JSON object per line, its keys in the
 * table's order (artifact-format.h), only those it had.
 */
#include <inttypes.h>
#include <stdio.h>

#include "util/artifact/artifact-format.h"
#include "util/quote.h"

static void dump_value(FILE *out, const struct artifact_key *k, const void *field)
{
	const struct artifact_drops *d = field;
	const struct artifact_ids *ids = field;
	uint32_t i;

	switch (k->type) {
	case AT_I32: fprintf(out, "%" PRId32, *(const int32_t *)field); break;
	case AT_U32: fprintf(out, "%" PRIu32, *(const uint32_t *)field); break;
	case AT_U64: fprintf(out, "%" PRIu64, *(const uint64_t *)field); break;
	/* strings come from the artifact: valid UTF-8 JSON whatever they hold */
	case AT_STR: quote_json(out, *(const char *const *)field); break;
	case AT_BOOL: fputs(*(const bool *)field ? "true" : "false", out); break;
	case AT_DROPS:
		fprintf(out, "{\"%s\":%" PRIu64 ",\"%s\":%" PRIu64 "}", ARTIFACT_DROPS_EVENTS,
			d->events, ARTIFACT_DROPS_STACKS, d->stacks + d->other);
		break;
	case AT_IDS:
		fputc('[', out);
		for (i = 0; i < ids->n; i++)
			fprintf(out, "%s%" PRIu64, i ? "," : "", ids->v[i]);
		fputc(']', out);
		break;
	}
}

void artifact_record__dump(FILE *out, const struct artifact_record *rec)
{
	unsigned int f;

	fprintf(out, "{\"%s\":\"%s\"", ARTIFACT_TYPE_KEY, artifact_record__type_name(rec));
	for (f = 0; f < AK_MAX; f++) {
		const struct artifact_key *k = &artifact_keys[f];

		if (!(rec->has & AR_HAS(f)))
			continue;
		fprintf(out, ",\"%s\":", k->name);
		dump_value(out, k, (const char *)rec + k->offset);
	}
	fputs("}\n", out);
}
