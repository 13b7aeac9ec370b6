# tests/e2e/test_slurm_tune.sh: the workflow of tests/e2e/data/cluster/Snakefile as a user first writes
# it, asking SLURM for more than it uses: align 4000 MiB for a bwa that holds a few tens, index two CPUs
# for samtools index, which runs one thread. tracer tune's advice, applied with --profile, must ask less.
SAMPLES = ["a", "b"]
rule all:
    input: expand("{s}.bam.bai", s=SAMPLES)
rule align:
    input: ref="ref.fa", idx="ref.fa.bwt", r1="{s}_1.fq", r2="{s}_2.fq"
    output: "{s}.bam"
    threads: 2
    resources: mem_mb=4000
    shell: "bwa mem -t {threads} {input.ref} {input.r1} {input.r2} 2> /dev/null | samtools sort -o {output} - 2> /dev/null"
rule index:
    input: "{s}.bam"
    output: "{s}.bam.bai"
    threads: 2
    resources: mem_mb=2000
    shell: "samtools index {input}"
