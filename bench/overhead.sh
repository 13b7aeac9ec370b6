#!/usr/bin/env bash
# make bench-overhead: what tracing costs.
#  - an exec storm run plain, under `tracer run`, and under libbpf-tools'
#    execsnoop and exitsnoop running side by side (Debian package libbpf-tools:
#    the usual way to watch execs and exits, seeing far less), rotated so that
#    no mode always runs first, RUNS times; the medians and their ratios to
#    plain (targets: tracer <= 1.05 with zero drops, and below
#    execsnoop+exitsnoop's);
#  - a CPU-bound job with and without `tracer run`, interleaved RUNS times
#    (target <= 1.01);
#  - BPF program run time per event (kernel.bpf_stats_enabled; raw: see
#    bench/kernel.sh for the figures net of the statistics' own cost);
#  - collector and processor memory while tracing.
# COMPARE_BUILD=DIR adds a fourth storm mode, `tracer run` of DIR's binaries (an
# older build, say), in the same rotation: overhead.exec_storm.compare_ratio.
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

# libbpf (execsnoop, exitsnoop) attaches tracepoints through tracefs, as the collector does.
tracefs_ready() {
	[ -d /sys/kernel/tracing/events ] || [ -d /sys/kernel/debug/tracing/events ] ||
		mount -t tracefs tracefs /sys/kernel/tracing
}

# One run of a workload (args) in one mode, its wall time appended to $tmp/$name.$mode.
run_mode() { # name mode args...
	local name=$1 mode=$2 es xs; shift 2
	sleep 1 # the previous run's detach (deferred kernel work) is not this run's cost
	case $mode in
	plain)
		"$spawn" "$@" | elapsed >>"$tmp/$name.plain" ;;
	tracer)
		"$tracer" run --json "$tmp/r.json" -- "$spawn" "$@" 2>/dev/null | elapsed >>"$tmp/$name.tracer"
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["agent"]["dropped"])' \
			"$tmp/r.json" >>"$tmp/$name.dropped" ;;
	compare)
		"$COMPARE_BUILD/tracer" run -- "$spawn" "$@" 2>/dev/null | elapsed >>"$tmp/$name.compare" ;;
	snoop)
		execsnoop >/dev/null 2>>"$tmp/snoop.log" &
		es=$!
		exitsnoop >/dev/null 2>>"$tmp/snoop.log" &
		xs=$!
		sleep 1 # loaded and attached (each takes ~0.2 s here)
		if ! kill -0 "$es" 2>/dev/null || ! kill -0 "$xs" 2>/dev/null; then
			cat "$tmp/snoop.log" >&2
			echo "<3>execsnoop or exitsnoop did not start (package libbpf-tools; make deps)" >&2
			exit 1
		fi
		"$spawn" "$@" | elapsed >>"$tmp/$name.snoop"
		kill -INT "$es" "$xs"
		wait "$es" "$xs" || true ;;
	esac
}

# Modes rotated each round so that drift and order hit them alike; medians and ratios to plain.
compare() { # name "modes..." args...
	local name=$1 modes=($2) i m; shift 2
	for m in "${modes[@]}" dropped; do : >"$tmp/$name.$m"; done
	for ((i = 0; i < runs; i++)); do
		for ((m = 0; m < ${#modes[@]}; m++)); do
			run_mode "$name" "${modes[(i + m) % ${#modes[@]}]}" "$@"
			echo "<7>$name round $i ${modes[(i + m) % ${#modes[@]}]} $(tail -n 1 "$tmp/$name.${modes[(i + m) % ${#modes[@]}]}") ns" >&2
		done
	done
	python3 - "$tmp" "$name" "${modes[@]}" <<'PY'
import statistics, sys
tmp, name, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
med = {m: statistics.median(int(x) for x in open(f"{tmp}/{name}.{m}")) for m in modes}
print(f"overhead.{name}.baseline_s {med['plain'] / 1e9:.4f} s")
print(f"overhead.{name}.traced_s {med['tracer'] / 1e9:.4f} s")
print(f"overhead.{name}.ratio {med['tracer'] / med['plain']:.4f} ratio")
print(f"overhead.{name}.dropped {max(int(x) for x in open(f'{tmp}/{name}.dropped'))} records")
if "snoop" in med:
    print(f"overhead.{name}.execsnoop_exitsnoop_s {med['snoop'] / 1e9:.4f} s")
    print(f"overhead.{name}.execsnoop_exitsnoop_ratio {med['snoop'] / med['plain']:.4f} ratio")
    print(f"overhead.{name}.tracer_to_execsnoop_exitsnoop {med['tracer'] / med['snoop']:.4f} ratio")
if "compare" in med:
    print(f"overhead.{name}.compare_s {med['compare'] / 1e9:.4f} s")
    print(f"overhead.{name}.compare_ratio {med['compare'] / med['plain']:.4f} ratio")
PY
}

tracefs_ready
compare exec_storm "plain tracer snoop${COMPARE_BUILD:+ compare}" storm "$storm_n" 2
compare cpu_burn "plain tracer" burn "$burn_ms"

# Per-event cost of each program and the daemons' memory, from inside a traced storm.
# This run's programs: those the collector holds (prog_id in its descriptors' fdinfo); another
# tracer, or another collector, may have programs of the same names loaded meanwhile.
echo 1 > /proc/sys/kernel/bpf_stats_enabled
: > "$tmp/ids.txt"
"$tracer" run -- sh -c "
	$spawn storm $storm_n 2 > /dev/null
	bpftool -j prog show > $tmp/progs.json
	tracer_pid=\$(ps -o ppid= -p \$PPID | tr -d ' ')   # our parent is the reaper, its parent tracer
	for c in tracer-collecto tracer-processo; do
		for p in \$(pgrep -P \$tracer_pid -x \$c); do
			grep -E '^(RssAnon|RssFile|RssShmem):' /proc/\$p/status | sed \"s/^/\$c /\"
			[ \$c = tracer-processo ] || grep -h '^prog_id:' /proc/\$p/fdinfo/* >> $tmp/ids.txt
		done
	done > $tmp/rss.txt" 2>/dev/null
python3 - "$tmp/progs.json" "$tmp/rss.txt" "$tmp/ids.txt" <<'PY'
import json, sys
mine = {int(line.split()[1]) for line in open(sys.argv[3])}
for p in json.load(open(sys.argv[1])):
    if p["id"] not in mine:
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
