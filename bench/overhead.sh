#!/usr/bin/env bash
# make bench-overhead: what tracing costs.
#  - an exec storm and a CPU-bound job, each run with and without `tracer run`,
#    interleaved RUNS times; the medians and their ratio (targets: storm <= 1.05
#    with zero drops, CPU-bound <= 1.01);
#  - BPF program run time per event (kernel.bpf_stats_enabled, target <= 100 ns);
#  - collector and processor memory while tracing.
# Results: one "<metric> <value> <unit>" per line on stdout. Needs root.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-5}
storm_n=${STORM_N:-5000}
burn_ms=${BURN_MS:-2000}
tracer=$build/tracer
spawn=$build/bench/spawn

if [ "$(id -u)" != 0 ]; then
	echo "<3>bench-overhead needs root: tracer run loads BPF programs (sudo make bench-overhead)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/tracer-bench.XXXXXX)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT

elapsed() { awk '/^elapsed_ns/ { print $2 }'; }

# One workload, plain and traced, interleaved so drift hits both alike.
compare() { # name args...
	local name=$1 i; shift
	: > "$tmp/$name.base"; : > "$tmp/$name.traced"; : > "$tmp/$name.dropped"
	for ((i = 0; i < runs; i++)); do
		"$spawn" "$@" | elapsed >> "$tmp/$name.base"
		"$tracer" run --json "$tmp/r.json" -- "$spawn" "$@" 2>/dev/null | elapsed >> "$tmp/$name.traced"
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["agent"]["dropped"])' \
			"$tmp/r.json" >> "$tmp/$name.dropped"
	done
	python3 - "$name" "$tmp/$name.base" "$tmp/$name.traced" "$tmp/$name.dropped" <<'PY'
import statistics, sys
name, base, traced, dropped = sys.argv[1:]
b = [int(x) for x in open(base)]
t = [int(x) for x in open(traced)]
d = [int(x) for x in open(dropped)]
mb, mt = statistics.median(b), statistics.median(t)
print(f"overhead.{name}.baseline_s {mb / 1e9:.4f} s")
print(f"overhead.{name}.traced_s {mt / 1e9:.4f} s")
print(f"overhead.{name}.ratio {mt / mb:.4f} ratio")
print(f"overhead.{name}.dropped {max(d)} records")
PY
}

compare exec_storm storm "$storm_n" 2
compare cpu_burn burn "$burn_ms"

# Per-event cost of each program and the daemons' memory, from inside a traced storm.
echo 1 > /proc/sys/kernel/bpf_stats_enabled
bpftool -j prog show > "$tmp/others.json" # programs already loaded (other tracers) are not this run's
"$tracer" run -- sh -c "
	$spawn storm $storm_n 2 > /dev/null
	bpftool -j prog show > $tmp/progs.json
	tracer_pid=\$(ps -o ppid= -p \$PPID | tr -d ' ')   # our parent is the reaper, its parent tracer
	for c in tracer-collecto tracer-processo; do
		for p in \$(pgrep -P \$tracer_pid -x \$c); do
			grep -E '^(RssAnon|RssFile|RssShmem):' /proc/\$p/status | sed \"s/^/\$c /\"
		done
	done > $tmp/rss.txt" 2>/dev/null
python3 - "$tmp/progs.json" "$tmp/rss.txt" "$tmp/others.json" <<'PY'
import json, sys
others = {p["id"] for p in json.load(open(sys.argv[3]))}
for p in json.load(open(sys.argv[1])):
    if p["id"] in others:
        continue
    if p.get("name", "").startswith(("handle_", "nwe_", "nwx_")) and p.get("run_cnt"):
        print(f"bpf.{p['name']}.ns_per_event {p['run_time_ns'] / p['run_cnt']:.1f} ns")
        print(f"bpf.{p['name']}.events {p['run_cnt']} events")
# RssAnon: the process's own memory. RssFile: binaries and libraries, and for
# the collector the kernel ring buffer's mapping (16 MiB, mapped twice).
# RssShmem: the shared-memory ring pages this process has touched.
names = {"tracer-collecto": "collector", "tracer-processo": "processor"}
keys = {"RssAnon:": "rss_anon", "RssFile:": "rss_file", "RssShmem:": "rss_shmem"}
for line in open(sys.argv[2]):
    comm, key, kb, _ = line.split()
    print(f"{names[comm]}.{keys[key]} {kb} KiB")
PY
