#!/usr/bin/env bash
# The same answers from both lakes (issue 26): a real pipeline run under the daemons (tests/e2e/live.sh:
# the collector tracing the whole host, the processor in daemon mode), its batches stored into an SQLite
# lake and, through a proxy that sends every batch to both (hang_proxy.py --mirror), into a PostgreSQL
# one (a throwaway cluster, tests/e2e/pg.sh, over TCP). Then every answer a user sees must be the same on
# both: `tracer report --json` (the list and each run), `tracer tune --json`, `tracer cost --json`,
# `tracer sweep --json`, and tracer-web's API (runs, each run, pipelines, a pipeline, hosts, a host's
# activity, the sweep), each tracer-web sandboxed on its own lake.
#
# The pipeline: data/tune's three steps (a memory-hungry one, a two-process compute step, an fsync-heavy
# writer), twice, then a step wrapped in `bash -c` that fails: runs, steps, tools, processes with their
# samples, files and signals, a failure.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
. "$(dirname "$0")/pg.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake python3 psql; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs it)"
done
pg_start --tcp
live_init
printf 'cloud = aws\ninstance_type = m6i.4xlarge\nregion = us-east-1\nheartbeat_interval = 1s\n' >>"$CONF"

# The PostgreSQL lake's ingest, enrolling the same keys.
"$B/tracer-ingest" --listen 127.0.0.1:0 --db "$PG_TCP_URI" --keys "$D/keys" --user nobody --ready-fd 3 \
	3>"$D/pg_ingest.ready" 2>"$D/pg_ingest.err" &
pg_ingest=$!
DLV_PIDS+=("$pg_ingest")
for ((i = 0; i < 100; i++)); do
	grep -q '^ready ' "$D/pg_ingest.ready" 2>/dev/null && break
	kill -0 "$pg_ingest" 2>/dev/null || e2e_fail "tracer-ingest --db $PG_TCP_URI did not start: $(tail -3 "$D/pg_ingest.err")"
	sleep 0.1
done
pg_port=$(awk '/^ready/ { print $2 }' "$D/pg_ingest.ready")
[ -n "$pg_port" ] || e2e_fail "the PostgreSQL lake's ingest did not say it was ready"

# The SQLite lake's ingest from the config; the processor uploads to the proxy, which sends to both.
live_ingest_start
python3 "$DLV_DIR/hang_proxy.py" --upstream "127.0.0.1:$DLV_PORT" --mirror "127.0.0.1:$pg_port" \
	--flag "$D/never" --port-file "$D/proxy.port" --log "$D/proxy.log" 2>"$D/proxy.err" &
DLV_PIDS+=("$!")
for ((i = 0; i < 50; i++)); do
	[ -s "$D/proxy.port" ] && break
	sleep 0.1
done
[ -s "$D/proxy.port" ] || e2e_fail "hang_proxy.py did not start: $(tail -3 "$D/proxy.err")"
sed -i "s|^upload_url = .*|upload_url = http://127.0.0.1:$(cat "$D/proxy.port")/v1/batches|" "$CONF"
live_collector_start
live_processor_start
live_wait_ready 30
echo "daemons delivering to both lakes (SQLite $LAKE, PostgreSQL through TCP port $PG_TCP_PORT)"

