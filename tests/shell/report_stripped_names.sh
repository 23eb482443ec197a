#!/bin/bash
# track + report: a stripped binary's frames are module+0xoffset everywhere, and two sites apart only by offset stay apart
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
BIN=$WORKLOADS/stripped_sites

# file_offset <vaddr>: where the PT_LOAD holding it puts it in the file
file_offset() {
	local type off va filesz rest
	while read -r type off va _ filesz rest; do
		if [ "$type" = LOAD ] && [ $(($1)) -ge $((va)) ] && [ $(($1)) -lt $((va + filesz)) ]; then
			echo $(($1 - va + off))
			return
		fi
	done < <(readelf -lW "$BIN")
}

# the return addresses of the two calls of malloc, as objdump reads the file: the site
# of the first loop, then the second's
mapfile -t RET < <(objdump -d "$BIN" | awk '/call.*<malloc@plt>/ { want = 1; next }
	want { sub(":", "", $1); print "0x" $1; want = 0 }')
A=$(file_offset "${RET[0]}")
B=$(file_offset "${RET[1]}")
NAME_A=$(printf 'stripped_sites+0x%x' "$A")
NAME_B=$(printf 'stripped_sites+0x%x' "$B")
BUILD_ID=$(readelf -n "$BIN" | sed -n 's/^ *Build ID: //p')

# base: 10 calls at the first site, 20 at the second; head: 30 and 25
mkdir -p "$tmp/base" "$tmp/head"
BASE=$(track_workload "$tmp/base" -- "$BIN" 10 20)
HEAD=$(track_workload "$tmp/head" -- "$BIN" 30 25)

test_setup() {
	expect_eq "objdump finds the two call sites, apart" yes \
		"$([ -n "$A" ] && [ -n "$B" ] && [ "$A" != "$B" ] && echo yes || echo "'$A' '$B'")"
}

test_text() {
	"$MEMTRACK" report -q --sort calls --stack-depth 1 "$BASE" >"$tmp/text"
	expect_eq "text: the site of 10 calls is $NAME_A" 1 \
		"$(grep -A1 -E '^ +[0-9]+ +29\.3 KiB +10 ' "$tmp/text" | grep -cx "  *$NAME_A")"
	expect_eq "text: the site of 20 calls is $NAME_B" 1 \
		"$(grep -A1 -E '^ +[0-9]+ +58\.6 KiB +20 ' "$tmp/text" | grep -cx "  *$NAME_B")"
	expect_eq "text: no [unknown] frame" 0 "$(grep -c '\[unknown' "$tmp/text" || true)"
	expect_eq "json: the innermost frames have no symbol, the file's offset" "10 $A null|20 $B null" \
		"$("$MEMTRACK" report --json --stack-depth 1 "$BASE" | jq -r '[.sites | sort_by(.calls)[] |
			"\(.calls) \(.frames[0].offset) \(.frames[0].symbol)"] | join("|")')"
}

test_flamegraph() {
	"$MEMTRACK" report --flamegraph "$BASE" >"$tmp/folded"
	expect_eq "flame graph: a stack ends in each site, with its bytes" "1 1" \
		"$(grep -c ";$NAME_A 30000\$" "$tmp/folded") $(grep -c ";$NAME_B 60000\$" "$tmp/folded")"
	expect_eq "flame graph: main's caller is named too" 0 "$(grep -c '\[unknown' "$tmp/folded" || true)"
}

test_html() {
	local frames='Object.fromEntries(Array.from(document.querySelectorAll("#flame .frame")).map(f =>
		[f.textContent, Number(f.getAttribute("data-value"))]))'
	"$MEMTRACK" report --html "$tmp/r.html" "$BASE"
	browse "$tmp/r.html" "$frames" >"$tmp/b.json"
	expect_eq "html: no console error" "[]" "$(jq -c '.console + .exceptions + .log' "$tmp/b.json")"
	expect_eq "html: the flame graph's two sites, by name" "30000 60000" \
		"$(jq -r --arg a "$NAME_A" --arg b "$NAME_B" '.results[0] | "\(.[$a]) \(.[$b])"' "$tmp/b.json")"
}

test_pprof() {
	local leaves
	"$MEMTRACK" report --pprof "$tmp/p.pb.gz" "$BASE"
	pprof_decode "$tmp/p.pb.gz" "$tmp" >"$tmp/p.json"
	leaves=$(jq -r '[.samples[] | select(.values["alloc_space/bytes"] > 0) | .stack[0] |
		"\(.lines[0]) \(.address - .mapping.start + .mapping.offset)"] | sort | join("|")' "$tmp/p.json")
	expect_eq "pprof: each leaf named, its address at that offset of the file" \
		"$NAME_A -:0 $A|$NAME_B -:0 $B" "$leaves"
	expect_eq "pprof: the binary's mapping: its file, build id, a range holding its leaves" \
		"stripped_sites $BUILD_ID true" \
		"$(jq -r '[.samples[].stack[0] | select(.module | endswith("/stripped_sites"))][0] |
			"\(.module | split("/") | last) \(.mapping.build_id) \(.mapping.start <= .address and .address < .mapping.limit)"' "$tmp/p.json")"
	expect_eq "pprof: libc's mapping has its build id" yes \
		"$(jq -r '[.samples[].stack[] | select(.module // "" | test("/libc\\.so"))][0].mapping.build_id |
			if test("^[0-9a-f]{40}$") then "yes" else . end' "$tmp/p.json")"
}

test_diff() {
	"$MEMTRACK" report --diff --json --stack-depth 1 "$BASE" "$HEAD" >"$tmp/d.json"
	expect_eq "diff: the two sites apart, each with its growth" "$A 60000|$B 15000" \
		"$(jq -r '[.sites[] | "\(.frames[0].offset) \(.growth)"] | join("|")' "$tmp/d.json")"
	"$MEMTRACK" report --diff -q --stack-depth 1 "$BASE" "$HEAD" >"$tmp/d.txt"
	expect_eq "diff text: the first site grew by 58.6 KiB" 1 \
		"$(grep -A1 -E '^ +1 +29\.3 KiB +87\.9 KiB +\+58\.6 KiB' "$tmp/d.txt" | grep -cx "  *$NAME_A")"
}

test_suppression() {
	printf 'leak:%s$\n' "$NAME_B" >"$tmp/supp"
	"$MEMTRACK" report --json --suppressions "$tmp/supp" "$BASE" >"$tmp/s.json"
	expect_eq "suppression by module+0xoffset: the second site's block only" "3000 3000" \
		"$(jq -r '"\(.leaked_bytes) \(.suppressed_bytes)"' "$tmp/s.json")"
}

test_setup
test_text
test_flamegraph
test_html
test_pprof
test_diff
test_suppression
finish
