#!/usr/bin/env bash
# tracer sweep (docs/sweep.md) on the real kernel, the daemons as their units run them (tests/e2e/live.sh)
# with a heartbeat every second and the sweep's windows shortened in the same config file:
# - an idle host: nothing but the daemons for 10 s -> idle by GCP's rule and by AWS's (2-s "days");
# - a busy control: stress-ng on every CPU -> no idle host in that window;
# - a Snakemake pipeline whose engine holds the host 6 s after its last step (onsuccess) -> its idle tail,
#   at least 5 s, priced at the host's price_per_hour;
# - a worker (a TRACER_PIPELINE script) that sleeps forever once its child is done -> a stuck worker;
# - a "jupyter-lab" that does nothing -> a forgotten session; a process that allocates 64 MiB, touches it
#   and sleeps -> an idle process holding memory;
# - a step in a cgroup of 1.5 CPUs and 2 GiB that sleeps -> reserved but unused (both), priced at the
#   unused share of the host; beside it a step under 1.5 CPUs kept busy by stress-ng -> not, and its
#   allocation in the lake while it runs (from its samples); tracer tune gives the sleeping step's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake stress-ng; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps)"
done
live_init
PRICE=0.5
{
	echo "# test_sweep: a beat a second, a priced host, the sweep's windows in seconds (docs/sweep.md)"
	echo "heartbeat_interval = 1s"
	echo "price_per_hour = $PRICE"
	echo "# the daemons themselves use some CPU; loopback is not counted as network"
	echo "sweep_gcp_cpu_millicores = 500"
	echo "sweep_gcp_min_observed = 6s"
	echo "sweep_day = 2s"
	echo "sweep_aws_cpu_percent = 25"
	echo "sweep_aws_days = 2"
	echo "sweep_aws_window_days = 3"
	echo "sweep_run_idle_min = 3s"
	echo "sweep_worker_idle = 4s"
	echo "sweep_session_idle = 4s"
	echo "sweep_idle_process_age = 4s"
	echo "sweep_idle_process_idle = 3s"
	echo "sweep_idle_process_rss = 32MiB"
	echo "sweep_reserved_min = 3s"
} >>"$CONF" || e2e_fail "setup: $CONF"
live_start
sweep() { # check_sweep.py's arguments
	python3 "$E2E_DIR/check_sweep.py" --tracer "$TRACER" --db "$LAKE" --config "$CONF" "$@" ||
		e2e_fail "tracer sweep did not find what it should (above)"
}

echo "idle host: 10 s of nothing but the daemons"
sleep 10
sweep --since 8s --expect idle_host_gcp --min-span 5 --price "$PRICE"
# AWS's rule judges whole 2-s days on the UTC grid: where the window's ends fall, 2 or 3 of them (>= 3 s).
sweep --since 8s --expect idle_host_aws --min-span 3 --price "$PRICE"

echo "busy control: stress-ng on every CPU for 10 s"
stress-ng --cpu 0 --timeout 10s >/dev/null 2>&1 || e2e_fail "stress-ng failed"
sleep 1.5 # the last beat of the busy time reaches the lake
sweep --since 8s --absent idle_host_gcp --absent idle_host_aws

