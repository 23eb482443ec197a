#!/bin/bash
# runner: a test past its time limit (scaled by the load) fails as TIMEOUT under its name, with all it started killed
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d)
cleanup() {
	# the hanging test's processes, by pid, should the runner have left them
	if [ -f "$tmp/pids" ]; then xargs kill -KILL <"$tmp/pids" 2>/dev/null || true; fi
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# a tree of its own: tests/run.sh runs the tests beside it; limits as on an idle machine
# unless a test says otherwise (the load's scale: test_load)
export LOAD_SCALE_MAX=1
mkdir -p "$tmp/tests/shell" "$tmp/out/tests/unit"
cp "$TOP/tests/run.sh" "$tmp/tests/"
cat >"$tmp/tests/shell/a_hangs.sh" <<EOF
#!/bin/bash
# hangs, with a stopped child that ignores TERM: only a KILL ends it
# timeout: 2
(trap '' TERM; exec sleep 1000) &
echo \$! >>"$tmp/pids"
kill -STOP \$!
echo \$\$ >>"$tmp/pids"
exec sleep 1000
EOF
cat >"$tmp/tests/shell/b_passes.sh" <<'EOF'
#!/bin/bash
# passes at once
exit 0
EOF
chmod +x "$tmp"/tests/shell/*.sh

test_timeout() {
	local rc=0
	OUTPUT=$tmp/out TEST_TIMEOUT=30 "$tmp/tests/run.sh" >"$tmp/log" 2>&1 || rc=$?
	expect_eq "timeout: the run fails" 1 "$rc"
	if grep -Eq '^shell/a_hangs +TIMEOUT after [0-9.]+s \(limit 2s\)$' "$tmp/log"; then
		pass "timeout: reported by the test's name, at its own limit"
	else
		fail "timeout: reported by the test's name, at its own limit" "$(cat "$tmp/log")"
	fi
	if grep -q '^shell/a_hangs: timed out after 2s' "$tmp/log"; then
		pass "timeout: in the list of failures"
	else
		fail "timeout: in the list of failures" "$(tail -n 3 "$tmp/log")"
	fi
	expect_eq "timeout: the next test still runs" "1 passed, 1 failed, 0 skipped" "$(tail -n 1 "$tmp/log")"
	expect_eq "timeout: nothing the test started is left, stopped or not" "" \
		"$(while read -r pid; do
			state=$(process_state "$pid")
			[ -n "$state" ] && [ "$state" != Z ] && echo "$pid $state"
		done <"$tmp/pids")"
}

test_scale() {
	OUTPUT=$tmp/out TIMEOUT_SCALE=2 "$tmp/tests/run.sh" a_hangs >"$tmp/log" 2>&1 || true
	if grep -Eq '^shell/a_hangs +TIMEOUT after [0-9.]+s \(limit 4s\)$' "$tmp/log"; then
		pass "TIMEOUT_SCALE multiplies the limit"
	else
		fail "TIMEOUT_SCALE multiplies the limit" "$(cat "$tmp/log")"
	fi
}

test_budget() {
	local rc=0
	OUTPUT=$tmp/out SUITE_BUDGET=0 "$tmp/tests/run.sh" >"$tmp/log" 2>&1 || rc=$?
	expect_eq "budget: a spent budget fails the run" 1 "$rc"
	expect_eq "budget: no test starts" 2 "$(grep -c "NOT RUN: the suite's 0s are spent" "$tmp/log")"
}

# after MAX_TIMEOUTS timeouts the rest is not run: a hang everywhere ends the suite early
test_max_timeouts() {
	local rc=0
	OUTPUT=$tmp/out MAX_TIMEOUTS=1 "$tmp/tests/run.sh" >"$tmp/log" 2>&1 || rc=$?
	expect_eq "max timeouts: the run fails" 1 "$rc"
	expect_eq "max timeouts: the test after the first timeout is not run" 1 \
		"$(grep -c '^shell/b_passes *NOT RUN: 1 tests timed out already$' "$tmp/log")"
	expect_eq "max timeouts: counted as failed" "0 passed, 2 failed, 0 skipped" "$(tail -n 1 "$tmp/log")"
}

# a loaded machine: the load average over the cores, rounded up, multiplies the limits,
# at most LOAD_SCALE_MAX times; the test knows it as TEST_SCALE
test_load() {
	local cores
	cores=$(nproc)
	echo "$((2 * cores - 1)).50 1.00 1.00 1/100 1" >"$tmp/loadavg"
	LOADAVG=$tmp/loadavg LOAD_SCALE_MAX=8 OUTPUT=$tmp/out "$tmp/tests/run.sh" a_hangs >"$tmp/log" 2>&1 || true
	if grep -Eq '^shell/a_hangs +TIMEOUT after [0-9.]+s \(limit 4s\)$' "$tmp/log"; then
		pass "load: twice the cores' load doubles the limit"
	else
		fail "load: twice the cores' load doubles the limit" "$(cat "$tmp/log")"
	fi
	cat >"$tmp/tests/shell/c_says_scale.sh" <<'EOF2'
#!/bin/bash
# fails, saying its TEST_SCALE
echo "TEST_SCALE=$TEST_SCALE"
exit 1
EOF2
	chmod +x "$tmp/tests/shell/c_says_scale.sh"
	echo "$((100 * cores)).00 1.00 1.00 1/100 1" >"$tmp/loadavg"
	LOADAVG=$tmp/loadavg LOAD_SCALE_MAX=3 TIMEOUT_SCALE=2 OUTPUT=$tmp/out \
		"$tmp/tests/run.sh" c_says_scale >"$tmp/log" 2>&1 || true
	expect_eq "load: at most LOAD_SCALE_MAX, times TIMEOUT_SCALE, as TEST_SCALE" "    | TEST_SCALE=6" \
		"$(grep '^    | TEST_SCALE=' "$tmp/log")"
	echo "0.00 0.00 0.00 1/100 1" >"$tmp/loadavg"
	LOADAVG=$tmp/loadavg LOAD_SCALE_MAX=8 OUTPUT=$tmp/out "$tmp/tests/run.sh" c_says_scale >"$tmp/log" 2>&1 || true
	expect_eq "load: an idle machine's scale is 1" "    | TEST_SCALE=1" "$(grep '^    | TEST_SCALE=' "$tmp/log")"
	rm "$tmp/tests/shell/c_says_scale.sh"
}

test_timeout
test_scale
test_budget
test_max_timeouts
test_load
finish
