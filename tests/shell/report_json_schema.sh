#!/bin/bash
# report --json, report --diff --json and stats --json: "schema" names the version, and the output validates against Documentation/*.schema.json
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

DOC=$TOP/Documentation
# Debian's python3 has python3-jsonschema (scripts/install-deps.sh); another
# python3 first in PATH (pyenv) may not
PYTHON=/usr/bin/python3

# validate <schema name> <document>...: against the schema, and with no key it does not name
validate() {
	local name=$1 out
	shift
	if out=$("$PYTHON" "$TOP/tests/shell/lib/validate_json.py" "$DOC/$name.schema.json" "$@" 2>&1); then
		pass "$name: $(printf '%s ' "${@##*/}")"
	else
		fail "$name: $(printf '%s ' "${@##*/}")" "$out"
	fi
}

write_samples test-report "$tmp/r"
write_samples test-report-sites "$tmp/s"
mkdir -p "$tmp/run"
art=$(track_workload "$tmp/run" --stats "$tmp/run/stats.jsonl" -- "$WORKLOADS/fork")
cxx=$(track_workload "$tmp/run" -- "$WORKLOADS/cxx_new_delete")

test_report() {
	local a docs=()
	# a tracked tree with stacks, a suppression; events only (CodSpeed's), truncated,
	# no events; synthetic stacks, without stacks, attached
	for a in "$art" "$cxx" "$tmp/r/codspeed.msgpack" "$tmp/r/truncated.msgpack" \
		"$tmp/r/nothing.msgpack" "$tmp/r/tree.msgpack" "$tmp/s/stacks.msgpack" \
		"$tmp/s/nostacks.msgpack" "$tmp/s/attached.msgpack"; do
		"$MEMTRACK" report --json "$a" >"$tmp/$(basename "$a").json" 2>/dev/null || true
		docs+=("$tmp/$(basename "$a").json")
	done
	# with limits: one crossed by the tree, one by each process, one not crossed
	"$MEMTRACK" report --json --fail-if 'allocs>1' --fail-if 'allocs@each>1' \
		--fail-if 'peak>1TiB' "$art" >"$tmp/limits.json" 2>/dev/null || true
	docs+=("$tmp/limits.json")
	# with the threads of a tree
	"$MEMTRACK" report --json --threads "$art" >"$tmp/threads.json"
	docs+=("$tmp/threads.json")
	expect_eq "report: the schema's name and version" "memtrack-report/1" \
		"$(jq -r .schema "${docs[0]}")"
	expect_eq "report: the schema key comes first" schema "$(jq -r 'keys_unsorted[0]' "${docs[0]}")"
	validate memtrack-report "${docs[@]}"
}

test_diff() {
	"$MEMTRACK" report --diff --json "$tmp/s/stacks-base.msgpack" "$tmp/s/stacks.msgpack" >"$tmp/d1.json"
	"$MEMTRACK" report --diff --json "$tmp/r/single.msgpack" "$tmp/r/tree.msgpack" >"$tmp/d2.json"
	"$MEMTRACK" report --diff --json "$art" "$art" >"$tmp/d3.json"
	"$MEMTRACK" report --diff --json --fail-if 'peak+>10%' "$tmp/r/single.msgpack" \
		"$tmp/r/tree.msgpack" >"$tmp/d4.json" 2>/dev/null || true
	expect_eq "diff: the schema's name and version" "memtrack-report-diff/1" "$(jq -r .schema "$tmp/d1.json")"
	validate memtrack-report-diff "$tmp/d1.json" "$tmp/d2.json" "$tmp/d3.json" "$tmp/d4.json"
	# the diff's schema copies two definitions of the report's: they must not drift apart
	expect_eq "diff: frame and site_figures as in the report's schema" \
		"$(jq -S '."$defs" | {frame, site_figures}' "$DOC/memtrack-report.schema.json")" \
		"$(jq -S '."$defs" | {frame, site_figures}' "$DOC/memtrack-report-diff.schema.json")"
}

test_stats() {
	local data=$TOP/tests/shell/data/stats
	"$MEMTRACK" stats --json "$tmp/run/stats.jsonl" >"$tmp/st1.json"
	"$MEMTRACK" stats --json "$tmp/run/stats.jsonl" "$data/design-example.jsonl" >"$tmp/st2.json"
	"$MEMTRACK" stats --json "$data/rings-only.jsonl" >"$tmp/st3.json"
	expect_eq "stats: the schema's name and version" "memtrack-stats/1" "$(jq -r .schema "$tmp/st1.json")"
	expect_eq "stats: two files have the shard table" 2 "$(jq '.shards | length' "$tmp/st2.json")"
	validate memtrack-stats "$tmp/st1.json" "$tmp/st2.json" "$tmp/st3.json"
}

# the validation fails on a document that breaks the schema
test_catches() {
	local out
	jq '.processes[0].pid = "one" | .novel = 1' "$tmp/$(basename "$art").json" >"$tmp/bad.json"
	out=$("$PYTHON" "$TOP/tests/shell/lib/validate_json.py" "$DOC/memtrack-report.schema.json" "$tmp/bad.json" || true)
	if grep -q "processes/0/pid" <<<"$out" && grep -q "'novel'" <<<"$out"; then
		pass "a wrong type and an undocumented key fail"
	else
		fail "a wrong type and an undocumented key fail" "$out"
	fi
}

test_report
test_diff
test_stats
test_catches
finish
