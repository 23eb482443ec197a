#!/bin/bash
# report: call sites (by bytes, calls, peak, leaks), --sort, --top, --stack-depth, JSON, --diff, attached
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report-sites "$tmp"


# expect_line <test name> <extended regexp> <file>
expect_line() {
	if grep -Eq "$2" "$3"; then pass "$1"; else fail "$1" "no line /$2/ in: $(cat "$3")"; fi
}

# the lines after the title of a section, up to the next empty line
section() {
	sed -n "/^$1/,/^\$/p" "$2"
}

test_text() {
	expect_eq "report exits 0" 0 "$(status "$MEMTRACK" report "$tmp/stacks.msgpack")"
	expect_eq "five sections" 5 "$(grep -c '^Call sites by ' "$tmp/out")"
	section 'Call sites by bytes allocated' "$tmp/out" >"$tmp/bytes"
	expect_line "bytes title" '^Call sites by bytes allocated, top 6 of 6$' "$tmp/bytes"
	expect_line "aligned header" '^ +# +ALLOCATED +CALLS +AT PEAK +LEAKED +BLOCKS +TEMPORARY$' "$tmp/bytes"
	expect_line "first site row" '^ +1 +1\.0 KiB +2 +1\.0 KiB +1\.0 KiB +2 +0$' "$tmp/bytes"
	expect_eq "first site's frames" "libweird.so+0x1234|parse;config+0x8 (app) parse.c:3|main+0x40 (app) app.c:40|__libc_start_main+0x80 (libc.so.6)" \
		"$(sed -n '4,7p' "$tmp/bytes" | sed 's/^ *//' | paste -sd'|')"
	expect_line "site without a Frame record" '^ +\[unknown\] \(frame 99 has no Frame record\)$' "$tmp/bytes"
	expect_line "allocations without a stack" '^ +\[no call stack\]$' "$tmp/bytes"
	section 'Call sites by contribution' "$tmp/out" >"$tmp/peak"
	expect_line "peak title" '^Call sites by contribution to the peak \(1\.4 KiB at 0\.000008 s\), top 3 of 3$' "$tmp/peak"
	expect_line "peak: make_buffer 400 B" '^ +2 +500 B +2 +400 B +0 B +0 +0$' "$tmp/peak"
	section 'Call sites by bytes leaked' "$tmp/out" >"$tmp/leaked"
	expect_line "leaked: 64 B in one block" '^ +2 +364 B +2 +0 B +64 B +1 +0$' "$tmp/leaked"
}

test_sort_top_depth() {
	"$MEMTRACK" report --sort calls --top 2 "$tmp/stacks.msgpack" >"$tmp/out"
	expect_eq "--sort: one section" "Call sites by calls, top 2 of 6" "$(grep '^Call sites' "$tmp/out")"
	expect_eq "--top 2: two rows" 2 "$(grep -Ec '^ +[0-9]+ +[0-9.]+ [KMG]?i?B ' "$tmp/out")"
	"$MEMTRACK" report --sort bytes --top 0 --stack-depth 1 "$tmp/stacks.msgpack" >"$tmp/out"
	expect_line "--stack-depth 1 merges make_buffer" '^ +2 +864 B +4 +400 B +64 B +1 +0$' "$tmp/out"
	expect_eq "--stack-depth 1: one frame per site" "make_buffer+0x10 (app) app.c:12" \
		"$(grep -A1 '^ *2 *864 B' "$tmp/out" | tail -1 | sed 's/^ *//')"
	expect_eq "--top 0: all five sites" "Call sites by bytes allocated, top 5 of 5" "$(grep '^Call sites' "$tmp/out")"
	"$MEMTRACK" report --sort leaked --stack-depth 0 "$tmp/stacks.msgpack" >"$tmp/out"
	expect_eq "--stack-depth 0: whole stacks" 4 "$(grep -A4 '^ *1 ' "$tmp/out" | grep -c '(app)\|(libc.so.6)\|libweird')"
}

