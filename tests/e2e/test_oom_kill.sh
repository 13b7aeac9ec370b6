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
e2e_memory_cgroup oom "$limit"
cg=$E2E_CG
echo "cgroup v$E2E_CG_V: $cg, limit $limit bytes"

# The inner shell moves itself into the cgroup, then becomes the hog (same
# pid): a child of the command, so it is a step of its own.
tracer_run oom --json "$TMP/oom.json" -- sh -c "sh -c \"echo \\\$\\\$ >'$cg/cgroup.procs' && exec '$W' hog $mib\"; exit \$?"
kills=$(e2e_oom_kills)
if [ "$TRACER_RC" = 3 ]; then
	e2e_fail "setup: the hog touched $mib MiB in $cg limited to $limit bytes: the limit was not enforced"
fi
[ -z "$kills" ] || [ "$kills" -ge 1 ] || {
	tracer_show oom
	e2e_fail "setup: the kernel counted no OOM kill in $cg (tracer exit $TRACER_RC)"
}
expect_rc "the hog was killed by SIGKILL" 137 oom
check_report oom "$TMP/oom.json" "$TMP/oom.out" --mib "$mib" --cgroup "/${cg##*/}" --limit "$limit" --step
