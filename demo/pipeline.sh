#!/bin/sh
# A small pipeline for `make demo`: several tools, pipes, a compressor, an
# interpreter, a tool with subcommands when samtools is installed, and one
# step that fails on purpose and is handled, as real pipelines do. Shell
# idioms end non-zero too - sort stopped by head's closed pipe, grep -q
# that finds nothing - and are not failures: the summary counts them
# ("tolerated") and raises no signal for them.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seq 1 200000 | awk '{ printf ">read%d\nACGTACGT%s\n", $1, substr("ACGTACGTTGCA", 1 + $1 % 8) }' > "$work/reads.fa"
gzip -k "$work/reads.fa"
zcat "$work/reads.fa.gz" | grep -c '^>' > "$work/count.txt"
sort -r "$work/reads.fa" | head -n 1000 > "$work/top.txt"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" -c 'import sys; print("lines:", sum(1 for _ in open(sys.argv[1])))' "$work/top.txt"
if command -v samtools > /dev/null; then
	samtools faidx "$work/reads.fa"
	samtools faidx "$work/reads.fa" read42 > /dev/null
fi
grep -q NNNN "$work/reads.fa" || echo "no N runs found (grep exited 1, as expected)"
# The step that fails: fetch a reference that is not there (TRACER_STEP
# names the step); the pipeline falls back to one of its own and goes on.
# The summary's signal says which step failed, how, and which tool in it.
if ! TRACER_STEP=fetch-reference sh -c 'cp "$1" "$2" && echo "reference fetched"' sh \
	/nonexistent/reference.fa "$work/ref.fa"; then
	echo "no reference at /nonexistent/reference.fa: using the first read instead"
	head -n 2 "$work/reads.fa" > "$work/ref.fa"
fi
wc -l "$work/count.txt" "$work/top.txt"
