#!/usr/bin/env bash
# A run across a processor `kill -9` and a collector restart (docs/live.md,
# "Restarts"). A plain script with TRACER_PIPELINE runs 12 generic steps
# (`sh -c "sleep 0.4; ..."`, two processes each) and one child that kills
# itself (a `killed` signal), 26 processes in all. While it runs:
#   1. the processor is killed with -9 after a few steps and started again:
#      it continues from its checkpoint (state_dir/runs.ckpt);
#   2. the script is held (no process starts: it waits with `read -t`, a
#      builtin), the collector is stopped and started again, the script
#      goes on: its next steps must join the same run.
# Then the lake must hold exactly one run for it, succeeded, with 26
# processes (no lifetime twice, none missed), 12 sleep steps, every
# process but the script in a step, one `killed` signal (not sent twice).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
command -v sqlite3 >/dev/null || e2e_fail "sqlite3 is not installed (make deps installs it)"
live_init
live_start

mkfifo "$TMP/never" || e2e_fail "setup: mkfifo"
# The script: hold while $TMP/hold exists (saying so in $TMP/holding), without starting a process.
TRACER_PIPELINE=restarts-$$ bash -c '
	exec 9<>"$1/never"
	sh -c "kill -KILL \$\$"
	for ((i = 0; i < 12; i++)); do
		while [ -e "$1/hold" ]; do : > "$1/holding"; read -r -t 0.1 -u 9; done
		sh -c "sleep 0.4; echo $i > /dev/null"
	done
	exit 0' script "$TMP" &
script=$!

# 1. The processor, killed with -9 after about four steps, started again.
sleep 2
kill -KILL "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor was not running"
wait "$DLV_PROCESSOR" 2>/dev/null
live_processor_start
live_wait_ready 30
grep -q "continuing 1 runs" "$D/processor.err" ||
	e2e_fail "the restarted processor did not continue the run from its checkpoint: $(grep -v '^<7>' "$D/processor.err" | tail -5)"

# 2. The collector, stopped and started again while the script holds.
touch "$TMP/hold"
for ((i = 0; i < 100; i++)); do
	[ -e "$TMP/holding" ] && break
	sleep 0.1
done
[ -e "$TMP/holding" ] || e2e_fail "the script did not hold within 10 s (it may have ended: too slow a restart?)"
kill -TERM "$DLV_COLLECTOR"
timeout 10 tail --pid="$DLV_COLLECTOR" -f /dev/null || e2e_fail "the collector did not stop within 10 s"
live_collector_start
for ((i = 0; i < 100; i++)); do
	[ "$(dlv_status ring.attaches)" -ge 2 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(dlv_status ring.attaches)" -ge 2 ] 2>/dev/null || e2e_fail "the processor did not attach to the new collector's ring"
rm -f "$TMP/hold"

live_wait_pid "$script" 60 "the script"
[ "$LIVE_RC" = 0 ] || e2e_fail "the script failed ($LIVE_RC)"
live_alive

# The run's end reaches the lake within a few seconds.
q() { sqlite3 -readonly "$LAKE" "$1" 2>/dev/null; }
for ((i = 0; i < 150; i++)); do
	[ "$(q "SELECT state FROM runs WHERE pipeline = 'restarts-$$'")" = succeeded ] && break
	sleep 0.1
done
runs=$(q "SELECT count(*) FROM runs WHERE pipeline = 'restarts-$$'")
[ "$runs" = 1 ] || e2e_fail "$runs runs for the pipeline in the lake, not 1: $(q "SELECT run_id, run_key, state FROM runs")"
run=$(q "SELECT run_id FROM runs WHERE pipeline = 'restarts-$$'")
state=$(q "SELECT state || ' ' || ifnull(exit_code, '-') || ' ' || processes FROM runs WHERE run_id = $run")
[ "$state" = "succeeded 0 26" ] || e2e_fail "the run is '$state' (state, exit, processes), not 'succeeded 0 26'"
procs=$(q "SELECT count(*) FROM processes WHERE run_id = $run")
[ "$procs" = 26 ] || e2e_fail "$procs processes of the run in the lake, not 26: $(q "SELECT tgid, exe, step FROM processes WHERE run_id = $run")"
nostep=$(q "SELECT count(*) FROM processes WHERE run_id = $run AND step IS NULL")
[ "$nostep" = 1 ] || e2e_fail "$nostep processes of the run without a step, not 1 (the script)"
sleeps=$(q "SELECT count(*) FROM steps WHERE run_id = $run AND tools LIKE '%\"sleep\"%' AND state = 'succeeded'")
[ "$sleeps" = 12 ] || e2e_fail "$sleeps sleep steps succeeded, not 12: $(q "SELECT step_id, name, state FROM steps WHERE run_id = $run")"
killed=$(q "SELECT count(*) FROM signals WHERE run_id = $run AND kind = 'killed'")
[ "$killed" = 1 ] || e2e_fail "$killed killed signals for the run, not 1: $(q "SELECT kind, pid, source FROM signals WHERE run_id = $run")"
echo "one run across a processor kill -9 and a collector restart: 26 processes, 12 steps, 1 killed signal"
