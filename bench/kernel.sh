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
#      storm (daemon mode) / storm_env (40 variables, 3 allowlisted) /
#      storm_traced (--trace-pid on the storm itself: only it is traced) /
#      untraced storm / net (64 MiB over loopback TCP) / idle (1000 sleeping
#      processes, 10 s)
#    Raw: run_time_ns / run_cnt. Net: minus what the statistics themselves
#    charge per run, measured by empty programs on the same hooks attached at
#    the same time (bench/calib.bpf.c, loaded by bench/calib). Per process:
#    the sum over tracer's programs of the run's time, raw and net, divided by
#    the storm's STORM_N processes (target: net <= 10 us).
# COMPARE_BUILD=DIR adds a fourth mode to the ratios, DIR's collector in daemon mode (an older
# build, say), in the same rotation: kernel.storm.compare_daemon.*_ratio.
# Results: one "<metric> <value> <unit>" per line on stdout. Needs root.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
storm_n=${STORM_N:-5000}
spawn=$build/bench/spawn
collector=$build/tracer-collector
calib=$build/bench/calib
calib_obj=$build/bench/calib.bpf.o

if [ "$(id -u)" != 0 ]; then
	echo "<3>bench-kernel needs root: the collector loads BPF programs (sudo make bench-kernel)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/tracer-kbench.XXXXXX)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
