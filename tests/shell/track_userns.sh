#!/bin/bash
# track: a process in a user namespace of its own, where memtrack's root is nobody
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${AS_NOBODY[@]}" unshare -U -r true 2>/dev/null || skip "no user namespaces for an unprivileged user here"

# malloc_free's 100 calls of malloc, one site in main. A shim that checked its listener's
# uid would take memtrack (root is the overflow uid in such a namespace) for a stranger and
# lose them with an exit status of 0
test_unprivileged_userns() {
	local art

	art=$(track_workload "$tmp" -- "${AS_NOBODY[@]}" unshare -U -r "$WORKLOADS/malloc_free")
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/r.json"
	expect_eq "userns: malloc_free's 100 malloc, from main" 1 \
		"$(jq '[.sites[] | select(.calls == 100 and .frames[0].symbol == "main")] | length' "$tmp/r.json")"
	expect_eq "userns: malloc_free's process exits 0" 0 \
		"$(jq '.processes[] | select(.comm == "malloc_free") | .exit_code' "$tmp/r.json")"
}

test_unprivileged_userns
finish
