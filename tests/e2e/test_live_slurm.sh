#!/usr/bin/env bash
# Daemon mode: a SLURM-shaped job that runs Snakemake. No slurmd here, so
# the test does what slurmstepd does for a batch job: it puts the job's
# shell into the job's cgroups - on the v1 memory hierarchy
# slurm/uid_U/job_J/step_batch (SLURM's cgroup/v1 layout), on the v2 one
# (pure, or a hybrid's unified/) .../slurmstepd.scope/job_J/step_batch/
# user/task_0 (cgroup/v2) - then runs the batch script as the job's user
# (nobody) with SLURM's variables (SLURM_JOB_ID, SLURM_JOBID,
# SLURM_JOB_NAME, SLURM_JOB_USER, SLURM_SUBMIT_DIR, SLURM_CPUS_ON_NODE,
# SLURM_NODELIST...; a batch step has no SLURM_STEP_ID). The script runs
# `hostname`, then Snakemake as an `srun` step would (SLURM_STEP_ID=0).
# The lake must have exactly ONE run of the job - not one for the job and
# one for Snakemake inside it (docs/live.md, "Nesting"): detected_by slurm,
# engine snakemake, pipeline snakemake:<abs>/Snakefile, pipeline_run_id
# (the run's run_id) = the job id, succeeded; steps (docs/processor.md,
# "Steps"): the 6 Snakemake jobs (engine snakemake) and the two SLURM steps
# (engine slurm): slurm-J (the batch script, its hostname) and slurm-J.0 (the
# srun step: Snakemake itself and its scheduler's solver); every one of the 8
# with the job's allocation from its environment (SLURM_CPUS_ON_NODE=1,
# SLURM_MEM_PER_NODE=3000: docs/processor.md, "Allocation").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake bwa samtools wgsim; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs snakemake bwa samtools)"
done

# The job's cgroups (as test_cgroup_context.sh makes them: v2 pure or hybrid, v1 memory).
v2=''
for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[ -f "$r/cgroup.procs" ] && [ -f "$r/cgroup.controllers" ] && { v2=$r; break; }
done
v1=''
[ -f /sys/fs/cgroup/memory/cgroup.procs ] && v1=/sys/fs/cgroup/memory
[ -n "$v2$v1" ] || e2e_skip "no cgroup v2 hierarchy and no v1 memory hierarchy to make the job's cgroup in"
job=$((900000 + $$ % 90000))
uid=$(id -u nobody)
made=()
cg_remove() {
	local d pid i
	for ((i = ${#made[@]} - 1; i >= 0; i--)); do
		d=${made[$i]}
		[ -d "$d" ] || continue
		while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$d/cgroup.procs"
		for _ in $(seq 20); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
	done
}
e2e_on_exit cg_remove
mk() {
	local d=$1 parts=() p
	while [ ! -d "$d" ]; do parts=("$d" "${parts[@]}"); d=$(dirname "$d"); done
	for p in "${parts[@]}"; do mkdir "$p" || e2e_fail "setup: cannot create the cgroup $p"; made+=("$p"); done
}
join=''
if [ -n "$v1" ]; then
	mk "$v1/slurm/uid_$uid/job_$job/step_batch"
	join="$join echo \$\$ > $v1/slurm/uid_$uid/job_$job/step_batch/cgroup.procs;"
fi
if [ -n "$v2" ]; then
	mk "$v2/tracer-e2e-slurm.slice/slurmstepd.scope/job_$job/step_batch/user/task_0"
	join="$join echo \$\$ > $v2/tracer-e2e-slurm.slice/slurmstepd.scope/job_$job/step_batch/user/task_0/cgroup.procs;"
fi

live_init
live_start

wd=$(live_user_dir job)
live_snakefile "$wd" 3
cat >"$wd/slurm_script" <<'SH'
#!/bin/bash
#SBATCH --job-name=align
#SBATCH --cpus-per-task=1
hostname > hostname.txt
# srun snakemake: a job step
SLURM_STEP_ID=0 SLURM_STEPID=0 snakemake -c1 -q
SH
chmod 755 "$wd/slurm_script"
chown -R nobody "$wd"
slurm_env=(SLURM_JOB_ID="$job" SLURM_JOBID="$job" SLURM_JOB_NAME=align SLURM_JOB_USER=nobody
	SLURM_JOB_UID="$uid" SLURM_SUBMIT_DIR="$wd" SLURM_CPUS_ON_NODE=1 SLURM_MEM_PER_NODE=3000 SLURM_NNODES=1
	SLURM_NODELIST="$(hostname)" SLURMD_NODENAME="$(hostname)" SLURM_CLUSTER_NAME=e2e)
# As slurmstepd: into the job's cgroups (as root), then the script as the job's user, in its directory.
bash -c "$join cd '$wd' && exec setpriv --reuid $uid --regid $LIVE_GID --clear-groups --inh-caps=-all \
	env -i PATH=/usr/local/bin:/usr/bin:/bin HOME='$wd' XDG_CACHE_HOME='$wd/.cache' ${slurm_env[*]} \
	/bin/bash '$wd/slurm_script'" >"$TMP/job.out" 2>&1 &
jpid=$!
echo "job $job: batch script pid $jpid in $wd${v1:+, v1 memory cgroup slurm/uid_$uid/job_$job/step_batch}${v2:+, v2 .../job_$job/step_batch/user/task_0}"
live_wait_pid "$jpid" 90 "the SLURM-shaped job"
[ "$LIVE_RC" = 0 ] || e2e_fail "the job failed (exit $LIVE_RC): $(tail -5 "$TMP/job.out")"
[ -s "$wd/sorted.bam.bai" ] || e2e_fail "the job's pipeline did not make sorted.bam.bai"

# Every run of this job: its batch script's (the root), or any naming the job or the Snakefile.
live_check wait --where "run_key~-$jpid-" --timeout 20
live_check check --where "pipeline_run_id=$job" --count 1
live_check check --where "pipeline~$wd/" --count 1
live_check check --where "command~slurm_script" --count 1
live_check check --where "run_key~-$jpid-" --expect detected_by=slurm --expect engine=snakemake \
	--expect "pipeline=snakemake:$wd/Snakefile" --expect "pipeline_run_id=$job" --expect state=succeeded \
	--expect exit_code=0 --expect-run "run_id=$job" --expect-run "slurm_job_id=$job" \
	--steps 8 --engine-steps snakemake=6 --engine-steps slurm=2 --step-state succeeded \
	--tools "bwa index" "bwa mem" "samtools view" "samtools sort" "samtools index" "wgsim" hostname \
	--tool-procs bwa,samtools,wgsim,hostname --no-signal failed --by-name
# Every step of the job holds the job's allocation (no kernel limit on these cgroups): 1 CPU, 3000 MiB.
python3 - "$LAKE" "$job" <<'PY2' || e2e_fail "the job's steps do not carry its SLURM allocation (above)"
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute("SELECT step_id, cpu_limit_millicores, memory_limit_bytes FROM steps WHERE run_id IN "
                  "(SELECT run_id FROM runs WHERE pipeline_run_id = ?)", (sys.argv[2],)).fetchall()
bad = [r for r in rows if r[1] != 1000 or r[2] != 3000 << 20]
for r in bad:
    print(f"  step {r[0]}: cpu_limit_millicores {r[1]}, memory_limit_bytes {r[2]}; expected 1000, {3000 << 20}")
sys.exit(1 if bad or len(rows) != 8 else 0)
PY2
live_alive
