#!/usr/bin/env bash
# Daemon mode, live: a real Snakemake pipeline (tests/e2e/data/Snakefile:
# wgsim, bwa, samtools; 6 jobs) run by a plain user (nobody) as it would be
# without tracer - no tracer run, no wrapper - while the three daemons run
# as their units start them (tests/e2e/live.sh: --config FILE; the collector
# traces the whole host; the processor finds the run itself and streams it).
# The copy of the Snakefile has `sleep 5` before the first job's command
# (rule ref; still 6 jobs), so the pipeline lasts long enough to be seen:
# WHILE it runs, `tracer report --db LAKE --json` shows its run "running"
# with a step; after it, the run is "succeeded", engine snakemake, pipeline
# snakemake:<abs dir>/Snakefile, detected_by snakemake, 6 steps (one per
# job) with their tools named, every tool process in a step of the run, the
# engine in none, every process in the pipeline's directory, no "failed"; and `tracer export table`
# gives the same steps and processes in CSV and NDJSON (check_export_table.py).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake bwa samtools wgsim; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs snakemake bwa samtools)"
done
live_init
live_start

smk=$(live_user_dir smk)
live_snakefile "$smk" 5
live_as_user "$smk" snakemake -c1 -q >"$TMP/smk.out" 2>&1 &
pid=$!
echo "pipeline: snakemake -c1 -q in $smk as nobody, pid $pid"
# The run's key is BOOT-PID-START of its root (docs/live.md): snakemake itself (setpriv and env exec it).
live_check watch --where "run_key~-$pid-" --min-steps 1 --alive "$pid" --timeout 30
live_wait_pid "$pid" 90 "the Snakemake pipeline"
[ "$LIVE_RC" = 0 ] || e2e_fail "the pipeline failed (exit $LIVE_RC): $(tail -5 "$TMP/smk.out")"
[ -s "$smk/sorted.bam.bai" ] || e2e_fail "the pipeline did not make sorted.bam.bai"
live_check wait --where "run_key~-$pid-" --timeout 20
live_check check --where "run_key~-$pid-" --expect state=succeeded --expect engine=snakemake \
	--expect "pipeline=snakemake:$smk/Snakefile" --expect detected_by=snakemake --expect exit_code=0 \
	--steps 6 --tools "bwa index" "bwa mem" "samtools view" "samtools sort" "samtools index" "wgsim" \
	--tool-procs bwa,samtools,wgsim --step-engine snakemake --step-state succeeded --engine-no-step snakemake \
	--cwd-under "$smk" --no-signal failed --by-name
live_alive
# tracer export table (issue 28): every table in CSV and NDJSON loads in Python's csv and json modules with the
# documented columns and types, and the run's steps and processes equal tracer report --json's
# (tests/e2e/check_export_table.py).
python3 "$(dirname "$0")/check_export_table.py" --tracer "$TRACER" --db "$LAKE" --run-key-part="-$pid-" ||
	e2e_fail "check_export_table.py failed (TRACER_E2E_KEEP=1 keeps $TMP)"
