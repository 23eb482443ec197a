#!/bin/bash
# track: a process that scribbles over its shim ring ends its own tracking, not memtrack's
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# $1: ring_scribble's argument, $2: its name in the checks, $3: what memtrack must say
test_scribbled_ring() {
	local arg=$1 name=$2 why=$3 out="$tmp/$2" rc=0 artifact

	"$MEMTRACK" track -o "$out" --backend preload \
		"$WORKLOADS/ring_scribble $arg; echo \$? > $tmp/done-$name; $WORKLOADS/malloc_free" \
		>/dev/null 2>"$tmp/err-$name" || rc=$?
	expect_eq "$name: memtrack fails the run, the events are incomplete" 128 "$rc"
	expect_eq "$name: the process ran to its end" 0 "$(cat "$tmp/done-$name")"
	if grep -q "ring of pid [0-9]* (ring_scribble), thread [0-9]*, is corrupt: $why" "$tmp/err-$name"; then
		pass "$name: memtrack says which process and why"
	else
		fail "$name: memtrack says which process and why" "$(cat "$tmp/err-$name")"
	fi
	artifact=$(ls "$out"/*.msgpack)
	report_json "$artifact" "$tmp/r-$name.json"
	expect_eq "$name: its 1000 malloc(1234) before the scribble" 1000 \
		"$(count_sized "$artifact" Malloc 1234)"
	expect_eq "$name: none of the 200000 after" 0 "$(count_sized "$artifact" Malloc 4321)"
	expect_eq "$name: the next process is tracked as ever" 100 \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free") | .counts.Malloc] | add' \
			"$tmp/r-$name.json")"
}

# $1 rings of $2 bytes, their write positions at their ends: memtrack's shared memory (kB)
# once it has read them all, in $rss; memtrack's stderr in $tmp/err-flood-$1
ring_flood() {
	local n=$1 size=$2 pid
	rm -rf "$tmp/flood" && mkfifo "$tmp/in-$n"
	"$MEMTRACK" track -o "$tmp/flood" --backend preload --ring-size heap=1M \
		-- "$WORKLOADS/ring_flood" "$n" "$size" <"$tmp/in-$n" >"$tmp/sent-$n" 2>"$tmp/err-flood-$n" &
	pid=$!
	exec 3>"$tmp/in-$n"
	for _ in $(seq 600); do
		grep -q "preload shim: rings sent$\|broke the socket's protocol" "$tmp/err-flood-$n" && break
		! kill -0 $pid 2>/dev/null && break
		sleep 0.1
	done
	rss=$(awk '/^RssShmem:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	exec 3>&-
	flood_rc=0
	wait $pid || flood_rc=$?
}

# before: memtrack read each ring to its end, and held 200 MiB of the process's 1.7 MB
test_many_rings() {
	local rss flood_rc
	ring_flood 200 $((1 << 20))
	expect_eq "many rings: the process sent its 200" 200 "$(cat "$tmp/sent-200")"
	if [ -n "$rss" ] && [ "$rss" -lt $((32 << 10)) ]; then
		pass "many rings: memtrack's shared memory stays small (${rss} kB)"
	else
		fail "many rings: memtrack's shared memory" "${rss:-?} kB for 200 rings never written"
	fi
	# before: the rings were held to the end, and the run said nothing, exit 0
	expect_eq "many rings: the run fails, incomplete" 128 "$flood_rc"
	expect_eq "many rings: memtrack says the rings never came to their end, once" 1 \
		"$(grep -c "^warning: the preload shim's ring of pid [0-9]* (ring_flood), thread [0-9]*, is corrupt: its write position is past its last record; " "$tmp/err-flood-200")"
	# past the rings a process may have mapped at once, memtrack says so, and fails
	ring_flood 5000 $((1 << 20))
	expect_eq "past the most rings: the run fails, incomplete" 128 "$flood_rc"
	expect_eq "past the most rings: memtrack says so, once" 1 \
		"$(grep -c "^warning: thread [0-9]* of pid [0-9]* (ring_flood) brings a preload shim ring past the 4096 a process may have mapped at once (12288 in all): its allocations, and those of the threads after it, are not tracked$" "$tmp/err-flood-5000")"
	if [ -n "$rss" ] && [ "$rss" -lt $((64 << 10)) ]; then
		pass "past the most rings: memtrack's shared memory stays small (${rss} kB)"
	else
		fail "past the most rings: memtrack's shared memory" "${rss:-?} kB"
	fi
	# before: 8 rings of 64 MiB, 512 MiB held; now the connection ends at the first
	ring_flood 8 $((64 << 20))
	expect_eq "rings of another size: the run fails" 128 "$flood_rc"
	expect_eq "rings of another size: memtrack names the process" 1 \
		"$(grep -c "^warning: pid [0-9]* (ring_flood) could not be served by memtrack's preload shim socket (its shim broke the socket's protocol): its allocations are not tracked$" "$tmp/err-flood-8")"
}

test_many_rings
test_scribbled_ring "" scribble "a record of an impossible length"
# a free stamped an hour ahead held the process's events, and its threads, to the end
test_scribbled_ring future future "a timestamp from the future"
# a thread started after memtrack let the process go: before, the shim unmapped the rings
# memtrack had released, the main thread's among them, and the main thread's next malloc faulted
test_scribbled_ring thread thread "a record of an impossible length"
finish
