#!/bin/bash
# track under sudo: --stats and -o create files as the invoking user, never someone else's
# shellcheck disable=SC2154 # $test_user, $test_uid, $test_gid: lib/user.sh
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/user.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
chmod 755 "$tmp"
cleanup() { user_cleanup; rm -rf "$tmp"; trap - EXIT TERM INT; }
trap cleanup EXIT TERM INT
user_create
user_allow_sudo
usermod -a -G users "$test_user"	# a supplementary group, which the command keeps

# root's: a directory the user cannot write, with a root 0600 file in it
mkdir "$tmp/etc"
echo "root's secret" >"$tmp/etc/victim"
chmod 600 "$tmp/etc/victim"
# the user's own directory, where the command leaves its mark when it runs
mkdir "$tmp/home"
chown "$test_user:" "$tmp/home"
echo "root's file in the user's directory" >"$tmp/home/root.jsonl"
chmod 644 "$tmp/home/root.jsonl"
mark=$tmp/home/ran

# refused <name> <stderr pattern> <sudo memtrack track args...>: exit 128, says why, no command
refused() {
	local name=$1 pattern=$2 rc
	shift 2
	rm -f "$mark"
	rc=$(status sudo_memtrack track -q "$@" -- /bin/sh -c "touch $mark")
	expect_eq "$name: exit status" 128 "$rc"
	if grep -q -- "$pattern" "$tmp/err"; then
		pass "$name: says why"
	else
		fail "$name: says why" "no '$pattern' in: $(cat "$tmp/err")"
	fi
	expect_eq "$name: the command did not run" no "$([ -e "$mark" ] && echo yes || echo no)"
}

test_stats_on_root_file() {
	local before
	before=$(fingerprint "$tmp/etc/victim")
	refused "--stats on a root 0600 file" \
		"fatal: failed to create memtrack stats file '$tmp/etc/victim': Permission denied" \
		--stats "$tmp/etc/victim" -o "$tmp/home"
	expect_eq "--stats on a root 0600 file: unchanged" "$before" "$(fingerprint "$tmp/etc/victim")"
}

test_stats_on_root_file_in_user_dir() {
	local before
	before=$(fingerprint "$tmp/home/root.jsonl")
	refused "--stats on root's file in the user's directory" "Permission denied" \
		--stats "$tmp/home/root.jsonl" -o "$tmp/home"
	expect_eq "--stats on root's file in the user's directory: unchanged" "$before" \
		"$(fingerprint "$tmp/home/root.jsonl")"
}

test_output_dir_under_root_dir() {
	refused "-o a new directory in root's" \
		"fatal: cannot create output directory '$tmp/etc/newdir/sub': Permission denied" \
		-o "$tmp/etc/newdir/sub"
	expect_eq "-o a new directory in root's: nothing made" no \
		"$([ -e "$tmp/etc/newdir" ] && echo yes || echo no)"
}

test_output_dir_not_writable() {
	refused "-o root's directory" "'$tmp/etc' is not writable: Permission denied" -o "$tmp/etc"
	expect_eq "-o root's directory: nothing written" "victim" "$(ls "$tmp/etc")"
}

# what sudo is for still works, and the user owns what was made
test_own_files() {
	local rc
	rc=$(status sudo_memtrack track -q --stats "$tmp/home/s.jsonl" -o "$tmp/home/out" \
		-- /bin/sh -c "touch $mark; id -G > $tmp/home/groups")
	expect_eq "own directory: exit status" 0 "$rc"
	expect_eq "the command has the user's groups" "$(id -G "$test_user")" "$(cat "$tmp/home/groups")"
	expect_eq "own directory: the command ran" yes "$([ -e "$mark" ] && echo yes || echo no)"
	expect_eq "own directory: artifact, directory and stats are the user's" \
		"$test_uid:$test_gid $test_uid:$test_gid $test_uid:$test_gid" \
		"$(stat -c %u:%g "$tmp"/home/out/*.MemtrackArtifact.msgpack "$tmp/home/out" \
			"$tmp/home/s.jsonl" | xargs)"
	# a second run replaces the user's own stats file (appended, it would hold two)
	rc=$(status sudo_memtrack track -q --stats "$tmp/home/s.jsonl" -o "$tmp/home/out" -- /bin/true)
	expect_eq "own stats file replaced: exit status" 0 "$rc"
	expect_eq "own stats file replaced: one run's events ring_open row" 1 \
		"$(grep -c '"k":"ring_open","t":[0-9]*,"ring":"events"' "$tmp/home/s.jsonl")"
}

test_stats_on_root_file
test_stats_on_root_file_in_user_dir
test_output_dir_under_root_dir
test_output_dir_not_writable
test_own_files
finish
