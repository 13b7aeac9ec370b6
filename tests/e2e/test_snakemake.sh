#!/usr/bin/env bash
# A real Snakemake pipeline from Debian's packages (snakemake, bwa, samtools
# with wgsim): make a reference, simulate reads, index, align, sort, index
# the BAM. Every job is a step with its tools named, and every tool process
# belongs to a step; the engine itself belongs to none.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake bwa samtools wgsim; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs snakemake bwa samtools)"
done

mkdir "$TMP/smk" && cp "$E2E_DIR/data/Snakefile" "$TMP/smk/" || e2e_fail "setup: cannot copy the Snakefile"
cd "$TMP/smk" || e2e_fail "setup: cd $TMP/smk"
tracer_run smk --json "$TMP/smk.json" -- snakemake -c1 -q
expect_rc "the pipeline succeeds" 0 smk
[ -s "$TMP/smk/sorted.bam.bai" ] || e2e_fail "the pipeline did not make sorted.bam.bai"
python3 "$E2E_DIR/check_context.py" snakemake "$TMP/smk.json" --jobs 6 \
	--tools "bwa index" "bwa mem" "samtools view" "samtools sort" "samtools index" "wgsim" ||
	e2e_fail "report check 'snakemake' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
