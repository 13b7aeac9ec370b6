#!/usr/bin/env bash
# make bench-kernel: what the kernel programs cost, on the collector alone (no
# processor: the shared ring's drops do not matter to what is measured here).
#  - an exec storm (spawn storm N 2, empty environment) plain, with the collector
#    in daemon mode (every process traced), and with the collector tracing only an
#    idle process (--trace-pid: the storm is untraced). Interleaved RUNS times;
#    medians and ratios (target <= 1.05), of wall time and of CPU time (user +
#    system of the storm's whole tree, BPF programs included: they run in its
#    context). CPU time is the steadier figure on a machine shared with other work.
#  - BPF run time per event of every program (kernel.bpf_stats_enabled=1, restored
#    after), each in its own run: the statistics add two clock reads per run, so
#    they are kept out of the ratios.
#      storm / storm_env (40 variables, 3 allowlisted) / untraced storm /
#      net (64 MiB over loopback TCP) / idle (1000 sleeping processes, 10 s)
# Results: one "<metric> <value> <unit>" per line on stdout. Needs root.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
storm_n=${STORM_N:-5000}
spawn=$build/bench/spawn
collector=$build/tracer-collector

if [ "$(id -u)" != 0 ]; then
	echo "<3>bench-kernel needs root: the collector loads BPF programs (sudo make bench-kernel)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/tracer-kbench.XXXXXX)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
cpid='' idle=''
cleanup() {
	[ -z "$cpid" ] || kill "$cpid" 2>/dev/null || true
	[ -z "$idle" ] || kill "$idle" 2>/dev/null || true
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT

start_collector() { # collector options...
	rm -f "$tmp/sock" "$tmp/ready"
	mkfifo "$tmp/ready"
	"$collector" --socket "$tmp/sock" --consumer-uid 65534 --ready-fd 3 "$@" 3>"$tmp/ready" 2>>"$tmp/collector.log" &
	cpid=$!
	read -r _ <"$tmp/ready" || { cat "$tmp/collector.log" >&2; exit 1; }
}
stop_collector() {
	kill -TERM "$cpid"
	wait "$cpid" || { cat "$tmp/collector.log" >&2; exit 1; }
	cpid=''
}
# One storm: "wall_ns cpu_ns" (the CPU of every process of the storm, from wait4's rusage).
storm() {
	python3 -c '
import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(out.split()[1], int((r.ru_utime + r.ru_stime) * 1e9))' "$spawn" storm "$storm_n" 2
}
progs() { bpftool -j prog show >"$1"; }

sleep infinity &
idle=$! # what --trace-pid traces in the "untraced" runs: it never runs

# ---- ratios, statistics off ----
echo 0 >/proc/sys/kernel/bpf_stats_enabled
: >"$tmp/plain"; : >"$tmp/daemon"; : >"$tmp/untraced"
run_mode() { # plain | daemon | untraced
	case $1 in
	daemon) start_collector ;;
	untraced) start_collector --trace-pid "$idle" ;;
	esac
	sleep 1 # let a load's (or an unload's) deferred kernel work pass first
	storm >>"$tmp/$1"
	[ "$1" = plain ] || stop_collector
}
modes=(plain daemon untraced)
for ((i = 0; i < runs; i++)); do
	for ((m = 0; m < 3; m++)); do # rotated, so that no mode always comes first
		run_mode "${modes[(i + m) % 3]}"
	done
done

# ---- per-event costs, statistics on ----
echo 1 >/proc/sys/kernel/bpf_stats_enabled
measure() { # name collector-options -- command...
	local name=$1; shift
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	progs "$tmp/$name.others" # programs of other tracers running meanwhile are not ours
	start_collector "${opts[@]}"
	progs "$tmp/$name.before"
	"$@" >/dev/null
	progs "$tmp/$name.after"
	stop_collector
}
env40=(env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 TERM=xterm SHELL=/bin/bash USER=root
	SLURM_JOB_ID=123456 SLURM_STEP_ID=0 TRACER_RUN_ID=bench-run)
for i in $(seq 1 31); do env40+=("VAR_$i=value-of-variable-number-$i"); done
measure storm -- "$spawn" storm "$storm_n" 2
measure storm_env -- "${env40[@]}" "$spawn" storm-env "$storm_n" 2
measure untraced --trace-pid "$idle" -- "$spawn" storm "$storm_n" 2
measure net -- python3 -c '
import socket, threading
srv = socket.create_server(("127.0.0.1", 0)); port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept()
    while c.recv(1 << 16): pass
t = threading.Thread(target=serve); t.start()
s = socket.create_connection(("127.0.0.1", port)); buf = b"x" * (1 << 16)
for _ in range(1024): s.sendall(buf)
s.close(); t.join()'
for i in $(seq 1000); do sleep 1000 & done 2>/dev/null
sleepers=$(jobs -p | grep -v "^$idle\$" || true)
sleep 1
measure idle -- sleep 10
kill $sleepers 2>/dev/null || true

python3 - "$tmp" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
runs = {k: [tuple(map(int, x.split())) for x in open(f"{tmp}/{k}")] for k in ("plain", "daemon", "untraced")}
for i, what in ((0, "wall"), (1, "cpu")):
    med = {k: statistics.median(r[i] for r in v) for k, v in runs.items()}
    for k in runs:
        print(f"kernel.storm.{k}.{what}_s {med[k] / 1e9:.4f} s")
    for k in ("daemon", "untraced"):
        print(f"kernel.storm.{k}.{what}_ratio {med[k] / med['plain']:.4f} ratio")
ours = ("handle_", "nwe_", "nwx_")
for name in ("storm", "storm_env", "untraced", "net", "idle"):
    others = {p["id"] for p in json.load(open(f"{tmp}/{name}.others"))}
    before = {p["id"]: p for p in json.load(open(f"{tmp}/{name}.before")) if p["id"] not in others}
    total_ns = 0
    for p in json.load(open(f"{tmp}/{name}.after")):
        if not p.get("name", "").startswith(ours) or p["id"] not in before:
            continue
        b = before[p["id"]]
        cnt = p.get("run_cnt", 0) - b.get("run_cnt", 0)
        ns = p.get("run_time_ns", 0) - b.get("run_time_ns", 0)
        total_ns += ns
        if cnt:
            print(f"bpf.{name}.{p['name']}.ns_per_event {ns / cnt:.0f} ns")
            print(f"bpf.{name}.{p['name']}.events {cnt} events")
    if name == "idle":
        print(f"bpf.idle.cpu_fraction {total_ns / 10e9:.6f} of one CPU")
PY
