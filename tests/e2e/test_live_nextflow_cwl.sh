#!/usr/bin/env bash
# Daemon mode: the other engines, each run by a plain user (nobody) while the
# daemons run (tests/e2e/live.sh), and found by the processor itself:
# - a Nextflow-shaped run (Nextflow is not packaged; as test_nextflow_shaped:
#   a `nextflow run main.nf` launcher runs each of 4 tasks as
#   `bash .command.run` in its own work/xx/hash... directory, two at a time):
#   one run, detected_by and engine nextflow, pipeline nextflow:<abs>/main.nf,
#   one step per task directory (engine nextflow), every tool process in one;
# - a real cwltool run of tests/e2e/data/live.cwl (a Workflow of two
#   CommandLineTools, `sort -n` then `wc -l`, --no-container): one run,
#   detected_by and engine cwltool, pipeline cwltool:<abs>/live.cwl, a step
#   for each tool invocation (engine cwltool) with its tool named.
# Both succeed, and so do their runs and steps in the lake.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
command -v cwltool >/dev/null || e2e_fail "cwltool is not installed (apt-get install cwltool; make deps)"
live_init
live_start

# Nextflow-shaped.
tasks=4
nf=$(live_user_dir nf)
for i in $(seq $tasks); do
	h=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	d=$nf/work/${h:0:2}/${h:2:30}
	mkdir -p "$d" || e2e_fail "setup: mkdir $d"
	cat >"$d/.command.sh" <<SH
#!/bin/bash -ue
seq 1 2000 | sort -n | gzip -c > out_$i.gz
gzip -dc out_$i.gz | wc -l > count_$i.txt
SH
	cat >"$d/.command.run" <<'SH'
#!/bin/bash
set -e
bash .command.sh > .command.out 2> .command.err
echo $? > .exitcode
SH
done
cat >"$nf/nextflow" <<'SH'
#!/bin/bash
# the launcher: every task in its directory, two at a time
n=0
for d in work/*/*/; do
	(cd "$d" && bash .command.run) &
	n=$((n + 1))
	[ $((n % 2)) = 0 ] && wait
done
wait
SH
echo 'workflow {}' >"$nf/main.nf"
chmod +x "$nf/nextflow"
chown -R nobody "$nf"
live_as_user "$nf" ./nextflow run main.nf >"$TMP/nf.out" 2>&1 &
nf_pid=$!
echo "nextflow-shaped: ./nextflow run main.nf in $nf as nobody, pid $nf_pid"
live_wait_pid "$nf_pid" 60 "the Nextflow-shaped run"
[ "$LIVE_RC" = 0 ] || e2e_fail "the Nextflow-shaped run failed (exit $LIVE_RC): $(tail -5 "$TMP/nf.out")"

# cwltool.
cwl=$(live_user_dir cwl)
cp "$E2E_DIR/data/live.cwl" "$cwl/" && seq 1 3000 | shuf --random-source=/dev/zero >"$cwl/in.txt" ||
	e2e_fail "setup: cannot copy the workflow"
chown -R nobody "$cwl"
live_as_user "$cwl" cwltool --no-container --quiet live.cwl --infile in.txt >"$TMP/cwl.out" 2>&1 &
cwl_pid=$!
echo "cwltool: cwltool --no-container live.cwl in $cwl as nobody, pid $cwl_pid"
live_wait_pid "$cwl_pid" 60 "the cwltool run"
[ "$LIVE_RC" = 0 ] || e2e_fail "cwltool failed (exit $LIVE_RC): $(tail -5 "$TMP/cwl.out")"
grep -q '^3000 ' "$cwl/count.txt" 2>/dev/null || e2e_fail "cwltool did not count 3000 lines: $(cat "$cwl/count.txt" 2>&1)"

live_check wait --where "run_key~-$nf_pid-" --timeout 20
live_check check --where "run_key~-$nf_pid-" --expect state=succeeded --expect engine=nextflow \
	--expect detected_by=nextflow --expect "pipeline=nextflow:$nf/main.nf" --expect exit_code=0 \
	--steps $tasks --tools sort gzip wc --tool-procs seq,sort,gzip,wc --step-engine nextflow \
	--step-state succeeded --cwd-under "$nf" --no-signal failed
live_check wait --where "run_key~-$cwl_pid-" --timeout 20
live_check check --where "run_key~-$cwl_pid-" --expect state=succeeded --expect engine=cwltool \
	--expect detected_by=cwltool --expect "pipeline=cwltool:$cwl/live.cwl" --expect exit_code=0 \
	--steps 2 --tools sort wc --tool-procs sort,wc --step-engine cwltool --step-state succeeded \
	--engine-no-step cwltool --no-signal failed
live_alive
