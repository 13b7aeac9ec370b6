#!/usr/bin/env bash
# Issue 25: a real short-read align workflow under the daemons, as a user runs it: Snakemake's rule
# `bwa mem -t 2 | samtools sort -l 8` (tests/e2e/data/Snakefile.align; wgsim reads, 2 Mbp reference:
# samtools outlives bwa by seconds), five runs alone and a sixth beside `stress-ng --cpu 4`; the first run
# also does rule one_core (threads: 2, one core used). tests/e2e/check_real.py then checks the lake and
# tracer tune: the step keeps bwa (its CPU within 2% of its processes', its tools), one name in every run,
# class compute, slower than usual in the hog run because of the run queue, and one_core's allocation of
# 2 CPUs used at 50%.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake bwa samtools wgsim stress-ng; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs it)"
done
live_init
live_start

wf=$(live_user_dir align)
"$E2E_DIR/data/align_data.sh" "$wf" 100000 || e2e_fail "setup: the align workflow's inputs"
cp "$E2E_DIR/data/Snakefile.align" "$wf/Snakefile"
chown -R nobody "$wf"

# run N [TARGETS...]: one run of the workflow as the plain user; waits for it.
run() {
	local n=$1 pid
	shift
	rm -f "$wf/sorted.bam"
	live_as_user "$wf" snakemake -c2 "$@" --config "workload=$W" >"$TMP/smk$n.out" 2>&1 &
	pid=$!
	live_wait_pid "$pid" 240 "run $n of the align workflow"
	[ "$LIVE_RC" = 0 ] || e2e_fail "run $n failed (exit $LIVE_RC): $(tail -5 "$TMP/smk$n.out")"
	live_check wait --where "run_key~-$pid-" --timeout 30
	echo "run $n: pid $pid done"
}
run 1 sorted.bam one_core.out
for n in 2 3 4 5; do run "$n" sorted.bam; done
stress-ng --cpu 4 --timeout 300 >/dev/null 2>&1 &
hog=$!
e2e_on_exit "kill $hog 2>/dev/null"
sleep 1
run 6 sorted.bam
kill "$hog"
wait "$hog" 2>/dev/null
live_alive
hog_run=$(sqlite3 "file:$LAKE?mode=ro" "SELECT max(run_id) FROM runs WHERE pipeline = 'snakemake:$wf/Snakefile'")
python3 "$E2E_DIR/check_real.py" --tracer "$TRACER" --db "$LAKE" --pipeline "snakemake:$wf/Snakefile" --runs 6 \
	--hog-run "$hog_run" || e2e_fail "check_real.py failed (TRACER_E2E_KEEP=1 keeps $TMP)"
