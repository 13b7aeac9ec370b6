#!/usr/bin/env bash
# Issue 27: tune's advice, applied, on a real one-node SLURM (tests/e2e/slurm.sh) under the daemons. The loop a
# user runs: the workflow (tests/e2e/data/cluster/overask.smk: align asks 4000 MiB, index 2 CPUs for one
# thread) three times with `snakemake --cluster "sbatch -c {threads} --mem={resources.mem_mb}"`; then
# `tracer tune --format snakemake > profile/config.yaml`; then a fourth run with `--profile profile`.
#  - the fourth run's jobs ask SLURM for what tune advised: each of its steps holds the advised CPUs and
#    memory as SLURM gave them (SLURM_CPUS_ON_NODE, SLURM_MEM_PER_NODE), and every job succeeds;
#  - each rule's advice is no more than it asked, and less in something (index: 1 CPU; both: memory);
#  - the run reserves fewer GiB-hours than any run before it, and its wall time stays within 10% of the
#    mean of the three before (plus 2 s: SLURM's and Snakemake's polling, not the jobs);
#  - the CPU-hours and GiB-hours reserved (allocation x the job's time on its node) are printed per run, and
#    tracer cost --run RUN --json's job_cpu_hours and job_gib_hours are the same (within 0.1%).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
. "$(dirname "$0")/slurm.sh"
e2e_init "$1"
e2e_require_bpf
live_init
live_start
slurm_start

wd=$TMP/wf
bash "$E2E_DIR/data/align_data.sh" "$wd" 20000 || e2e_fail "setup: the workflow's inputs"
cp "$E2E_DIR/data/cluster/overask.smk" "$wd/Snakefile" && chmod 755 "$TMP" && chmod -R a+rX "$wd" ||
	e2e_fail "setup: $wd"
for s in a b; do ln -s r1.fq "$wd/${s}_1.fq" && ln -s r2.fq "$wd/${s}_2.fq" || e2e_fail "setup: links"; done
pipeline="snakemake:$wd/Snakefile"

# run_workflow N [SNAKEMAKE ARGS...]: the whole workflow again (--forceall), job by job through sbatch
run_workflow() {
	local n=$1
	shift
	(cd "$wd" && snakemake -j 4 --forceall --latency-wait 30 "$@" \
		--cluster "sbatch -c {threads} --mem={resources.mem_mb} -o $wd/slurm-%j.out" >"$TMP/snakemake.$n" 2>&1) ||
		e2e_fail "run $n: snakemake --cluster failed: $(tail -20 "$TMP/snakemake.$n")"
	slurm_wait_jobs 30
	[ -s "$wd/a.bam.bai" ] && [ -s "$wd/b.bam.bai" ] || e2e_fail "run $n made no index"
	[ "$(grep -c "Submitted batch job" "$TMP/snakemake.$n")" = 4 ] || e2e_fail "run $n: snakemake did not submit 4 jobs"
	live_check wait --where "pipeline=$pipeline" --count "$n" --timeout 30
}
for n in 1 2 3; do run_workflow $n; done

mkdir -p "$wd/profile" && "$TRACER" tune --db "$LAKE" --pipeline "$pipeline" --format snakemake \
	>"$wd/profile/config.yaml" || e2e_fail "tracer tune --format snakemake failed"
cat "$wd/profile/config.yaml"
run_workflow 4 --profile profile

python3 - "$TRACER" "$LAKE" "$pipeline" "$wd/profile/config.yaml" <<'PY' || e2e_fail "the advice did not hold (above)"
import json, re, subprocess, sys
tracer, lake, pipeline, profile = sys.argv[1:5]
asked = {"align": (2, 4000), "index": (2, 2000)}
advice = {r: [None, None] for r in asked}
for line in open(profile):
    m = re.fullmatch(r"  - (\w+)=(\d+)", line.rstrip()) or re.fullmatch(r"  - (\w+):mem_mb=(\d+)", line.rstrip())
    if m and m.group(1) in advice:
        advice[m.group(1)]["=" not in line.split(":")[0] and ":mem_mb=" in line] = int(m.group(2))
