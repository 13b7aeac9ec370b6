#!/usr/bin/env bash
# The fleet lake on PostgreSQL (issue 26), against a throwaway cluster this test starts (tests/e2e/pg.sh):
#  1. what tracer-ingest says of a database that does not exist, of wrong credentials (the password never
#     shown) and of a server that cannot be reached: each names what to fix, and the ingest exits 1;
#  2. exactly once: 100 real signed batches (bench/fleet_sim --dump, 10 hosts' runs), each sent to two
#     tracer-ingests of one PostgreSQL database at the same moment (one through the server's Unix
#     socket, one over TCP): every pair is acknowledged (one "stored", the other "duplicate"), and
#     the lake holds each batch once and each record once;
#  2b. the upkeep: each table's day partitions made when an ingest opens the lake; lake_retention (--set)
#     drops a day past it whole and keeps the rest;
#  3. faults under load: bench/fleet.sh with two ingests over TCP, the first killed with -9 and the
#     cluster restarted (pg_ctl restart -m fast) halfway: nothing lost or doubled, every acknowledged
#     batch stored once, and the ingests answered 503 while PostgreSQL could not commit (then went on,
#     inside their sandbox: the connection made again over TCP under Landlock).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"
e2e_init "$1"
[ -x "$B/bench/fleet_sim" ] || e2e_fail "not built: $B/bench/fleet_sim (make e2e builds it)"
pg_start --tcp
D=$TMP/pg
mkdir -p "$D/dump"
chmod 755 "$D" "$D/dump"
seed=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
HOSTS=10 "$B/bench/fleet_sim" --enroll --seed "$seed" >"$D/keys" || e2e_fail "fleet_sim --enroll failed"
chmod 644 "$D/keys"
psql_q() { psql -X -At -v ON_ERROR_STOP=1 "$PG_URI" -c "$1"; }

# ---- 1. bad URIs ---------------------------------------------------------------------------------------
# refused URI WANT...: tracer-ingest exits 1 and its message has each WANT
refused() {
	local uri=$1 rc=0 w
	shift
	timeout 60 "$B/tracer-ingest" --listen 127.0.0.1:0 --db "$uri" --keys "$D/keys" >/dev/null 2>"$D/refused.err" ||
		rc=$?
	[ "$rc" = 1 ] || e2e_fail "tracer-ingest --db $uri: exit $rc, expected 1: $(cat "$D/refused.err")"
	for w in "$@"; do
		grep -qF -- "$w" "$D/refused.err" || e2e_fail "tracer-ingest --db $uri: no '$w' in: $(cat "$D/refused.err")"
	done
}
refused "postgresql://tracer@127.0.0.1:$PG_TCP_PORT/no_such_db" 'database "no_such_db" does not exist' \
	"check the URI's host, port, database name, user and password"
# a role that must give a password: scram over TCP (the rest of the cluster trusts)
psql_q "CREATE ROLE fleet LOGIN PASSWORD 'right-one'" >/dev/null || e2e_fail "CREATE ROLE failed"
{ echo "host all fleet 127.0.0.1/32 scram-sha-256"; cat "$PG_DIR/data/pg_hba.conf"; } >"$D/hba"
cat "$D/hba" >"$PG_DIR/data/pg_hba.conf"
pg_ctl_owner reload -s || e2e_fail "pg_ctl reload failed"
refused "postgresql://fleet:wrong-one@127.0.0.1:$PG_TCP_PORT/lake" 'password authentication failed for user "fleet"' \
	"postgresql://fleet:***@127.0.0.1"
grep -q wrong-one "$D/refused.err" && e2e_fail "the password is in the message: $(cat "$D/refused.err")"
refused "postgresql://tracer@127.0.0.1:1/lake?connect_timeout=5" "127.0.0.1" "refused" "and that the server runs"
echo "a missing database, a wrong password and an unreachable server: each named, the password starred"

# ---- 2. the same batch to two ingests at once, 100 times -------------------------------------------------
# Real batches: fleet_sim's hosts sending to a throwaway ingest of their own (an SQLite file).
"$B/tracer-ingest" --listen 127.0.0.1:0 --db "$D/maker.db" --keys "$D/keys" --ready-fd 3 3>"$D/maker.ready" \
	2>"$D/maker.err" &
