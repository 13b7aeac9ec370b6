#!/usr/bin/env bash
# Daemon mode on a host where no pipeline runs: the three daemons run for
# 10 s (tests/e2e/live.sh) while only the system's own activity and a few
# ordinary commands happen - an interactive-looking shell running `ls`,
# `sleep 1`, `cat /etc/hostname`, `ps`, a pipe, a subshell, a short Python
# one-liner, as root and as a plain user - none of them a pipeline. Once all
# that has reached the lake (the processor's acknowledged seq passes what it
# had spooled), `tracer report --db LAKE --json` must list no run.
# The collector traces the whole host: a pipeline another test starts on
# this host meanwhile would be a run; runs naming another e2e temporary
# directory, and `tracer run` runs (this test starts none), are shown and
# not counted (CI runs one test at a time: there are none). Then, as a
# control, a command with TRACER_PIPELINE must be found: the chain was seeing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
live_init
live_start
t0=$(date +%s)

bash -c 'ls / > /dev/null; sleep 1; cat /etc/hostname > /dev/null; ps -e > /dev/null
	ls /etc | sort | head -3 > /dev/null; (cd /tmp && ls > /dev/null); python3 -c "print(1)" > /dev/null' ||
	e2e_fail "the ordinary commands failed"
u=$(live_user_dir user)
(live_as_user "$u" bash -c 'ls; sleep 1; cat /etc/hostname; for i in 1 2 3; do date; done | wc -l; id' \
	>"$TMP/user.out" 2>&1) || e2e_fail "the plain user's commands failed: $(cat "$TMP/user.out")"
while [ $(($(date +%s) - t0)) -lt 10 ]; do
	ls "$TMP" > /dev/null
	sleep 1
done
live_alive
dlv_wait_delivered 30
live_check none --foreign /tracer-e2e. --mine "$TMP" --no-tracer-run
# Control: the same daemons do see a run when one starts (a pass above is not a blind chain).
TRACER_PIPELINE=idle-control-$$ bash -c 'true; sleep 0.2' || e2e_fail "the control command failed"
live_check wait --where "pipeline=idle-control-$$" --timeout 20
live_check check --where "pipeline=idle-control-$$" --expect detected_by=env --expect state=succeeded
# Processes in no run still carry their tool in the lake (TL_TOOLS, docs/live.md).
named=$(dlv_lake_sql "SELECT count(*) FROM processes WHERE exe = '/usr/bin/cat' AND tool = 'cat' AND run_id IS NULL")
[ "$named" -gt 0 ] || e2e_fail "no 'cat' process in the lake has its tool (TL_TOOLS): $(dlv_lake_sql \
	"SELECT count(*) || ' cat rows, tools: ' || group_concat(DISTINCT tool) FROM processes WHERE exe = '/usr/bin/cat'")"
echo "processes in no run carry their tool: $named 'cat' rows named"
