#!/usr/bin/env bash
# The fleet lake as docs/lake.md ("A fleet lake on PostgreSQL") tells users to run it, every piece at once:
# a PostgreSQL role with a password and its own database (scram over TCP, the password in a PGPASSFILE);
# two tracer-ingests on it, both behind TLS with client certificates (--tls-cert/--tls-key/--client-ca,
# their key root's alone); the real collector and processor (daemon mode) with upload_url naming both,
# ca_file, client_cert and client_key. Under a steady load (and a run, detected by TRACER_PIPELINE):
#  1. the first ingest, in use, is stopped (SIGSTOP) until a batch is sent to it unanswered, and killed with
#     -9: the processor sends that batch to the second and carries on with it; the first is restarted on its
#     port;
#  2. later the second is killed with -9 at a random moment: the processor goes back to the first;
#  3. at the end, the processor's collector stopped, every record it spooled is acknowledged, and the lake
#     holds exactly them: seqs 1..acked_seq once each (check_lake.py on PostgreSQL: crc of each, one exec and
#     one exit for every load process, no event twice), batches 1..N of its stream once each, none sharing a
#     record, every chain link held, no record answered duplicate;
#  4. tracer report --db 'postgresql://reader:PASSWORD@...' (a reader role, GRANT SELECT, as docs/lake.md's
#     readers) lists the run and shows it; a client without a certificate is refused by each ingest in the TLS
#     handshake (curl: TLS 1.2 fails with the alert, TLS 1.3 gets no answer), with one GET /v1/health answers.
# About 30 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/pg.sh"
e2e_init "$1"
e2e_require_bpf
command -v curl >/dev/null || e2e_fail "curl is needed"
command -v psql >/dev/null || e2e_fail "psql is needed (make deps: postgresql-15)"
dlv_init
declare -A PID PORT URL # of the ingests a and b
pki=$D/pki
dlv_pki "$pki"
pg_start --tcp
# the ingests stopped before the cluster (pg_stop, registered later, runs first), a stopped one continued first
e2e_on_exit 'kill -CONT "${PID[@]}" 2>/dev/null; dlv_stop_all'

# ---- the database: roles with passwords, the lake's own database, scram over TCP ----------------------------
DB=fleet_lake
INGEST_PW=ingest-$RANDOM$RANDOM READER_PW=reader-$RANDOM$RANDOM
# superuser over the Unix socket (trust): setup and the checks
su_q() { psql -X -At -v ON_ERROR_STOP=1 "postgresql:///${2:-$DB}?host=$PG_DIR&port=$PG_TCP_PORT&user=tracer" -c "$1"; }
su_q "CREATE ROLE tracer_ingest LOGIN PASSWORD '$INGEST_PW'" lake >/dev/null &&
	su_q "CREATE DATABASE $DB OWNER tracer_ingest" lake >/dev/null &&
	su_q "CREATE ROLE tracer_reader LOGIN PASSWORD '$READER_PW'" lake >/dev/null || e2e_fail "setup: roles and database"
{ echo "host all tracer_ingest,tracer_reader 127.0.0.1/32 scram-sha-256"; cat "$PG_DIR/data/pg_hba.conf"; } >"$D/hba"
cat "$D/hba" >"$PG_DIR/data/pg_hba.conf"
pg_ctl_owner reload -s || e2e_fail "pg_ctl reload failed"
INGEST_URI=postgresql://tracer_ingest@127.0.0.1:$PG_TCP_PORT/$DB
READER_URI=postgresql://tracer_reader:$READER_PW@127.0.0.1:$PG_TCP_PORT/$DB
# the password is asked for: none given, refused
PGPASSFILE=/dev/null psql -X -w "$INGEST_URI" -c 'SELECT 1' >/dev/null 2>"$D/nopw.err" &&
	e2e_fail "tracer_ingest connected over TCP without a password: pg_hba.conf does not ask for one"
