#!/usr/bin/env bash
# A Nextflow-shaped run (Nextflow itself is not packaged): a launcher runs
# each task as `bash .command.run` inside its own work/xx/hash... directory,
# two at a time, and each task runs tools. One step per task directory,
# engine nextflow, every process in a task directory in its step.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

tasks=5
mkdir -p "$TMP/nf" || e2e_fail "setup"
for i in $(seq $tasks); do
	h=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	d=$TMP/nf/work/${h:0:2}/${h:2:30}
	mkdir -p "$d" || e2e_fail "setup: mkdir $d"
	cat >"$d/.command.sh" <<SH
#!/bin/bash -ue
seq 1 2000 | sort -n | gzip -c > out_$i.gz
gzip -dc out_$i.gz | wc -l > count_$i.txt
SH
	cat >"$d/.command.run" <<'SH'
#!/bin/bash
# a reduced .command.run: stage, run .command.sh, record the exit code
set -e
bash .command.sh > .command.out 2> .command.err
echo $? > .exitcode
SH
done
cat >"$TMP/nf/nextflow" <<'SH'
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
chmod +x "$TMP/nf/nextflow"
cd "$TMP/nf" || e2e_fail "setup: cd"
tracer_run nf --json "$TMP/nf.json" -- ./nextflow run main.nf
expect_rc "every task succeeds" 0 nf
python3 "$E2E_DIR/check_context.py" nextflow "$TMP/nf.json" --tasks $tasks ||
	e2e_fail "report check 'nextflow' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
