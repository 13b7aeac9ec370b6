# shellcheck shell=bash
# Helpers of the delivery tests (tests/e2e/test_delivery_*.sh): the real
# daemons on loopback - tracer-ingest with a SQLite lake, tracer-collector
# tracing one load script's subtree, tracer-processor spooling and
# uploading - and the checks of the lake. Sourced after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/delivery.sh"
#   e2e_init "$1"; e2e_require_bpf; dlv_init
#   dlv_ingest_start; dlv_load_start; dlv_collector_start; dlv_processor_start
#   dlv_load_go 2000; dlv_load_wait; dlv_wait_delivered    (or dlv_load_go 0; ...; dlv_load_stop)
#   dlv_check_lake
#
# The load script runs N short processes, one after another, and writes
# each one's pid to $D/pids: the lake must have an exec and an exit record
# for each, exactly once.

DLV_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# dlv_init: directories (the processor runs as nobody and owns its state), a signing key, the keys file.
dlv_init() {
	D=$TMP/dlv
	mkdir -p "$D/state" "$D/run" || e2e_fail "setup: mkdir $D"
	chmod 711 "$D" "$D/run"
	chown nobody "$D/state" || e2e_fail "setup: chown nobody $D/state"
	"$TRACER" keygen --out "$D/signing.key" >"$D/keys" 2>"$D/keygen.err" ||
		e2e_fail "tracer keygen failed: $(cat "$D/keygen.err")"
	chown nobody "$D/signing.key"
	DLV_PORT=0
	DLV_PIDS=()
	e2e_on_exit "dlv_stop_all"
}

dlv_stop_all() {
	local p
	for p in "${DLV_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	[ -n "${DLV_LOAD:-}" ] && kill -KILL "$DLV_LOAD" 2>/dev/null
	for p in "${DLV_PIDS[@]}"; do
		timeout 10 tail --pid="$p" -f /dev/null 2>/dev/null
	done
	return 0
}

# dlv_ingest_start [EXTRA ARGS]: tracer-ingest on 127.0.0.1 (the same port as before when restarted).
dlv_ingest_start() {
	local ready=$D/ingest.ready i
	rm -f "$ready"
	"$B/tracer-ingest" --listen "127.0.0.1:$DLV_PORT" --db "$D/lake.db" --keys "$D/keys" "$@" \
		2>>"$D/ingest.err" 3>"$ready" --ready-fd 3 &
	DLV_INGEST=$!
	DLV_PIDS+=("$DLV_INGEST")
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready ' "$ready" 2>/dev/null && break
		kill -0 "$DLV_INGEST" 2>/dev/null || e2e_fail "tracer-ingest did not start: $(tail -5 "$D/ingest.err")"
		sleep 0.1
	done
	DLV_PORT=$(awk '/^ready/ { print $2 }' "$ready")
	[ -n "$DLV_PORT" ] || e2e_fail "tracer-ingest did not say it was ready: $(tail -5 "$D/ingest.err")"
	DLV_URL=http://127.0.0.1:$DLV_PORT/v1/batches
}

dlv_ingest_stop() {
	kill -TERM "$DLV_INGEST" 2>/dev/null
	timeout 10 tail --pid="$DLV_INGEST" -f /dev/null
}

# dlv_load_start [CMD [ARG...]]: the load script, waiting for its go (dlv_load_go N). CMD, if given,
# runs once (inside the traced subtree) after the go, before the N processes.
# While $D/pause exists the loop starts no process (dlv_load_pause, dlv_load_resume).
dlv_load_start() {
	rm -f "$D/go" "$D/pids" "$D/pids.done" "$D/stop" "$D/pause" "$D/paused"
	mkfifo "$D/go"
	# N processes, or (N = 0) until $D/stop exists
	bash -c 'read -r n < "$1"; d=$(dirname "$1"); shift 3; [ $# -gt 0 ] && "$@"
		for ((i = 0; n == 0 || i < n; i++)); do
			[ -e "$d/stop" ] && break
			while [ -e "$d/pause" ] && [ ! -e "$d/stop" ]; do : > "$d/paused"; sleep 0.05; done
			/bin/true & echo $! >> "$d/pids"; wait
		done; echo done > "$d/pids.done"' \
		load "$D/go" "$D/pids" "$D/stop" "$@" &
	DLV_LOAD=$!
}

# dlv_load_pause: returns once the load has stopped starting processes (the last one has exited).
dlv_load_pause() {
	local i
	rm -f "$D/paused"
	touch "$D/pause"
	for ((i = 0; i < 100; i++)); do
		[ -e "$D/paused" ] || [ -e "$D/pids.done" ] && return 0
		sleep 0.05
	done
	e2e_fail "the load did not pause within 5 s"
}

dlv_load_resume() {
	rm -f "$D/pause" "$D/paused"
}

dlv_load_go() {
	echo "$1" >"$D/go"
}

dlv_load_stop() {
	touch "$D/stop"
	dlv_load_wait
}

dlv_load_wait() {
	local i
	for ((i = 0; i < 1200; i++)); do
		[ -f "$D/pids.done" ] && return 0
		sleep 0.1
	done
	e2e_fail "the load did not finish within 120 s"
}

# dlv_collector_start: tracing the load script's subtree.
dlv_collector_start() {
	local ready=$D/collector.ready i
	rm -f "$ready"
	"$B/tracer-collector" --socket "$D/run/collector.sock" --consumer-uid "$(id -u nobody)" \
		--trace-pid "$DLV_LOAD" --ready-fd 3 3>"$ready" 2>>"$D/collector.err" &
	DLV_COLLECTOR=$!
	DLV_PIDS+=("$DLV_COLLECTOR")
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$ready" 2>/dev/null && return 0
		kill -0 "$DLV_COLLECTOR" 2>/dev/null || e2e_fail "tracer-collector did not start: $(tail -5 "$D/collector.err")"
		sleep 0.1
	done
	e2e_fail "tracer-collector did not become ready"
}