grep -q "password" "$D/nopw.err" || e2e_fail "psql without a password: $(cat "$D/nopw.err"), expected it asked for one"
# the ingests' password out of the URI, in a password file (libpq reads it before the sandbox)
echo "127.0.0.1:$PG_TCP_PORT:$DB:tracer_ingest:$INGEST_PW" >"$D/pgpass"
chmod 600 "$D/pgpass"

# ---- two ingests on it, behind TLS with client certificates ---------------------------------------------------
# ingest_start NAME PORT: tracer-ingest NAME (a or b) on 127.0.0.1:PORT (0: any), its log $D/ingest-NAME.err;
# sets PID[NAME]. Returns at once; ingest_ready NAME waits for it and sets PORT[NAME] and URL[NAME].
ingest_start() {
	rm -f "$D/ingest-$1.ready"
	PGPASSFILE=$D/pgpass "$B/tracer-ingest" --listen "127.0.0.1:$2" --keys "$D/keys" --db "$INGEST_URI" \
		--tls-cert "$pki/server.pem" --tls-key "$pki/server.key" --client-ca "$pki/ca.pem" \
		--ready-fd 3 3>"$D/ingest-$1.ready" 2>>"$D/ingest-$1.err" &
	PID[$1]=$!
	DLV_PIDS+=($!)
}
ingest_ready() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready ' "$D/ingest-$1.ready" 2>/dev/null && break
		kill -0 "${PID[$1]}" 2>/dev/null || e2e_fail "tracer-ingest $1 did not start: $(tail -5 "$D/ingest-$1.err")"
		sleep 0.05
	done
	PORT[$1]=$(awk '/^ready/ { print $2 }' "$D/ingest-$1.ready")
	[ -n "${PORT[$1]}" ] || e2e_fail "tracer-ingest $1 did not say it was ready within 10 s: $(tail -5 "$D/ingest-$1.err")"
	URL[$1]=https://127.0.0.1:${PORT[$1]}/v1/batches
}
# both at once on the empty database: the schema made once, under the advisory lock
ingest_start a 0
ingest_start b 0
ingest_ready a
ingest_ready b
[ "${PORT[a]}" != "${PORT[b]}" ] || e2e_fail "both ingests on port ${PORT[a]}"
for n in a b; do
	grep -q "clients need a certificate signed by $pki/ca.pem" "$D/ingest-$n.err" ||
		e2e_fail "ingest $n does not say it asks for client certificates: $(tail -3 "$D/ingest-$n.err")"
done
su_q "GRANT SELECT ON ALL TABLES IN SCHEMA public TO tracer_reader" >/dev/null || e2e_fail "GRANT SELECT failed"

# https PORT [CURL OPTIONS]: GET /v1/health of the ingest on PORT; prints the HTTP code (000: none); curl's
# exit status; its error in $TMP/curl.err.
https() {
	local port=$1
	shift
	curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$pki/ca.pem" "$@" \
		"https://127.0.0.1:$port/v1/health" 2>"$TMP/curl.err"
}
# refuses_uncertified NAME: the ingest refuses a client without a certificate in the handshake, serves one with
refuses_uncertified() {
	local rc code refused
	refused=$(grep -c "refused the TLS client 127.0.0.1: no client certificate" "$D/ingest-$1.err")
	https "${PORT[$1]}" --tls-max 1.2 >/dev/null
	rc=$?
	[ "$rc" = 35 ] && grep -qi "alert handshake failure" "$TMP/curl.err" ||
		e2e_fail "ingest $1, TLS 1.2 without a certificate: expected curl's handshake error 35 with the alert," \
			"got $rc: $(cat "$TMP/curl.err")"
	code=$(https "${PORT[$1]}")
	[ "$code" = 000 ] || e2e_fail "ingest $1, TLS 1.3 without a certificate: HTTP $code, expected no answer"
	code=$(https "${PORT[$1]}" --cert "$pki/client.pem" --key "$pki/client.key")
	[ "$code" = 200 ] ||
		e2e_fail "ingest $1: GET /v1/health with the client certificate: HTTP $code: $(cat "$TMP/curl.err")"
	[ "$(grep -c "refused the TLS client 127.0.0.1: no client certificate" "$D/ingest-$1.err")" = $((refused + 2)) ] ||
		e2e_fail "ingest $1 did not log its two refusals: $(tail -3 "$D/ingest-$1.err")"
}
refuses_uncertified a
refuses_uncertified b
echo "two ingests behind TLS on $DB (port $PG_TCP_PORT, scram): no client certificate, no answer"

