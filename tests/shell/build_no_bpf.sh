#!/bin/bash
# build: make BUILD_BPF_SKEL=0 builds stats and report without clang or bpftool
# timeout: 300
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_build() {
	if make -C "$TOP" -s O="$tmp" BUILD_BPF_SKEL=0 CLANG=false BPFTOOL=false \
		"$tmp/memtrack" >"$tmp/build.log" 2>&1; then
		pass "no-BPF build without clang or bpftool"
	else
		fail "no-BPF build without clang or bpftool" "$(tail -5 "$tmp/build.log")"
		return
	fi
	local rc=0
	"$tmp/memtrack" track -- true 2>"$tmp/err" || rc=$?
	expect_eq "no-BPF track exits 128" 128 "$rc"
	if grep -q "built without BPF" "$tmp/err"; then pass "no-BPF track says why"; else fail "no-BPF track says why" "$(cat "$tmp/err")"; fi
	write_samples test-report "$tmp/art"
	first=$(ls "$tmp"/art/*.msgpack | head -n 1)
	if "$tmp/memtrack" report --json "$first" | jq -e .counts >/dev/null; then
		pass "no-BPF report reads an artifact"
	else
		fail "no-BPF report reads an artifact" "report failed"
	fi
	if "$tmp/memtrack" stats "$TOP/tests/shell/data/stats/design-example.jsonl" >/dev/null; then
		pass "no-BPF stats runs"
	else
		fail "no-BPF stats runs" "stats failed"
	fi
}

test_build
finish
