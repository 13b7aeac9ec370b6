#!/usr/bin/env bash
# The report covers the command's tree and nothing else: while a storm runs
# under tracer, another storm runs beside it (outside tracer); the report
# lists exactly the command's processes, none of the outside ones and none
# of tracer's own (collector, processor, reaper).
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

stop=$TMP/stop
# Outside: small storms back to back until told to stop (so they overlap the whole run).
(while [ ! -e "$stop" ]; do "$W" storm 50 1 || exit 1; done) >"$TMP/outside.out" 2>"$TMP/outside.err" &
outside=$!
e2e_on_exit "touch '$stop'; wait $outside 2>/dev/null"

tracer_run scope --json "$TMP/scope.json" -- "$W" storm 300
touch "$stop"
wait "$outside" || e2e_fail "the outside storm failed: $(tail -n 3 "$TMP/outside.err")"
expect_rc "the storm's own status" 0 scope
echo "outside storm: $(grep -c '^child ' "$TMP/outside.out") processes"
check_report scope "$TMP/scope.json" "$TMP/scope.out" "$TMP/outside.out"
