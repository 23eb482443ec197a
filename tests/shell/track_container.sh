#!/bin/bash
# track: what a container lacks (cgroups, /var/cache, tracefs, a capability, its /proc) works or ends at once, saying what to add
# timeout: 300
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v unshare >/dev/null || skip "no unshare (util-linux)"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# mounts <setup> <command...>: the command in a mount namespace of its own, after <setup>
mounts() {
	local setup=$1
	shift
	unshare --mount sh -c "$setup"' && exec "$@"' sh "$@"
}
export -f mounts

# bounded <name> <command...>: its status, in $tmp/<name>.err what it said; a hang ends in 124
bounded() {
	local name=$1 rc=0
	shift
	rm -rf "${tmp:?}/$name" && mkdir -p "$tmp/$name"
	timeout 120 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	echo $rc
}

# says <name> <label> <text>: memtrack's stderr for <name> has the text
says() {
	if grep -qF -- "$3" "$tmp/$1.err"; then pass "$2"; else fail "$2" "$(cat "$tmp/$1.err")"; fi
}

# track_malloc_free <name> <mount setup, or ""> [<prefix command...>]
track_malloc_free() {
	local name=$1 setup=$2
	shift 2
	if [ -n "$setup" ]; then
		set -- bash -c 'mounts "$@"' sh "$setup" "$@"
	fi
	bounded "$name" "$@" "$MEMTRACK" track -v -o "$tmp/$name" -- "$WORKLOADS/malloc_free"
}

expect_100_malloc() {
	report_json "$(ls "$tmp/$1"/*.msgpack)" "$tmp/$1.json"
	expect_eq "$2: 100 Malloc" 100 "$(count "$tmp/$1.json" Malloc)"
}

# cgroups not writable (docker's default) or not mounted: back-pressure by SIGSTOP, exact counts
test_cgroups() {
	local ro='for m in $(awk '\''$3 ~ /^cgroup/ { print $2 }'\'' /proc/self/mounts); do
		mount -o bind,remount,ro "$m"; done'
	expect_eq "cgroups read-only: tracks" 0 "$(track_malloc_free cg_ro "$ro")"
	expect_100_malloc cg_ro "cgroups read-only"
	says cg_ro "cgroups read-only: no freezer, says -v" "no cgroup freezer"
	expect_eq "cgroups read-only, pressure: tracks" 0 \
		"$(bounded cg_ro_p bash -c 'mounts "$@"' sh "$ro" "$MEMTRACK" track -q -o "$tmp/cg_ro_p" --backend bpf \
			--ring-size events=64K -- "$WORKLOADS/alloc_storm_procs" 4 10000)"
	report_json "$(ls "$tmp"/cg_ro_p/*.msgpack)" "$tmp/cg_ro_p.json"
	expect_eq "cgroups read-only, pressure: 40000 Malloc" 40000 "$(count "$tmp/cg_ro_p.json" Malloc)"
	expect_eq "cgroups read-only, pressure: zero drops" 0 "$(jq .meta.drops.events "$tmp/cg_ro_p.json")"
	expect_eq "no cgroup mounted: tracks" 0 \
		"$(track_malloc_free cg_none "mount -t tmpfs -o ro none /sys/fs/cgroup")"
	expect_100_malloc cg_none "no cgroup mounted"
}

# no /var/cache to write to: no DWARF cache, the stacks resolve all the same
test_no_cache() {
	expect_eq "/var/cache read-only: tracks" 0 \
		"$(bounded cache env -u MEMTRACK_CACHE_DIR unshare --mount sh -c \
			'mount -t tmpfs -o ro none /var/cache && exec "$@"' sh \
			"$MEMTRACK" track -v -o "$tmp/cache" -- "$WORKLOADS/stack_alloc_nofp")"
	says cache "/var/cache read-only: no cache, says -v" "no cache of DWARF answers"
	"$MEMTRACK" report --json --stack-depth 0 "$(ls "$tmp"/cache/*.msgpack)" >"$tmp/cache.json"
	expect_eq "/var/cache read-only: the library site resolves" "lib_leaf_alloc lib_mid_alloc outer_alloc" \
		"$(jq -r '[.sites[] | select(.calls == 10) | .frames[].symbol] | .[0:3] | join(" ")' "$tmp/cache.json")"
}

# no tracefs, no debugfs: raw tracepoints and uprobe_multi links need neither
test_no_tracefs() {
	local hide='for d in /sys/kernel/tracing /sys/kernel/debug; do
		[ -d "$d" ] && mount -t tmpfs -o ro none "$d"; done; true'
	expect_eq "no tracefs: tracks" 0 "$(track_malloc_free tracefs "$hide")"
	expect_100_malloc tracefs "no tracefs"
}

# a capability dropped: one message naming it and what to add, before anything runs
test_capabilities() {
	command -v capsh >/dev/null || skip "no capsh (libcap2-bin: scripts/install-deps.sh)"
	expect_eq "no CAP_BPF: fatal" 128 \
		"$(track_malloc_free nobpf "" capsh --drop=cap_bpf,cap_sys_admin -- -c 'exec "$@"' sh)"
	says nobpf "no CAP_BPF: names it and --cap-add" "it lacks CAP_BPF (docker, podman: --cap-add BPF;"
	expect_eq "no CAP_BPF: no artifact" "" "$(ls "$tmp/nobpf")"
	expect_eq "no CAP_PERFMON: fatal" 128 \
		"$(track_malloc_free noperfmon "" capsh --drop=cap_perfmon,cap_sys_admin -- -c 'exec "$@"' sh)"
	says noperfmon "no CAP_PERFMON: names it" "it lacks CAP_PERFMON (docker, podman: --cap-add PERFMON;"
	expect_eq "no CAP_SYS_ADMIN, with CAP_BPF and CAP_PERFMON: tracks" 0 \
		"$(track_malloc_free nosysadmin "" capsh --drop=cap_sys_admin -- -c 'exec "$@"' sh)"
	expect_100_malloc nosysadmin "no CAP_SYS_ADMIN"
}

# a pid namespace whose /proc is not its own: memtrack's pids would name other processes
test_foreign_proc() {
	expect_eq "/proc of another pid namespace: fatal" 128 \
		"$(bounded fproc unshare --pid --fork "$MEMTRACK" track -o "$tmp/fproc" -- "$WORKLOADS/malloc_free")"
	says fproc "/proc of another pid namespace: says to mount its own" \
		"/proc is another pid namespace's (memtrack is pid 1 here,"
}

# probes that never report the command (a stand-in: its pid left out of the tracked map)
test_unseen_child() {
	local pid
	expect_eq "unseen child: fatal, not a hang" 128 \
		"$(bounded unseen env MEMTRACK_TEST_UNSEEN_ROOT=1 "$MEMTRACK" track -o "$tmp/unseen" -- sleep 100)"
	says unseen "unseen child: says so" "BPF did not report the command's exec (pid"
	expect_eq "unseen child: no artifact" "" "$(ls "$tmp/unseen")"
	pid=$(sed -n 's/.*exec (pid \([0-9]*\)).*/\1/p' "$tmp/unseen.err")
	expect_eq "unseen child: killed" gone "$([ -n "$pid" ] && [ ! -d "/proc/$pid" ] && echo gone)"
}

test_cgroups
test_no_cache
test_no_tracefs
test_foreign_proc
test_unseen_child
test_capabilities
finish