test_json() {
	local j=$tmp/j
	"$MEMTRACK" report --json "$tmp/stacks.msgpack" >"$j"
	expect_eq "sites by bytes" "13 10 12 11 14 null" "$(jq -r '[.sites[].stack | tostring] | join(" ")' "$j")"
	expect_eq "site keys" true "$(jq '.sites | all(has("stack") and has("bytes") and has("calls") and has("peak_bytes") and has("leaked_bytes") and has("leaked_count") and has("temporary_count") and has("temporary_bytes") and has("peak_count") and has("frames"))' "$j")"
	expect_eq "S13 figures" "1050 2 1050 1050 2" \
		"$(jq -r '.sites[0] | [.bytes, .calls, .peak_bytes, .leaked_bytes, .leaked_count] | map(tostring) | join(" ")' "$j")"
	expect_eq "a frame" '{"symbol":"main","module":"/usr/bin/app","offset":64,"file":"app.c","line":40,"inlined":false}' \
		"$(jq -c '.sites[0].frames[2]' "$j")"
	expect_eq "no symbol, no file" '{"symbol":null,"module":"/usr/lib/libweird.so","offset":4660,"file":null,"line":null,"inlined":false}' \
		"$(jq -c '.sites[0].frames[0]' "$j")"
	expect_eq "peak is the sum of the sites'" "$(json_get "$j" .peak_bytes)" "$(jq '[.sites[].peak_bytes] | add' "$j")"
	expect_eq "no stack: stack null, no frames" "null 0" "$(jq -r '.sites[5] | "\(.stack) \(.frames | length)"' "$j")"
	"$MEMTRACK" report --json --sort leaked "$tmp/stacks.msgpack" >"$j"
	expect_eq "--sort leaked: its sites, in its order" "13 12 null" "$(jq -r '[.sites[].stack | tostring] | join(" ")' "$j")"
	"$MEMTRACK" report --json --top 1 --sort peak "$tmp/stacks.msgpack" >"$j"
	expect_eq "--top 1 --sort peak" "13" "$(jq -r '[.sites[].stack | tostring] | join(" ")' "$j")"
	"$MEMTRACK" report --json --top 2 "$tmp/stacks.msgpack" >"$j"
	expect_eq "--top 2: the union of the four tops" "13 10 12" "$(jq -r '[.sites[].stack | tostring] | join(" ")' "$j")"
}

test_no_stacks() {
	expect_eq "no stacks exits 0" 0 "$(status "$MEMTRACK" report "$tmp/nostacks.msgpack")"
	expect_eq "one line says so" "  no call stacks: record with 'memtrack track --call-graph fp'" \
		"$(grep -A1 '^Call sites$' "$tmp/out" | tail -1)"
	expect_eq "no per-key sections" 0 "$(grep -c '^Call sites by' "$tmp/out" || true)"
	"$MEMTRACK" report --json "$tmp/nostacks.msgpack" >"$tmp/j"
	expect_eq "json sites null" null "$(json_get "$tmp/j" .sites)"
	expect_eq "json not attached" false "$(json_get "$tmp/j" .meta.attached)"
}

test_attached() {
	"$MEMTRACK" report "$tmp/attached.msgpack" >"$tmp/out"
	expect_line "text says attached" '^# attached to running processes: allocations made before attaching are unknown; frees of their blocks are counted apart as unknown frees \(1\)$' "$tmp/out"
	"$MEMTRACK" report --json "$tmp/attached.msgpack" >"$tmp/j"
	expect_eq "json meta.attached" true "$(json_get "$tmp/j" .meta.attached)"
	expect_eq "json unknown frees" 1 "$(json_get "$tmp/j" .unknown_frees)"
	expect_eq "--dump shows it" true "$("$MEMTRACK" report --dump "$tmp/attached.msgpack" | jq -r 'select(.type == "Meta") | .attached')"
}