# ---- the agent: collector and processor, upload_url naming both ---------------------------------------------
# status_until SECONDS WHY EXPR [ARG...]: until EXPR holds, a Python expression over s (the processor's status
# now), s0 (when the wait began), p (the rewrite before s; s itself before the first) and a (the ARGs). One
# python3 for the whole wait, reading $D/state/status.json every 0.1 s (a python3 a poll, dlv_status's way,
# takes seconds on a busy machine); the status that satisfied it is left in $D/status.last.
status_until() {
	local limit=$1 why=$2 expr=$3 seen
	shift 3
	seen=$(python3 - "$D/state/status.json" "$limit" "$expr" "$D/status.last" "$@" 2>&1 <<'EOF'
import json, sys, time
path, limit, expr, last, a = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
end = time.monotonic() + limit
def status():
    while True:
        try:
            return json.load(open(path))  # renamed into place when written: always whole
        except FileNotFoundError:  # not written yet
            if time.monotonic() > end:
                sys.exit("no status file")
            time.sleep(0.1)
s0 = s = p = status()
while not eval(expr):
    if time.monotonic() > end:
        sys.exit("saw spool %s, upload %s" % (json.dumps(s["spool"]), json.dumps(s["upload"])))
    time.sleep(0.1)
    n = status()
    if n["time_ns"] != s["time_ns"]:
        p, s = s, n
json.dump(s, open(last, "w"))
EOF
	) || e2e_fail "within $limit s: $why ($expr); $seen; processor: $(tail -2 "$D/processor.err")"
}
# status_get KEY...: the values of KEYs ("spool.acked_seq") in $D/status.last, on one line.
status_get() {
	python3 - "$D/status.last" "$@" <<'EOF'
import functools, json, sys
s = json.load(open(sys.argv[1]))
print(*(functools.reduce(lambda v, k: v[k], key.split("."), s) for key in sys.argv[2:]))
EOF
}
IN_USE='s["upload"]["url_in_use"] == a[0]'
ACKED_MORE='s["spool"]["acked_seq"] > s0["spool"]["acked_seq"]'
# a request without an outcome yet: sent (the ingest may have read it, or not), not answered
IN_FLIGHT='s["upload"]["attempts"] > (s["upload"]["batches_acked"] + s["upload"]["net_errors"] +
	s["upload"]["http_4xx"] + s["upload"]["http_5xx"])'
# a run the processor detects (TRACER_PIPELINE), inside the load's traced subtree, before its processes
dlv_load_start env TRACER_PIPELINE=fleet-lake-tls sh -c 'sleep 0.3'
dlv_collector_start
dlv_processor_start --set "upload_url=${URL[a]}, ${URL[b]}" --set "ca_file=$pki/ca.pem" \
	--set "client_cert=$pki/client.pem" --set "client_key=$pki/client.key" --set retry_max=1s
dlv_load_go 0
status_until 20 "batches reach the lake through the first URL of upload_url, over TLS" \
	"s['upload']['batches_acked'] >= 5 and $IN_USE" "${URL[a]}"

# 1. the first, in use, stopped so that a batch waits in it, then killed with -9
kill -STOP "${PID[a]}"
status_until 15 "a batch sent to the stopped ingest, unanswered" "s['time_ns'] > int(a[0]) and $IN_FLIGHT" \
	"$(date +%s%N)"
