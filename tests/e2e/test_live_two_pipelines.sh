#!/usr/bin/env bash
# Daemon mode: two Snakemake pipelines at once, by the same plain user, in
# two directories, the second started while the first runs (each copy of the
# Snakefile has `sleep 4` before its first job, so they overlap; the test
# checks they did). The lake must have two runs - each its own pipeline
# (snakemake:<its dir>/Snakefile), succeeded, with its own 6 steps and its
# own processes: no process in both, every process of a run in that run's
# directory, every tool process in a step of its own run.
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

a=$(live_user_dir a)
b=$(live_user_dir b)
live_snakefile "$a" 4
live_snakefile "$b" 4
live_as_user "$a" snakemake -c1 -q >"$TMP/a.out" 2>&1 &
pa=$!
sleep 1
kill -0 "$pa" 2>/dev/null || e2e_fail "pipeline a ended within 1 s (it should take 4 s or more): $(tail -3 "$TMP/a.out")"
live_as_user "$b" snakemake -c1 -q >"$TMP/b.out" 2>&1 &
pb=$!
sleep 1
kill -0 "$pa" 2>/dev/null || e2e_fail "pipeline a ended before b had run 1 s: they did not overlap"
echo "pipelines: a (pid $pa) in $a and b (pid $pb) in $b, overlapping"
live_wait_pid "$pa" 90 "pipeline a"
[ "$LIVE_RC" = 0 ] || e2e_fail "pipeline a failed (exit $LIVE_RC): $(tail -5 "$TMP/a.out")"
live_wait_pid "$pb" 90 "pipeline b"
[ "$LIVE_RC" = 0 ] || e2e_fail "pipeline b failed (exit $LIVE_RC): $(tail -5 "$TMP/b.out")"

live_check wait --where "run_key~-$pa-" --timeout 20
live_check wait --where "run_key~-$pb-" --timeout 20
for x in a b; do
	if [ $x = a ]; then pid=$pa dir=$a; else pid=$pb dir=$b; fi
	live_check check --where "pipeline~$dir/" --count 1
	live_check check --where "run_key~-$pid-" --expect state=succeeded --expect engine=snakemake \
		--expect "pipeline=snakemake:$dir/Snakefile" --expect detected_by=snakemake --steps 6 \
		--tools "bwa index" "bwa mem" "samtools view" "samtools sort" "samtools index" "wgsim" \
		--tool-procs bwa,samtools,wgsim --step-engine snakemake --cwd-under "$dir" --no-signal failed
done
live_check disjoint --a "run_key~-$pa-" --b "run_key~-$pb-" --dir-a "$a" --dir-b "$b"
live_alive
