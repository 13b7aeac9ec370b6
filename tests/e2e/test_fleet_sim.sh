#!/usr/bin/env bash
# make bench-fleet's harness end to end, small (issue 26): bench/fleet.sh with 20 simulated hosts of 4
# live processes each, 8 s, through two tracer-ingests on one SQLite lake, the first killed with -9
# halfway and not restarted. Every record the hosts made is in the lake once (fleet.lost 0,
# fleet.duplicated 0), every acknowledged batch is stored once, every record was derived, and the
# hosts of the killed ingest failed over to the other. Not timed: the lag target is the benchmark's
# (a busy machine may miss it, and fleet.sh then exits 1 saying so), not this test's.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
[ -x "$B/bench/fleet_sim" ] || e2e_fail "not built: $B/bench/fleet_sim (make e2e builds it)"
env HOSTS=20 PROCS=5 SECONDS=8 INGESTS=2 KILL_INGEST=1 DB=sqlite DRAIN_S=40 \
	"$E2E_DIR/../../bench/fleet.sh" "$B" >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || e2e_fail "bench/fleet.sh exit $rc: $(tail -5 "$TMP/err")"
# line METRIC VALUE: the line is there, with that value
line() {
	grep -qx "$1 $2 [a-z/]*" "$TMP/out" ||
		e2e_fail "expected '$1 $2': $(grep "^$1 " "$TMP/out" || echo "no $1 line"); $(grep '^<[0-5]>' "$TMP/err")"
}
line fleet.hosts 20
line fleet.lost 0
line fleet.duplicated 0
line fleet.undelivered 0
line fleet.batches_mismatch 0
line fleet.records_not_derived 0
line fleet.refused_batches 0
failovers=$(awk '$1 == "fleet.failovers" { print $2 }' "$TMP/out")
[ "${failovers:-0}" -gt 0 ] || e2e_fail "no host failed over: was the ingest killed? $(cat "$TMP/err")"
grep -q 'killed with -9' "$TMP/err" || e2e_fail "fleet.sh did not kill an ingest: $(cat "$TMP/err")"
# a missed target other than the lag is a failure here too
if grep 'target missed' "$TMP/err" | grep -qv 'fleet.lag_p99_s'; then
	e2e_fail "$(grep 'target missed' "$TMP/err")"
fi
