#!/usr/bin/env bash
# Issue 27: cluster jobs under the daemons, on a real one-node SLURM (tests/e2e/slurm.sh: munged,
# slurmctld and slurmd of Debian's packages, in a temporary directory with their own ports).
#  - A job submitted by hand (`sbatch` of a script; no pipeline head traced) is a run of its own,
#    detected by slurm: run_id and slurm_job_id its job id, succeeded, and its step holds the job's
#    allocation as SLURM gave it (`sbatch -c 2 --mem=300`: 2 CPUs, 300 MiB), its 2-thread burner's CPU
#    time within 10% of what the burner's threads read from /proc/thread-self/schedstat.
#  - A workflow Snakemake submits job by job (`snakemake --cluster "sbatch -c {threads}
#    --mem={resources.mem_mb}"`, tests/e2e/data/cluster/Snakefile: two samples, align on 2 threads and
#    1000 MiB, index on 1 and 200 MiB) is ONE run: the four jobs are joined to the head's run in the lake
#    (docs/live.md, "Cluster jobs"), each a step named by its rule with its job id, the node's name, the
#    allocation SLURM gave it and a queue wait >= 0; the head's sbatch steps are gone (each job in its
#    place); the align jobs' bwa and samtools CPU time is within 10% of what wait4 gave their shell
#    (bash's `times`); tracer report lists the head alone; tracer tune counts one run of the pipeline, with
#    two tasks of each rule.
#  - The same for a Nextflow-shaped head (below): its two ALIGN jobs, named by their #SBATCH -J nf-ALIGN_(sN),
#    are its steps ALIGN (engine nextflow, 2 CPUs, 1000 MiB, tools bwa mem and samtools sort).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
. "$(dirname "$0")/slurm.sh"
e2e_init "$1"
e2e_require_bpf
live_init
live_start
slurm_start

# The job's directory: root's (the job runs as its submitter), readable by all.
jd=$TMP/hand
mkdir -p "$jd" && chmod 755 "$TMP" "$jd" || e2e_fail "setup: $jd"
cat >"$jd/job.sh" <<EOF
#!/bin/sh
'$W' burn 400 2
EOF
chmod 755 "$jd/job.sh"
job=$(cd "$jd" && sbatch --parsable -c 2 --mem=300 -J handjob -o "$jd/out" "$jd/job.sh") ||
	e2e_fail "sbatch refused the job: $job"
echo "job $job submitted by hand"
slurm_wait_jobs 60
cat "$jd/out"
state=$(scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z]*')
[ "$state" = JobState=COMPLETED ] || e2e_fail "job $job: $state, not COMPLETED: $(cat "$jd/out")"
want=$(awk '/^burn_cpu_ns/ { print $2 }' "$jd/out")

live_check wait --where "pipeline_run_id=$job" --timeout 20
live_check check --where "pipeline_run_id=$job" --count 1 --expect detected_by=slurm --expect state=succeeded \
	--expect exit_code=0 --expect-run "run_id=$job" --expect-run "slurm_job_id=$job" --steps 1
python3 - "$LAKE" "$job" "$want" <<'PY' || e2e_fail "the hand-submitted job's run is wrong (above)"
import sqlite3, sys
lake, job, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(f"file:{lake}?mode=ro", uri=True)
rows = db.execute("SELECT s.step_id, s.name, s.cpu_limit_millicores, s.memory_limit_bytes, s.cpu_ns FROM steps s "
                  "JOIN runs r ON r.run_id = s.run_id WHERE r.pipeline_run_id = ?", (job,)).fetchall()
errors = []
for step_id, name, mc, mem, cpu in rows:
    print(f"step {step_id} ({name}): {mc} millicores, {mem} bytes, cpu {cpu} ns (the burner's threads: {want} ns)")
    if mc != 2000 or mem != 300 << 20:
        errors.append(f"step {step_id}: allocation {mc} millicores, {mem} bytes; sbatch asked 2000, {300 << 20}")
    if want <= 0 or cpu is None or abs(cpu - want) > 0.10 * want:
        errors.append(f"step {step_id}: cpu {cpu} ns is not within 10% of the burner's {want} ns")
