#!/usr/bin/env bash
# tracer tune end to end (issue 15), with the daemons tracing the whole host
# and delivering to a lake:
#  1. a Snakemake pipeline of three steps of known shape (data/tune: a
#     memory-hungry step, a 2-process compute step, an fsync-heavy writer)
#     runs six times as a plain user; each step's class must be right and its
#     advice must follow the rule from its own measured figures;
#  2. the advice pasted as a Snakemake profile is accepted by snakemake;
#  3. a seventh run against a CPU hog (stress-ng, outside the run): the
#     compute step is slower than usual, with run-queue wait as the cause;
#  4. a step OOM-killed under a memory cgroup limit, three runs: it is
#     advised more memory than the limit, by the OOM rule;
#  5. tracer cost prices the runs by the host's configured instance type
#     from the shipped table, and names a cheaper type that fits them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake stress-ng python3; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs it)"
done
live_init
# The host as an m6i.4xlarge in us-east-1 (this VM's DMI names no cloud): tracer cost prices the runs by the
# shipped table and finds a smaller type for what they used.
printf 'cloud = aws\ninstance_type = m6i.4xlarge\nregion = us-east-1\n' >>"$CONF"
live_start

dir=$(live_user_dir tune)
cp "$E2E_DIR"/data/tune/* "$dir/" && chown nobody "$dir"/* || e2e_fail "setup: cannot copy data/tune to $dir"
pipeline="snakemake:$dir/Snakefile"
tune_check() {
	python3 "$E2E_DIR/check_tune.py" --tracer "$TRACER" --db "$LAKE" "$@" ||
		e2e_fail "check_tune.py $4 failed (TRACER_E2E_KEEP=1 keeps $TMP)"
}

# One run of the pipeline, as the plain user, waited for until the lake has it finished.
run_pipeline() {
	local pid
	(live_as_user "$dir" snakemake -c2 -q --forceall >"$TMP/run$1.out" 2>&1) &
	pid=$!
	live_wait_pid "$pid" 120 "run $1 of the pipeline"
	[ "$LIVE_RC" = 0 ] || e2e_fail "run $1 of the pipeline failed (exit $LIVE_RC): $(tail -5 "$TMP/run$1.out")"
	live_check wait --where "pipeline=$pipeline" --count "$1" --timeout 30 >/dev/null
}

for i in 1 2 3 4 5 6; do
	run_pipeline "$i"
	echo "run $i done"
done
# Snakemake ran each job as `bash -c CMD` without naming its rule, so tracer names the steps from their
# tools (hungry.py, compute.py, writer.py).
tune_check --pipeline "$pipeline" steps --runs 6 --class hungry.py=memory --class compute.py=compute \
	--class writer.py=io --cores compute.py:1.5:2.2

# The advice as a Snakemake profile: the steps it cannot key by rule are comments that say what to set;
# snakemake takes the file (a dry run).
mkdir -p "$TMP/profile" && chown nobody "$TMP/profile"
"$TRACER" tune --db "$LAKE" --pipeline "$pipeline" --format snakemake >"$TMP/profile/config.yaml" ||
	e2e_fail "tracer tune --format snakemake failed"
grep -q '^# compute.py: 2 CPUs, ' "$TMP/profile/config.yaml" ||
	e2e_fail "the Snakemake profile does not advise compute.py 2 CPUs: $(cat "$TMP/profile/config.yaml")"
(live_as_user "$dir" snakemake -c2 -n --forceall --profile "$TMP/profile" >"$TMP/dry.out" 2>&1) ||
	e2e_fail "snakemake did not take tracer tune's profile: $(tail -5 "$TMP/dry.out")"

tune_check --pipeline "$pipeline" cost --prices "$E2E_DIR/../../data/prices.csv" --type m6i.4xlarge --region us-east-1

# The seventh run against a CPU hog: twice as many busy processes as CPUs, none of them in the run.
stress-ng --cpu "$((2 * $(nproc)))" --timeout 120 --quiet &
hog=$!
e2e_on_exit "kill $hog 2>/dev/null; wait $hog 2>/dev/null; true"
sleep 1
run_pipeline 7
kill "$hog" 2>/dev/null
wait "$hog" 2>/dev/null
echo "run 7 (against the hog) done"
tune_check --pipeline "$pipeline" slow --step compute.py --cause run_queue

# A step OOM-killed under a memory cgroup limit, in three runs (TRACER_PIPELINE makes each a run,
# TRACER_STEP the step).
limit=$((64 << 20))
root='' v=''
for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ -f "$r/cgroup.controllers" ] && grep -qw memory "$r/cgroup.controllers"; then root=$r v=2 && break; fi
done
[ -n "$root" ] || { [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] && root=/sys/fs/cgroup/memory v=1; }
[ -n "$root" ] || e2e_fail "no memory cgroup controller to confine the OOM step (v2 memory.max or v1 memory.limit_in_bytes)"
if [ "$v" = 2 ] && ! grep -qw memory "$root/cgroup.subtree_control"; then
	echo +memory >"$root/cgroup.subtree_control" || e2e_fail "cannot enable the memory controller in $root"
fi
cg=$root/tracer-e2e-tune-oom.$$
mkdir "$cg" || e2e_fail "cannot create the cgroup $cg"
e2e_on_exit "for p in \$(cat $cg/cgroup.procs 2>/dev/null); do kill -9 \$p; done; sleep 0.2; rmdir $cg 2>/dev/null; true"
if [ "$v" = 2 ]; then
	echo "$limit" >"$cg/memory.max" && { [ ! -f "$cg/memory.swap.max" ] || echo 0 >"$cg/memory.swap.max"; }
else
	echo "$limit" >"$cg/memory.limit_in_bytes" &&
		{ [ ! -f "$cg/memory.memsw.limit_in_bytes" ] || echo "$limit" >"$cg/memory.memsw.limit_in_bytes"; }
fi || e2e_fail "cannot limit $cg to $limit bytes"
for i in 1 2 3; do
	env TRACER_PIPELINE=tune-oom sh -c "env TRACER_STEP=grow sh -c 'echo \$\$ >$cg/cgroup.procs && exec $W hog 512'; true" ||
		e2e_fail "the OOM run $i failed to start"
	live_check wait --where "pipeline=tune-oom" --count "$i" --timeout 30 >/dev/null
done
tune_check --pipeline tune-oom oom --step grow --limit "$limit"
# A step the pipeline named (TRACER_STEP): its advice as configuration to paste.
"$TRACER" tune --db "$LAKE" --pipeline tune-oom --format nextflow >"$TMP/oom.nf" &&
	grep -q "withName: 'grow'" "$TMP/oom.nf" || e2e_fail "tracer tune --format nextflow: no withName: 'grow': $(cat "$TMP/oom.nf")"
"$TRACER" tune --db "$LAKE" --pipeline tune-oom --format snakemake >"$TMP/oom.yaml" &&
	grep -q '^  - grow:mem_mb=' "$TMP/oom.yaml" || e2e_fail "tracer tune --format snakemake: no grow:mem_mb: $(cat "$TMP/oom.yaml")"
"$TRACER" tune --db "$LAKE" --pipeline tune-oom --format slurm >"$TMP/oom.sh" &&
	grep -q '^sbatch --cpus-per-task=1 --mem=' "$TMP/oom.sh" || e2e_fail "tracer tune --format slurm: no sbatch line: $(cat "$TMP/oom.sh")"
# Bad requests: a clear message and the exit status, never a crash.
expect_fail() {
	local want=$1 pattern=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" = "$want" ] && grep -q -- "$pattern" <<<"$out" ||
		e2e_fail "$* exited $rc (expected $want) saying: $out (expected: $pattern)"
}
expect_fail 2 "is text, json, nextflow, snakemake or slurm, not 'xml'" "$TRACER" tune --db "$LAKE" --format xml
expect_fail 1 "no run '999'" "$TRACER" tune --db "$LAKE" --run 999
expect_fail 2 "runs from 1 to 100000" "$TRACER" tune --db "$LAKE" --runs 0
expect_fail 2 "not 'nope'" "$TRACER" cost --db "$LAKE" --by nope
expect_fail 1 "no '# source: ...' line" "$TRACER" cost --db "$LAKE" --prices "$CONF"
expect_fail 1 "No such file" "$TRACER" tune --db "$TMP/no-such-lake.db"
live_alive
