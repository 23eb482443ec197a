#!/bin/bash
# report --flamegraph: folded stacks by every cost type, --stack-depth, --diff, no stacks, truncated, usage
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report-sites "$tmp"


test_bytes() {
	expect_eq "exits 0" 0 "$(status "$MEMTRACK" report --flamegraph "$tmp/stacks.msgpack")"
	cat >"$tmp/want" <<'WANT'
[no stack] 5
__libc_start_main;main;make_buffer 864
__libc_start_main;main;make_list 200
__libc_start_main;main;parse:config;libweird.so+0x1234 1050
main;[unknown] 10
WANT
	if cmp -s "$tmp/want" "$tmp/out"; then pass "folded by bytes"; else fail "folded by bytes" "$(diff "$tmp/want" "$tmp/out")"; fi
	expect_eq "nothing on stderr" "" "$(cat "$tmp/err")"
	expect_eq "weights add up to the bytes allocated" \
		"$("$MEMTRACK" report --json "$tmp/stacks.msgpack" | jq .bytes_allocated)" \
		"$(awk '{ s += $NF } END { print s }' "$tmp/out")"
	expect_eq "every line is 'frames weight'" 5 "$(grep -Ec '^[^ ].* [0-9]+$' "$tmp/out")"
}

test_count() {
	"$MEMTRACK" report --flamegraph --weight count "$tmp/stacks.msgpack" >"$tmp/out"
	expect_eq "folded by count" "1 4 1 2 1" "$(awk '{ print $NF }' "$tmp/out" | paste -sd' ')"
	"$MEMTRACK" report --flamegraph --weight bytes "$tmp/stacks.msgpack" >"$tmp/out"
	expect_eq "--weight bytes" "5 864 200 1050 10" "$(awk '{ print $NF }' "$tmp/out" | paste -sd' ')"
	"$MEMTRACK" report --flamegraph --weight calls "$tmp/stacks.msgpack" >"$tmp/out"
	expect_eq "--weight calls, as count" "1 4 1 2 1" "$(awk '{ print $NF }' "$tmp/out" | paste -sd' ')"
}

# every --sort key weighs: the weights add up to the tree's figure in --json
test_cost_types() {
	local a=$tmp/stacks.msgpack t=$tmp/temporary.msgpack
	"$MEMTRACK" report --json "$a" >"$tmp/j"
	"$MEMTRACK" report --flamegraph --weight peak "$a" >"$tmp/out"
	expect_eq "--weight peak: the sites live at the peak" \
		"__libc_start_main;main;make_buffer 400|__libc_start_main;main;parse:config;libweird.so+0x1234 1050|main;[unknown] 10" \
		"$(paste -sd'|' "$tmp/out")"
	expect_eq "--weight peak adds up to the peak" "$(json_get "$tmp/j" .peak_bytes)" \
		"$(awk '{ s += $NF } END { print s }' "$tmp/out")"
	"$MEMTRACK" report --flamegraph --weight leaked "$a" >"$tmp/out"
	expect_eq "--weight leaked adds up to the leaks" "$(json_get "$tmp/j" .leaked_bytes)" \
		"$(awk '{ s += $NF } END { print s }' "$tmp/out")"
	"$MEMTRACK" report --flamegraph --weight temporary "$t" >"$tmp/out"
	expect_eq "--weight temporary" "__libc_start_main;main;make_buffer 1|__libc_start_main;main;make_list 2" \
		"$(paste -sd'|' "$tmp/out")"
}

test_depth() {
	"$MEMTRACK" report --flamegraph --stack-depth 1 "$tmp/stacks.msgpack" >"$tmp/out"
	expect_eq "--stack-depth 1: the allocators' callers" \
		"[no stack] 5|[unknown] 10|libweird.so+0x1234 1050|make_buffer 864|make_list 200" \
		"$(paste -sd'|' "$tmp/out")"
}

test_filters() {
	expect_eq "--pid of nobody" 0 "$(status "$MEMTRACK" report --flamegraph --pid 99 "$tmp/stacks.msgpack")"
	expect_eq "--pid of nobody: no lines" 0 "$(wc -l <"$tmp/out")"
}

