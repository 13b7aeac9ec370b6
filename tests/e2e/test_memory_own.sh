#!/usr/bin/env bash
# Every memory figure is the process's or the step's own:
#  - a Python parent that holds 400 MiB starts tools of 8, 24 and 48 MiB
#    living 2-30 ms (subprocess: vfork, and os.fork + exec): each tool's
#    peak_rss_bytes is within 10% of the VmHWM it read itself just before
#    exiting, although rusage (maxrss_rusage_bytes) carries the parent's
#    400 MiB;
#  - a step whose two 100 MiB tools run one after the other holds ~100 MiB
#    at once, side by side ~200 MiB (steps[].peak_rss_bytes);
#  - a step with a memory cgroup to itself gets that cgroup's own peak.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

cat >"$TMP/parent.py" <<'PY'
import os, subprocess, sys
w = sys.argv[1]
big = bytearray(400 << 20)
for i in range(0, len(big), 4096):
    big[i] = 1
for mib, ms in ((8, 2), (24, 10), (48, 30)):
    subprocess.run([w, "hwm", str(mib), str(ms)], check=True)
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.execv(w, [w, "hwm", "16", "5"])
os.waitpid(pid, 0)
PY
tracer_run own --json "$TMP/own.json" -- /usr/bin/python3 "$TMP/parent.py" "$W"
expect_rc "the parent exits 0" 0 own
python3 "$E2E_DIR/check_memory.py" own "$TMP/own.json" "$TMP/own.out" ||
	e2e_fail "report check 'own peak' failed (TRACER_E2E_KEEP=1 keeps $TMP)"

tracer_run steps --json "$TMP/steps.json" -- bash -c "
	TRACER_STEP=one_after_the_other bash -c '$W touch 100 >/dev/null; $W touch 100 >/dev/null'
	TRACER_STEP=side_by_side bash -c '$W hwm 100 400 >/dev/null & $W hwm 100 400 >/dev/null & wait'"
expect_rc "the steps exit 0" 0 steps
python3 "$E2E_DIR/check_memory.py" steps "$TMP/steps.json" ||
	e2e_fail "report check 'step peaks' failed (TRACER_E2E_KEEP=1 keeps $TMP)"

# A memory cgroup of the step's own, on whichever hierarchy has the memory controller.
if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
	top=/sys/fs/cgroup/memory
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	top=/sys/fs/cgroup
else
	e2e_skip "no writable memory cgroup hierarchy here (v1 memory or v2 with the memory controller)"
fi
cg=$top/tracer-e2e-$$
mkdir "$cg" || e2e_fail "setup: mkdir $cg"
e2e_on_exit "rmdir '$cg'"
tracer_run memcg --json "$TMP/memcg.json" -- bash -c "
	TRACER_STEP=in_its_cgroup bash -c 'echo \$\$ >$cg/cgroup.procs && exec $W touch 64 >/dev/null'
	TRACER_STEP=outside $W touch 8 >/dev/null"
expect_rc "the cgroup step exits 0" 0 memcg
python3 "$E2E_DIR/check_memory.py" memcg "$TMP/memcg.json" --cgroup "${cg#"$top"}" ||
	e2e_fail "report check 'step memcg' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
