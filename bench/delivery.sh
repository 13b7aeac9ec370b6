#!/usr/bin/env bash
# make bench-delivery: records from the shared ring to the lake (issue 5).
#  - flat: bench/delivery_bench plays the collector (a real ring, the real
#    handover) and writes pipeline-like kernel records as fast as the ring
#    takes them for FLAT_S seconds; the real tracer-processor (daemon mode,
#    default batching) spools and uploads them to the real tracer-ingest
#    (SQLite lake). The spool takes records about ten times faster than the
#    lake here, so FLAT_S (5) seconds of writing keep the lake busy for about
#    a minute; spool_quota is raised so that none of that backlog is evicted.
#    Records/s from the first record written to the last batch stored
#    (target >= 100,000), and over the middle half of the records; fsyncs/s;
#    bytes written per record (spool frames, the processor's and the
#    ingest's storage writes); CPU of each process.
#  - steady: the same at RATE records/s for STEADY_S seconds with default
#    batching (batch_interval 1s, batch_records 5000, fsync_interval 200ms):
#    end-to-end latency p50/p99/max from each record's ts_ns to the ingest
#    storing its batch, so it reflects batching, not backlog.
#  - recovery: bench/spool_recovery_bench, spool_open of a 1 GiB spool.
# Usage: bench/delivery.sh [BUILD_DIR]; env FLAT_S (5), RATE (5000),
# STEADY_S (20), RECOVERY_MIB (1024, 0: skip), KEEP=1 keeps the temp dir,
# PROCESSOR_SETS="key=value ..." more tracer.conf overrides for the processor
# in both runs (experiments: the figures in docs/benchmarks.md use none).
# Results: one "<metric> <value> <unit>" per line on stdout; diagnostics on
# stderr. Exit 1 when a record was lost or the delivery stalled, 2 on setup.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
flat_s=${FLAT_S:-5}
rate=${RATE:-5000}
steady_s=${STEADY_S:-20}
recovery_mib=${RECOVERY_MIB:-1024}
target=100000
extra_sets=()
for kv in ${PROCESSOR_SETS:-}; do extra_sets+=(--set "$kv"); done
hz=$(getconf CLK_TCK)

if [ "$(id -u)" != 0 ]; then
	echo "<3>bench-delivery needs root: it serves the ring as the collector would (uid 0) and starts the processor, which drops to nobody (sudo make bench-delivery)" >&2
	exit 2
fi
for t in python3 "$build/tracer-processor" "$build/tracer-ingest" "$build/tracer" "$build/bench/delivery_bench" \
	"$build/bench/spool_recovery_bench"; do
	command -v "$t" >/dev/null || { echo "<3>bench-delivery needs $t (make all)" >&2; exit 2; }
