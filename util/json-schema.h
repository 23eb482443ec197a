/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_JSON_SCHEMA_H
#define MEMTRACK_JSON_SCHEMA_H

/*
 * The "schema" key of memtrack's JSON documents, first in each: its name and
 * version.  Documentation/<name>.schema.json describes it (JSON Schema); the
 * version changes when a key goes away or changes meaning, not when one is
 * added.
 */
#define JSON_SCHEMA_REPORT		"memtrack-report/1"
#define JSON_SCHEMA_REPORT_DIFF		"memtrack-report-diff/1"
#define JSON_SCHEMA_STATS		"memtrack-stats/1"

#endif