echo "a pipeline with a 6-s idle tail"
smk=$(live_user_dir smk)
cp "$E2E_DIR/data/sweep/Snakefile" "$smk/Snakefile" && chown nobody "$smk/Snakefile"
live_as_user "$smk" snakemake -c1 -q >"$TMP/smk.out" 2>&1 &
pid=$!
live_wait_pid "$pid" 90 "the Snakemake pipeline"
[ "$LIVE_RC" = 0 ] || e2e_fail "the pipeline failed (exit $LIVE_RC): $(tail -5 "$TMP/smk.out")"
live_check wait --where "run_key~-$pid-" --timeout 20
run=$("$TRACER" report --db "$LAKE" --json | python3 -c '
import json, sys
runs = [r for r in json.load(sys.stdin)["runs"] if ("-%s-" % sys.argv[1]) in (r["run_key"] or "")]
print(runs[0]["run_id"] if runs else "")' "$pid")
[ -n "$run" ] || e2e_fail "the pipeline's run is not in the lake"
sweep --since 60s --expect run_idle --run "$run" --min-span 5 --price "$PRICE"

echo "a worker that sleeps forever after its child is done"
wdir=$(live_user_dir worker)
live_as_user "$wdir" env TRACER_PIPELINE=stuck-worker bash -c 'stress-ng --cpu 1 --timeout 2s >/dev/null 2>&1; exec sleep 1000' &
worker=$!
e2e_on_exit "kill $worker 2>/dev/null"
sleep 9
sweep --since 60s --expect worker_idle --min-span 3
kill "$worker" 2>/dev/null

echo "a jupyter-lab nobody uses, and a process holding 64 MiB doing nothing"
sdir=$(live_user_dir session)
cp "$(command -v sleep)" "$sdir/jupyter-lab" && chown nobody "$sdir/jupyter-lab"
live_as_user "$sdir" "$sdir/jupyter-lab" 1000 &
session=$!
e2e_on_exit "kill $session 2>/dev/null"
# busy for 2 s after touching it (so that samples see it resident), then idle
live_as_user "$sdir" python3 -c 'import time
b = bytearray(64 << 20)
b[::4096] = b"x" * len(b[::4096])
t = time.time()
while time.time() - t < 2:
    pass
time.sleep(1000)' &
holder=$!
e2e_on_exit "kill $holder 2>/dev/null"
sleep 9
sweep --since 60s --expect session_idle --pid "$session" --min-span 3
sweep --since 60s --expect process_idle_memory --pid "$holder" --min-span 2
kill "$session" "$holder" 2>/dev/null

echo "a step that reserves 1.5 CPUs and 2 GiB and sleeps, beside one that uses its 1.5 CPUs"
e2e_limit_cgroup "tracer-e2e-oversized-$$" 1500 $((2 << 30))
oversized=("${CG_PROCS[@]}")
e2e_limit_cgroup "tracer-e2e-busy-$$" 1500 0
busy=("${CG_PROCS[@]}")
rdir=$(live_user_dir reserved)
# each run's shell waits until it is in its cgroup, then runs its step (what follows keeps bash from exec'ing it)
live_as_user "$rdir" env TRACER_PIPELINE=reserved bash -c \
	'until [ -e go ]; do sleep 0.05; done; TRACER_STEP=oversized sleep 6; true' &
r1=$!
live_as_user "$rdir" env TRACER_PIPELINE=reserved-busy bash -c \
	'until [ -e go ]; do sleep 0.05; done; TRACER_STEP=busy stress-ng --cpu 1 --timeout 8s >/dev/null 2>&1; true' &
r2=$!
e2e_into_cgroup "$r1" "${oversized[@]}"
e2e_into_cgroup "$r2" "${busy[@]}"
touch "$rdir/go"
# While it runs, the busy step's allocation is in the lake already: its processes' samples carry it.
python3 - "$LAKE" "$r2" <<'PY2' || e2e_fail "the running busy step's allocation did not reach the lake while it ran"
import os, sqlite3, sys, time
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
for _ in range(60):
    row = db.execute("SELECT s.state, s.cpu_limit_millicores FROM steps s JOIN runs r ON r.run_id = s.run_id "
                     "WHERE r.run_key LIKE ? AND s.step_id = 'busy'", (f"%-{sys.argv[2]}-%",)).fetchone()
    if row and row[0] == "running" and row[1] == 1500:
        print(f"  busy step, running: cpu_limit_millicores {row[1]}")
        sys.exit(0)
    if not os.path.exists(f"/proc/{sys.argv[2]}"):
        break
    time.sleep(0.1)
print(f"  busy step: {row}")
sys.exit(1)
PY2
live_wait_pid "$r1" 30 "the oversized step's run"
live_wait_pid "$r2" 30 "the busy step's run"
live_check wait --where "run_key~-$r1-" --timeout 20
live_check wait --where "run_key~-$r2-" --timeout 20
sweep --since 60s --expect reserved_unused --step oversized --min-span 5 --price "$PRICE"
sweep --since 60s --absent reserved_unused --step busy
"$TRACER" tune --db "$LAKE" --pipeline reserved --json >"$TMP/tune.json" || e2e_fail "tracer tune failed"
python3 - "$TMP/tune.json" <<'PY2' || e2e_fail "tracer tune did not give the step's allocation"
import json, sys
steps = [s for s in json.load(open(sys.argv[1]))["steps"] if s["step"] == "oversized"]
a = steps[0]["allocation"] if steps else None
print("  tune: oversized's allocation", a)
sys.exit(0 if a and a["cpus"] == 1.5 and a["memory_bytes"] == 2 << 30 and a["cpu_efficiency"] < 0.25 else 1)
PY2
"$TRACER" tune --db "$LAKE" --pipeline reserved >"$TMP/tune.txt" || e2e_fail "tracer tune (text) failed"
grep -E "^  oversized: .*; allocated 1\.50 CPUs, [0-9]+% of them used \(p95\); memory limit 2\.0 ?GiB, [0-9]+% of it used" \
	"$TMP/tune.txt" >/dev/null || e2e_fail "tracer tune's text does not give the allocation: $(cat "$TMP/tune.txt")"
live_alive
exit 0