maker=$!
e2e_on_exit "kill $maker 2>/dev/null"
# ingest_port READY PID: the port its --ready-fd line gives, once it is there
ingest_port() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready ' "$1" 2>/dev/null && break
		kill -0 "$2" 2>/dev/null || e2e_fail "tracer-ingest did not start: $(tail -3 "${1%.ready}.err")"
		sleep 0.05
	done
	awk '/^ready/ { print $2 }' "$1"
}
port=$(ingest_port "$D/maker.ready" "$maker")
HOSTS=10 PROCS=4 SECONDS=16 DRAIN_S=60 "$B/bench/fleet_sim" --seed "$seed" --url "http://127.0.0.1:$port/v1/batches" \
	--sent "$D/maker.sent" --dump "$D/dump" >"$D/maker.out" 2>"$D/maker.sim.err" ||
	e2e_fail "fleet_sim did not deliver to its own ingest: $(tail -3 "$D/maker.sim.err")"
kill "$maker"
n=$(find "$D/dump" -name '*.batch' | wc -l)
[ "$n" -ge 100 ] || e2e_fail "fleet_sim made $n batches, want at least 100"
# The first 100 in each host's order (names: HOST-BATCHSEQ): every chain starts at its first batch.
find "$D/dump" -name '*.batch' | sort | head -100 >"$D/batches"

# Two ingests of one database, one through the socket, one over TCP.
start_pg_ingest() { # NAME URI
	"$B/tracer-ingest" --listen 127.0.0.1:0 --db "$2" --keys "$D/keys" --ready-fd 3 3>"$D/$1.ready" \
		2>"$D/$1.err" &
	eval "$1_pid=$!"
	e2e_on_exit "kill $! 2>/dev/null"
}
start_pg_ingest a "$PG_URI"
port_a=$(ingest_port "$D/a.ready" "$a_pid")
start_pg_ingest b "$PG_TCP_URI"
port_b=$(ingest_port "$D/b.ready" "$b_pid")
python3 - "$D/batches" "$port_a" "$port_b" >"$D/twice.out" 2>"$D/twice.err" <<'EOF' || e2e_fail "sending twice: $(tail -5 "$D/twice.err")"
import http.client, json, sys, threading
paths = [l.strip() for l in open(sys.argv[1]) if l.strip()]
ports = [int(sys.argv[2]), int(sys.argv[3])]
stored = duplicate = records = 0
for path in paths:
    body = open(path, "rb").read()
    # both connections open and the requests' bytes ready; then both sent at the same moment
    conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=60) for p in ports]
    for c in conns:
        c.connect()
    go = threading.Barrier(2)
    replies = [None, None]
    def send(i):
        go.wait()
        conns[i].request("POST", "/v1/batches", body, {"Content-Type": "application/octet-stream"})
        r = conns[i].getresponse()
        replies[i] = (r.status, json.loads(r.read()))
    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in conns:
        c.close()
    statuses = sorted(r[1]["status"] for r in replies)
    if any(r[0] != 200 for r in replies) or statuses != ["duplicate", "stored"]:
        sys.exit("%s: replies %r" % (path, replies))
    stored += 1
    records += next(r[1]["new"] for r in replies if r[1]["status"] == "stored")
print(stored, records)
EOF
read -r stored new <"$D/twice.out"
[ "$stored" = 100 ] || e2e_fail "stored $stored of 100 batches"
got=$(psql_q "SELECT count(*), count(DISTINCT hash) FROM batches") || e2e_fail "reading the lake"
[ "$got" = "100|100" ] || e2e_fail "batches in the lake (rows|distinct): $got, want 100|100"
got=$(psql_q "SELECT count(*), (SELECT count(*) FROM (SELECT DISTINCT host_id, stream, seq FROM records) k) FROM records")
[ "$got" = "$new|$new" ] || e2e_fail "records in the lake (rows|distinct): $got, want $new|$new (the replies' new)"
# every seq of each stream from its first to its last, once: no batch half stored
got=$(psql_q "SELECT count(*) FROM (SELECT host_id, stream FROM records GROUP BY host_id, stream
	HAVING max(seq) - min(seq) + 1 <> count(*)) g")
[ "$got" = 0 ] || e2e_fail "$got streams with a hole in their seqs"
echo "100 batches each sent to two ingests at once: 100 stored once, $new records once each"
kill "$a_pid" "$b_pid"
wait "$a_pid" "$b_pid" 2>/dev/null

# ---- 2b. partitions and retention (docs/lake.md, "Partitions and retention") ---------------------------
# Each ingest ran the upkeep when it opened the lake: each time-series table has its partitions of yesterday
# to a week ahead (9 days; 10 if the day changed between the two ingests' starts), today's among them.
for t in records samples files heartbeats agent_counters losses; do
	got=$(psql_q "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid AND c.relkind = 'r'
		WHERE i.inhparent = '$t'::regclass")
	case $got in 9 | 10) ;; *) e2e_fail "$t has $got partitions, want 9 (yesterday to 7 days ahead)" ;; esac
	got=$(psql_q "SELECT count(*) FROM pg_class WHERE relname = '${t}_p$(date -u +%Y%m%d)'")
	[ "$got" = 1 ] || e2e_fail "no partition ${t}_p$(date -u +%Y%m%d) of today"
