#!/usr/bin/env bash
# make bench-real: what the whole agent costs a real pipeline, under the daemons as the units run them.
#  - The workflow: tests/e2e/data/Snakefile.align (rule align: `bwa mem -t 2 | samtools sort -l 8`) on the
#    inputs of tests/e2e/data/align_data.sh (made once, in the benchmark's directory, or DATA=DIR made
#    before), run as `snakemake -s Snakefile.align -c2 -q --config workload=... -- sorted.bam` (the `--`:
#    -q and --config take several values) in a fresh directory each time, the inputs linked, not
#    copied: every run does the align step.
#  - plain: no tracer process at all. traced: tracer-ingest (a SQLite lake), tracer-collector (the
#    whole host) and tracer-processor (daemon mode, uploading), each with `--config FILE` as their units
#    start them (tests/e2e/live.sh), in a cgroup of their own, started before the run and ready
#    (ring attached, records acknowledged by the lake), stopped after it once the run is in the lake
#    (checked: bwa and samtools, exit 0). Their start and stop are outside the measured run and are
#    reported apart.
#  - Both sides alike: one untimed warm-up run first (page cache); before every run `sync`, SETTLE
#    seconds, then a second in which other work used under QUIET_CPU CPU-s (waited for up to QUIET_MAX
#    seconds; the daemons' own CPU is not other work).
#  - RUNS pairs (default 10), the pair's order alternating (plain first, then traced first). Per pair:
#    traced/plain of the wall time and of the CPU time (user + system of the pipeline's whole tree,
#    wait4's rusage; the same from its cgroup's cpu.stat). Reported: the pairs' median, min, max,
#    quartiles and IQR. A pair in which other work (the host's busy time in /proc/stat minus the
#    pipeline's and the daemons' CPU) took more than DISTURBED CPU-s during either run, or another tracer
#    daemon ran, is reported and run again, up to 2 x RUNS pairs in all. From the pipeline's cgroup:
#    cpu.pressure (time some task of it was runnable but waiting for a CPU), io.pressure; its
#    involuntary context switches; the daemons' CPU time over each traced run (/proc/PID/stat); the block
#    devices' write requests and cache flushes completed during each run (/sys/block/*/stat).
#  - Two more runs, out of the ratios: a traced one with kernel.bpf_stats_enabled=1 (restored after):
#    the run time of the collector's programs (their ids from its descriptors), whole host; and, with
#    perf, the scheduler's events of that run and of a plain one: every instant a task of the pipeline
#    was runnable but not running, charged to what ran on its CPU (rb.py attrib).
# VARIANT=full|collector|processor|none (default full): collector: the collector alone, nobody reading
# its ring; processor: the ingest and the processor with no collector (it waits for one); none: no
# daemon on either side (an A/A test: the spread the method itself gives).
# Env: RUNS, PAIRS (read pairs, default 100000), DATA, SETTLE (s, default 2), QUIET_MAX (s, 300),
# QUIET_CPU (0.1), DISTURBED (0.5), EXTRA_SET="key=value ..." (more tracer.conf keys, for experiments),
# DAEMON_DIR (where the daemons' state, spool and lake go: default the work directory, under /var/tmp),
# KEEP=1 (keep the work directory: pairs, runs, daemons' logs). Results: "<metric> <value> <unit>" lines
# on stdout; each run's figures on stderr (<7>). Needs root.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-10}
pairs=${PAIRS:-100000}
settle=${SETTLE:-2}
quiet_max=${QUIET_MAX:-300}  # s: at most this long to wait for a quiet second before each run
quiet_cpu=${QUIET_CPU:-0.1}  # CPU-s: what other work may use in that second
disturbed=${DISTURBED:-0.5}  # CPU-s: other work in a run beyond this marks its pair disturbed
variant=${VARIANT:-full}
here=$(cd "$(dirname "$0")/.." && pwd)
snakefile=$here/tests/e2e/data/Snakefile.align
tracer=$build/tracer
workload=$(cd "$build" && pwd)/tests/e2e/workload

if [ "$(id -u)" != 0 ]; then
	echo "<3>bench-real needs root: the collector loads BPF programs (sudo make bench-real)" >&2
	exit 1
fi
for t in snakemake bwa samtools wgsim bpftool python3; do
	command -v "$t" >/dev/null || { echo "<3>bench-real needs $t (make deps)" >&2; exit 1; }