for e in errors:
    print(f"FAIL: {e}", file=sys.stderr)
sys.exit(1 if errors or len(rows) != 1 else 0)
PY

# The workflow, submitted job by job from its directory by a traced Snakemake.
wd=$TMP/wf
bash "$E2E_DIR/data/align_data.sh" "$wd" 20000 || e2e_fail "setup: the workflow's inputs"
cp "$E2E_DIR/data/cluster/Snakefile" "$wd/" && chmod -R a+rX "$wd" || e2e_fail "setup: $wd"
for s in a b; do ln -s r1.fq "$wd/${s}_1.fq" && ln -s r2.fq "$wd/${s}_2.fq" || e2e_fail "setup: links"; done
(cd "$wd" && snakemake -j 4 --latency-wait 30 \
	--cluster "sbatch -c {threads} --mem={resources.mem_mb} -o $wd/slurm-%j.out" >"$TMP/snakemake.out" 2>&1) ||
	e2e_fail "snakemake --cluster failed: $(tail -20 "$TMP/snakemake.out")"
slurm_wait_jobs 30
[ -s "$wd/a.bam.bai" ] && [ -s "$wd/b.bam.bai" ] || e2e_fail "the workflow made no index"
grep -o "Submitted batch job [0-9]*" "$TMP/snakemake.out" | sort -u | tee "$TMP/jobs"
[ "$(wc -l <"$TMP/jobs")" = 4 ] || e2e_fail "snakemake did not submit 4 jobs"
live_check wait --where "pipeline=snakemake:$wd/Snakefile" --timeout 30
live_check check --where "pipeline=snakemake:$wd/Snakefile" --count 1 --expect detected_by=snakemake \
	--expect state=succeeded
head=$(python3 - "$TRACER" "$LAKE" "$wd" <<'PY'
import json, subprocess, sys
runs = json.loads(subprocess.run([sys.argv[1], "report", "--db", sys.argv[2], "--json"], capture_output=True,
                                 text=True, check=True).stdout)
print([r["run_id"] for r in runs["runs"] if r.get("pipeline") == f"snakemake:{sys.argv[3]}/Snakefile"][0])
PY
) || e2e_fail "no head run"
"$TRACER" report --db "$LAKE" "$head" --json >"$TMP/head.json" || e2e_fail "tracer report $head"
python3 - "$TMP/head.json" "$TMP/jobs" "$(hostname)" "$wd" <<'PY' || e2e_fail "the jobs are not the head run's steps (above)"
import json, re, sys
doc = json.load(open(sys.argv[1]))
jobs = sorted(l.split()[-1] for l in open(sys.argv[2]))
host = sys.argv[3]
errors = []
steps = doc["steps"]
for s in steps:
    j = s.get("job") or {}
    print(f"step {s['id']} {s['name']}: job {j.get('slurm_job_id')} on {j.get('host')}, queued "
          f"{j.get('queue_wait_ns')} ns, {s.get('cpu_limit_cores')} CPUs, {s.get('memory_limit_bytes')} bytes, "
          f"tools {s.get('tools')}, {s['state']}")
want = {"align": (2.0, 1000 << 20), "index": (1.0, 200 << 20)}
got = sorted((s.get("job") or {}).get("slurm_job_id") or "-" for s in steps)
if got != jobs:
    errors.append(f"the run's steps are of jobs {got}, not of the jobs snakemake submitted {jobs}")
