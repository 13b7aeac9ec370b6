#!/usr/bin/env bash
# make bench-agent: what tracer itself costs while it watches (issue 4).
#  - idle: 1,000 live idle processes for IDLE_S seconds: collector + processor
#    CPU (from /proc, between two points once all are alive) plus BPF program
#    time (kernel.bpf_stats_enabled), as a share of one core (target <= 1%);
#  - pipeline: the Snakemake pipeline (bwa, samtools, wgsim) on a larger input,
#    run RUNS times with and without `tracer run`, interleaved: median ratio of
#    the pipeline's own wall time (timed inside the command, target <= 1.01),
#    the same from outside (tracer's start-up and stop included), tracer run's
#    fixed cost (`tracer run -- true`), and the agent's CPU (helpers + BPF) as
#    a share of the machine during the traced runs (target <= 2%);
#  - memory: the processor's peak RSS for an exec storm of 1,000 and of
#    STORM_BIG (100,000) processes in one run, and the difference per process.
# Results: one "<metric> <value> <unit>" per line on stdout. Needs root.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-3}
idle_s=${IDLE_S:-20}
storm_big=${STORM_BIG:-100000}
reads=${READS:-150000}
tracer=$build/tracer
spawn=$build/bench/spawn
here=$(cd "$(dirname "$0")" && pwd)
ncpu=$(nproc)

if [ "$(id -u)" != 0 ]; then
	echo "<3>bench-agent needs root: tracer run loads BPF programs (sudo make bench-agent)" >&2
	exit 1
fi
for t in snakemake bwa samtools wgsim bpftool; do
	command -v "$t" >/dev/null || { echo "<3>bench-agent needs $t (make deps)" >&2; exit 1; }
done
tmp=$(mktemp -d /var/tmp/tracer-bench-agent.XXXXXX)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
hz=$(getconf CLK_TCK)