# dlv_processor_start [--set KEY=VALUE]...: daemon mode, spooling in $D/state, uploading to the ingest.
dlv_processor_start() {
	"$B/tracer-processor" --set "state_dir=$D/state" --set "runtime_dir=$D/run" --set processor_user=nobody \
		--set "upload_url=${DLV_URL:-}" --set "signing_key=$D/signing.key" --set batch_interval=100ms "$@" \
		2>>"$D/processor.err" &
	DLV_PROCESSOR=$!
	DLV_PIDS+=("$DLV_PROCESSOR")
}

# dlv_status KEY [STATE_DIR]: a number from the status file of the processor whose state_dir is STATE_DIR
# (default: $D/state): "ring.records", "spool.acked_seq", ...; -1 when it or the key is missing.
dlv_status() {
	python3 -c '
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    print(-1); sys.exit()
v = s
for k in sys.argv[2].split("."):
    v = v.get(k, -1) if isinstance(v, dict) else -1
print(int(v) if isinstance(v, (bool, int)) else v)' "${2:-$D/state}/status.json" "$1"
}

# dlv_wait_delivered [SECONDS]: once the load is over, until the lake has acknowledged every record
# spooled so far (the collector's counters keep arriving, once a second: those after are not waited for).
dlv_wait_delivered() {
	local i limit=$((${1:-60} * 10)) target acked
	sleep 1 # the load's last exits reach the ring and the spool
	target=$(($(dlv_status spool.next_seq) - 1))
	for ((i = 0; i < limit; i++)); do
		acked=$(dlv_status spool.acked_seq)
		[ "$target" -gt 0 ] && [ "$acked" -ge "$target" ] && return 0
		sleep 0.1
	done
	e2e_fail "not delivered within ${1:-60} s: acked $acked of $target; $(tail -3 "$D/processor.err")"
}

# dlv_wait_status KEY OP VALUE SECONDS [WHY]: poll the status file until KEY OP VALUE holds (OP: -gt -ge
# -eq -lt -le -ne), or fail saying what was expected and what was seen.
dlv_wait_status() {
	local key=$1 op=$2 want=$3 limit=$(($4 * 10)) i v
	for ((i = 0; i <= limit; i++)); do
		v=$(dlv_status "$key")
		test "$v" "$op" "$want" 2>/dev/null && return 0
		sleep 0.1
	done
	e2e_fail "status $key: expected $op $want within $4 s${5:+ ($5)}, saw $v; processor: $(tail -2 "$D/processor.err")"
}

# dlv_status_fresh [SECONDS]: wait until the status file is rewritten (a newer time_ns), so that its counters
# are later than now. Fails if the processor stopped writing it.
dlv_status_fresh() {
	local t0 i
	t0=$(dlv_status time_ns)
	for ((i = 0; i < ${1:-3} * 20; i++)); do
		[ "$(dlv_status time_ns)" != "$t0" ] && return 0
		sleep 0.05
	done
	e2e_fail "the processor has not rewritten $D/state/status.json for ${1:-3} s (alive: $(kill -0 "$DLV_PROCESSOR" 2>/dev/null && echo yes || echo no)); $(tail -2 "$D/processor.err")"
}

# dlv_pki DIR [--rogue]: a throwaway PKI in DIR, made with openssl: ca.pem (ca.key), a CA; server.pem
# (server.key), the server's certificate it signs, for 127.0.0.1 (subjectAltName IP:127.0.0.1); client.pem
# (client.key), a client certificate it signs. --rogue: also other-ca.pem, another CA, and rogue.pem
# (rogue.key), a client certificate that one signs. Certificates 0644; keys 0600, root's (a server started as
# root reads its key before it drops privileges) but client.key, nobody's (the processor runs as nobody).
# openssl's output: DIR/openssl.log.
dlv_pki() {
	local dir=$1 rogue=${2:-}
	command -v openssl >/dev/null || e2e_fail "openssl is needed (make deps)"
	mkdir -p "$dir" || e2e_fail "setup: mkdir $dir"
	(
		cd "$dir" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=tracer test CA" &&
		openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" &&
		printf 'subjectAltName=IP:127.0.0.1\n' >server.ext &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
			-extfile server.ext &&
		openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=tracer-processor" &&
		openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 || exit 1
		[ "$rogue" = --rogue ] || exit 0
		openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days 2 -subj "/CN=another CA" &&
		openssl req -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.csr -subj "/CN=tracer-processor" &&
		openssl x509 -req -in rogue.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -out rogue.pem -days 2
	) >"$dir/openssl.log" 2>&1 || e2e_fail "openssl could not make the test certificates: $(tail -5 "$dir/openssl.log")"
	chmod 644 "$dir"/*.pem
	chmod 600 "$dir"/*.key
	chown nobody "$dir/client.key" || e2e_fail "setup: chown nobody $dir/client.key"
}

# dlv_lake_sql SQL: one value from the lake (read-only).
dlv_lake_sql() {
	python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
r = db.execute(sys.argv[2]).fetchone()
print(r[0] if r and r[0] is not None else 0)' "$D/lake.db" "$1"
}

# dlv_check_lake [ARGS]: tests/e2e/check_lake.py on the lake and the load's pids.
dlv_check_lake() {
	python3 "$DLV_DIR/check_lake.py" "$D/lake.db" --pids "$D/pids" "$@" ||
		e2e_fail "lake check failed (TRACER_E2E_KEEP=1 keeps $D)"
}
