#!/usr/bin/env bash
# `tracer run --config CONF` delivers its run to the lake, and the lake gives
# the same report back: `tracer report --db LAKE RUN --json` equals the
# --json file tracer run wrote, field by field, but for the documented
# difference ("state" added: docs/lake.md). Twice:
# 1. only the ingest runs: tracer run alone (a command that fails: exit 3,
#    an `ls` that fails, so the report has a failed step and signals);
# 2. the daemons ALSO run on the host (tests/e2e/live.sh: the whole host is
#    traced, the daemon processor finds tracer run's command as a run,
#    detected_by tracer_run, and streams it): tracer run sees their socket
#    and leaves the sending to them (one sender per host: docs/live.md), so
#    the run is in the lake ONCE, from the daemons, and the report the lake
#    rebuilds from their live records equals tracer run's --json file but
#    for the documented differences (docs/lake.md), also after everything
#    the daemons had spooled has reached the lake.
# tracer run gets a state_dir of its own (--set state_dir=...): the config's
# is the daemon processor's spool, which no other process may write; and a
# signing key of its own (enrolled in the ingest's keys file too), so that
# the lake's batches say which processor sent what: only the daemon's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
live_init
# no_conflicts WHEN: two senders of this host (the daemon processor, tracer run's processor: one host id,
# each its own spool) must not send different records under one seq: the lake keeps the first and refuses
# the other (batches.records_conflicting), so a run's records or its report would be lost.
no_conflicts() {
	local c
	c=$(dlv_lake_sql "SELECT coalesce(sum(records_conflicting), 0) FROM batches")
	[ "$c" = 0 ] && return 0
	python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in db.execute("SELECT batch_id, host_id, first_seq, last_seq, records_new, records_conflicting FROM batches"):
    print("batch %d: host %s, seqs %d..%d, %d new, %d conflicting" % r)' "$LAKE" >&2
	e2e_fail "$1: the lake refused $c record(s) as conflicting (above): the daemon processor and tracer run's" \
		"processor both send as host $(dlv_lake_sql 'SELECT host_id FROM hosts LIMIT 1') with the seqs" \
		"of their own spools, so whichever sends a seq second loses that record (a run report too)"
}
mkdir -p "$D/rstate" && chown nobody "$D/rstate" || e2e_fail "setup: mkdir $D/rstate"
# tracer run signs with a key of its own (enrolled too), so the lake tells its batches from the daemon's.
"$TRACER" keygen --any-host --out "$D/run.key" >>"$D/keys" 2>"$D/keygen.err" ||
	e2e_fail "tracer keygen: $(cat "$D/keygen.err")"
chown nobody "$D/run.key"
daemon_key=$(awk 'NR == 1 { print $2 }' "$D/keys")
run_key_id=$(awk 'NR == 2 { print $2 }' "$D/keys")
RUN_SETS=(--set "state_dir=$D/rstate" --set "signing_key=$D/run.key")
# live_records KEY_ID RUN_KEY: how many live records (TL_RUN, type 67) of the run RUN_KEY came in batches
# signed with KEY_ID.
live_records() {
	python3 -c 'import json, sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
n = 0
for (p,) in db.execute("SELECT r.payload FROM records r JOIN batches b ON b.hash = r.batch_hash "
                       "WHERE r.type = 67 AND b.key_id = ?", (sys.argv[2],)):
    try:
        n += json.loads(bytes(p).decode()).get("key") == sys.argv[3]
    except ValueError:
        pass
print(n)' "$LAKE" "$1" "$2"
}
live_ingest_start

# 1. tracer run alone.
w=$(live_user_dir work)
cd "$w" || e2e_fail "setup: cd $w"
# Another host id for the run alone: each spool numbers its records from 1, and the lake keys records by host
# and number, so two spools must not send as one host (docs/live.md, "One sender per host").
other_host=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
tracer_run alone --config "$CONF" "${RUN_SETS[@]}" --set "host_id=$other_host" --json "$TMP/alone.json" \
	-- sh -c 'seq 1000 | sort -n > /dev/null; ls /nonexistent-live-alone 2> /dev/null; exit 3'
expect_rc "the command's status" 3 alone
live_check check --where "command~nonexistent-live-alone" --count 1 --expect state=failed --expect exit_code=3 \
	--expect detected_by=tracer_run
live_check compare --where "command~nonexistent-live-alone" --report "$TMP/alone.json"

# 2. The same with the daemons running on the host.
live_collector_start
live_processor_start
live_wait_ready 30
echo "daemons: collector (whole host) and processor (daemon mode) delivering to the same lake"
tracer_run both --config "$CONF" "${RUN_SETS[@]}" --json "$TMP/both.json" \
	-- sh -c 'seq 2000 | gzip -c | wc -c > /dev/null; sleep 2; ls /nonexistent-live-both 2> /dev/null || true'
expect_rc "the command's status" 0 both
no_conflicts "tracer run with the daemons"
# The daemons' last record of the run: one look a second, the spool's fsync, the next batch.
live_check wait --where "command~nonexistent-live-both" --where state=succeeded --timeout 15
live_check check --where "command~nonexistent-live-both" --count 1 --expect state=succeeded --expect exit_code=0
live_check compare --contract --time-tolerance-ns 1000000 --ignore start_ns --ignore end_ns \
	--where "command~nonexistent-live-both" --report "$TMP/both.json"
# Once the daemons have delivered what they saw of it (their live records of the same run), still once,
# still the same report.
dlv_wait_delivered 30
live_check check --where "command~nonexistent-live-both" --count 1 --expect state=succeeded \
	--expect detected_by=tracer_run --by-name
live_check compare --contract --time-tolerance-ns 1000000 --ignore start_ns --ignore end_ns \
	--where "command~nonexistent-live-both" --report "$TMP/both.json"
live_check check --where "command~nonexistent-live-alone" --count 1
# Once because the two merged, not because the daemon missed it: the daemon processor (its own key) sent
# live records of the same run key as tracer run's processor.
key=$(python3 "$LIVE_CHECK" --tracer "$TRACER" --db "$LAKE" check --where "command~nonexistent-live-both" |
	sed -n 's/^run [0-9]* (\([^)]*\)).*/\1/p' | head -1)
[ -n "$key" ] || e2e_fail "no run key for the tracer run in the lake's list"
from_run=$(live_records "$run_key_id" "$key")
from_daemon=$(live_records "$daemon_key" "$key")
echo "live records of run $key: $from_run from tracer run's processor, $from_daemon from the daemon processor"
[ "$from_daemon" -gt 0 ] || e2e_fail "the daemon processor sent no live record of run $key: it did not find" \
	"tracer run's command as a run (detected_by tracer_run, docs/live.md), so 'once' above proves nothing"
[ "$from_run" = 0 ] || e2e_fail "tracer run's processor sent $from_run live records although the daemons deliver"
grep -q "the daemons deliver on this host" "$TMP/both.err" ||
	e2e_fail "tracer run did not say that the daemons send its run: $(tail -3 "$TMP/both.err")"
live_alive
no_conflicts "at the end"