for s in steps:
    j = s.get("job") or {}
    if s["name"] not in want:
        errors.append(f"step {s['id']} is named {s['name']}, not by its rule")
        continue
    cores, mem = want[s["name"]]
    if s.get("cpu_limit_cores") != cores or s.get("memory_limit_bytes") != mem:
        errors.append(f"step {s['id']}: allocation {s.get('cpu_limit_cores')} CPUs, {s.get('memory_limit_bytes')} "
                      f"bytes; sbatch asked {cores}, {mem}")
    if not isinstance(j.get("queue_wait_ns"), int) or j["queue_wait_ns"] < 0:
        errors.append(f"step {s['id']}: queue wait {j.get('queue_wait_ns')}")
    if j.get("host") != host:
        errors.append(f"step {s['id']}: host {j.get('host')}, not {host}")
    if s["state"] != "succeeded":
        errors.append(f"step {s['id']}: {s['state']}")
tools = {t for s in steps if s["name"] == "align" for t in s.get("tools") or []}
if not {"bwa mem", "samtools sort"} <= tools:
    errors.append(f"the align steps' tools are {sorted(tools)}")
if doc["run"].get("jobs") != 4:
    errors.append(f"the run says {doc['run'].get('jobs')} jobs")
# the align jobs' bwa and samtools CPU against what wait4 gave their shell (bash's times, after the pipe)
aligns = {s["id"] for s in steps if s["name"] == "align"}
ours = sum((p.get("cpu_user_ns") or 0) + (p.get("cpu_sys_ns") or 0) for p in doc["processes"]
           if p.get("step") in aligns and p.get("tool") in ("bwa mem", "samtools sort"))
kernel = 0
for sample in ("a", "b"):
    lines = open(f"{sys.argv[4]}/{sample}.bam.times").read().split("\n")
    kernel += sum(int(m) * 60e9 + float(x) * 1e9 for m, x in re.findall(r"(\d+)m([\d.]+)s", lines[1]))
print(f"align jobs: bwa mem and samtools sort {ours / 1e9:.3f} s of CPU; their shells' children (wait4) "
      f"{kernel / 1e9:.3f} s")
if kernel <= 0 or abs(ours - kernel) > 0.10 * kernel:
    errors.append(f"the align jobs' tools used {ours / 1e9:.3f} s of CPU, not within 10% of wait4's "
                  f"{kernel / 1e9:.3f} s")