done
grep -q 'lake upkeep: retention 2160 h (runs 8784 h)' "$D/a.err" "$D/b.err" ||
	e2e_fail "no upkeep line: $(grep upkeep "$D/a.err" "$D/b.err")"
# A day 5 days ago, with a sample in it; an ingest keeping 2 days drops that day whole when it opens the lake,
# and nothing of the days it keeps.
old=$(psql_q "SELECT (extract(epoch FROM now()) / 86400)::bigint - 5")
psql_q "SELECT lake_partition('samples', $old); INSERT INTO samples (host_id, stream, seq, received_ns, boot_id, tgid,
	start_ns, ts_ns) VALUES ('old-host', 0, 1, $old * 86400000000000 + 1, 'b', 1, 1, 1)" >/dev/null ||
	e2e_fail "making an old day"
before=$(psql_q "SELECT count(*) FROM samples WHERE host_id <> 'old-host'")
"$B/tracer-ingest" --listen 127.0.0.1:0 --db "$PG_URI" --keys "$D/keys" --set lake_retention=48h --user nobody --ready-fd 3 \
	3>"$D/keep2.ready" 2>"$D/keep2.err" &
keep2=$!
e2e_on_exit "kill $keep2 2>/dev/null"
ingest_port "$D/keep2.ready" "$keep2" >/dev/null
kill "$keep2"
wait "$keep2" 2>/dev/null
grep -q 'lake upkeep: retention 48 h (runs 8784 h); 1 partitions dropped' "$D/keep2.err" ||
	e2e_fail "the upkeep did not drop the old day: $(grep upkeep "$D/keep2.err")"
got=$(psql_q "SELECT count(*) FROM pg_class WHERE relname LIKE 'samples_p%' AND relname = 'samples_p' ||
	to_char(to_timestamp($old * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD')")
[ "$got" = 0 ] || e2e_fail "the partition of 5 days ago is still there"
got=$(psql_q "SELECT count(*) FROM samples WHERE host_id <> 'old-host'"):$(psql_q "SELECT count(*) FROM samples
	WHERE host_id = 'old-host'")
[ "$got" = "$before:0" ] || e2e_fail "samples kept:old after retention: $got, want $before:0"
echo "partitions of yesterday to a week ahead made at start; lake_retention=48h dropped a day 5 days old whole"

# ---- 3. an ingest killed and PostgreSQL restarted under load ----------------------------------------------
pg_stop
env HOSTS=20 PROCS=5 SECONDS=10 INGESTS=2 KILL_INGEST=1 RESTART_PG=1 DB=postgresql PG_TCP=1 DRAIN_S=60 KEEP=1 \
	"$E2E_DIR/../../bench/fleet.sh" "$B" >"$D/fleet.out" 2>"$D/fleet.err"
rc=$?
cat "$D/fleet.out"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || e2e_fail "bench/fleet.sh exit $rc: $(tail -5 "$D/fleet.err")"
line() {
	grep -qx "$1 $2 [a-z/]*" "$D/fleet.out" ||
		e2e_fail "expected '$1 $2': $(grep "^$1 " "$D/fleet.out" || echo "no $1 line"); $(grep '^<[0-5]>' "$D/fleet.err")"
}
line fleet.lost 0
line fleet.duplicated 0
line fleet.undelivered 0
line fleet.batches_mismatch 0
line fleet.records_not_derived 0
line fleet.refused_batches 0
grep -q 'killed with -9' "$D/fleet.err" || e2e_fail "fleet.sh did not kill an ingest: $(cat "$D/fleet.err")"
grep -q 'PostgreSQL restarted' "$D/fleet.err" || e2e_fail "fleet.sh did not restart PostgreSQL: $(cat "$D/fleet.err")"
kept=$(sed -n 's/^<7>kept //p' "$D/fleet.err")
e2e_on_exit "rm -rf '$kept'"
busy=$(cat "$kept"/ingest*.err | grep -c 'database busy.*HTTP 503') || true
[ "${busy:-0}" -gt 0 ] || e2e_fail "no ingest answered 503 while PostgreSQL restarted: $(tail -3 "$kept"/ingest1.err)"
grep -q 'stopping (Terminated)' "$kept/ingest1.err" ||
	e2e_fail "the surviving ingest did not run to the end: $(tail -3 "$kept/ingest1.err")"
if grep 'target missed' "$D/fleet.err" | grep -qv 'fleet.lag_p99_s'; then
	e2e_fail "$(grep 'target missed' "$D/fleet.err")"
fi
echo "an ingest killed with -9 and PostgreSQL restarted under load: $busy answers 503, nothing lost or doubled"
