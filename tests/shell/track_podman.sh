#!/bin/bash
# track: in a privileged podman container without --pid=host, the host's root as its rootfs
# timeout: 240
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v podman >/dev/null || skip "no podman (scripts/install-deps.sh)"

tmp=$(mktemp -d)
mkdir "$tmp/root" "$tmp/out"
cleanup() {
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# no image to pull (no network): the host's / bound into a mount namespace of the test's is
# the rootfs; podman's default ulimits are not ours to set here, and crun refuses a hybrid
# cgroup layout, whose v2 part the namespace hides
printf '[containers]\ndefault_ulimits = []\n' >"$tmp/containers.conf"
export CONTAINERS_CONF=$tmp/containers.conf

# in_podman <command...>: runs it in the container, in $TOP, with $tmp/out as /out; a hang ends in 124
in_podman() {
	timeout 180 unshare --mount sh -c '
		root=$0 out=$1 top=$2
		shift 2
		if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] && [ -d /sys/fs/cgroup/unified ]; then
			mount -t tmpfs none /sys/fs/cgroup/unified
		fi
		mount --rbind / "$root" && exec podman --cgroup-manager=cgroupfs run --rm --privileged \
			--cgroups=disabled --network none ${MEMTRACK_BACKEND:+-e MEMTRACK_BACKEND} \
			-v "$out:/out" -w "$top" --rootfs "$root" "$@"' "$tmp/root" "$tmp/out" "$TOP" "$@"
}

test_in_container() {
	local rc=0 pid
	in_podman "$MEMTRACK" track -q -o /out -- sh -c \
		"echo \$\$ >/out/pid; grep NSpid /proc/self/status >/out/nspid; exec $WORKLOADS/threads" \
		>"$tmp/podman.log" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || cat "$tmp/podman.log"
	expect_eq "podman: memtrack exits with the command's status" 0 "$rc"
	pid=$(cat "$tmp/out/pid")
	art=$(ls "$tmp"/out/*.msgpack)
	report_json "$art" "$tmp/r.json"
	expect_eq "podman: the root is the pid the container gave it" "$pid" "$(jq .meta.root_pid "$tmp/r.json")"
	expect_eq "podman: its 8000 malloc(4242)" 8000 "$(count_sized "$art" Malloc 4242 "$pid")"
	expect_eq "podman: the container's /proc is its own (one level)" 1 \
		"$(awk '{ print NF - 1 }' "$tmp/out/nspid")"
}

test_in_container
finish