done
case $variant in full | collector | processor | none) ;; *) echo "<3>VARIANT: full, collector, processor or none" >&2; exit 2 ;; esac
tmp=$(mktemp -d /var/tmp/tracer-real.XXXXXX)
chmod 711 "$tmp"
dd=$tmp
[ -z "${DAEMON_DIR:-}" ] || dd=$(mktemp -d "$DAEMON_DIR/tracer-real-daemons.XXXXXX")
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
cg='' pids=() names=()
stack_stop() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=() names=()
}
cleanup() {
	stack_stop
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	[ -z "$cg" ] || rmdir "$cg/pipeline" "$cg/daemons" "$cg" 2>/dev/null || true
	[ "$dd" = "$tmp" ] || rm -rf "$dd"
	[ -n "${KEEP:-}" ] && echo "<6>kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the inputs, made once ----
data=${DATA:-$tmp/data}
if [ ! -s "$data/ref.fa.bwt" ] || [ ! -s "$data/r2.fq" ]; then
	"$here/tests/e2e/data/align_data.sh" "$data" "$pairs" || { echo "<3>align_data.sh failed" >&2; exit 1; }
fi

# ---- cgroups (v2: the unified hierarchy, or the whole of /sys/fs/cgroup): the pipeline's, the daemons' ----
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/tracer-bench-real.$$" 2>/dev/null; then
	cg=$cg2/tracer-bench-real.$$
	mkdir "$cg/pipeline" "$cg/daemons"
else
	echo "<4>no writable cgroup v2 hierarchy: no pressure figures; the CPU time from wait4's rusage" >&2
fi

# ---- the daemons, as tests/e2e/live.sh starts them ----
"$tracer" keygen --out "$tmp/signing.key" >"$tmp/keys" 2>"$tmp/keygen.err" || { cat "$tmp/keygen.err" >&2; exit 1; }
chown nobody "$tmp/signing.key"
chmod 644 "$tmp/keys"
# daemon NAME ARGS...: started in the daemons' cgroup (as systemd gives each unit one), stderr in NAME.err.
daemon() {
	local name=$1
	shift
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "${cg:+$cg/daemons}" "$@" \
		2>>"$tmp/$name.err" &
	pids+=($!)
	names+=("$name=$!")
}
status() { # KEY: a number from the processor's status file
	python3 - "$dd/state/status.json" "$1" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
    for k in sys.argv[2].split("."):
        v = v[k]
    print(int(v))
except Exception:
    print(-1)
PY
}
wait_file() { # FILE PATTERN PID WHAT
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { echo "<3>$4 did not start: $(tail -3 "$tmp/$4.err")" >&2; exit 1; }
		sleep 0.1
	done
	echo "<3>$4 not ready within 30 s: $(tail -3 "$tmp/$4.err")" >&2
	exit 1
}
# stack_start: a fresh state, lake and config; the variant's daemons; back once the chain delivers.
stack_start() {
	local i set
	rm -rf "$dd/state" "$dd/run" "$dd/lake.db" "$dd/lake.db-wal" "$dd/lake.db-shm" "$tmp"/*.ready
	mkdir -p "$dd/state" "$dd/run"
	chmod 711 "$dd" "$dd/run"
	chown nobody "$dd/state"
	cat >"$tmp/tracer.conf" <<EOF
# bench/real.sh: the daemons on loopback, every other key at its default
state_dir = $dd/state
runtime_dir = $dd/run
processor_user = nobody
signing_key = $tmp/signing.key
ingest_listen = 127.0.0.1:0
ingest_db = $dd/lake.db
ingest_keys = $tmp/keys
EOF
	for set in ${EXTRA_SET:-}; do echo "${set%%=*} = ${set#*=}" >>"$tmp/tracer.conf"; done
	chmod 644 "$tmp/tracer.conf"
	[ "$variant" != none ] || return 0
	if [ "$variant" != collector ]; then
		daemon ingest "$build/tracer-ingest" --config "$tmp/tracer.conf" --user nobody --ready-fd 3 3>"$tmp/ingest.ready"
		ingest_pid=${pids[-1]}
		wait_file "$tmp/ingest.ready" '^ready ' "$ingest_pid" ingest
		echo "upload_url = http://127.0.0.1:$(awk '/^ready/ { print $2 }' "$tmp/ingest.ready")/v1/batches" >>"$tmp/tracer.conf"
	fi
	if [ "$variant" != processor ]; then
		daemon collector "$build/tracer-collector" --config "$tmp/tracer.conf" --ready-fd 3 3>"$tmp/collector.ready"
		collector_pid=${pids[-1]}
		wait_file "$tmp/collector.ready" ready "$collector_pid" collector
	fi
	[ "$variant" = collector ] && return 0
	daemon processor "$build/tracer-processor" --config "$tmp/tracer.conf"
	processor_pid=${pids[-1]}
	for ((i = 0; i < 300; i++)); do
		kill -0 "$processor_pid" 2>/dev/null || { echo "<3>the processor exited: $(tail -3 "$tmp/processor.err")" >&2; exit 1; }
		if [ "$variant" = processor ]; then # no collector: its heartbeat reaching the lake
			[ "$(status spool.acked_seq)" -gt 0 ] && return 0
		elif [ "$(status ring.attached)" = 1 ] && [ "$(status spool.acked_seq)" -gt 0 ]; then
			return 0
		fi
		sleep 0.1
	done
	echo "<3>the chain did not deliver within 30 s: $(tail -3 "$tmp/processor.err")" >&2
	exit 1
}
# wait_delivered: everything spooled so far is in the lake (after a traced run, before the stop).
wait_delivered() {
	local i target
	[ "$variant" = full ] || return 0
	sleep 1.5 # the last exits reach the ring, the spool, the next batch
	target=$(($(status spool.next_seq) - 1))
	for ((i = 0; i < 300; i++)); do
		[ "$(status spool.acked_seq)" -ge "$target" ] && return 0
		sleep 0.1
	done
	echo "<4>not all delivered within 30 s: acked $(status spool.acked_seq) of $target" >&2
}

# ---- one run of the pipeline, measured ----
cat >"$tmp/rb.py" <<'PY'
# rb.py measure CGROUP_DIR|- SNAKEFILE WORKLOAD NAME=PID,...|-   the pipeline in the cwd; one JSON line
# rb.py quiet NAME=PID,...|- MAX_S CPU_S                           until a second where other work used < CPU_S
import json, os, resource, subprocess, sys, time
HZ = os.sysconf("SC_CLK_TCK")
def daemons(spec):  # utime + stime (+ reaped children) of each daemon, in seconds
    out = {}
    for item in ([] if spec == "-" else spec.split(",")):
        name, pid = item.split("=")
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        out[name] = sum(int(x) for x in f[11:15]) / HZ
    return out
def busy():  # the host's busy CPU time: user nice system irq softirq steal
    f = open("/proc/stat").readline().split()
    return sum(int(f[i]) for i in (1, 2, 3, 6, 7, 8)) / HZ
def foreign(spec):  # tracer daemons that are not this benchmark's (another test's collector traces us too)
    mine = {int(i.split("=")[1]) for i in ([] if spec == "-" else spec.split(","))}
    n = []
    for pid in os.listdir("/proc"):
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
        except OSError:
            continue
        if comm.startswith("tracer-") and int(pid) not in mine:
            n.append(f"{comm}[{pid}]")
    return n
def disk():  # the block devices' write requests and cache flushes completed (/sys/block/*/stat)
    w = fl = 0
    for dev in os.listdir("/sys/block"):
        f = open(f"/sys/block/{dev}/stat").read().split()
        w += int(f[4])
        fl += int(f[15]) if len(f) > 15 else 0
    return w, fl
def cg_read(cg, name, key):
    if cg == "-":
        return 0
    for line in open(f"{cg}/{name}"):
        w = line.split()
        if w[0] == key:
            return int(w[1] if name == "cpu.stat" else w[4].split("=")[1])
    return 0
def measure(cg, snakefile, workload, spec, sched=None):
    def into_cgroup():
        if cg != "-":
            with open(f"{cg}/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))
    def snap():
        return dict(ru=resource.getrusage(resource.RUSAGE_CHILDREN), cg_cpu=cg_read(cg, "cpu.stat", "usage_usec"),
                    cpu_wait=cg_read(cg, "cpu.pressure", "some"), io_wait=cg_read(cg, "io.pressure", "some"),
                    mem_wait=cg_read(cg, "memory.pressure", "some"), d=daemons(spec), busy=busy(), disk=disk(), t=time.monotonic_ns())
    cmd = ["snakemake", "-s", snakefile, "-c2", "-q", "--config", f"workload={workload}", "--", "sorted.bam"]
    if sched:  # the scheduler's events, for attrib(): who ran while the pipeline's tasks waited
        tids = {}  # every thread of each daemon (io_uring's workers, the ingest's server thread)
        for item in ([] if spec == "-" else spec.split(",")):
            name, pid = item.split("=")
            tids.update({int(t): name for t in os.listdir(f"/proc/{pid}/task")})
        rec = subprocess.Popen(["perf", "record", "-q", "-a", "-o", sched] + [a for e in SCHED_EVENTS for a in ("-e", e)],
                               stdout=subprocess.DEVNULL, stderr=open(sched + ".err", "w"))
        time.sleep(1)
    a = snap()
    p = subprocess.Popen(cmd, preexec_fn=into_cgroup, stdout=subprocess.DEVNULL, stderr=open("smk.err", "w"))
    p.wait()
    b = snap()
    if sched:
        rec.send_signal(2)
        rec.wait()
        with open(sched + ".root", "w") as f:
            f.write(f"{p.pid}\n")
    if p.returncode or not os.path.exists("sorted.bam"):
        sys.exit(f"the pipeline failed ({p.returncode}): see {os.getcwd()}/smk.err")
    ra, rb = a["ru"], b["ru"]
    cpu = (rb.ru_utime + rb.ru_stime) - (ra.ru_utime + ra.ru_stime)
    d = {k: round(b["d"][k] - a["d"][k], 3) for k in b["d"]}
    r = dict(wall_s=(b["t"] - a["t"]) / 1e9, cpu_s=cpu, user_s=rb.ru_utime - ra.ru_utime,
             cg_cpu_s=(b["cg_cpu"] - a["cg_cpu"]) / 1e6, cpu_wait_s=(b["cpu_wait"] - a["cpu_wait"]) / 1e6,
             io_wait_s=(b["io_wait"] - a["io_wait"]) / 1e6, mem_wait_s=(b["mem_wait"] - a["mem_wait"]) / 1e6,
             nvcsw=rb.ru_nvcsw - ra.ru_nvcsw, nivcsw=rb.ru_nivcsw - ra.ru_nivcsw, daemons=d,
             daemons_cpu_s=round(sum(d.values()), 3), foreign=foreign(spec),
             disk_writes=b["disk"][0] - a["disk"][0], disk_flushes=b["disk"][1] - a["disk"][1])
    # Everything else the host ran meanwhile: its busy time minus the pipeline's and the daemons'.
    r["other_cpu_s"] = round(max(0.0, b["busy"] - a["busy"] - (r["cg_cpu_s"] or cpu) - r["daemons_cpu_s"]), 3)
    if sched:
        r["attrib"] = attrib(sched, p.pid, tids)
    print(json.dumps(r))
SCHED_EVENTS = ("sched:sched_switch", "sched:sched_wakeup", "sched:sched_wakeup_new", "sched:sched_process_fork",
                "sched:sched_migrate_task")
def attrib(data, root, ours):
    """The pipeline's tasks' run-queue wait (runnable, not running: woken, or preempted), each instant of
    it charged to what ran on the CPU the waiting task was queued on: the pipeline's own other tasks, one
    of the daemons, the kernel's threads, other work, or nothing (idle: the wakeup's own latency)."""
    import re
    txt = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,cpu,time,event,trace"],
                         capture_output=True, text=True).stdout
    line_re = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$")
    switch_re = re.compile(r"prev_comm=.* prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)")
    pipeline, running, waiting, out = {root}, {}, {}, {}
    last = None
    def who(pid, comm):
        if pid == 0:
            return "idle"
        if pid in pipeline:
            return "pipeline"
        if pid in ours:
            return ours[pid]
        if comm.startswith(("kworker", "ksoftirqd", "rcu_", "migration", "kdamond", "jbd2", "kcompactd", "khugepaged")):
            return "kernel"
        return "perf" if comm == "perf" else "other"
    for line in txt.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        cpu, ts, ev, rest = int(m.group(3)), float(m.group(4)), m.group(5), m.group(6)
        if last is not None and ts > last:
            for c in waiting.values():
                k = who(*running.get(c, (0, "")))
                out[k] = out.get(k, 0.0) + ts - last
        last = ts
        if ev == "sched_switch":
            sm = switch_re.match(rest)
            prev, state, nc, nxt = int(sm.group(1)), sm.group(2), sm.group(3), int(sm.group(4))
            if prev in pipeline and state.startswith("R"):
                waiting[prev] = cpu  # preempted: still runnable, on this CPU's queue
            waiting.pop(nxt, None)
            running[cpu] = (nxt, nc)
            continue
        kv = dict(re.findall(r"(\w+)=(\S+)", rest))
        if ev in ("sched_wakeup", "sched_wakeup_new"):
            pid = int(kv["pid"])
            if pid in pipeline and all(r[0] != pid for r in running.values()):
                waiting[pid] = int(kv["target_cpu"])
        elif ev == "sched_process_fork" and int(kv["pid"]) in pipeline:
            pipeline.add(int(kv["child_pid"]))  # processes and threads alike
        elif ev == "sched_process_fork" and int(kv["pid"]) in ours:
            ours[int(kv["child_pid"])] = ours[int(kv["pid"])]
        elif ev == "sched_migrate_task" and int(kv["pid"]) in waiting:
            waiting[int(kv["pid"])] = int(kv["dest_cpu"])
    return {k: round(v, 4) for k, v in sorted(out.items())}
def quiet(spec, max_s, cpu_s):
    t_end = time.monotonic() + float(max_s)
    while True:
        a, da = busy(), daemons(spec)
        time.sleep(1)
        b, db = busy(), daemons(spec)
        other = b - a - sum(db[k] - da[k] for k in db)
        f = foreign(spec)
        if other < float(cpu_s) and not f:
            return 0
        if time.monotonic() > t_end:
            print(f"<4>not quiet after {max_s} s (other work {other:.2f} CPU-s/s{', ' + ' '.join(f) if f else ''}): "
                  "running anyway", file=sys.stderr)
            return 1
{"measure": lambda: measure(*sys.argv[2:6], os.environ.get("SCHED")), "quiet": lambda: sys.exit(quiet(*sys.argv[2:5]))}[sys.argv[1]]()
PY
# run_pipeline MODE: a fresh directory (the inputs linked), sync, SETTLE s, a quiet second (QUIET), the run.
run_pipeline() {
	local mode=$1 spec=- cgp=${cg:+$cg/pipeline} f
	rm -rf "$tmp/wd"
	mkdir "$tmp/wd"
	for f in ref.fa ref.fa.amb ref.fa.ann ref.fa.bwt ref.fa.pac ref.fa.sa r1.fq r2.fq; do
		ln -s "$(cd "$data" && pwd)/$f" "$tmp/wd/$f"
	done
	[ ${#pids[@]} = 0 ] || spec=$(IFS=,; echo "${names[*]}")
	sync
	sleep "$settle"
	python3 "$tmp/rb.py" quiet "$spec" "$quiet_max" "$quiet_cpu" || echo "$mode" >>"$tmp/not_quiet"
	(cd "$tmp/wd" && SCHED=${sched:-} python3 "$tmp/rb.py" measure "${cgp:--}" "$snakefile" "$workload" "$spec") >>"$tmp/$mode" ||
		{ echo "<3>the $mode run failed: $(tail -5 "$tmp/wd/smk.err")" >&2; exit 1; }
}
traced_run() { # measured; the stack's start and stop timed apart
	local t0 t1 t2
	t0=$(date +%s%N)
	stack_start
	t1=$(date +%s%N)
	run_pipeline traced
	wait_delivered
	t2=$(date +%s%N)
	stack_stop
	echo "$(((t1 - t0) / 1000000)) $((($(date +%s%N) - t2) / 1000000))" >>"$tmp/stack_ms"
	[ "$variant" != full ] || check_lake
}
# check_lake: the run reached the lake (bwa and samtools, exited 0), so that what was measured was traced.
check_lake() {
	python3 - "$dd/lake.db" <<'PY' >>"$tmp/lake_ok" || { echo "<3>the traced run is not in the lake" >&2; exit 1; }
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
n = db.execute("SELECT count(*) FROM processes WHERE exit_code = 0 AND (exe LIKE '%/bwa' OR exe LIKE '%/samtools')").fetchone()[0]
if n < 2:
    sys.exit(1)
print(n)
PY
}

echo 0 >/proc/sys/kernel/bpf_stats_enabled
: >"$tmp/plain"
: >"$tmp/traced"
: >"$tmp/pairs"
: >"$tmp/stack_ms"
run_pipeline warmup # untimed: the inputs, the tools and snakemake into the page cache
# RUNS undisturbed pairs: a pair in which other work took more than DISTURBED CPU-s during either run,
# or another tracer daemon ran, is kept (reported) but run again, up to RUNS more pairs in all.
good=0
for ((i = 0; good < runs && i < 2 * runs; i++)); do
	order=(plain traced)
	((i % 2 == 0)) || order=(traced plain)
	for m in "${order[@]}"; do
		if [ "$m" = plain ]; then run_pipeline plain; else traced_run; fi
		echo "<7>pair $i $m $(tail -n 1 "$tmp/$m")" >&2
	done
	python3 - "$i" "${order[0]}" "$(tail -n 1 "$tmp/plain")" "$(tail -n 1 "$tmp/traced")" "$disturbed" \
		>>"$tmp/pairs" <<'PY'
import json, sys
i, first, p, t, lim = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), float(sys.argv[5])
bad = any(r["other_cpu_s"] > lim or r["foreign"] for r in (p, t))
print(json.dumps(dict(pair=i, first=first, disturbed=bad, plain=p, traced=t)))
PY
	tail -n 1 "$tmp/pairs" | grep -q '"disturbed": true' && echo "<5>pair $i disturbed by other work: run again" >&2 ||
		good=$((good + 1))
done

# ---- two more runs, kept out of the ratios: what the time went to ----
# The BPF programs' run time (kernel.bpf_stats_enabled=1, restored after: the statistics add two clock
# reads per program run), and with perf, the scheduler's events of a traced and of a plain run: who ran
# while the pipeline's tasks were runnable and waiting (rb.py attrib).
extra_runs() {
	local ids
	command -v perf >/dev/null && sched=$tmp/sched.traced || echo "<5>no perf: no attribution of the run-queue wait" >&2
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	stack_start
	ids=$(grep -h '^prog_id:' /proc/"${collector_pid:-0}"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u | paste -sd, -)
	bpftool -j prog show >"$tmp/progs.before"
	run_pipeline extra_traced
	bpftool -j prog show >"$tmp/progs.after"
	stack_stop
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	echo "$ids" >"$tmp/progs.ids"
	[ -z "${sched:-}" ] || { sched=$tmp/sched.plain && run_pipeline extra_plain; }
	sched=''
}
[ "$variant" = none ] || extra_runs

python3 - "$tmp" "$variant" <<'PY'
import json, os, statistics, sys
tmp, variant = sys.argv[1], sys.argv[2]
allp = [json.loads(l) for l in open(f"{tmp}/pairs")]
pairs = [p for p in allp if not p["disturbed"]]
if len(pairs) < 2:
    print(f"<4>only {len(pairs)} undisturbed pairs: the figures below are of all {len(allp)}", file=sys.stderr)
    pairs = allp
med = statistics.median
def out(name, v, unit, fmt="{:.4f}"):
    print(f"real.{name} {fmt.format(v)} {unit}")
def spread(name, xs, unit="ratio", fmt="{:.4f}"):
    q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else (xs[0],) * 3
    for k, v in (("median", med(xs)), ("min", min(xs)), ("max", max(xs)), ("q1", q1), ("q3", q3), ("iqr", q3 - q1)):
        out(f"{name}_{k}", v, unit, fmt)
P, T = [p["plain"] for p in pairs], [p["traced"] for p in pairs]
out("pairs", len(pairs), "pairs", "{}")
out("pairs_disturbed", len(allp) - len(pairs) if pairs is not allp else sum(p["disturbed"] for p in allp), "pairs", "{}")
for k, what in (("wall_s", "wall"), ("cpu_s", "cpu")):
    out(f"plain_{k}", med(r[k] for r in P), "s", "{:.3f}")
    out(f"traced_{k}", med(r[k] for r in T), "s", "{:.3f}")
    spread(f"{what}_ratio", [t[k] / p[k] for p, t in zip(P, T)])
# Which order the pair ran in: a ratio that depends on it is an order effect, not the agent.
for first in ("plain", "traced"):
    xs = [p["traced"]["wall_s"] / p["plain"]["wall_s"] for p in pairs if p["first"] == first]
    if xs:
        out(f"wall_ratio_{first}_first_median", med(xs), "ratio")
if all(r["cg_cpu_s"] for r in P + T):
    # From the pipeline's cgroup: runnable but waiting for a CPU (some task), and waiting for I/O.
    for k in ("cpu_wait_s", "io_wait_s"):
        out(f"plain_{k}", med(r[k] for r in P), "s", "{:.3f}")
        out(f"traced_{k}", med(r[k] for r in T), "s", "{:.3f}")
    spread("cpu_wait_diff", [t["cpu_wait_s"] - p["cpu_wait_s"] for p, t in zip(P, T)], "s", "{:.3f}")
for k in ("disk_writes", "disk_flushes"):  # the whole host's block devices, during the run
    out(f"plain_{k}", med(r[k] for r in P), "requests", "{:.0f}")
    out(f"traced_{k}", med(r[k] for r in T), "requests", "{:.0f}")
out("plain_nivcsw", med(r["nivcsw"] for r in P), "switches", "{:.0f}")
out("traced_nivcsw", med(r["nivcsw"] for r in T), "switches", "{:.0f}")
for name in sorted({k for r in T for k in r["daemons"]}):
    out(f"{name}_cpu_s", med(r["daemons"].get(name, 0) for r in T), "s", "{:.3f}")
out("daemons_cpu_s", med(r["daemons_cpu_s"] for r in T), "s", "{:.3f}")
out("daemons_cpu_max_s", max(r["daemons_cpu_s"] for r in T), "s", "{:.3f}")
out("daemons_cpu_fraction", med(r["daemons_cpu_s"] / r["cpu_s"] for r in T), "ratio", "{:.5f}")
out("other_cpu_plain_s", med(r["other_cpu_s"] for r in P), "s", "{:.3f}")
out("other_cpu_traced_s", med(r["other_cpu_s"] for r in T), "s", "{:.3f}")
st = [list(map(int, l.split())) for l in open(f"{tmp}/stack_ms")]
out("stack_start_s", med(s[0] for s in st) / 1e3, "s", "{:.3f}")
out("stack_stop_s", med(s[1] for s in st) / 1e3, "s", "{:.3f}")
ids = set()
if os.path.exists(f"{tmp}/progs.ids"):
    ids = {int(x) for x in open(f"{tmp}/progs.ids").read().strip().split(",") if x}
if ids:
    before = {p["id"]: p for p in json.load(open(f"{tmp}/progs.before"))}
    ns = cnt = 0
    for p in json.load(open(f"{tmp}/progs.after")):
        b = before.get(p["id"])
        if b is None or p["id"] not in ids:
            continue
        ns += p.get("run_time_ns", 0) - b.get("run_time_ns", 0)
        cnt += p.get("run_cnt", 0) - b.get("run_cnt", 0)
    bpf = json.loads(open(f"{tmp}/extra_traced").readline())
    out("bpf_run_time_s", ns / 1e9, "s")
    out("bpf_events", cnt, "events", "{}")
    out("bpf_fraction_of_pipeline_cpu", ns / 1e9 / bpf["cpu_s"], "ratio", "{:.5f}")
# Who ran while the pipeline's tasks waited for a CPU, in the extra runs (each instant of each task's wait).
for m in ("traced", "plain"):
    if not os.path.exists(f"{tmp}/extra_{m}"):
        continue
    a = json.loads(open(f"{tmp}/extra_{m}").readline()).get("attrib")
    if not a:
        continue
    out(f"{m}.run_queue_wait_s", sum(a.values()), "s", "{:.3f}")
    for k in ("pipeline", "collector", "processor", "ingest", "kernel", "other", "perf", "idle"):
        if k in a or (m == "traced" and k in ("collector", "processor", "ingest")):
            out(f"{m}.wait_behind_{k}_s", a.get(k, 0.0), "s", "{:.3f}")
if os.path.exists(f"{tmp}/lake_ok"):
    out("lake_runs_checked", sum(1 for _ in open(f"{tmp}/lake_ok")), "runs", "{}")
wr = med(p["traced"]["wall_s"] / p["plain"]["wall_s"] for p in pairs)
if wr > 1.02:
    print(f"<4>the wall-time ratio's median {wr:.4f} is above 1.02", file=sys.stderr)
if os.path.exists(f"{tmp}/not_quiet"):
    print(f"<4>{sum(1 for _ in open(f'{tmp}/not_quiet'))} runs started without a quiet second", file=sys.stderr)
PY