errors = []
for rule, (cpus, mem) in advice.items():
    if cpus is None or mem is None:
        errors.append(f"the profile gives {rule} no CPUs or no memory")
    elif cpus > asked[rule][0] or mem > asked[rule][1] or (cpus, mem) == asked[rule]:
        errors.append(f"{rule}: advised {cpus} CPUs, {mem} MiB; it asked {asked[rule]}: not less")


def report(*args):
    return json.loads(subprocess.run([tracer, "report", "--db", lake, *args, "--json"], capture_output=True,
                                     text=True, check=True).stdout)


heads = sorted((r for r in report()["runs"] if r.get("pipeline") == pipeline), key=lambda r: r["start_ns"])
if len(heads) != 4:
    sys.exit(f"FAIL: {len(heads)} runs of {pipeline} in the list, not 4")
figures = []
for i, h in enumerate(heads, 1):
    doc = report(str(h["run_id"]))
    cpu_h = gib_h = 0.0
    for s in doc["steps"]:
        if not s.get("job"):
            continue
        hours = (s["end_ns"] - s["start_ns"]) / 3.6e12
        cpu_h += (s.get("cpu_limit_cores") or 0) * hours
        gib_h += (s.get("memory_limit_bytes") or 0) / 2**30 * hours
        print(f"run {i} step {s['name']} job {s['job']['slurm_job_id']}: {s.get('cpu_limit_cores')} CPUs, "
              f"{(s.get('memory_limit_bytes') or 0) >> 20} MiB, {hours * 3600:.2f} s, {s['state']}")
        if s["state"] != "succeeded":
            errors.append(f"run {i}: step {s['name']} (job {s['job']['slurm_job_id']}) {s['state']}")
        if s["name"] not in asked:
            errors.append(f"run {i}: a job step named {s['name']}")
            continue
        want = advice[s["name"]] if i == 4 else asked[s["name"]]
        got = (s.get("cpu_limit_cores"), (s.get("memory_limit_bytes") or 0) >> 20)
        if None not in want and got != (float(want[0]), want[1]):
            errors.append(f"run {i}: step {s['name']} was given {got[0]} CPUs, {got[1]} MiB; it asked {tuple(want)}")
    wall = (h["end_ns"] - h["start_ns"]) / 1e9
    jobs = sum(1 for s in doc["steps"] if s.get("job"))
    figures.append((cpu_h, gib_h, wall))
    cost = json.loads(subprocess.run([tracer, "cost", "--db", lake, "--run", str(h["run_id"]), "--json"],
                                     capture_output=True, text=True, check=True).stdout)["totals"]
    print(f"run {i} ({h['run_id']}): {jobs} jobs, reserved {cpu_h:.6f} CPU-hours, {gib_h:.6f} GiB-hours, "
          f"wall {wall:.2f} s; tracer cost: {cost.get('job_cpu_hours')} CPU-hours, {cost.get('job_gib_hours')} "
          f"GiB-hours")
    if abs(cost.get("job_cpu_hours", -1) - cpu_h) > 1e-3 * cpu_h or \
            abs(cost.get("job_gib_hours", -1) - gib_h) > 1e-3 * gib_h:
        errors.append(f"run {i}: tracer cost says {cost.get('job_cpu_hours')} CPU-hours and "
                      f"{cost.get('job_gib_hours')} GiB-hours reserved by its jobs, not {cpu_h:.6f} and {gib_h:.6f}")
    if jobs != 4:
        errors.append(f"run {i}: {jobs} job steps, not 4")
before = figures[:3]
after = figures[3]
mean_wall = sum(f[2] for f in before) / 3
print(f"after/before: CPU-hours {after[0] / (sum(f[0] for f in before) / 3):.2f}, GiB-hours "
      f"{after[1] / (sum(f[1] for f in before) / 3):.3f}, wall {after[2] / mean_wall:.2f} (of the mean of runs 1-3)")
if after[1] >= min(f[1] for f in before):
    errors.append(f"the advised run reserved {after[1]:.6f} GiB-hours, not less than before")
if after[2] > 1.10 * mean_wall + 2:
    errors.append(f"the advised run took {after[2]:.2f} s, more than 10% (+2 s) over the mean {mean_wall:.2f} s")
for e in errors:
    print(f"FAIL: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
live_alive