for e in errors:
    print(f"FAIL: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
# tune counts the pipeline's run once, its two align jobs as two tasks of it (not two runs)
"$TRACER" tune --db "$LAKE" --pipeline "snakemake:$wd/Snakefile" --format json >"$TMP/tune.json" ||
	e2e_fail "tracer tune failed"
python3 - "$TMP/tune.json" <<'PY' || e2e_fail "tune does not count the jobs as tasks of one run (above)"
import json, sys
steps = {s["step"]: s for s in json.load(open(sys.argv[1]))["steps"]}
print({n: (s["runs"], s["tasks"], s["class"]) for n, s in steps.items()})
sys.exit(0 if sorted(steps) == ["align", "index"] and all((s["runs"], s["tasks"]) == (1, 2) for s in steps.values())
         else 1)
PY

# Queue time: the run's wall split into queued (a job waited in SLURM's queue, no step ran) and running, the
# same as the steps' own times give it; the critical path names each job's queue wait; tracer cost bills a job's
# step its time on the node, never its wait; the HTML page shows each job's id, node and queue wait.
"$TRACER" tune --db "$LAKE" --run "$head" --format json >"$TMP/tune_run.json" || e2e_fail "tracer tune --run failed"
"$TRACER" cost --db "$LAKE" --run "$head" --by step --json >"$TMP/cost.json" || e2e_fail "tracer cost failed"
"$TRACER" report --db "$LAKE" "$head" --html "$TMP/head.html" >/dev/null || e2e_fail "tracer report --html failed"
python3 "$E2E_DIR/cdp.py" "$TMP/head.html" \
	--eval "rows=Array.from(document.querySelectorAll('tr.step-row')).map(function(r){return r.textContent})" \
	--eval "heads=Array.from(document.querySelectorAll('th')).map(function(h){return h.textContent})" \
	--eval "queuebars=document.querySelectorAll('.queue-bar').length" \
	--eval "queued=(function(){var r=Array.from(document.querySelectorAll('table.kv tr')).filter(function(t){\
return t.cells.length>1&&t.cells[0].textContent==='queued'});return r.length?r[0].cells[1].textContent:null})()" \
	>"$TMP/head.cdp.json" 2>"$TMP/head.cdp.err" ||
	e2e_fail "cdp.py could not read the page: $(tail -5 "$TMP/head.cdp.err")"
python3 "$E2E_DIR/check_queue.py" "$TMP/head.json" "$TMP/tune_run.json" "$TMP/cost.json" "$TMP/head.cdp.json" ||
	e2e_fail "the run's queue time is wrong (above)"
# the same in tracer report's text: each job's step with its job, node and wait; the run's queued time
"$TRACER" report --db "$LAKE" "$head" >"$TMP/head.txt" || e2e_fail "tracer report $head failed"
sed -n '/^  ID /,$p' "$TMP/head.txt"
grep -q "^4 cluster jobs: queued [0-9.]*s of the wall time" "$TMP/head.txt" ||
	e2e_fail "tracer report's text does not give the run's queued time"
grep -q "^  cluster jobs: [0-9.]* CPU-hours and [0-9.]* GiB-hours reserved on their nodes" "$TMP/head.txt" ||
	e2e_fail "tracer report's text does not give the jobs' reservation"
while read -r _ _ _ id; do
	grep -q "\[job $id on $(hostname -s), queued [0-9.]*s\]" "$TMP/head.txt" ||
		e2e_fail "tracer report's text does not show job $id's step with its node and wait"
done <"$TMP/jobs"

# Nextflow-shaped (Nextflow is not packaged): a launcher named nextflow runs `nextflow run main.nf` as its slurm
# executor does: each task in its work directory, with .command.sh and a .command.run whose header holds the
# #SBATCH directives Nextflow 24.x writes (SlurmExecutor.getDirectives: -D, -J nf-NAME_(TAG), -o, --no-requeue,
# --signal B:USR2@30, -c, --mem NM; then NXF_CHDIR), submitted by `sbatch .command.run` from that directory; it
# waits on squeue as Nextflow polls it. The jobs' names are in their scripts, not on sbatch's command line.
nd=$TMP/nfc
mkdir -p "$nd" && chmod 755 "$nd" && ln -s "$wd"/ref.fa* "$wd/r1.fq" "$wd/r2.fq" "$nd/" || e2e_fail "setup: $nd"
cat >"$nd/nextflow" <<'SH'
#!/bin/bash
set -e
: >jobs
for s in s1 s2; do
	h=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	d=$PWD/work/${h:0:2}/${h:2:30}
	mkdir -p "$d"
	cat >"$d/.command.sh" <<TASK
#!/bin/bash -ue
bwa mem -t 2 $PWD/ref.fa $PWD/r1.fq $PWD/r2.fq 2>/dev/null | samtools sort -o $s.bam - 2>/dev/null
TASK
	cat >"$d/.command.run" <<TASK
#!/bin/bash
#SBATCH -D $d
#SBATCH -J nf-ALIGN_($s)
#SBATCH -o $d/.command.log
#SBATCH --no-requeue
#SBATCH --signal B:USR2@30
#SBATCH -c 2
#SBATCH --mem 1000M
NXF_CHDIR=$d
# NEXTFLOW TASK: ALIGN ($s)
set -e
cd \$NXF_CHDIR
/bin/bash -ue $d/.command.sh >$d/.command.out 2>$d/.command.err
echo \$? >$d/.exitcode
TASK
	(cd "$d" && sbatch .command.run) | awk '{ print $4 }' >>jobs
done
while squeue -h -j "$(paste -sd, jobs)" 2>/dev/null | grep -q .; do sleep 0.5; done
SH
chmod 755 "$nd/nextflow"
(cd "$nd" && ./nextflow run main.nf) >"$TMP/nextflow.out" 2>&1 ||
	e2e_fail "the Nextflow-shaped head failed: $(cat "$TMP/nextflow.out")"
[ "$(ls "$nd"/work/*/*/s?.bam | wc -l)" = 2 ] || e2e_fail "the Nextflow-shaped tasks made no BAM"
live_check wait --where "engine=nextflow" --timeout 30
python3 - "$TRACER" "$LAKE" "$nd" <<'PY' || e2e_fail "the Nextflow-shaped jobs are not the head's steps (above)"
import json, subprocess, sys
tracer, lake, nd = sys.argv[1:4]
runs = json.loads(subprocess.run([tracer, "report", "--db", lake, "--json"], capture_output=True, text=True,
                                 check=True).stdout)["runs"]
heads = [r for r in runs if r.get("engine") == "nextflow"]
jobs = sorted(open(f"{nd}/jobs").read().split())
errors = []
if len(heads) != 1:
    errors.append(f"{len(heads)} Nextflow runs in the list, not 1: {[r.get('command') for r in heads]}")
else:
    doc = json.loads(subprocess.run([tracer, "report", "--db", lake, str(heads[0]["run_id"]), "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    steps = [s for s in doc["steps"] if s.get("job")]
    for s in doc["steps"]:
        print(f"step {s['id']} {s['name']} ({s['engine']}): job {(s.get('job') or {}).get('slurm_job_id')}, "
              f"{s.get('cpu_limit_cores')} CPUs, {s.get('memory_limit_bytes')} bytes, tools {s.get('tools')}")
    if sorted(s["job"]["slurm_job_id"] for s in steps) != jobs:
        errors.append(f"the head's job steps are of {[s['job']['slurm_job_id'] for s in steps]}, not {jobs}")
    for s in steps:
        if (s["name"], s["engine"], s.get("cpu_limit_cores"), s.get("memory_limit_bytes")) != \
                ("ALIGN", "nextflow", 2.0, 1000 << 20):
            errors.append(f"step {s['id']}: {s['name']}, {s['engine']}, {s.get('cpu_limit_cores')} CPUs, "
                          f"{s.get('memory_limit_bytes')} bytes; want ALIGN, nextflow, 2, 1000 MiB")
        if not {"bwa mem", "samtools sort"} <= set(s.get("tools") or []):
            errors.append(f"step {s['id']}: tools {s.get('tools')}")
for e in errors:
    print(f"FAIL: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
# Two more runs: tune's Nextflow configuration then carries the process's own name, ALIGN, with the advice
# from its six jobs of three runs (a withName block Nextflow takes as it is).
for i in 2 3; do
	(cd "$nd" && ./nextflow run main.nf) >>"$TMP/nextflow.out" 2>&1 ||
		e2e_fail "the Nextflow-shaped head failed (run $i): $(tail -20 "$TMP/nextflow.out")"
done
live_check wait --where "engine=nextflow" --count 3 --timeout 30
nfpipe=$("$TRACER" report --db "$LAKE" --json |
	python3 -c 'import json, sys; print({r["pipeline"] for r in json.load(sys.stdin)["runs"] if r.get("engine") == "nextflow"}.pop())') ||
	e2e_fail "no Nextflow pipeline in the list"
"$TRACER" tune --db "$LAKE" --pipeline "$nfpipe" --format nextflow >"$TMP/nf.config" ||
	e2e_fail "tracer tune --format nextflow failed"
cat "$TMP/nf.config"
grep -q "^// ALIGN: 3 runs, 6 tasks" "$TMP/nf.config" && grep -q "^    withName: 'ALIGN' {" "$TMP/nf.config" &&
	grep -Eq "^        cpus = [12]$" "$TMP/nf.config" ||
	e2e_fail "tune's Nextflow configuration does not advise ALIGN over its 3 runs (above)"
live_alive
