#!/bin/bash
# Runs the unit tests (build/tests/unit/*) and the shell tests (tests/shell/*.sh).
# A test exits 0 to pass, 2 to skip (printing "[Skip] <reason>"), anything else fails.
# Usage: tests/run.sh [<pattern>]   e.g. tests/run.sh report_
set -u
cd "$(dirname "$0")/.." || exit 1
OUTPUT=${OUTPUT:-.output}
pattern=${1:-}
passed=0 failed=0 skipped=0
failures=()
failed_checks=()

# failure_lines <log>: its failed checks, or its last line when a test died before any check failed
failure_lines() {
	grep -m 20 '\[Fail' "$1" || tail -n 1 "$1"
}

run_one() {
	local name=$1 log rc start
	shift
	log=$(mktemp)
	start=$(date +%s.%N)
	timeout -k 10 600 "$@" >"$log" 2>&1
	rc=$?
	printf '%-44s' "$name"
	case $rc in
	0) passed=$((passed + 1)); echo " ok ($(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")s)" ;;
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
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/shell/*.sh; do
	[[ -n "$pattern" && "$(basename "$t")" != *"$pattern"* ]] && continue
	run_one "shell/$(basename "$t" .sh)" "$t"
done

# the failed checks again, last, where a log cut to its tail still shows them
[ ${#failed_checks[@]} -gt 0 ] && printf '%s\n' "${failed_checks[@]}"
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
