#!/usr/bin/env bash
# make bench-fleet: a fleet of simulated hosts into tracer-ingests on one lake (issue 26).
#  - bench/fleet_sim plays HOSTS hosts, each with its own key (enrolled here, bound to its host id), host
#    id, boot id and stream, sending a daemon-mode host's records at its rates (PROCS live processes
#    sampled once a second, jobs ending and starting, a TL_RUN a second, a TL_HOST every HEARTBEAT_S)
#    in signed batches, from one process (libcurl multi), for SECONDS seconds, then waits until every
#    host's last batch is acknowledged (at most DRAIN_S). Host i's upload_url list starts at ingest
#    i mod INGESTS, so the hosts are spread over the ingests and fail over to the next one.
#  - INGESTS tracer-ingest processes on loopback ports write one lake: DB=sqlite, one SQLite file;
#    DB=postgresql, one PostgreSQL database (a tracer-ingest with the PostgreSQL backend, and a
#    throwaway cluster from tests/e2e/pg.sh).
#  - KILL_INGEST=1: halfway through, the first ingest is killed with -9 and not restarted: its hosts
#    fail over to the others, which carry the whole fleet from then on (needs INGESTS >= 2).
#    RESTART_PG=1 (DB=postgresql): the cluster restarted (pg_ctl restart -m fast) halfway.
#    PG_TCP=1 (DB=postgresql): the ingests reach the server over TCP on loopback (else its Unix socket).
#  - At the end the lake is compared with what the hosts made, per host and stream: lost = seqs
#    acknowledged and not stored; duplicated = rows stored beyond one per seq; every acknowledged batch
#    stored once, and no other batch but the one in flight when the drain ran out (fleet.undelivered:
#    the records made and never acknowledged then).
# Usage: bench/fleet.sh [BUILD_DIR]; env HOSTS (1000), PROCS (100), SECONDS (60), INGESTS (2),
# DB (sqlite), KILL_INGEST (0), RESTART_PG (0), HEARTBEAT_S (5), DRAIN_S (300), KEEP=1 keeps the
# temporary directory (and the PostgreSQL cluster, stopped: pg.sh says how to start it). Results: "<metric> <value> <unit>" lines on stdout, diagnostics on stderr.
# Exit 1 when a record was lost or doubled, an acknowledged batch is not in the lake once, a record
# was not derived, or the p99 lag is over 5 s (each said on stderr); 2 on a usage or setup error.
secs=$SECONDS # first: bash counts SECONDS up from what the environment gave it (from 0 when nothing)
set -euo pipefail
[ "$secs" -gt 0 ] || secs=60
build=$(cd "${1:-build}" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
hosts=${HOSTS:-1000}
procs=${PROCS:-100}
ingests=${INGESTS:-2}
db=${DB:-sqlite}
kill_ingest=${KILL_INGEST:-0}
restart_pg=${RESTART_PG:-0}
lag_target=5
hz=$(getconf CLK_TCK)

usage() { echo "<3>bench-fleet: $*" >&2; exit 2; }
case $ingests in [1-8]) ;; *) usage "INGESTS=$ingests: want 1..8 (the processor's upload_url takes 8)" ;; esac
case $db in sqlite | postgresql) ;; *) usage "DB=$db: want sqlite or postgresql" ;; esac
case $kill_ingest in 0 | 1) ;; *) usage "KILL_INGEST=$kill_ingest: want 0 or 1" ;; esac
case $restart_pg in 0 | 1) ;; *) usage "RESTART_PG=$restart_pg: want 0 or 1" ;; esac
[ "$kill_ingest" = 0 ] || [ "$ingests" -ge 2 ] ||
	usage "KILL_INGEST=1 needs INGESTS=2 or more: the killed ingest is not restarted, the others take its hosts"
[ "$restart_pg" = 0 ] || [ "$db" = postgresql ] || usage "RESTART_PG=1 restarts PostgreSQL: it needs DB=postgresql"
[[ $hosts =~ ^[0-9]+$ ]] || usage "HOSTS=$hosts: want a number"
for t in python3 "$build/tracer-ingest" "$build/bench/fleet_sim"; do
	command -v "$t" >/dev/null || usage "needs $t (make all $build/bench/fleet_sim)"
