#!/bin/bash
# track: a stripped program's frames from a local debuginfod server, then from its cache
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

# in a network namespace of its own, whose only interface is lo: the server
# is reachable on 127.0.0.1 and from nowhere else, and every port is free
if [ -z "${MEMTRACK_TEST_NETNS:-}" ]; then
	exec unshare --net env MEMTRACK_TEST_NETNS=1 "$0" "$@"
fi
ip link set lo up

tmp=$(mktemp -d)
server=
cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

port=$((20000 + RANDOM % 20000))
mkdir -p "$tmp/bin" "$tmp/srv"
cp "$WORKLOADS/cxx_inline" "$tmp/bin/"
objcopy --only-keep-debug "$tmp/bin/cxx_inline" "$tmp/srv/cxx_inline.debug"
strip --strip-all "$tmp/bin/cxx_inline"
id=$(readelf -n "$tmp/bin/cxx_inline" | awk '/Build ID:/ { print $3 }')

debuginfod -F -p "$port" -d "$tmp/db.sqlite" "$tmp/srv" >"$tmp/server.log" 2>&1 &
server=$!
# until it has indexed the debug file; the probe's cache would keep a "not found"
probe() {
	rm -rf "$tmp/probe"
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/probe \
		debuginfod-find debuginfo "$id" >/dev/null 2>&1
}
if ! wait_for 60 probe; then
	echo "debuginfod did not serve $id:"
	cat "$tmp/server.log"
	exit 1
fi

run() {
	rm -f "$tmp"/*.msgpack
	art=$(DEBUGINFOD_URLS=$1 DEBUGINFOD_CACHE_PATH=$tmp/cache MEMTRACK_DEBUG_DIRS=$tmp/none \
		track_workload "$tmp" -- "$tmp/bin/cxx_inline" 2>"$tmp/err")
}

test_served() {
	run "http://127.0.0.1:$port"
	expect_eq "debuginfod: the debug file of a stripped program" "$(cxx_inline_expected)" \
		"$(cxx_inline_chain "$art")"
	if [ -s "$tmp/cache/$id/debuginfo" ]; then
		pass "debuginfod: kept in the cache"
	else
		fail "debuginfod: kept in the cache" "no $tmp/cache/$id/debuginfo"
	fi
}

test_cached() {
	kill "$server"
	wait "$server" 2>/dev/null || true
	server=
	run "http://127.0.0.1:$port"
	expect_eq "debuginfod: server gone, from the cache" "$(cxx_inline_expected)" \
		"$(cxx_inline_chain "$art")"
	expect_eq "debuginfod: nothing to say" "" "$(cat "$tmp/err")"
}

test_unreachable() {
	rm -rf "$tmp/cache"
	run "http://127.0.0.1:$port"
	expect_eq "debuginfod: no server, no lines" "0 0 0 0" \
		"$(cxx_inline_chain "$art" | sed 's/.*://' | tr '\n' ' ' | sed 's/ $//')"
	expect_eq "debuginfod: no server, said once" 1 "$(grep -c "debuginfod: no more questions" "$tmp/err")"
}

# a cache whose nearest existing part is /tmp: another user could make the rest first
test_cache_in_tmp() {
	local where=/tmp/memtrack-debuginfod-$$
	rm -f "$tmp"/*.msgpack
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$where/cache \
		MEMTRACK_DEBUG_DIRS=$tmp/none track_workload "$tmp" -- "$tmp/bin/cxx_inline" \
		>/dev/null 2>"$tmp/err"
	expect_eq "debuginfod: a cache under /tmp is refused, and said" 1 \
		"$(grep -c "debuginfod: not asked for debug files: its cache '/tmp' is not a directory of memtrack's user's alone" "$tmp/err")"
	expect_eq "debuginfod: nothing made under /tmp" no "$([ -e "$where" ] && echo yes || echo no)"
}

test_served
test_cached
test_unreachable
test_cache_in_tmp
finish
