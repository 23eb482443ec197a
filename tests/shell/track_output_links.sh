#!/bin/bash
# track as root: no link or directory of another user leads the artifact or stats file anywhere
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

echo "root's secret" >"$tmp/victim"
chmod 600 "$tmp/victim"
mark=$tmp/ran
# a shared directory such as /tmp: root's, sticky, writable by all
mkdir -m 1777 "$tmp/shared"
# the other user's own directory
mkdir "$tmp/theirs"
chown "$test_user:" "$tmp/theirs"

# refused <name> <stderr pattern> <memtrack track args...>: exit 128, says why, no command,
# victim unchanged
refused() {
	local name=$1 pattern=$2 rc before
	shift 2
	rm -f "$mark"
	before=$(fingerprint "$tmp/victim")
	rc=$(status "$MEMTRACK" track -q "$@" -- /bin/sh -c "touch $mark")
	expect_eq "$name: exit status" 128 "$rc"
	if grep -q -- "$pattern" "$tmp/err"; then
		pass "$name: says why"
	else
		fail "$name: says why" "no '$pattern' in: $(cat "$tmp/err")"
	fi
	expect_eq "$name: the command did not run" no "$([ -e "$mark" ] && echo yes || echo no)"
	expect_eq "$name: the victim is unchanged" "$before" "$(fingerprint "$tmp/victim")"
}

# pids are predictable: links for the next 3000 of them, as another user would plant them
test_planted_artifact_links() {
	local last max
	last=$(cat /proc/sys/kernel/ns_last_pid)
	max=$(cat /proc/sys/kernel/pid_max)
	as_user perl -e 'my ($dir, $last, $max) = @ARGV;
		for my $i (1 .. 3000) {
			my $pid = ($last + $i) % $max;
			symlink("'"$tmp/victim"'", "$dir/$pid.MemtrackArtifact.msgpack") or die "$!";
		}' "$tmp/shared" "$last" "$max"
	refused "artifact over a planted link" "the file exists: memtrack does not replace it" \
		-o "$tmp/shared"
}

test_stats_link() {
	as_user ln -s "$tmp/victim" "$tmp/shared/s.jsonl"
	refused "--stats on another user's link" \
		"failed to create memtrack stats file '$tmp/shared/s.jsonl': it is a symbolic link" \
		--stats "$tmp/shared/s.jsonl" -o "$tmp"
}

test_their_directory() {
	refused "-o another user's directory" "'$tmp/theirs' belongs to uid $test_uid" \
		-o "$tmp/theirs"
	expect_eq "-o another user's directory: nothing written" "" "$(ls "$tmp/theirs")"
}

test_their_link_on_the_way() {
	as_user ln -s "$tmp" "$tmp/theirs/up"
	refused "-o through another user's link" \
		"goes through the symbolic link 'up' of uid $test_uid, which memtrack does not follow" \
		-o "$tmp/theirs/up/made"
	expect_eq "-o through another user's link: nothing made" no \
		"$([ -e "$tmp/made" ] && echo yes || echo no)"
}

# writable by all without the sticky bit: anyone could swap the files
test_open_directory() {
	mkdir -m 777 "$tmp/open"
	refused "-o a world-writable directory" "'$tmp/open' is writable by other users and not sticky" \
		-o "$tmp/open"
}

# root's own links are followed; a new artifact in a shared directory is fine
test_allowed() {
	local rc
	ln -s "$tmp/shared" "$tmp/rootlink"
	rm -f "$mark"
	rc=$(status "$MEMTRACK" track -q -o "$tmp/rootlink/out" -- /bin/sh -c "touch $mark")
	expect_eq "root's link: exit status" 0 "$rc"
	expect_eq "root's link: one artifact" 1 "$(ls "$tmp"/shared/out/*.MemtrackArtifact.msgpack | wc -l)"
	expect_eq "root's link: the command ran" yes "$([ -e "$mark" ] && echo yes || echo no)"
}

test_planted_artifact_links
test_stats_link
test_their_directory
test_their_link_on_the_way
test_open_directory
test_allowed
finish