kill -KILL "${PID[a]}"
wait "${PID[a]}" 2>/dev/null
status_until 15 "the processor fails over to the second ingest, which acknowledges batches" \
	"$IN_USE and $ACKED_MORE" "${URL[b]}"
grep -q "to ${URL[a]}: .*(trying ${URL[b]})" "$D/processor.err" ||
	e2e_fail "the processor does not log the failover to b: $(grep upload "$D/processor.err" | tail -3)"
ingest_start a "${PORT[a]}"
ingest_ready a
echo "1. ingest a killed with -9 with a batch in its hands: on to b; a restarted on port ${PORT[a]}"

# 2. the second killed with -9 at a random moment: back to the first (restarted), then the second restarted
sleep "0.$((RANDOM % 9 + 1))"
kill -KILL "${PID[b]}"
wait "${PID[b]}" 2>/dev/null
status_until 15 "the processor goes back to the restarted first ingest, which acknowledges batches" \
	"$IN_USE and $ACKED_MORE" "${URL[a]}"
grep -q "to ${URL[b]}: .*(trying ${URL[a]})" "$D/processor.err" ||
	e2e_fail "the processor does not log the failover back to a: $(grep upload "$D/processor.err" | tail -3)"
ingest_start b "${PORT[b]}"
ingest_ready b
echo "2. ingest b killed with -9: back to a; b restarted on port ${PORT[b]}"

# ---- 3. the end: everything the processor made is in the lake, once -----------------------------------------
dlv_load_stop
kill -TERM "$DLV_COLLECTOR"
wait "$DLV_COLLECTOR"
# Nothing more comes: two rewrites of the status file in a row with the same next_seq, every record before
# it acknowledged.
status_until 30 "every record the processor spooled acknowledged, and no new one" \
	'p is not s and s["spool"]["next_seq"] == p["spool"]["next_seq"] == s["spool"]["acked_seq"] + 1'
read -r acked failovers net_errors http_4xx quarantined lost <<<"$(status_get spool.acked_seq upload.failovers \
	upload.net_errors upload.http_4xx spool.quarantined_batches ring.lost)"
[ "$http_4xx" = 0 ] && [ "$quarantined" = 0 ] ||
	e2e_fail "refused batches: http_4xx $http_4xx, quarantined $quarantined"
[ "$lost" = 0 ] || e2e_fail "the ring lost records: $lost"
[ "$failovers" -ge 2 ] || e2e_fail "upload.failovers $failovers, expected one per kill at least"
kill -TERM "$DLV_PROCESSOR"
wait "$DLV_PROCESSOR"

python3 "$E2E_DIR/check_lake.py" "postgresql:///$DB?host=$PG_DIR&port=$PG_TCP_PORT&user=tracer" --pids "$D/pids" ||
	e2e_fail "lake check failed (TRACER_E2E_KEEP=1 keeps $D)"
# one stream (one spool) in the lake: the processor's
read -r n distinct top <<<"$(su_q "SELECT count(*), count(DISTINCT seq), max(seq) FROM records" | tr '|' ' ')"
[ "$n" = "$acked" ] && [ "$distinct" = "$acked" ] && [ "$top" = "$acked" ] ||
	e2e_fail "records: $n rows, $distinct distinct seqs, the highest $top: expected each seq 1..$acked once" \
		"(the processor's acked_seq)"
read -r nb distinct_b first_b top_b top_seq <<<"$(su_q "SELECT count(*), count(DISTINCT batch_seq), min(batch_seq),
	max(batch_seq), max(last_seq) FROM batches" | tr '|' ' ')"
[ "$nb" = "$distinct_b" ] && [ "$first_b" = 1 ] && [ "$top_b" = "$nb" ] && [ "$top_seq" = "$acked" ] ||
	e2e_fail "batches: $nb rows, $distinct_b distinct batch seqs from $first_b to $top_b, the last record $top_seq:" \
		"expected batches 1..N once each, the last ending at $acked"
