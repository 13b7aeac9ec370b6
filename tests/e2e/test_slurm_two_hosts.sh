#!/usr/bin/env bash
# Issue 27: a cluster pipeline seen from two hosts, one lake. A login node and a compute node, each with its
# own agent: two tracer-collector / tracer-processor pairs with different host ids (host_id =
# aaaa... and bbbb...), each tracing its part of this machine alone (--trace-pid): the "login node" the
# shell that runs the head (`snakemake --cluster "sbatch ..."` of tests/e2e/data/cluster/Snakefile), the
# "compute node" slurmd of a real one-node SLURM (tests/e2e/slurm.sh) and every job it starts. Both upload
# to one tracer-ingest. Then:
#  - host A's lake rows hold the head and its sbatches, host B's the four jobs (no process in both);
#  - the four jobs, each a run of host B, are joined to the head's run of host A: one run in tracer
#    report's list, whose steps are the jobs, named by rule, on host B's node, with their allocation
#    and queue wait (docs/live.md, "Cluster jobs": the join is in the lake, whichever host's batch
#    comes first).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
. "$(dirname "$0")/slurm.sh"
e2e_init "$1"
e2e_require_bpf
live_init
HOST_A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
HOST_B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
# each host its own signing key, enrolled for its host id in the ingest's keys file
for name in login:$HOST_A compute:$HOST_B; do
	"$TRACER" keygen --out "$D/${name%%:*}.key" --host-id "${name#*:}" >>"$D/keys" 2>"$D/keygen.err" &&
		chown nobody "$D/${name%%:*}.key" || e2e_fail "tracer keygen --host-id ${name#*:}: $(cat "$D/keygen.err")"
done
live_ingest_start
slurm_start

wd=$TMP/wf
bash "$E2E_DIR/data/align_data.sh" "$wd" 20000 || e2e_fail "setup: the workflow's inputs"
cp "$E2E_DIR/data/cluster/Snakefile" "$wd/" && chmod 755 "$TMP" && chmod -R a+rX "$wd" || e2e_fail "setup: $wd"
for s in a b; do ln -s r1.fq "$wd/${s}_1.fq" && ln -s r2.fq "$wd/${s}_2.fq" || e2e_fail "setup: links"; done

# The head's shell, waiting for its agent: it runs snakemake once "go" arrives on the fifo.
mkfifo "$TMP/go" || e2e_fail "setup: mkfifo"
(
	read -r _ <"$TMP/go"
	cd "$wd" && exec snakemake -j 4 --latency-wait 30 \
		--cluster "sbatch -c {threads} --mem={resources.mem_mb} -o $wd/slurm-%j.out" >"$TMP/snakemake.out" 2>&1
) &
head_shell=$!
slurmd_pid=$(cat "$SLURM_DIR/slurmd.pid") || e2e_fail "no slurmd pid"

# agent NAME HOST_ID PID: a collector and a processor of their own (state, runtime directory, host id), the
# collector tracing PID and its descendants only.
agent() {
	local name=$1 id=$2 pid=$3 conf=$D/$1.conf ready=$D/$1.collector.ready i
	mkdir -p "$D/state-$name" "$D/run-$name" && chmod 711 "$D/run-$name" && chown nobody "$D/state-$name" ||
		e2e_fail "setup: $name's directories"
	sed -e "s|^state_dir = .*|state_dir = $D/state-$name|" -e "s|^runtime_dir = .*|runtime_dir = $D/run-$name|" \
		-e "s|^signing_key = .*|signing_key = $D/$name.key|" \
		"$CONF" >"$conf" && echo "host_id = $id" >>"$conf" && chmod 644 "$conf" || e2e_fail "setup: $conf"
	"$B/tracer-collector" --config "$conf" --trace-pid "$pid" --ready-fd 3 3>"$ready" 2>>"$D/collector-$name.err" &
	DLV_PIDS+=("$!")
	for ((i = 0; i < 300; i++)); do
		grep -q ready "$ready" 2>/dev/null && break
		sleep 0.1
	done
	grep -q ready "$ready" || e2e_fail "$name's collector did not start: $(tail -5 "$D/collector-$name.err")"
	"$B/tracer-processor" --config "$conf" 2>>"$D/processor-$name.err" &
	DLV_PIDS+=("$!")
	for ((i = 0; i < 300; i++)); do
		[ "$(dlv_status spool.acked_seq "$D/state-$name")" -gt 0 ] 2>/dev/null && return 0
		sleep 0.1
	done
	e2e_fail "$name's processor delivered nothing in 30 s: $(tail -5 "$D/processor-$name.err")"
}
agent login "$HOST_A" "$head_shell"
agent compute "$HOST_B" "$slurmd_pid"
echo "agents: host $HOST_A traces the head's shell ($head_shell), host $HOST_B slurmd ($slurmd_pid)"