dir=$(live_user_dir same)
cp "$E2E_DIR"/data/tune/* "$dir/" && chown nobody "$dir"/* || e2e_fail "setup: cannot copy data/tune to $dir"
pipeline="snakemake:$dir/Snakefile"
for run in 1 2; do
	(live_as_user "$dir" snakemake -c2 -q --forceall >"$TMP/run$run.out" 2>&1) &
	live_wait_pid "$!" 120 "run $run of the pipeline"
	[ "$LIVE_RC" = 0 ] || e2e_fail "run $run of the pipeline failed (exit $LIVE_RC): $(tail -5 "$TMP/run$run.out")"
	live_check wait --where "pipeline=$pipeline" --count "$run" --timeout 30 >/dev/null
done
# a step under bash -c that fails: a failed run with its signal
(live_as_user "$dir" env TRACER_PIPELINE=failing bash -c 'sleep 0.5; cat /nonexistent' >"$TMP/fail.out" 2>&1) &
live_wait_pid "$!" 60 "the failing command"
sleep 3
live_alive

# Everything spooled by now acknowledged (the proxy answers once both lakes stored a batch).
durable=$(dlv_status spool.durable_seq)
for ((i = 0; i < 200; i++)); do
	[ "$(dlv_status spool.acked_seq)" -ge "$durable" ] 2>/dev/null && break
	sleep 0.1
done
# the daemons stopped: the lakes stay as they are while they are compared
dlv_stop_all
DLV_PIDS=()
lite=$(sqlite3 "$LAKE" "SELECT count(*) FROM batches") || e2e_fail "reading $LAKE"
pg=$(psql -X -At "$PG_URI" -c "SELECT count(*) FROM batches") || e2e_fail "reading the PostgreSQL lake"
[ "$lite" = "$pg" ] || e2e_fail "SQLite holds $lite batches, PostgreSQL $pg: the proxy did not give both every batch"
echo "both lakes: $lite batches"

# same WHAT FILE-A FILE-B: equal, or the first lines that differ
same() {
	cmp -s "$2" "$3" || e2e_fail "$1 differs between SQLite and PostgreSQL: $(diff <(python3 -m json.tool "$2" 2>/dev/null || cat "$2") \
		<(python3 -m json.tool "$3" 2>/dev/null || cat "$3") | head -20)"
}
# strip_now FILE: the JSON in FILE without the members measured against "now", which is the time of the
# request (tracer-web) or the lake's newest word (tracer sweep: the newest time an ingest received a batch),
# nor those of when this lake's ingest received the host's batches (a host's first and last seen, its lag,
# how long it has been silent): the two ingests received each batch a few milliseconds apart (the proxy
# sends to one, then the other); sorted, indented
strip_now() {
	python3 - "$1" <<'EOF' || e2e_fail "$1: not JSON: $(head -c 300 "$1")"
import json, sys
NOW = ("now_ns", "since_ns", "first_seen_ns", "last_seen_ns", "lag_s", "silent_s")
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in NOW}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
doc = json.load(open(sys.argv[1]))
json.dump(strip(doc), open(sys.argv[1], "w"), sort_keys=True, indent=1)
EOF
}
# both NAME ARGS...: tracer ARGS --db each lake, the outputs compared
both() {
	local name=$1
	shift
	"$TRACER" "$@" --db "$LAKE" >"$TMP/$name.sqlite" 2>"$TMP/$name.sqlite.err" ||
		e2e_fail "tracer $* --db $LAKE failed: $(tail -3 "$TMP/$name.sqlite.err")"
	"$TRACER" "$@" --db "$PG_URI" >"$TMP/$name.pg" 2>"$TMP/$name.pg.err" ||
		e2e_fail "tracer $* --db PostgreSQL failed: $(tail -3 "$TMP/$name.pg.err")"
	if [ "$name" = sweep ]; then
		strip_now "$TMP/$name.sqlite"
		strip_now "$TMP/$name.pg"
	fi
	same "tracer $*" "$TMP/$name.sqlite" "$TMP/$name.pg"
}
both report report --json
runs=$(python3 -c 'import json, sys; print(" ".join(str(r["run_id"]) for r in json.load(open(sys.argv[1]))["runs"]))' \
	"$TMP/report.sqlite") || e2e_fail "tracer report --json: no runs list: $(head -c 300 "$TMP/report.sqlite")"
[ "$(wc -w <<<"$runs")" -ge 3 ] || e2e_fail "want at least 3 runs in the lake, have: $runs"
for r in $runs; do
	both "run$r" report "$r" --json
done
both tune tune --json
both tune_pipeline tune --pipeline "$pipeline" --json
both cost cost --json --prices "$E2E_DIR/../../data/prices.csv"
both cost_step cost --json --by step --pipeline "$pipeline" --prices "$E2E_DIR/../../data/prices.csv"
both sweep sweep --json --since 1d
echo "tracer report (the list and $(wc -w <<<"$runs") runs), tune, cost, sweep --json: the same on both lakes"

# tracer-web on each lake, sandboxed; its API, the same on both.
TOKEN_FILE=$D/web.token
(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN_FILE") || e2e_fail "setup: $TOKEN_FILE"
start_web() { # NAME DB [ARGS]: its port in web_NAME
	"$B/tracer-web" --db "$2" "${@:3}" --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" --ready-fd 3 \
		3>"$TMP/web_$1.ready" 2>"$TMP/web_$1.err" </dev/null >/dev/null &
	DLV_PIDS+=("$!")
	e2e_on_exit "kill $! 2>/dev/null"
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready ' "$TMP/web_$1.ready" 2>/dev/null && break
		kill -0 "$!" 2>/dev/null || e2e_fail "tracer-web --db $2 did not start: $(tail -3 "$TMP/web_$1.err")"
		sleep 0.1
	done
	printf -v "web_$1" '%s' "$(awk '/^ready/ { print $2 }' "$TMP/web_$1.ready")"
}
start_web lite "$LAKE"
start_web pg "$PG_TCP_URI" --user nobody
host=$(sqlite3 "$LAKE" "SELECT host_id FROM hosts LIMIT 1")
paths=(/api/runs /api/pipelines "/api/pipeline?name=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$pipeline")"
	/api/hosts "/api/hosts/activity?host=$host&since=1d" "/api/sweep?since=1d")
for r in $runs; do paths+=("/api/runs/$r"); done
token=$(cat "$TOKEN_FILE")
n=0
for p in "${paths[@]}"; do
	for w in lite pg; do
		port=web_$w
		curl -sS -f -H "Authorization: Bearer $token" "http://127.0.0.1:${!port}$p" >"$TMP/api$n.$w" 2>"$TMP/api$n.$w.err" ||
			e2e_fail "tracer-web ($w) $p: $(cat "$TMP/api$n.$w.err")"
	done
	strip_now "$TMP/api$n.lite"
	strip_now "$TMP/api$n.pg"
	same "tracer-web $p" "$TMP/api$n.lite" "$TMP/api$n.pg"
	n=$((n + 1))
done
echo "tracer-web's API ($n requests): the same on both lakes"
