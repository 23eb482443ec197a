#!/bin/bash
# track: programs that watch their children's stops see none of memtrack's: a job-control
# shell (set -m, an interactive bash at a terminal) and gdb print and exit as bare
# timeout: 300
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
COMPAT=$(cd "$(dirname "$0")/../compat" && pwd)

# both <label> <command...>: run bare and under memtrack (in $tmp/bare, $tmp/mt): the same
# exit status, stdout, stderr (where a shell says "Stopped") and files written
both() {
	local label=$1 rc_bare=0 rc_mt=0

	shift
	rm -rf "$tmp/bare" "$tmp/mt" "$tmp/out"
	mkdir -p "$tmp/bare" "$tmp/mt" "$tmp/out"
	(cd "$tmp/bare" && "$@" >../bare.out 2>../bare.err) || rc_bare=$?
	(cd "$tmp/mt" && "$MEMTRACK" track -q -o "$tmp/out" -- "$@" >../mt.out 2>../mt.err) ||
		rc_mt=$?
	sed -i 's/process [0-9]*/process N/' "$tmp"/bare.out "$tmp"/mt.out "$tmp"/*.err
	[ "$rc_mt" = "$rc_bare" ] || { echo "$label: exit $rc_mt, bare $rc_bare"; return 1; }
	cmp -s "$tmp/bare.out" "$tmp/mt.out" ||
		{ echo "$label: stdout differs:"; diff "$tmp/bare.out" "$tmp/mt.out" | head; return 1; }
	cmp -s "$tmp/bare.err" "$tmp/mt.err" ||
		{ echo "$label: stderr differs:"; diff "$tmp/bare.err" "$tmp/mt.err" | head; return 1; }
	diff -r "$tmp/bare" "$tmp/mt" >/dev/null ||
		{ echo "$label: files differ"; return 1; }
}

# 20 runs: a stop of id that bash saw would end the script with 147 and no f.txt
test_set_m() {
	local i bad=0

	for i in $(seq 20); do
		both "set -m, run $i" bash -c 'set -m; /bin/echo first; /usr/bin/id > f.txt' ||
			bad=$((bad + 1))
	done
	expect_eq "set -m: 20 runs as bare" 0 "$bad"
	# ten jobs a run, each of an executable the run has not seen yet
	bad=0
	for i in $(seq 5); do
		both "set -m, ten jobs, run $i" bash -c 'set -m; /bin/echo first; /usr/bin/id > f.txt
			/usr/bin/basename /a/b; /usr/bin/dirname /a/b; /bin/uname -s; /usr/bin/expr 1 + 1
			/usr/bin/seq 2; /usr/bin/tr a b </dev/null; /usr/bin/head -c0 /dev/null
			/usr/bin/printf "x\n"' || bad=$((bad + 1))
	done
	expect_eq "set -m, ten jobs: 5 runs as bare" 0 "$bad"
}

test_pty() {
	local i bad=0

	for i in 1 2 3; do
		both "interactive bash, run $i" /usr/bin/python3 "$COMPAT/pty_run.py" \
			"$COMPAT/pty-commands" -- bash --norc --noprofile --noediting -i ||
			bad=$((bad + 1))
	done
	expect_eq "interactive bash in a pty: 3 runs as bare" 0 "$bad"
}

test_gdb() {
	local i bad=0

	command -v gdb >/dev/null || { echo "gdb is not installed: not run"; return; }
	for i in 1 2 3; do
		both "gdb, run $i" gdb -q -nx -batch -ex run --args /bin/echo hi || bad=$((bad + 1))
	done
	expect_eq "gdb runs /bin/echo: 3 runs as bare" 0 "$bad"
}

test_set_m
test_pty
test_gdb
finish