overlaps=$(su_q "SELECT count(*) FROM batches a JOIN batches b ON a.host_id = b.host_id AND a.stream = b.stream
	AND a.batch_id < b.batch_id AND a.first_seq <= b.last_seq AND b.first_seq <= a.last_seq")
[ "$overlaps" = 0 ] || e2e_fail "$overlaps pairs of stored batches share records: a batch was stored twice"
unlinked=$(su_q "SELECT string_agg(batch_seq || ' ' || chain, ', ') FROM batches
	WHERE chain <> 'linked' AND batch_seq <> 1")
[ -z "$unlinked" ] || e2e_fail "batches whose chain is not linked to the one before: $unlinked"
dup=$(su_q "SELECT coalesce(sum(records_duplicate), 0) + coalesce(sum(records_conflicting), 0) FROM batches")
[ "$dup" = 0 ] || e2e_fail "$dup records came twice (duplicate or conflicting)"
echo "3. lake: records 1..$acked once each, batches 1..$nb once each (failovers $failovers, net_errors $net_errors)"

# ---- 4. the readers, and the TLS refusals of the restarted ingests -------------------------------------------
"$TRACER" report --db "$READER_URI" >"$TMP/runs.txt" 2>"$TMP/report.err" ||
	e2e_fail "tracer report --db postgresql://tracer_reader:***@... failed: $(cat "$TMP/report.err")"
grep -q "succeeded .* fleet-lake-tls$" "$TMP/runs.txt" ||
	e2e_fail "tracer report does not list the run (succeeded): $(cat "$TMP/runs.txt")"
run=$(awk '/fleet-lake-tls$/ { print $1 }' "$TMP/runs.txt")
"$TRACER" report --db "$READER_URI" "$run" >"$TMP/run.txt" 2>>"$TMP/report.err" ||
	e2e_fail "tracer report --db postgresql://tracer_reader:***@... $run failed: $(cat "$TMP/report.err")"
grep -q "^run $run: fleet-lake-tls" "$TMP/run.txt" && grep -q "^ *detected *env$" "$TMP/run.txt" ||
	e2e_fail "tracer report $run does not show the run detected by TRACER_PIPELINE: $(cat "$TMP/run.txt")"
# a run not there, tune of it: each message names the lake with its password starred, on either stream
"$TRACER" report --db "$READER_URI" no-such-run >>"$TMP/run.txt" 2>>"$TMP/report.err" &&
	e2e_fail "tracer report of a run that is not there succeeded"
"$TRACER" tune --db "$READER_URI" --run no-such-run >>"$TMP/run.txt" 2>>"$TMP/report.err" &&
	e2e_fail "tracer tune of a run that is not there succeeded"
grep -q "tracer_reader:\*\*\*@127.0.0.1" "$TMP/report.err" ||
	e2e_fail "no lake named with its password starred: $(cat "$TMP/report.err")"
grep -q "$READER_PW" "$TMP/report.err" "$TMP/run.txt" &&
	e2e_fail "tracer report or tune shows the password: $(cat "$TMP/report.err" "$TMP/run.txt")"
refuses_uncertified a
refuses_uncertified b
kill -TERM "${PID[a]}" "${PID[b]}"
for n in a b; do
	wait "${PID[$n]}"
	rc=$?
	[ "$rc" = 0 ] || e2e_fail "ingest $n exited $rc at SIGTERM (159: SIGSYS): $(tail -3 "$D/ingest-$n.err")"
	tail -n 1 "$D/ingest-$n.err" | grep -q "TLS clients refused 2$" ||
		e2e_fail "ingest $n's totals do not count the two clients it refused: $(tail -n 1 "$D/ingest-$n.err")"
done
echo "4. tracer report as the reader lists the run; the restarted ingests refuse a client without a certificate"