done
# Every host keeps a connection to the ingest it sends to, and to the one it failed over from.
need_fds=$((hosts * (ingests + 1) + 256))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need_fds" ]; then
	ulimit -n "$need_fds" 2>/dev/null ||
		usage "$hosts hosts need $need_fds open files, and ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)): raise it"
fi
user_args=()
[ "$(id -u)" = 0 ] && user_args=(--user nobody) # as root: the ingests drop to nobody once the lake is open

tmp=$(mktemp -d /var/tmp/tracer-bench-fleet.XXXXXX)
ipids=()
pg_started=0
cleanup() {
	local p
	for p in "${ipids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${ipids[@]}"; do timeout 10 tail --pid="$p" -f /dev/null 2>/dev/null || true; done
	[ "$pg_started" = 1 ] && pg_stop
	if [ "${KEEP:-0}" = 1 ]; then echo "<7>kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
chmod 755 "$tmp"

seed=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
HOSTS=$hosts "$build/bench/fleet_sim" --enroll --seed "$seed" >"$tmp/keys" || usage "fleet_sim --enroll failed"
chmod 644 "$tmp/keys"

# ---- the lake ------------------------------------------------------------------------------------------
if [ "$db" = sqlite ]; then
	db_arg=$tmp/lake.db
else
	# A throwaway cluster (tests/e2e/pg.sh): PG_URI names its database "lake" through its socket. Its
	# commits durable (fsync on, the server's defaults otherwise), as SQLite's synchronous=FULL: an
	# acknowledged batch is on disk on both.
	# shellcheck source=/dev/null
	. "$repo/tests/e2e/pg.sh"
	export PG_FSYNC=${PG_FSYNC:-on}
	export PG_KEEP=${KEEP:-0} # KEEP=1: pg_stop keeps the cluster
	if [ "${PG_TCP:-0}" = 1 ]; then
		pg_start --tcp
		db_arg=$PG_TCP_URI
	else
		pg_start
		db_arg=$PG_URI
	fi
	pg_started=1
fi

# start_ingest N: ingest N on a port the kernel picks, writing the lake; its URL into urls.
urls=()
start_ingest() {
	local n=$1 i port
	"$build/tracer-ingest" --listen 127.0.0.1:0 --db "$db_arg" --keys "$tmp/keys" \
		--max-connections $((hosts + 64)) "${user_args[@]}" --ready-fd 3 \
		3>"$tmp/ingest$n.ready" 2>"$tmp/ingest$n.err" &
	ipids[n]=$!
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready ' "$tmp/ingest$n.ready" 2>/dev/null && break
		kill -0 "${ipids[n]}" 2>/dev/null || usage "tracer-ingest $n did not start: $(tail -3 "$tmp/ingest$n.err")"
		sleep 0.05
	done
	port=$(awk '/^ready/ { print $2 }' "$tmp/ingest$n.ready")
	[ -n "$port" ] || usage "tracer-ingest $n did not say it was ready: $(tail -3 "$tmp/ingest$n.err")"
	urls+=(--url "http://127.0.0.1:$port/v1/batches")
}
# One after the other: the first creates the lake.
for ((n = 0; n < ingests; n++)); do start_ingest "$n"; done
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# PostgreSQL's server: the postmaster, its children now, and the children it reaped (a restart starts anew)
pg_ticks() {
	local pm
	[ "$db" = postgresql ] || { echo 0; return; }
	pm=$(head -1 "$PG_DIR/data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
	awk -v pm="$pm" 'FNR == 1 { sub(/^.*\) /, ""); if ($2 == pm) t += $12 + $13; if (FILENAME == "/proc/" pm "/stat")
		t += $12 + $13 + $14 + $15 } END { print t + 0 }' /proc/[0-9]*/stat 2>/dev/null || echo 0
}
now_s() { date +%s.%N; }

echo "<7>bench-fleet: $hosts hosts x $procs processes, $secs s, $ingests ingests, DB=$db, KILL_INGEST=$kill_ingest," \
	"RESTART_PG=$restart_pg, in $tmp" >&2
env HOSTS="$hosts" PROCS="$procs" SECONDS="$secs" "$build/bench/fleet_sim" --seed "$seed" "${urls[@]}" \
	--sent "$tmp/sent" --ready-fd 3 3>"$tmp/sim.ready" >"$tmp/sim.out" &
sim=$!
until grep -q '^generating' "$tmp/sim.ready" 2>/dev/null; do
	kill -0 "$sim" 2>/dev/null || break
	sleep 0.02
done
t0=$(now_s)
ticks0=()
ticks1=()
for ((n = 0; n < ingests; n++)); do ticks0[n]=$(cpu_ticks "${ipids[n]}"); done
pg0=$(pg_ticks)
if [ "$kill_ingest" = 1 ] || [ "$restart_pg" = 1 ]; then
	sleep "$(awk -v s="$secs" 'BEGIN { print s / 2 }')"
	if kill -0 "$sim" 2>/dev/null && [ "$kill_ingest" = 1 ]; then
		ticks1[0]=$(cpu_ticks "${ipids[0]}")
		kill -KILL "${ipids[0]}"
		wait "${ipids[0]}" 2>/dev/null || true
		echo "<5>halfway: tracer-ingest 0 (${urls[1]}) killed with -9, not restarted" >&2
	fi
	if kill -0 "$sim" 2>/dev/null && [ "$restart_pg" = 1 ]; then
		pg_half=$(pg_ticks)
		pg_ctl_owner restart -m fast -w >/dev/null
		pg0=$((pg0 - pg_half)) # the first half's, counted at the restart
		echo "<5>halfway: PostgreSQL restarted (pg_ctl restart -m fast)" >&2
	fi
fi
rc=0
wait "$sim" || rc=$?
t1=$(now_s)
[ "$rc" = 2 ] && usage "fleet_sim failed (setup); its figures: $(cat "$tmp/sim.out")"
for ((n = 0; n < ingests; n++)); do
	[ -n "${ticks1[n]:-}" ] || ticks1[n]=$(cpu_ticks "${ipids[n]}")
done
pg1=$(pg_ticks)
cat "$tmp/sim.out"

# ---- the lake against what the hosts made ----------------------------------------------------------------
unreadable() { echo "<3>bench-fleet: cannot read the lake: $(tail -3 "$tmp/lake.err")" >&2; exit 1; }
python3 - "$db" "$db_arg" "$tmp/sent" >"$tmp/lake.out" 2>"$tmp/lake.err" <<'EOF' || unreadable
import subprocess, sys
kind, target, sent_path = sys.argv[1:4]
sent = [l.split() for l in open(sent_path)]
values = ", ".join("('%s', %d, %d, %d, %d)" % (h, int(s), int(last), int(b), int(a)) for h, s, last, b, a in sent)
# Per host and stream: seqs acknowledged, and stored among them; rows beyond one per seq; batches
# acknowledged and stored; whether a batch was in flight at the end (made, not acknowledged).
per_stream = """WITH sent(host_id, stream, last_seq, batches, acked_seq) AS (VALUES %s)
SELECT s.acked_seq,
  (SELECT count(DISTINCT r.seq) FROM records r
    WHERE r.host_id = s.host_id AND r.stream = s.stream AND r.seq BETWEEN 1 AND s.acked_seq),
  (SELECT count(*) - count(DISTINCT r.seq) FROM records r WHERE r.host_id = s.host_id AND r.stream = s.stream),
  s.batches,
  (SELECT count(*) FROM batches b WHERE b.host_id = s.host_id AND b.stream = s.stream),
  (SELECT count(DISTINCT b.batch_seq) FROM batches b WHERE b.host_id = s.host_id AND b.stream = s.stream),
  CASE WHEN s.last_seq > s.acked_seq THEN 1 ELSE 0 END
FROM sent s""" % values
lake = """SELECT (SELECT count(*) FROM records),
  (SELECT coalesce(sum(records_unknown + records_undecodable + bad_run_reports + bad_live_records), 0) FROM batches),
  (SELECT count(*) FROM batches WHERE chain = 'broken')"""

def query(sql):
    if kind == "sqlite":
        import sqlite3
        db = sqlite3.connect("file:%s?mode=ro" % target, uri=True)
        return [tuple(int(v) for v in row) for row in db.execute(sql)]
    out = subprocess.run(["psql", "-X", "-At", "-F", " ", "-v", "ON_ERROR_STOP=1", target, "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [tuple(int(v) for v in line.split()) for line in out.splitlines() if line]

lost = duplicated = stored = mismatch = 0
for acked_seq, have, dup, acked, nb, distinct_nb, in_flight in query(per_stream):
    lost += acked_seq - have  # acknowledged, and not in the lake
    duplicated += dup
    stored += nb
    # each acknowledged batch stored once, nothing else but the batch in flight when the hosts stopped
    # (stored, its answer not read: the drain ran out)
    extra = nb - acked
    mismatch += (-extra if extra < 0 else max(0, extra - in_flight)) + (nb - distinct_nb)
rows, not_derived, broken = query(lake)[0]
print("fleet.lost %d rec" % lost)
print("fleet.duplicated %d rec" % duplicated)
print("fleet.records_stored %d rec" % rows)
print("fleet.batches_stored %d batches" % stored)
print("fleet.batches_mismatch %d batches" % mismatch)
print("fleet.records_not_derived %d rec" % not_derived)
print("fleet.chain_broken %d batches" % broken)
EOF
cat "$tmp/lake.out"
total_ticks=0
for ((n = 0; n < ingests; n++)); do total_ticks=$((total_ticks + ticks1[n] - ticks0[n])); done
awk -v t="$total_ticks" -v hz="$hz" -v a="$t0" -v b="$t1" \
	'BEGIN { printf "fleet.ingest_cpu_cores %.3f cores\n", t / hz / (b - a) }'
if [ "$db" = sqlite ]; then
	echo "fleet.lake_bytes $(($(stat -c %s "$tmp/lake.db") + $(stat -c %s "$tmp/lake.db-wal" 2>/dev/null || echo 0))) B"
else
	awk -v t="$((pg1 - pg0))" -v hz="$hz" -v a="$t0" -v b="$t1" \
		'BEGIN { printf "fleet.pg_cpu_cores %.3f cores\n", t / hz / (b - a) }'
	echo "fleet.lake_bytes $(psql -X -At "$db_arg" -c "SELECT pg_database_size(current_database())") B"
fi

# ---- the targets -------------------------------------------------------------------------------------------
metric() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/sim.out" "$tmp/lake.out"; }
failed=0
miss() { echo "<3>bench-fleet: target missed: $*" >&2; failed=1; }
[ "$rc" = 0 ] ||
	miss "fleet_sim: not every record made was acknowledged (exit $rc; fleet.undelivered $(metric fleet.undelivered))"
[ "$(metric fleet.lost)" = 0 ] || miss "fleet.lost $(metric fleet.lost): records acknowledged that the lake does not have"
[ "$(metric fleet.duplicated)" = 0 ] || miss "fleet.duplicated $(metric fleet.duplicated): records the lake has twice"
[ "$(metric fleet.batches_mismatch)" = 0 ] ||
	miss "fleet.batches_mismatch $(metric fleet.batches_mismatch): acknowledged batches not stored exactly once" \
		"($(metric fleet.batches) acknowledged, $(metric fleet.batches_stored) stored)"
[ "$(metric fleet.records_not_derived)" = 0 ] ||
	miss "fleet.records_not_derived $(metric fleet.records_not_derived): the lake derived nothing from them"
awk -v l="$(metric fleet.lag_p99_s)" -v t="$lag_target" 'BEGIN { exit !(l <= t) }' ||
	miss "fleet.lag_p99_s $(metric fleet.lag_p99_s) s: over $lag_target s (DESIGN.md, Fleet)"
exit "$failed"
