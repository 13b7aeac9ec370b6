#!/usr/bin/env bash
# A multi-threaded member that ends before its step, across a processor `kill -9` (issue 25: "every member
# counts ... whatever the member's thread count, and across a processor restart"). A plain script with
# TRACER_PIPELINE runs one step, `sh -c "workload burn 1500 2 | (cat >/dev/null; sleep 7)"`: a 2-thread
# burner (3 s of CPU in all) that ends about 5 s before the rest of its step, as bwa ends before samtools
# sort. Once the burner has exited and the lake holds its exit, the processor is killed with -9 and started
# again while the step still runs: it continues from its checkpoint. Then the lake's step must still hold the
# burner: its tools name it, its CPU is within 2% of what its processes in the `processes` table sum to
# (the burner's 3 s among them), its process count is theirs, and the run is one run, succeeded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
command -v sqlite3 >/dev/null || e2e_fail "sqlite3 is not installed (make deps installs it)"
live_init
live_start
q() { sqlite3 -readonly "$LAKE" "$1" 2>/dev/null; }

pipeline=restart-member-$$
TRACER_PIPELINE=$pipeline bash -c 'sh -c "$1 burn 1500 2 | (cat >/dev/null; sleep 7)"; exit 0' script "$W" &
script=$!

# The burner's exit in the lake (its 2 threads' CPU), the step still running.
burner=''
for ((i = 0; i < 150; i++)); do
	burner=$(q "SELECT tgid FROM processes WHERE exe LIKE '%/workload' AND argv LIKE '%\"burn\",\"1500\",\"2\"%' AND exit_ts_ns IS NOT NULL AND runtime_ns > 2500000000")
	[ -n "$burner" ] && break
	sleep 0.1
done
[ -n "$burner" ] || e2e_fail "the burner's exit did not reach the lake within 15 s"
kill -0 "$script" 2>/dev/null || e2e_fail "the script ended before the restart: the step must still run"
kill -KILL "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor was not running"
wait "$DLV_PROCESSOR" 2>/dev/null
live_processor_start
live_wait_ready 30
grep -q "continuing 1 runs" "$D/processor.err" ||
	e2e_fail "the restarted processor did not continue the run from its checkpoint: $(grep -v '^<7>' "$D/processor.err" | tail -5)"
kill -0 "$script" 2>/dev/null || e2e_fail "the script ended before the processor was back: the step must still run"

live_wait_pid "$script" 60 "the script"
[ "$LIVE_RC" = 0 ] || e2e_fail "the script failed ($LIVE_RC)"
live_alive

for ((i = 0; i < 150; i++)); do
	[ "$(q "SELECT state FROM runs WHERE pipeline = '$pipeline'")" = succeeded ] && break
	sleep 0.1
done
runs=$(q "SELECT count(*) FROM runs WHERE pipeline = '$pipeline'")
[ "$runs" = 1 ] || e2e_fail "$runs runs for the pipeline in the lake, not 1: $(q "SELECT run_id, run_key, state FROM runs")"
run=$(q "SELECT run_id FROM runs WHERE pipeline = '$pipeline'")
[ "$(q "SELECT state FROM runs WHERE run_id = $run")" = succeeded ] || e2e_fail "the run is not succeeded: $(q "SELECT state, exit_code FROM runs WHERE run_id = $run")"
step=$(q "SELECT step FROM processes WHERE run_id = $run AND tgid = $burner")
[ -n "$step" ] || e2e_fail "the burner (pid $burner) is in no step of the run: $(q "SELECT tgid, exe, run_id, step FROM processes WHERE tgid = $burner")"
# The step's last record (the final one, after the restart) against the processes the lake has of it.
sq() { q "SELECT $1 FROM steps WHERE run_id = $run AND step_id = '$step'"; }
[ -n "$(sq step_id)" ] || e2e_fail "no step '$step' in run $run: $(q "SELECT step_id, name, tools FROM steps WHERE run_id = $run")"
name=$(sq name) tools=$(sq tools) cpu=$(sq cpu_ns) nproc=$(sq processes) state=$(sq state)
sum=$(q "SELECT sum(runtime_ns) FROM processes WHERE run_id = $run AND step = '$step'")
count=$(q "SELECT count(*) FROM processes WHERE run_id = $run AND step = '$step'")
echo "step '$name' ($state): tools $tools, $nproc processes, cpu $cpu ns; its processes in the lake: $count, $sum ns"
[ "$state" = succeeded ] || e2e_fail "the step is '$state', not succeeded"
case $tools in *workload*) ;; *) e2e_fail "the step's tools $tools lost the burner (workload) across the restart" ;; esac
case $tools in *sleep*) ;; *) e2e_fail "the step's tools $tools lack sleep, its last member" ;; esac
[ "$nproc" = "$count" ] || e2e_fail "the step counts $nproc processes, the lake holds $count of it"
python3 -c "import sys; c, s = int(sys.argv[1]), int(sys.argv[2]); sys.exit(0 if s > 2.5e9 and abs(c - s) <= 0.02 * s else 1)" \
	"$cpu" "$sum" || e2e_fail "the step's CPU $cpu ns is not within 2% of its processes' $sum ns (the burner's 3 s among them)"
echo "a 2-thread member that ended first stays in its step across a processor kill -9: cpu $cpu of $sum ns"