cpid='' idle='' calpid=''
cleanup() {
	[ -z "$cpid" ] || kill "$cpid" 2>/dev/null || true
	[ -z "$idle" ] || kill "$idle" 2>/dev/null || true
	[ -z "$calpid" ] || kill "$calpid" 2>/dev/null || true
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT

start_collector() { # collector options...
	rm -f "$tmp/sock" "$tmp/ready"
	mkfifo "$tmp/ready"
	"${use_collector:-$collector}" --socket "$tmp/sock" --consumer-uid 65534 --ready-fd 3 "$@" 3>"$tmp/ready" 2>>"$tmp/collector.log" &
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
# The ids of the BPF programs a process holds (its descriptors' fdinfo): other tracers' programs,
# another collector's included, may be loaded meanwhile and are not this run's.
prog_ids() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' || true; }

sleep infinity &
idle=$! # what --trace-pid traces in the "untraced" runs: it never runs

# ---- ratios, statistics off ----
echo 0 >/proc/sys/kernel/bpf_stats_enabled
modes=(plain daemon untraced ${COMPARE_BUILD:+compare_daemon})
for m in "${modes[@]}"; do : >"$tmp/$m"; done
run_mode() { # plain | daemon | untraced | compare_daemon
	case $1 in
	daemon) start_collector ;;
	untraced) start_collector --trace-pid "$idle" ;;
	compare_daemon) use_collector=$COMPARE_BUILD/tracer-collector start_collector ;;
	esac
	sleep 1 # let a load's (or an unload's) deferred kernel work pass first
	storm >>"$tmp/$1"
	[ "$1" = plain ] || stop_collector
	echo "<7>$1 $(tail -n 1 "$tmp/$1")" >&2
}
for ((i = 0; i < runs; i++)); do
	for ((m = 0; m < ${#modes[@]}; m++)); do # rotated, so that no mode always comes first
		run_mode "${modes[(i + m) % ${#modes[@]}]}"
	done
done

# ---- per-event costs, statistics on ----
echo 1 >/proc/sys/kernel/bpf_stats_enabled
# The calibration: empty programs on tracer's hooks, attached through every measurement below.
"$calib" "$calib_obj" >"$tmp/calib.out" 2>>"$tmp/calib.log" &
calpid=$!
for _ in $(seq 100); do grep -q '^ready' "$tmp/calib.out" && break; sleep 0.1; done
grep -q '^ready' "$tmp/calib.out" || { cat "$tmp/calib.log" >&2; exit 1; }
prog_ids "$calpid" >"$tmp/calib.ids"
measure() { # name collector-options -- command...
	local name=$1; shift
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	start_collector "${opts[@]}"
	prog_ids "$cpid" >"$tmp/$name.ids"
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
# Only the storm traced (as under `tracer run`): a gate process, traced from the start, execs the storm.
mkfifo "$tmp/gate" "$tmp/done"
(read -r _ <"$tmp/gate" && "$spawn" storm "$storm_n" 2 >/dev/null; echo done >"$tmp/done") &
gate=$!
measure storm_traced --trace-pid "$gate" -- sh -c 'echo go >"$1" && read -r _ <"$2"' sh "$tmp/gate" "$tmp/done"
wait "$gate"
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
sleepers=$(jobs -p | grep -v -e "^$idle\$" -e "^$calpid\$" || true)
sleep 1
measure idle -- sleep 10
kill $sleepers 2>/dev/null || true
kill -TERM "$calpid"
wait "$calpid" || true
calpid=''

python3 - "$tmp" "$storm_n" <<'PY'
import json, os, statistics, sys
tmp = sys.argv[1]
modes = [m for m in ("plain", "daemon", "untraced", "compare_daemon") if os.path.exists(f"{tmp}/{m}")]
runs = {k: [tuple(map(int, x.split())) for x in open(f"{tmp}/{k}")] for k in modes}
for i, what in ((0, "wall"), (1, "cpu")):
    med = {k: statistics.median(r[i] for r in v) for k, v in runs.items()}
    for k in runs:
        print(f"kernel.storm.{k}.{what}_s {med[k] / 1e9:.4f} s")
    for k in modes[1:]:
        print(f"kernel.storm.{k}.{what}_ratio {med[k] / med['plain']:.4f} ratio")
ours = ("handle_", "nwe_", "nwx_")
storm_n = int(sys.argv[2])
# The empty program on each of tracer's hooks (bench/calib.bpf.c). The timer (perf_event) has
# none: the raw tracepoint's stands in (the statistics wrap every program type alike).
def calib_of(name):
    if name in ("handle_openat", "handle_openat2", "handle_open", "handle_creat"):
        return "cal_openat"
    for prefix, cal in (("nwe_", "cal_sys_enter"), ("nwx_", "cal_sys_exit"), ("handle_net_", "cal_sock")):
        if name.startswith(prefix):
            return cal
    return {"handle_exec": "cal_exec", "handle_exit": "cal_exit", "handle_fork": "cal_fork",
            "handle_switch": "cal_switch", "handle_wakeup": "cal_wakeup", "handle_timer": "cal_switch",
            "handle_oom": "cal_exit"}.get(name)
for name in ("storm", "storm_env", "storm_traced", "untraced", "net", "idle"):
    mine = {int(x) for x in open(f"{tmp}/{name}.ids")} | {int(x) for x in open(f"{tmp}/calib.ids")}
    before = {p["id"]: p for p in json.load(open(f"{tmp}/{name}.before"))}
    deltas = {}
    for p in json.load(open(f"{tmp}/{name}.after")):
        b = before.get(p["id"])
        # This run's collector's programs and the calibration's, by id (prog_ids).
        if b is None or p["id"] not in mine:
            continue
        cnt = p.get("run_cnt", 0) - b.get("run_cnt", 0)
        ns = p.get("run_time_ns", 0) - b.get("run_time_ns", 0)
        deltas[p["name"]] = (cnt, ns)
    floor = {k: v[1] / v[0] for k, v in deltas.items() if k.startswith("cal_") and v[0]}
    for k in sorted(floor):
        print(f"bpf.{name}.{k}.ns_per_event {floor[k]:.0f} ns")
    total_ns = total_net = 0.0
    for prog, (cnt, ns) in deltas.items():
        if not prog.startswith(ours) or not cnt:
            continue
        net = ns - cnt * floor.get(calib_of(prog), 0.0)
        total_ns += ns
        total_net += net
        print(f"bpf.{name}.{prog}.ns_per_event {ns / cnt:.0f} ns")
        print(f"bpf.{name}.{prog}.net_ns_per_event {net / cnt:.0f} ns")
        print(f"bpf.{name}.{prog}.events {cnt} events")
    if name.startswith("storm") or name == "untraced":
        print(f"bpf.{name}.per_process_ns {total_ns / storm_n:.0f} ns")
        print(f"bpf.{name}.per_process_net_ns {total_net / storm_n:.0f} ns")
    if name == "idle":
        print(f"bpf.idle.cpu_fraction {total_ns / 10e9:.6f} of one CPU")
PY
