// SPDX-License-Identifier: GPL-2.0
#include "util/stats/stats-format.h"

#define KIND_NAME(e, name)		[STATS_KIND_##e] = name,
const char *const stats_kind_names[STATS_KIND_MAX] = {
	STATS_KINDS(KIND_NAME)
};

#define KEY_NAME(e, name, type)		[STATS_KEY_##e] = name,
const char *const stats_key_names[STATS_KEY_MAX] = {
	STATS_KEYS(KEY_NAME)
};

#define KEY_TYPE(e, name, type)		[STATS_KEY_##e] = STATS_##type,
const enum stats_type stats_key_types[STATS_KEY_MAX] = {
	STATS_KEYS(KEY_TYPE)
};

#define F(key)		{ STATS_KEY_##key, false }
#define OPT(key)	{ STATS_KEY_##key, true }
#define ROW(...)	{ .fields = { __VA_ARGS__ }, \
			  .nr = sizeof((struct stats_field[]){ __VA_ARGS__ }) / \
				sizeof(struct stats_field) }

const struct stats_row_format stats_row_formats[STATS_KIND_MAX] = {
	[STATS_KIND_RING_OPEN]	= ROW(OPT(T), F(RING), F(SIZE), OPT(WATERMARK)),
	[STATS_KIND_RING]	= ROW(F(RING), F(T0), F(PROD0), F(CONS0), F(T1), F(PROD1),
				      F(CONS1), OPT(PEAK)),
	[STATS_KIND_PRESSURE]	= ROW(OPT(RING), F(T), OPT(PIDS), OPT(FROZEN)),
	[STATS_KIND_BACKLOG]	= ROW(F(T), F(SENT), F(RECEIVED), OPT(RSS)),
	[STATS_KIND_RESOLVE]	= ROW(F(T0), F(T1), OPT(N)),
	[STATS_KIND_ENCODE]	= ROW(F(T), OPT(EVENTS), OPT(WAIT_NS), F(ENCODE_NS), F(WRITE_NS),
				      F(MSGPACK_BYTES), F(ZSTD_BYTES)),
};