test_no_stacks() {
	expect_eq "no stacks exits 1" 1 "$(status "$MEMTRACK" report --flamegraph "$tmp/nostacks.msgpack")"
	expect_eq "no stacks message" "error: no call stacks in '$tmp/nostacks.msgpack': record with 'memtrack track --call-graph fp'" \
		"$(cat "$tmp/err")"
	expect_eq "no stacks: nothing on stdout" 0 "$(wc -c <"$tmp/out")"
}

test_truncated() {
	expect_eq "truncated exits 1" 1 "$(status "$MEMTRACK" report --flamegraph "$tmp/stacks-truncated.msgpack")"
	expect_eq "stacks without their records" "[no stack] 5|[unknown stack] 2124" "$(paste -sd'|' "$tmp/out")"
	if grep -q "is truncated after 13 records" "$tmp/err"; then
		pass "truncated message"; else fail "truncated message" "$(cat "$tmp/err")"; fi
}

# --diff --flamegraph: difffolded.pl's lines, "stack base head", of either artifact
test_diff() {
	local b=$tmp/stacks-base.msgpack h=$tmp/stacks.msgpack
	expect_eq "--diff --flamegraph exits 0" 0 "$(status "$MEMTRACK" report --diff --flamegraph "$b" "$h")"
	cat >"$tmp/want" <<'WANT'
[no stack] 0 5
__libc_start_main;main;make_buffer 1000 864
__libc_start_main;main;make_list 50 200
__libc_start_main;main;parse:config;libweird.so+0x1234 0 1050
main;[unknown] 0 10
main;only_in_base 300 0
WANT
	if cmp -s "$tmp/want" "$tmp/out"; then pass "folded diff by bytes"; else fail "folded diff by bytes" "$(diff "$tmp/want" "$tmp/out")"; fi
	expect_eq "base column adds up to base's bytes" \
		"$("$MEMTRACK" report --json "$b" | jq .bytes_allocated)" "$(awk '{ s += $(NF-1) } END { print s }' "$tmp/out")"
	"$MEMTRACK" report --diff --flamegraph --weight calls --stack-depth 1 "$b" "$h" >"$tmp/out"
	expect_eq "--weight calls --stack-depth 1" \
		"[no stack] 0 1|[unknown] 0 1|libweird.so+0x1234 0 2|make_buffer 1 4|make_list 1 1|only_in_base 1 0" \
		"$(paste -sd'|' "$tmp/out")"
	expect_eq "a side without stacks exits 1" 1 \
		"$(status "$MEMTRACK" report --diff --flamegraph "$tmp/nostacks.msgpack" "$h")"
	expect_eq "and names it" "error: no call stacks in '$tmp/nostacks.msgpack': record with 'memtrack track --call-graph fp'" \
		"$(cat "$tmp/err")"
}

test_usage() {
	local a=$tmp/stacks.msgpack
	expect_eq "--weight alone" 129 "$(status "$MEMTRACK" report --weight count "$a")"
	expect_eq "bad --weight" 129 "$(status "$MEMTRACK" report --flamegraph --weight size "$a")"
	expect_eq "bad --weight: the names of --sort" \
		"error: --weight expects bytes, calls, peak, leaked or temporary, not 'size'" \
		"$(head -1 "$tmp/err")"
	expect_eq "--flamegraph --json" 129 "$(status "$MEMTRACK" report --flamegraph --json "$a")"
	expect_eq "--flamegraph --diff --top" 129 \
		"$(status "$MEMTRACK" report --flamegraph --diff --top 3 "$a" "$a")"
	expect_eq "--flamegraph --top" 129 "$(status "$MEMTRACK" report --flamegraph --top 3 "$a")"
	expect_eq "--flamegraph --dump" 129 "$(status "$MEMTRACK" report --flamegraph --dump "$a")"
}

test_bytes
test_count
test_cost_types
test_depth
test_filters
test_no_stacks
test_truncated
test_diff
test_usage
finish
