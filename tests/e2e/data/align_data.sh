#!/usr/bin/env bash
# tests/e2e/data/align_data.sh DIR [PAIRS]: the inputs of tests/e2e/data/Snakefile.align in DIR: a 2 Mbp
# reference (ref.fa, seeded: the same bytes every time), its bwa index, and PAIRS (default 100000) wgsim
# read pairs of 100 bp (r1.fq, r2.fq, seed 7). Sized so that in the align rule
# (`bwa mem -t 2 | samtools sort -l 8`) samtools outlives bwa by seconds, as it does on real data.
# Shared by tests/e2e/test_real_align.sh and bench/real.sh.
set -euo pipefail
dir=$1 pairs=${2:-100000}
mkdir -p "$dir"
cd "$dir"
python3 -c "
import random
random.seed(1)
s = ''.join(random.choice('ACGT') for _ in range(2000000))
print('>chr1')
for i in range(0, len(s), 60):
    print(s[i:i + 60])" >ref.fa
wgsim -N "$pairs" -1 100 -2 100 -S 7 ref.fa r1.fq r2.fq >/dev/null 2>&1
bwa index ref.fa 2>/dev/null