done
nobody_uid=$(id -u nobody)
tmp=$(mktemp -d /var/tmp/tracer-bench-delivery.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do timeout 10 tail --pid="$p" -f /dev/null 2>/dev/null || true; done
	if [ "${KEEP:-0}" = 1 ]; then echo "<7>kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
chmod 711 "$tmp" # the processor (nobody) reaches its state dir, socket and key through it
"$build/tracer" keygen --out "$tmp/signing.key" --any-host >"$tmp/keys" 2>"$tmp/keygen.err" ||
	{ echo "<3>tracer keygen failed: $(cat "$tmp/keygen.err")" >&2; exit 2; }
chown nobody "$tmp/signing.key"

# status P KEY: a number from phase P's processor status file ("spool.acked_seq", ...).
status() {
	python3 -c '
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception:
    print(-1); sys.exit()
for k in sys.argv[2].split("."):
    v = v.get(k, -1) if isinstance(v, dict) else -1
print(int(v) if isinstance(v, (bool, int)) else -1)' "$1/state/status.json" "$2"
}
# cpu_ticks PID: user + system clock ticks so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# io PID FIELD: a field of /proc/PID/io (write_bytes, wchar, ...).
io() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/io"; }
fail() { echo "<3>$*" >&2; exit 1; }
# perf_counts FILE WHO: "WHO_EVENT COUNT" lines from perf stat -x, output.
perf_counts() {
	awk -F, -v who="$2" '!/^#/ && NF > 3 { n = $1 ~ /^[0-9]+$/ ? $1 : 0; e = $3; sub(/.*:/, "", e); print who "_" e, n }' "$1"
}
have_perf=0
if command -v perf >/dev/null && perf stat -e syscalls:sys_enter_fsync -x, true >/dev/null 2>&1; then
	have_perf=1
else
	echo "<4>perf cannot count syscall tracepoints here: fsyncs/s come from the processor's own counters only" >&2
fi

# phase NAME SECONDS RATE [--set KEY=VALUE]...: one run; leaves its figures in $tmp/NAME/metrics.
phase() {
	local name=$1 secs=$2 r=$3 P=$tmp/$1 i port ingest prod proc target acked
	shift 3
	mkdir -p "$P/state" "$P/run"
	chmod 711 "$P" "$P/run"
	chown nobody "$P/state"
	"$build/tracer-ingest" --listen 127.0.0.1:0 --db "$P/lake.db" --keys "$tmp/keys" --ready-fd 3 \
		3>"$P/ingest.ready" 2>"$P/ingest.err" &
	ingest=$!
	pids+=("$ingest")
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready ' "$P/ingest.ready" 2>/dev/null && break
		kill -0 "$ingest" 2>/dev/null || fail "tracer-ingest did not start: $(tail -3 "$P/ingest.err")"
		sleep 0.1
	done
	port=$(awk '/^ready/ { print $2 }' "$P/ingest.ready")
	[ -n "$port" ] || fail "tracer-ingest did not say it was ready"
	"$build/bench/delivery_bench" --socket "$P/run/collector.sock" --consumer-uid "$nobody_uid" \
		--seconds "$secs" --rate "$r" --linger >"$P/producer.out" 2>"$P/producer.err" &
	prod=$!
	pids+=("$prod")
	for ((i = 0; i < 100; i++)); do
		[ -S "$P/run/collector.sock" ] && break
		sleep 0.05
	done
	"$build/tracer-processor" --set "state_dir=$P/state" --set "runtime_dir=$P/run" --set processor_user=nobody \
		--set "upload_url=http://127.0.0.1:$port/v1/batches" --set "signing_key=$tmp/signing.key" "$@" "${extra_sets[@]}" \
		2>"$P/processor.err" &
	proc=$!
	pids+=("$proc")
	# fsync system calls (and the processor's io_uring fsyncs), counted by the kernel's tracepoints
	local perfs=()
	if [ "$have_perf" = 1 ]; then
		perf stat -x, -o "$P/perf.proc" -e syscalls:sys_enter_fsync -e syscalls:sys_enter_fdatasync \
			-e io_uring:io_uring_submit_req --filter 'opcode == 3' -p "$proc" 2>/dev/null &
		perfs+=($!)
		perf stat -x, -o "$P/perf.ingest" -e syscalls:sys_enter_fsync -e syscalls:sys_enter_fdatasync \
			-p "$ingest" 2>/dev/null &
		perfs+=($!)
		pids+=("${perfs[@]}")
	fi
	echo "<7>$name: ${secs} s at $([ "$r" = 0 ] && echo "full speed" || echo "$r rec/s"), processor $proc, ingest $ingest" >&2
	# The producer prints its figures once the processor has released (made durable) every record,
	# then stays attached like a live collector (--linger) until we stop it.
	until grep -q '^delivery.producer.drops' "$P/producer.out" 2>/dev/null; do
		kill -0 "$prod" 2>/dev/null ||
			fail "$name: the producer failed: $(tail -3 "$P/producer.err"); processor: $(tail -3 "$P/processor.err")"
		sleep 0.2
	done
	# Everything is durable in the spool now; wait for the lake to acknowledge it all.
	sleep 1.5
	target=$(($(status "$P" spool.next_seq) - 1))
	for ((i = 0; i < 6000; i++)); do
		acked=$(status "$P" spool.acked_seq)
		[ "$target" -gt 0 ] && [ "$acked" -ge "$target" ] && break
		kill -0 "$proc" 2>/dev/null || fail "$name: the processor died: $(tail -3 "$P/processor.err")"
		sleep 0.1
	done
	[ "$acked" -ge "$target" ] || fail "$name: not delivered within 600 s: acked $acked of $target"
	sleep 1.1 # one more status write: the counters as of the last acknowledgement
	{
		echo "proc_ticks $(cpu_ticks "$proc")"
		echo "ingest_ticks $(cpu_ticks "$ingest")"
		echo "proc_write_bytes $(io "$proc" write_bytes)"
		echo "ingest_write_bytes $(io "$ingest" write_bytes)"
		for k in spool.fsyncs spool.records_appended upload.batches_acked upload.records_acked upload.bytes_sent \
			upload.retries ring.lost; do
			echo "$k $(status "$P" "$k")"
		done
	} >"$P/metrics"
	if [ "${#perfs[@]}" -gt 0 ]; then
		kill -INT "${perfs[@]}"
		wait "${perfs[@]}" 2>/dev/null || true
		perf_counts "$P/perf.proc" proc >>"$P/metrics"
		perf_counts "$P/perf.ingest" ingest >>"$P/metrics"
	fi
	kill -TERM "$proc" "$ingest"
	timeout 20 tail --pid="$proc" -f /dev/null || true
	timeout 20 tail --pid="$ingest" -f /dev/null || true
	kill -TERM "$prod"
	wait "$prod" 2>/dev/null || true
}

# report NAME RATE: the phase's figures from the producer, the processor's counters and the lake.
report() {
	python3 - "$tmp/$1" "$1" "$2" "$hz" "$target" <<'EOF'
import sqlite3, sys
P, name, rate, hz, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
prod = {l.split()[0].split(".")[-1]: float(l.split()[1]) for l in open(P + "/producer.out")}
m = {l.split()[0]: int(l.split()[1]) for l in open(P + "/metrics")}
db = sqlite3.connect("file:%s/lake.db?mode=ro" % P, uri=True)
kernel, frame_bytes = db.execute(
    "SELECT count(*), sum(32 + ((len + 7) / 8) * 8) FROM records WHERE type BETWEEN 16 AND 33").fetchone()
all_records, all_frame_bytes = db.execute("SELECT count(*), sum(32 + ((len + 7) / 8) * 8) FROM records").fetchone()
batches = db.execute("SELECT received_ns, nrecords FROM batches ORDER BY received_ns").fetchall()
lat = sorted(r[0] for r in db.execute(
    "SELECT b.received_ns - b.mono_to_real_ns - r.ts_ns FROM records r JOIN batches b ON r.batch_hash = b.hash "
    "WHERE r.type BETWEEN 16 AND 33 AND r.ts_ns IS NOT NULL"))
written = int(prod["records"])
out = []
def put(metric, value, unit):
    out.append("delivery.%s.%s %s %s" % (name, metric, value, unit))
def pct(q):
    return lat[min(len(lat) - 1, max(0, int(q * len(lat) + 0.999999) - 1))] / 1e6
first_real = int(prod["first_real_ns"])
last_ack = batches[-1][0]
window = (last_ack - first_real) / 1e9
# the middle half of the records, by the time their batches were stored
cum, t, total = [], [], 0
for rcv, n in batches:
    total += n
    cum.append(total); t.append(rcv)
lo = next(i for i, c in enumerate(cum) if c >= total * 0.25)
hi = next(i for i, c in enumerate(cum) if c >= total * 0.75)
steady = (cum[hi] - cum[lo]) / ((t[hi] - t[lo]) / 1e9) if hi > lo and t[hi] > t[lo] else float("nan")
fsyncs = m["spool.fsyncs"]
ledger_fsyncs = 2 * m["upload.batches_acked"]  # spool_ack: fdatasync(ledger.tmp), fsync(dir)
if "proc_io_uring_submit_req" in m:  # counted by the kernel: fsyncs submitted through io_uring, and syscalls
    fsyncs = m["proc_io_uring_submit_req"]
    ledger_fsyncs = m["proc_sys_enter_fsync"] + m["proc_sys_enter_fdatasync"]
    ingest_fsyncs = m["ingest_sys_enter_fsync"] + m["ingest_sys_enter_fdatasync"]
else:
    ingest_fsyncs = None
put("records", kernel, "records")
if rate:
    put("rate_asked", rate, "rec/s")
put("records_per_s", "%.0f" % (kernel / window), "rec/s")
if not rate:
    put("steady_records_per_s", "%.0f" % steady, "rec/s")
    put("target_ratio", "%.3f" % (kernel / window / target), "ratio")
put("ring_to_spool_records_per_s", "%.0f" % prod["durable_records_per_s"], "rec/s")
put("ring_full_share", "%.3f" % prod["ring_full_share"], "ratio")
put("delivery_s", "%.3f" % window, "s")
put("spool_fsyncs_per_s", "%.1f" % (fsyncs / window), "fsync/s")
put("ledger_fsyncs_per_s", "%.1f" % (ledger_fsyncs / window), "fsync/s")
if ingest_fsyncs is not None:
    put("ingest_fsyncs_per_s", "%.1f" % (ingest_fsyncs / window), "fsync/s")
    put("fsyncs_per_s", "%.1f" % ((fsyncs + ledger_fsyncs + ingest_fsyncs) / window), "fsync/s")
put("spool_fsyncs", fsyncs, "fsyncs")
put("spool_bytes_per_record", "%.1f" % (all_frame_bytes / all_records), "bytes")
put("ring_bytes_per_record", "%.1f" % prod["bytes_per_record"], "bytes")
put("processor_write_bytes_per_record", "%.1f" % (m["proc_write_bytes"] / kernel), "bytes")
put("ingest_write_bytes_per_record", "%.1f" % (m["ingest_write_bytes"] / kernel), "bytes")
put("upload_bytes_per_record", "%.1f" % (m["upload.bytes_sent"] / kernel), "bytes")
put("batches", m["upload.batches_acked"], "batches")
put("records_per_batch", "%.0f" % (m["upload.records_acked"] / max(1, m["upload.batches_acked"])), "records")
put("processor_cpu_share", "%.3f" % (m["proc_ticks"] / hz / window), "cores")
put("ingest_cpu_share", "%.3f" % (m["ingest_ticks"] / hz / window), "cores")
put("producer_cpu_share", "%.3f" % (prod["cpu_s"] / window), "cores")
put("latency_p50", "%.1f" % pct(0.50), "ms")
put("latency_p99", "%.1f" % pct(0.99), "ms")
put("latency_max", "%.1f" % (lat[-1] / 1e6), "ms")
put("lost", written - kernel, "records")
print("\n".join(out))
sys.stderr.write("<7>%s: %d records written, %d kernel records in the lake (%d with the processor's own), "
                 "%d batches, %d retries, %d lost in the ring\n" % (name, written, kernel, all_records,
                 m["upload.batches_acked"], m["upload.retries"], m["ring.lost"]))
if written != kernel or m["ring.lost"]:
    sys.stderr.write("<3>BROKEN DELIVERY: %d records written into the ring, %d in the lake\n" % (written, kernel))
    sys.exit(1)
if not rate and kernel / window < target:
    sys.stderr.write("<4>target missed: %.0f records/s from ring to lake, target %d (%.2f of it)\n"
                     % (kernel / window, target, kernel / window / target))
EOF
}

phase flat "$flat_s" 0 --set spool_quota=16GiB
report flat 0
phase steady "$steady_s" "$rate"
report steady "$rate"
if [ "$recovery_mib" != 0 ]; then
	"$build/bench/spool_recovery_bench" "$tmp/recovery" --mib "$recovery_mib"
fi
