#!/bin/bash
# report and stats under sudo read what the invoking user may read, not what root may
# shellcheck disable=SC2154 # $test_user: lib/user.sh
set -e
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/user.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
chmod 755 "$tmp"
cleanup() {
	user_cleanup
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT
user_create
user_allow_sudo

"$MEMTRACK" track -q -o "$tmp/out" --stats "$tmp/s.jsonl" -- "$WORKLOADS/malloc_free"
art=$(ls "$tmp"/out/*.msgpack)
chmod 755 "$tmp/out"
chmod 644 "$art" "$tmp/s.jsonl"
# root's alone: a secret, a copy of the artifact, of the stats
echo "ROOT_SECRET_1f3a first line" >"$tmp/secret"
cp "$art" "$tmp/root.msgpack"
cp "$tmp/s.jsonl" "$tmp/root.jsonl"
chmod 600 "$tmp/secret" "$tmp/root.msgpack" "$tmp/root.jsonl"

# $1: what, then the command: refused, and nothing of the secret on either stream
refused() {
	local what=$1 rc=0
	shift
	sudo_memtrack "$@" >"$tmp/o" 2>"$tmp/e" || rc=$?
	if [ "$rc" -ne 0 ]; then pass "$what: refused ($rc)"; else fail "$what: refused" "exit 0"; fi
	expect_eq "$what: prints none of it" 0 \
		"$(cat "$tmp/o" "$tmp/e" | grep -c 'ROOT_SECRET\|"Malloc"\|"events"' || true)"
}

# before: the parse error quoted the secret's first line
refused "root's suppressions" report --suppressions "$tmp/secret" "$art"
# before: every event of root's artifact
refused "root's artifact" report --dump "$tmp/root.msgpack"
refused "root's stats" stats --json "$tmp/root.jsonl"

rc=0
sudo_memtrack report --json "$art" >"$tmp/o" 2>"$tmp/e" || rc=$?
expect_eq "the user's own artifact: read" "0 100" "$rc $(jq .counts.Malloc "$tmp/o")"
finish