# Total run time (ns) of tracer's BPF programs now loaded, except those whose ids are in file $1
# (the programs loaded before our run: another tracer's).
bpf_ns() {
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
old = set(open(sys.argv[1]).read().split()) if len(sys.argv) > 1 else set()
progs = json.load(sys.stdin)
print(sum(p.get("run_time_ns", 0) for p in progs
          if p.get("name", "").startswith("handle_") and str(p.get("id")) not in old))' "$@"
}
prog_ids() { bpftool -j prog show 2>/dev/null | python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))'; }
# CPU ticks (user + system) now of the collector and the processor of the tracer run with pid $1.
helper_ticks() {
	local t=0 pid f
	for pid in $(pgrep -P "$1" -x tracer-collecto) $(pgrep -P "$1" -x tracer-processo); do
		f=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null) || continue
		t=$((t + ${f% *} + ${f#* }))
	done
	echo "$t"
}
now_ns() { date +%s%N; }

# --- idle -------------------------------------------------------------------
prog_ids >"$tmp/old_progs"
"$tracer" run -- sh -c "for i in \$(seq 1000); do sleep $((idle_s + 10)) & done; wait" 2>"$tmp/idle.err" &
runner=$!
for _ in $(seq 100); do
	[ "$(pgrep -c -x sleep || true)" -ge 1000 ] && break
	sleep 0.2
done
sleep 2 # let the start-up burst settle
t0=$(now_ns) c0=$(helper_ticks "$runner") b0=$(bpf_ns "$tmp/old_progs")
sleep "$idle_s"
t1=$(now_ns) c1=$(helper_ticks "$runner") b1=$(bpf_ns "$tmp/old_progs")
wait "$runner" || true
python3 - "$t0" "$t1" "$c0" "$c1" "$b0" "$b1" "$hz" <<'PY'
import sys
t0, t1, c0, c1, b0, b1, hz = map(int, sys.argv[1:])
wall = (t1 - t0) / 1e9
helpers = (c1 - c0) / hz
bpf = (b1 - b0) / 1e9
print(f"agent.idle1000.helpers_cpu_s {helpers:.3f} s")
print(f"agent.idle1000.bpf_cpu_s {bpf:.4f} s")
print(f"agent.idle1000.wall_s {wall:.1f} s")
print(f"agent.idle1000.share_of_one_core {(helpers + bpf) / wall * 100:.3f} %")
PY

# --- pipeline ---------------------------------------------------------------
mkdir "$tmp/smk"
sed -e "s/-N 2000/-N $reads/" -e 's/range(20000)/range(2000000)/' "$here/../tests/e2e/data/Snakefile" >"$tmp/smk/Snakefile"
# The pipeline timed from inside the command: its own wall time, into $tmp/inner.
cat >"$tmp/timed.sh" <<EOS
#!/bin/sh
s=\$(date +%s%N)
snakemake -c$ncpu -q >/dev/null 2>&1
rc=\$?
echo \$((\$(date +%s%N) - s)) >"$tmp/inner"
exit \$rc
EOS
chmod 755 "$tmp/timed.sh"
pipeline() { # traced|plain: "outer_ns inner_ns" on stdout
	rm -rf "$tmp/smk/.snakemake" "$tmp/smk"/*.fa* "$tmp/smk"/*.fq "$tmp/smk"/*.bam*
	local s e
	s=$(now_ns)
	if [ "$1" = traced ]; then
		(cd "$tmp/smk" && "$tracer" run --json "$tmp/smk.json" -- "$tmp/timed.sh" 2>"$tmp/smk.err")
	else
		(cd "$tmp/smk" && "$tmp/timed.sh")
	fi
	e=$(now_ns)
	echo "$((e - s)) $(cat "$tmp/inner")"
}
: >"$tmp/plain" ; : >"$tmp/traced" ; : >"$tmp/cost" ; : >"$tmp/fixed"
pipeline plain >/dev/null # warm the page cache and python's
for ((i = 0; i < runs; i++)); do
	pipeline plain >>"$tmp/plain"
	w=$(pipeline traced)
	echo "$w" >>"$tmp/traced"
	w=${w% *}
	s=$(now_ns)
	"$tracer" run -- true 2>/dev/null
	echo $(($(now_ns) - s)) >>"$tmp/fixed"
	# BPF time of the run: the programs are gone once it ends, so read the last value it left.
	grep -o 'collector cpu [0-9.]* s.*processor cpu [0-9.]* s' "$tmp/smk.err" |
		awk -v w="$w" '{ print $3 + $10, w }' >>"$tmp/cost"
done
python3 - "$tmp/plain" "$tmp/traced" "$tmp/cost" "$ncpu" "$tmp/smk.json" "$tmp/fixed" <<'PY'
import json, statistics, sys
plain = [list(map(int, l.split())) for l in open(sys.argv[1])]
traced = [list(map(int, l.split())) for l in open(sys.argv[2])]
cost = [tuple(map(float, l.split())) for l in open(sys.argv[3])]
ncpu = int(sys.argv[4])
rep = json.load(open(sys.argv[5]))
fixed = [int(x) for x in open(sys.argv[6])]
def med(rows, i):
    return statistics.median(r[i] for r in rows)
print(f"agent.pipeline.plain_s {med(plain, 1) / 1e9:.3f} s")
print(f"agent.pipeline.traced_s {med(traced, 1) / 1e9:.3f} s")
print(f"agent.pipeline.ratio {med(traced, 1) / med(plain, 1):.4f} ratio")
print(f"agent.pipeline.outer_plain_s {med(plain, 0) / 1e9:.3f} s")
print(f"agent.pipeline.outer_traced_s {med(traced, 0) / 1e9:.3f} s")
print(f"agent.pipeline.outer_ratio {med(traced, 0) / med(plain, 0):.4f} ratio")
print(f"agent.run.fixed_cost_s {statistics.median(fixed) / 1e9:.3f} s")
share = statistics.median(c / (w / 1e9) / ncpu * 100 for c, w in cost)
print(f"agent.pipeline.helpers_share_of_machine {share:.3f} %")
print(f"agent.pipeline.processes {len(rep['processes'])} processes")
print(f"agent.pipeline.steps {len(rep['steps'])} steps")
print(f"agent.pipeline.dropped {rep['agent']['dropped']} records")
PY

# BPF time during the pipeline: one more traced run, read just before it ends.
prog_ids >"$tmp/old_progs"
rm -rf "$tmp/smk/.snakemake" "$tmp/smk"/*.fa* "$tmp/smk"/*.fq "$tmp/smk"/*.bam*
s=$(now_ns)
(cd "$tmp/smk" && "$tracer" run -- sh -c "snakemake -c$ncpu -q >/dev/null 2>&1; bpftool -j prog show > $tmp/progs.json") 2>/dev/null
e=$(now_ns)
python3 - "$tmp/progs.json" "$s" "$e" "$ncpu" "$tmp/old_progs" <<'PY'
import json, sys
old = set(open(sys.argv[5]).read().split())
progs = [p for p in json.load(open(sys.argv[1])) if str(p.get("id")) not in old]
wall = (int(sys.argv[3]) - int(sys.argv[2])) / 1e9
ns = sum(p.get("run_time_ns", 0) for p in progs if p.get("name", "").startswith("handle_"))
print(f"agent.pipeline.bpf_cpu_s {ns / 1e9:.4f} s")
print(f"agent.pipeline.bpf_share_of_machine {ns / 1e9 / wall / int(sys.argv[4]) * 100:.3f} %")
for p in sorted(progs, key=lambda p: p.get("name", "")):
    if p.get("name", "").startswith("handle_") and p.get("run_cnt"):
        print(f"agent.pipeline.bpf.{p['name']}.ns_per_event {p['run_time_ns'] / p['run_cnt']:.0f} ns")
        print(f"agent.pipeline.bpf.{p['name']}.events {p['run_cnt']} events")
PY

# --- memory -----------------------------------------------------------------
peak_rss() { grep -o 'processor cpu [0-9.]* s, peak rss [0-9]* KiB' "$1" | awk '{ print $7 }'; }
"$tracer" run --json "$tmp/s1.json" -- "$spawn" storm 1000 2 >/dev/null 2>"$tmp/s1.err"
"$tracer" run --max-processes $((storm_big + 10000)) --json "$tmp/s2.json" -- "$spawn" storm "$storm_big" 2 >/dev/null 2>"$tmp/s2.err"
python3 - "$(peak_rss "$tmp/s1.err")" "$(peak_rss "$tmp/s2.err")" "$storm_big" "$tmp/s2.json" <<'PY'
import json, sys
small, big, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rep = json.load(open(sys.argv[4]))
print(f"agent.processor.peak_rss_1k {small} KiB")
print(f"agent.processor.peak_rss_{n // 1000}k {big} KiB")
print(f"agent.processor.bytes_per_process {(big - small) * 1024 / (n - 1000):.0f} bytes")
print(f"agent.processor.storm_processes {len(rep['processes'])} processes")
print(f"agent.processor.storm_dropped {rep['agent']['dropped']} records")
PY
