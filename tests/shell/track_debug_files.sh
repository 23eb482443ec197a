#!/bin/bash
# track: a stripped program's frames from its separate debug file, by build id and by .gnu_debuglink
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# stripped <dir>: a copy of cxx_inline without symbols or DWARF in <dir>, and
# its debug file <dir>/cxx_inline.debug
stripped() {
	mkdir -p "$1"
	cp "$WORKLOADS/cxx_inline" "$1/"
	objcopy --only-keep-debug "$1/cxx_inline" "$1/cxx_inline.debug"
	strip --strip-all "$1/cxx_inline"
}

build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

test_without() {
	stripped "$tmp/bare"
	rm "$tmp/bare/cxx_inline.debug"
	rm -f "$tmp"/*.msgpack
	art=$(MEMTRACK_DEBUG_DIRS=$tmp/nothing track_workload "$tmp" -- "$tmp/bare/cxx_inline")
	expect_eq "debug files: none, no lines" "0 0 0 0" \
		"$(cxx_inline_chain "$art" | sed 's/.*://' | tr '\n' ' ' | sed 's/ $//')"
}

test_build_id() {
	local id
	stripped "$tmp/b"
	id=$(build_id "$tmp/b/cxx_inline")
	mkdir -p "$tmp/debug/.build-id/${id:0:2}"
	mv "$tmp/b/cxx_inline.debug" "$tmp/debug/.build-id/${id:0:2}/${id:2}.debug"
	rm -f "$tmp"/*.msgpack
	art=$(MEMTRACK_DEBUG_DIRS=$tmp/nothing:$tmp/debug track_workload "$tmp" -- "$tmp/b/cxx_inline")
	expect_eq "debug files: by build id in the second directory" "$(cxx_inline_expected)" \
		"$(cxx_inline_chain "$art")"
}

test_debuglink() {
	stripped "$tmp/l"
	(cd "$tmp/l" && objcopy --add-gnu-debuglink=cxx_inline.debug cxx_inline)
	mkdir "$tmp/l/.debug"
	mv "$tmp/l/cxx_inline.debug" "$tmp/l/.debug/"
	rm -f "$tmp"/*.msgpack
	art=$(MEMTRACK_DEBUG_DIRS=$tmp/nothing track_workload "$tmp" -- "$tmp/l/cxx_inline")
	expect_eq "debug files: by .gnu_debuglink in .debug/" "$(cxx_inline_expected)" \
		"$(cxx_inline_chain "$art")"

	# the same name, another file: its CRC is not the link's
	stripped "$tmp/other"
	echo "not the same build" >>"$tmp/other/cxx_inline.debug"
	cp "$tmp/other/cxx_inline.debug" "$tmp/l/.debug/cxx_inline.debug"
	rm -f "$tmp"/*.msgpack
	art=$(MEMTRACK_DEBUG_DIRS=$tmp/nothing track_workload "$tmp" -- "$tmp/l/cxx_inline")
	expect_eq "debug files: a debuglink file with another CRC is not taken" "0 0 0 0" \
		"$(cxx_inline_chain "$art" | sed 's/.*://' | tr '\n' ' ' | sed 's/ $//')"
}

test_without
test_build_id
test_debuglink
finish