echo go >"$TMP/go"
wait "$head_shell" || e2e_fail "snakemake --cluster failed: $(tail -20 "$TMP/snakemake.out")"
slurm_wait_jobs 30
[ -s "$wd/a.bam.bai" ] && [ -s "$wd/b.bam.bai" ] || e2e_fail "the workflow made no index"
grep -o "Submitted batch job [0-9]*" "$TMP/snakemake.out" | sort -u >"$TMP/jobs"
[ "$(wc -l <"$TMP/jobs")" = 4 ] || e2e_fail "snakemake did not submit 4 jobs"
live_check wait --where "pipeline=snakemake:$wd/Snakefile" --timeout 30

python3 - "$TRACER" "$LAKE" "$wd" "$TMP/jobs" "$HOST_A" "$HOST_B" <<'PY' || e2e_fail "the two hosts' records are not one run (above)"
import json, sqlite3, subprocess, sys, time
tracer, lake, wd, jobs_file, host_a, host_b = sys.argv[1:7]
jobs = sorted(line.split()[-1] for line in open(jobs_file))
db = sqlite3.connect(f"file:{lake}?mode=ro", uri=True)


def hexid(v):
    return v.hex() if isinstance(v, bytes) else str(v)


# the jobs' runs arrive from host B and join as their batches come: wait for all four (at most 30 s)
for _ in range(150):
    rows = db.execute("SELECT run_id, slurm_job_id, host_id, joined_run_id FROM runs WHERE slurm_job_id IS NOT NULL"
                      ).fetchall()
    if sum(1 for r in rows if r[3] is not None) >= len(jobs):
        break
    time.sleep(0.2)
head = db.execute("SELECT run_id, host_id FROM runs WHERE pipeline = ? AND joined_run_id IS NULL",
                  (f"snakemake:{wd}/Snakefile",)).fetchall()
errors = []
print(f"head runs {[(r[0], hexid(r[1])) for r in head]}; job runs {[(r[0], r[1], hexid(r[2]), r[3]) for r in rows]}")
if len(head) != 1 or hexid(head[0][1]) != host_a:
    errors.append(f"the head is not one run of host A: {head}")
else:
    hid = head[0][0]
    got = sorted(r[1] for r in rows if r[3] == hid and hexid(r[2]) == host_b)
    if got != jobs:
        errors.append(f"the runs of host B joined to the head are of jobs {got}, not {jobs}")
    both = db.execute("SELECT count(*) FROM (SELECT tgid, start_ns FROM processes GROUP BY tgid, start_ns "
                      "HAVING count(DISTINCT host_id) > 1)").fetchone()[0]
    if both:
        errors.append(f"{both} processes are in both hosts' records: each agent was to trace its part alone")
    doc = json.loads(subprocess.run([tracer, "report", "--db", lake, str(hid), "--json"], capture_output=True,
                                    text=True, check=True).stdout)
    steps = doc["steps"]
    for s in steps:
        j = s.get("job") or {}
        print(f"step {s['id']} {s['name']}: job {j.get('slurm_job_id')} on {j.get('host')}, queued "
              f"{j.get('queue_wait_ns')} ns, {s.get('cpu_limit_cores')} CPUs, {s.get('memory_limit_bytes')} bytes")
    if sorted((s.get("job") or {}).get("slurm_job_id") or "-" for s in steps) != jobs:
        errors.append(f"the head's steps are not its four jobs: {[s['id'] for s in steps]}")
    if sorted(s["name"] for s in steps) != ["align", "align", "index", "index"]:
        errors.append(f"the steps are named {[s['name'] for s in steps]}")
    if doc["run"].get("jobs") != 4:
        errors.append(f"the run says {doc['run'].get('jobs')} jobs")
    listed = json.loads(subprocess.run([tracer, "report", "--db", lake, "--json"], capture_output=True, text=True,
                                       check=True).stdout)["runs"]
    if any(r.get("slurm_job_id") in jobs for r in listed):
        errors.append("a joined job is still in tracer report's list")
for e in errors:
    print(f"FAIL: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
for p in "${DLV_PIDS[@]}"; do kill -0 "$p" 2>/dev/null || e2e_fail "a daemon died during the test (see $D/*.err)"; done
