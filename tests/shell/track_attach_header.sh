#!/bin/bash
# track -p: the artifact names the attached command line, no exit code for a process still running
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
target=
cleanup() {
	[ -n "$target" ] && kill "$target" 2>/dev/null
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

attach_target_start
# shellcheck disable=SC2154 # $mt: lib/common.sh
# memtrack stops while the process runs on
kill -INT "$mt"
rc=0
wait "$mt" || rc=$?
expect_eq "memtrack exits 0 when interrupted" 0 "$rc"
art=$(ls "$tmp"/*.msgpack)
"$MEMTRACK" report -q "$art" >"$tmp/report"
report_json "$art" "$tmp/r.json"

expect_eq "Meta command is the process's command line" "$WORKLOADS/attach_target" \
	"$(jq -r .meta.command "$tmp/r.json")"
expect_eq "Meta has no exit code" null "$(jq -r .meta.exit_code "$tmp/r.json")"
expect_eq "its Process record has no exit code" null \
	"$(jq -r --argjson p "$target" '.processes[] | select(.pid == $p) | .exit_code' "$tmp/r.json")"
expect_eq "header: the command line" "# command: $WORKLOADS/attach_target" \
	"$(grep '^# command:' "$tmp/report")"
if grep '^# recorded by' "$tmp/report" | grep -q exit; then
	fail "header: no exit status" "$(grep '^# recorded by' "$tmp/report")"
else
	pass "header: no exit status"
fi
finish