test_diff() {
	expect_eq "--diff exits 0" 0 "$(status "$MEMTRACK" report --diff "$tmp/stacks-base.msgpack" "$tmp/stacks.msgpack")"
	section 'Call sites that grew' "$tmp/out" >"$tmp/grew"
	expect_line "diff title" '^Call sites that grew most, by bytes allocated, top 4 of 4$' "$tmp/grew"
	expect_line "a new site" '^ +1 +0 B +1\.0 KiB +\+1\.0 KiB +new$' "$tmp/grew"
	expect_line "make_list 50 B -> 200 B" '^ +2 +50 B +200 B +\+150 B +\+300\.0%$' "$tmp/grew"
	expect_eq "make_list's frame" "make_list+0x22 (app) list.c:7" "$(sed -n 9p "$tmp/grew" | sed 's/^ *//')"
	"$MEMTRACK" report --diff --sort calls --stack-depth 1 "$tmp/stacks-base.msgpack" "$tmp/stacks.msgpack" >"$tmp/out"
	expect_line "by calls, matched by name" '^ +1 +1 +4 +\+3 +\+300\.0%$' "$tmp/out"
	"$MEMTRACK" report --diff --json --top 2 "$tmp/stacks-base.msgpack" "$tmp/stacks.msgpack" >"$tmp/j"
	expect_eq "json sites_key" bytes "$(json_get "$tmp/j" .sites_key)"
	expect_eq "json --top 2" 2 "$(jq '.sites | length' "$tmp/j")"
	expect_eq "json growth" "1050 150" "$(jq -r '[.sites[].growth | tostring] | join(" ")' "$tmp/j")"
	expect_eq "json base of a match" "202 50" "$(jq -r '.sites[1].base | "\(.stack) \(.bytes)"' "$tmp/j")"
	expect_eq "json base of a new site" null "$(jq -c '.sites[0].base' "$tmp/j")"
	expect_eq "json frames" make_list "$(jq -r '.sites[1].frames[0].symbol' "$tmp/j")"
	"$MEMTRACK" report --diff --json "$tmp/nostacks.msgpack" "$tmp/stacks.msgpack" >"$tmp/j"
	expect_eq "json: a side without stacks" null "$(json_get "$tmp/j" .sites)"
	"$MEMTRACK" report --diff "$tmp/nostacks.msgpack" "$tmp/stacks.msgpack" >"$tmp/out"
	expect_line "text: a side without stacks" "^  no call stacks in '$tmp/nostacks.msgpack': record with 'memtrack track --call-graph fp'\$" "$tmp/out"
}

# temporary.msgpack: make_buffer 1 temporary (100 B), make_list 2 (600 B)
test_temporary() {
	local t=$tmp/temporary.msgpack
	"$MEMTRACK" report --sort temporary "$t" >"$tmp/out"
	expect_eq "--sort temporary: its table" "Call sites by temporary allocations, top 2 of 2" \
		"$(grep '^Call sites' "$tmp/out")"
	expect_line "make_list first, 2 temporary" '^ +1 +800 B +3 +500 B +0 B +0 +2$' "$tmp/out"
	"$MEMTRACK" report --json --sort temporary "$t" >"$tmp/j"
	expect_eq "json: in temporary order" "make_list 2 600|make_buffer 1 100" \
		"$(jq -r '[.sites[] | "\(.frames[0].symbol) \(.temporary_count) \(.temporary_bytes)"] | join("|")' "$tmp/j")"
	expect_eq "json: the tree's temporary are the sites'" "$(json_get "$tmp/j" .temporary_count)" \
		"$(jq '[.sites[].temporary_count] | add' "$tmp/j")"
	"$MEMTRACK" report --json "$tmp/stacks.msgpack" >"$tmp/j"
	expect_eq "json: blocks live at the peak" "4 4" \
		"$(jq -r '"\(.peak_count) \([.sites[].peak_count] | add)"' "$tmp/j")"
	"$MEMTRACK" report --diff --sort temporary "$tmp/stacks.msgpack" "$t" >"$tmp/out"
	expect_line "--diff --sort temporary" '^ +1 +0 +2 +\+2 +new$' "$tmp/out"
}

test_usage() {
	local a=$tmp/stacks.msgpack
	expect_eq "bad --sort" 129 "$(status "$MEMTRACK" report --sort size "$a")"
	expect_line "bad --sort message" "^error: --sort expects bytes, calls, peak, leaked or temporary, not 'size'" "$tmp/err"
	expect_eq "bad --top" 129 "$(status "$MEMTRACK" report --top -3 "$a")"
	expect_eq "bad --stack-depth" 129 "$(status "$MEMTRACK" report --stack-depth many "$a")"
	expect_eq "--dump --sort" 129 "$(status "$MEMTRACK" report --dump --sort bytes "$a")"
}

test_text
test_sort_top_depth
test_json
test_no_stacks
test_attached
test_diff
test_temporary
test_usage
finish
