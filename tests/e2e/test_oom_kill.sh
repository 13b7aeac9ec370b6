#!/usr/bin/env bash
# OOM kills are reported: a process that outgrows its memory cgroup (64 MiB)
# and is killed by the kernel's OOM killer has oom_killed true, signal 9 and
# an oom_kill entry in signals[]; tracer exits 137. The cgroup (v2 memory.max
# or v1 memory.limit_in_bytes) is removed afterwards, also on failure.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

limit=$((64 << 20))
mib=512 # what the hog would touch if nothing stopped it

# A v2 hierarchy with the memory controller (pure v2, or a hybrid's unified
# mount), else the v1 memory controller.
root='' v=''
for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ -f "$r/cgroup.controllers" ] && grep -qw memory "$r/cgroup.controllers"; then
		root=$r v=2
		break
	fi
done
if [ -z "$root" ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	root=/sys/fs/cgroup/memory v=1
fi
[ -n "$root" ] || e2e_skip "no memory cgroup controller (v2 memory.max or v1 memory.limit_in_bytes) to confine the hog"
if [ "$v" = 2 ] && ! grep -qw memory "$root/cgroup.subtree_control"; then
	echo +memory >"$root/cgroup.subtree_control" ||
		e2e_skip "cannot enable the memory controller in $root/cgroup.subtree_control"
fi

cg=$root/tracer-e2e-oom.$$
cg_remove() {
	local pid
	for _ in $(seq 50); do
		[ -d "$cg" ] || return 0
		while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "could not remove the cgroup $cg" >&2
}
# The kernel's count of OOM kills in the cgroup.
oom_kills() {
	local f=$cg/memory.events
	[ "$v" = 1 ] && f=$cg/memory.oom_control
	awk '$1 == "oom_kill" { print $2 }' "$f"
}
mkdir "$cg" || e2e_fail "cannot create the cgroup $cg"
e2e_on_exit cg_remove
if [ "$v" = 2 ]; then
	echo "$limit" >"$cg/memory.max" || e2e_fail "cannot set $cg/memory.max"
	[ ! -f "$cg/memory.swap.max" ] || echo 0 >"$cg/memory.swap.max" || e2e_fail "cannot set $cg/memory.swap.max"
else
	echo "$limit" >"$cg/memory.limit_in_bytes" || e2e_fail "cannot set $cg/memory.limit_in_bytes"
	[ ! -f "$cg/memory.memsw.limit_in_bytes" ] || echo "$limit" >"$cg/memory.memsw.limit_in_bytes" ||
		e2e_fail "cannot set $cg/memory.memsw.limit_in_bytes"
fi
echo "cgroup v$v: $cg, limit $limit bytes"

# The inner shell moves itself into the cgroup, then becomes the hog (same
# pid): a child of the command, so it is a step of its own.
tracer_run oom --json "$TMP/oom.json" -- sh -c "sh -c \"echo \\\$\\\$ >'$cg/cgroup.procs' && exec '$W' hog $mib\"; exit \$?"
kills=$(oom_kills)
if [ "$TRACER_RC" = 3 ]; then
	e2e_fail "setup: the hog touched $mib MiB in $cg limited to $limit bytes: the limit was not enforced"
fi
[ -z "$kills" ] || [ "$kills" -ge 1 ] || {
	tracer_show oom
	e2e_fail "setup: the kernel counted no OOM kill in $cg (tracer exit $TRACER_RC)"
}
expect_rc "the hog was killed by SIGKILL" 137 oom
check_report oom "$TMP/oom.json" "$TMP/oom.out" --mib "$mib" --cgroup "/${cg##*/}" --limit "$limit" --step
