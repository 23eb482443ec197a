#!/bin/bash
# track: the command runs at the scheduling policy and nice it was started
# with, as bare; memtrack's pipeline threads run at nice -10 but SCHED_BATCH,
# so that a wake-up by a tracked process does not preempt it
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v chrt >/dev/null || skip "chrt missing"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# the shell's own policy and nice, as "SCHED_OTHER 0"
show='echo "$(chrt -p $$ | sed -n "1s/.*: //p") $(nice)"'

test_command_as_started() {
	expect_eq "the command: policy and nice as bare" "$(sh -c "$show")" \
		"$("$MEMTRACK" track -q -o "$tmp" -- sh -c "$show")"
	expect_eq "under nice -n 5: the command at 5" "$(nice -n 5 sh -c "$show")" \
		"$(nice -n 5 "$MEMTRACK" track -q -o "$tmp" -- sh -c "$show")"
	expect_eq "under chrt --batch: the command SCHED_BATCH" "$(chrt -b 0 sh -c "$show")" \
		"$(chrt -b 0 "$MEMTRACK" track -q -o "$tmp" -- sh -c "$show")"
}

# the command's parent is memtrack: its poller threads, as the command sees them
test_pipeline_threads() {
	local out
	out=$("$MEMTRACK" track -q -o "$tmp" -- sh -c \
		'for t in /proc/$PPID/task/*; do
			[ "$(cat $t/comm)" = mt-poll-events ] || continue
			echo "$(chrt -p ${t##*/} | sed -n "1s/.*: //p") $(cut -d" " -f19 $t/stat)"
		done')
	expect_eq "the events poller: SCHED_BATCH at nice -10" "SCHED_BATCH -10" "$out"
}

test_command_as_started
test_pipeline_threads
finish
