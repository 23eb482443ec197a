#!/bin/bash
# report --timeline of a tracked program named `touch pw`: process and PNG names run nothing in gnuplot
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v gnuplot >/dev/null || skip "gnuplot is not installed (gnuplot-nox)"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
mkdir "$tmp/bin" "$tmp/out" "$tmp/work"

# programs whose names (comm, 15 bytes at most, and exe) are gnuplot code in double quotes
progs=('`touch pw1`' $'\nEOD\n!touch pw2' '";`touch pw3`"')
for p in "${progs[@]}"; do
	cp "$WORKLOADS/malloc_free" "$tmp/bin/$p"
done

ran() { find "$tmp" -name 'pw*' | wc -l; }

test_process_names() {
	local art rc=0
	# shellcheck disable=SC2016 # the loop runs in the tracked shell
	art=$(track_workload "$tmp/out" -- /bin/sh -c 'for p in "$0"/*; do "$p"; done' "$tmp/bin")
	expect_eq "tracked: 3 programs of 100 allocations each" 300 \
		"$("$MEMTRACK" report --json "$art" |
			jq --arg d "$tmp/bin/" '[.processes[] | select(.exe | startswith($d)) | .counts.Malloc] | add')"
	(cd "$tmp/work" && "$MEMTRACK" report -q --timeline "$tmp/heap.png" "$art" >/dev/null) \
		2>"$tmp/err" || rc=$?
	expect_eq "--timeline: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
	expect_eq "--timeline: a PNG" PNG "$(head -c 4 "$tmp/heap.png" | tail -c 3)"
	expect_eq "--timeline: no command ran" 0 "$(ran)"
	(cd "$tmp/work" && "$MEMTRACK" report -q --gnuplot "$tmp/heap.gp" "$art" >/dev/null)
	(cd "$tmp/work" && gnuplot "$tmp/heap.gp") 2>/dev/null || true
	expect_eq "--gnuplot: the script alone runs nothing either" 0 "$(ran)"
	expect_eq "--gnuplot: the three programs are plotted, one title each" 3 \
		"$(grep -c "with steps lw 1 title '[0-9]* .*touch pw[123]" "$tmp/heap.gp")"
}

test_png_name() {
	local art png rc=0
	art=$(ls "$tmp"/out/*.MemtrackArtifact.msgpack)
	png="$tmp/work/\`touch pw4\`\"'.png"
	(cd "$tmp/work" && "$MEMTRACK" report -q --timeline "$png" "$art" >/dev/null) \
		2>"$tmp/err" || rc=$?
	expect_eq "PNG name: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
	expect_eq "PNG name: the PNG under its name" PNG "$(head -c 4 "$png" | tail -c 3)"
	expect_eq "PNG name: no command ran" 0 "$(ran)"
}

test_process_names
test_png_name
finish
