#!/bin/bash
# report --pprof: a gzipped profile.proto that protobuf's own decoder reads, whose totals are --json's figures
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report-sites "$tmp"
write_samples test-plot-names "$tmp/names"

# the figure of --json that each sample type adds up to
FIGURES='{"alloc_objects/count": .allocations, "alloc_space/bytes": .bytes_allocated,
	"inuse_objects/count": .peak_count, "inuse_space/bytes": .peak_bytes,
	"leaked_objects/count": .leaked_count, "leaked_space/bytes": .leaked_bytes,
	"temporary_objects/count": .temporary_count, "temporary_space/bytes": .temporary_bytes}'

# totals_match <name> <artifact> [<report options>...]: each type's total is its --json figure
totals_match() {
	local name=$1 art=$2
	shift 2
	"$MEMTRACK" report --pprof "$tmp/p.pb.gz" "$@" "$art"
	pprof_decode "$tmp/p.pb.gz" "$tmp" >"$tmp/p.json"
	"$MEMTRACK" report --json "$@" "$art" | jq -S "$FIGURES" >"$tmp/want"
	jq -S .totals "$tmp/p.json" >"$tmp/got"
	if cmp -s "$tmp/want" "$tmp/got"; then pass "$name: totals are --json's"; else
		fail "$name: totals are --json's" "$(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"; fi
}

test_totals() {
	totals_match "stacks" "$tmp/stacks.msgpack"
	expect_eq "gzip, as pprof reads it" "gzip compressed data" \
		"$(file -b "$tmp/p.pb.gz" | cut -d, -f1)"
	expect_eq "eight sample types" "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes leaked_objects/count leaked_space/bytes temporary_objects/count temporary_space/bytes" \
		"$(jq -r '.types | join(" ")' "$tmp/p.json")"
	expect_eq "the default type" inuse_space "$(jq -r .default "$tmp/p.json")"
	totals_match "temporary" "$tmp/temporary.msgpack"
	expect_eq "temporary: 3 of them" 3 "$(jq '.totals["temporary_objects/count"]' "$tmp/p.json")"
	totals_match "--pid of nobody" "$tmp/stacks.msgpack" --pid 99
	totals_match "--time" "$tmp/stacks.msgpack" --time 0,0.000005
}

# stacks.msgpack's site S13: libweird.so+0x1234 <- parse;config <- main <- __libc_start_main
test_stacks() {
	"$MEMTRACK" report --pprof "$tmp/p.pb.gz" "$tmp/stacks.msgpack"
	pprof_decode "$tmp/p.pb.gz" "$tmp" >"$tmp/p.json"
	expect_eq "a stack, leaf first, function file:line" \
		"libweird.so+0x1234 -:0|parse;config parse.c:3|main app.c:40|__libc_start_main -:0" \
		"$(jq -r '.samples[] | select(.values["alloc_space/bytes"] == 1050) |
			[.stack[].lines[]] | join("|")' "$tmp/p.json")"
	expect_eq "its modules" "/usr/lib/libweird.so /usr/bin/app /usr/bin/app /lib/x86_64-linux-gnu/libc.so.6" \
		"$(jq -r '.samples[] | select(.values["alloc_space/bytes"] == 1050) |
			[.stack[].module] | join(" ")' "$tmp/p.json")"
	expect_eq "allocations without a stack" "[no stack] -:0" \
		"$(jq -r '.samples[] | select(.values["alloc_space/bytes"] == 5) | .stack[].lines[]' "$tmp/p.json")"
	expect_eq "a frame without its record" "[unknown] -:0|main app.c:40" \
		"$(jq -r '.samples[] | select(.values["alloc_space/bytes"] == 10) |
			[.stack[].lines[]] | join("|")' "$tmp/p.json")"
	expect_eq "six samples, one per site" 6 "$(jq '.samples | length' "$tmp/p.json")"
	expect_eq "a comment says what inuse means" 1 \
		"$(jq '[.comments[] | select(startswith("inuse_*: live at the peak"))] | length' "$tmp/p.json")"
}

# names with newlines (hostile-2), escapes (9), bytes that are not UTF-8 (10): a
# decoder still reads the profile, whose strings protobuf wants UTF-8
test_hostile_names() {
	local i
	for i in 2 9 10; do
		"$MEMTRACK" report --pprof "$tmp/h$i.pb.gz" "$tmp/names/hostile-$i.msgpack"
		if pprof_decode "$tmp/h$i.pb.gz" "$tmp" >"$tmp/h$i.json"; then
			pass "hostile-$i: decodes"; else fail "hostile-$i: decodes" "$(cat "$tmp/h$i.json")"; fi
	done
	expect_eq "a newline in a name stays a newline" true \
		"$(jq '[.samples[].stack[].lines[]] | any(contains("\n"))' "$tmp/h2.json")"
	expect_eq "a byte that is not UTF-8 is U+FFFD" true \
		"$(jq '[.samples[].stack[].lines[]] | any(contains("\ufffd"))' "$tmp/h10.json")"
}

test_errors() {
	local a=$tmp/stacks.msgpack
	expect_eq "--pprof - writes to stdout" "$(cat "$tmp/p.pb.gz" | gzip -dc | md5sum)" \
		"$("$MEMTRACK" report --pprof - "$a" | gzip -dc | md5sum)"
	expect_eq "no stacks exits 1" 1 "$(status "$MEMTRACK" report --pprof "$tmp/n.pb.gz" "$tmp/nostacks.msgpack")"
	expect_eq "no stacks: says so" "error: no call stacks in '$tmp/nostacks.msgpack': record with 'memtrack track --call-graph fp'" \
		"$(cat "$tmp/err")"
	expect_eq "no stacks: no file" no "$([ -e "$tmp/n.pb.gz" ] && echo yes || echo no)"
	expect_eq "a directory that is not there exits 1" 1 \
		"$(status "$MEMTRACK" report --pprof "$tmp/no/such/p.pb.gz" "$a")"
	if grep -q "^error: cannot write the pprof profile '$tmp/no/such/p.pb.gz': " "$tmp/err"; then
		pass "and says which file"; else fail "and says which file" "$(cat "$tmp/err")"; fi
	expect_eq "truncated exits 1" 1 "$(status "$MEMTRACK" report --pprof "$tmp/t.pb.gz" "$tmp/stacks-truncated.msgpack")"
	expect_eq "truncated: what was read is written, stacks unknown" "2124" \
		"$(pprof_decode "$tmp/t.pb.gz" "$tmp" | jq -r '[.samples[] | select(.stack[0].lines[0] ==
			"[unknown stack] -:0") | .values["alloc_space/bytes"]] | add')"
	expect_eq "--pprof --json" 129 "$(status "$MEMTRACK" report --pprof "$tmp/x" --json "$a")"
	expect_eq "--pprof --flamegraph" 129 "$(status "$MEMTRACK" report --pprof "$tmp/x" --flamegraph "$a")"
	expect_eq "--pprof --diff" 129 "$(status "$MEMTRACK" report --pprof "$tmp/x" --diff "$a" "$a")"
	expect_eq "nothing written by usage errors" no "$([ -e "$tmp/x" ] && echo yes || echo no)"
}

test_totals
test_stacks
test_hostile_names
test_errors
finish
