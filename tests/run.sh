#!/bin/bash
# Runs the unit tests (build/tests/unit/*) and the shell tests (tests/shell/*.sh).
# A test exits 0 to pass, 2 to skip (printing "[Skip] <reason>"), anything else fails.
# Usage: tests/run.sh [<pattern>]   e.g. tests/run.sh report_
#
# Time limits: a test is killed, with everything it started, and fails as a
# timeout after TEST_TIMEOUT seconds (default 60), or after the N of a
# "# timeout: N" line in its first 15 lines (tests/unit/<name>.c for a unit
# test).  TIMEOUT_SCALE multiplies every limit (a slow machine, valgrind).
# A loaded machine multiplies them too, by its load: the load average over
# the cores (/proc/loadavg's first figure, rounded up), 1 to LOAD_SCALE_MAX
# (default 8; 1 turns it off), taken as each test starts.  A limit is there
# to end a hang, and a machine kept busy by other work runs every test that
# many times slower.  A test gets the two together as TEST_SCALE, for the
# waits it bounds itself (wait_for in tests/shell/lib/common.sh).
# Once SUITE_BUDGET seconds (default 2700, times the load's scale) have
# passed, the tests not started yet fail as not run, so the suite ends
# within its budget plus one limit.
# After MAX_TIMEOUTS tests (default 3) have timed out, the rest fail as not
# run too: a hang in the pipeline hangs every test, and the suite should
# say so in minutes, not in its whole budget.
#
# Backends: a shell test with a "# backends: both" line in its first 15 lines
# runs twice, as itself (auto: the preload shim where it can) and again as
# "<name>[bpf]" with MEMTRACK_BACKEND=bpf, so its exact counts hold for the
# uprobe path too.  BPF_PASS=0 skips the second run.
set -u
cd "$(dirname "$0")/.." || exit 1
OUTPUT=${OUTPUT:-.output}
TEST_TIMEOUT=${TEST_TIMEOUT:-60}
TIMEOUT_SCALE=${TIMEOUT_SCALE:-1}
LOAD_SCALE_MAX=${LOAD_SCALE_MAX:-8}
LOADAVG=${LOADAVG:-/proc/loadavg}
CORES=$(nproc)
SUITE_BUDGET=${SUITE_BUDGET:-2700}
BPF_PASS=${BPF_PASS:-1}
MAX_TIMEOUTS=${MAX_TIMEOUTS:-3}
timeouts=0
pattern=${1:-}
passed=0 failed=0 skipped=0
failures=()
failed_checks=()
suite_start=$SECONDS

# failure_lines <log>: its failed checks, or its last line when a test died before any check failed
failure_lines() {
	grep -m 20 '\[Fail' "$1" || tail -n 1 "$1"
}

# load_scale: the load average over the cores, rounded up, from 1 to LOAD_SCALE_MAX
load_scale() {
	awk -v c="$CORES" -v m="$LOAD_SCALE_MAX" '{ s = int(($1 + c - 1) / c)
		print (s < 1 ? 1 : s > m ? m : s); exit }' "$LOADAVG" 2>/dev/null || echo 1
}

# time_limit <source>: the seconds its "# timeout: N" line gives, else the default
time_limit() {
	local n
	n=$(sed -n '1,15s/^.*[#*] timeout: \([0-9][0-9]*\).*$/\1/p' "$1" 2>/dev/null | head -n 1)
	echo $(( ${n:-$TEST_TIMEOUT} * TEST_SCALE ))
}

# runs_both_backends <source>: whether it asks for a second run under bpf
runs_both_backends() {
	[ "$BPF_PASS" != 0 ] && sed -n '1,15p' "$1" | grep -q '^# backends: both$'
}

fail_one() {
	failed=$((failed + 1))
	failures+=("$1")
	failed_checks+=("$1: $2")
}

# run_one <name> <source> <command...>
run_one() {
	local name=$1 limit log rc start elapsed tpid last load
	load=$(load_scale)
	export TEST_SCALE=$((TIMEOUT_SCALE * load))
	limit=$(time_limit "$2")
	shift 2
	printf '%-44s' "$name"
	if [ $((SECONDS - suite_start)) -ge $((SUITE_BUDGET * load)) ]; then
		echo " NOT RUN: the suite's $((SUITE_BUDGET * load))s are spent"
		fail_one "$name" "not run: the suite's $((SUITE_BUDGET * load))s are spent"
		return
	fi
	if [ "$timeouts" -ge "$MAX_TIMEOUTS" ]; then
		echo " NOT RUN: $timeouts tests timed out already"
		fail_one "$name" "not run: $timeouts tests timed out already"
		return
	fi
	log=$(mktemp)
	start=$(date +%s.%N)
	# timeout leads a process group of its own: at the limit the test and
	# every process it started get TERM, and KILL 10 s later
	timeout -k 10 "$limit" "$@" >"$log" 2>&1 &
	tpid=$!
	wait $tpid
	rc=$?
	elapsed=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
	if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ "${elapsed%.*}" -ge "$limit" ]; then
		# what outlived the test: a process that ignores or handles TERM
		kill -KILL -- -"$tpid" 2>/dev/null
		echo " TIMEOUT after ${elapsed}s (limit ${limit}s)"
		timeouts=$((timeouts + 1))
		sed 's/^/    | /' "$log" | tail -n 40
		last=$(tail -n 1 "$log")
		fail_one "$name" "timed out after ${limit}s${last:+; its log ends: $last}"
		rm -f "$log"
		return
	fi
	case $rc in
	0) passed=$((passed + 1)); echo " ok (${elapsed}s)" ;;
	2) skipped=$((skipped + 1)); echo " SKIP: $(grep -m1 -o '\[Skip\].*' "$log")" ;;
	*)
		failed=$((failed + 1))
		failures+=("$name")
		echo " FAIL (exit $rc)"
		sed 's/^/    | /' "$log" | tail -n 40
		mapfile -t -O "${#failed_checks[@]}" failed_checks < <(failure_lines "$log" | sed "s|^|$name: |")
		;;
	esac
	rm -f "$log"
}

for t in "$OUTPUT"/tests/unit/*; do
	[ -x "$t" ] || continue
	case $(basename "$t") in *.o|*.d) continue ;; esac
	[[ -n "$pattern" && "$(basename "$t")" != *"$pattern"* ]] && continue
	run_one "unit/$(basename "$t")" "tests/unit/$(basename "$t").c" "$t"
done
for t in tests/shell/*.sh; do
	[[ -n "$pattern" && "$(basename "$t")" != *"$pattern"* ]] && continue
	run_one "shell/$(basename "$t" .sh)" "$t" "$t"
	runs_both_backends "$t" &&
		run_one "shell/$(basename "$t" .sh)[bpf]" "$t" env MEMTRACK_BACKEND=bpf "$t"
done

# the failed checks again, last, where a log cut to its tail still shows them
[ ${#failed_checks[@]} -gt 0 ] && printf '%s\n' "${failed_checks[@]}"
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
