#!/usr/bin/env bash
# tracer run --set upload_url=...: the run's records and its report reach
# the lake before tracer run exits; `tracer report --db` lists the run and
# prints the same summary tracer run printed, and the failed step's signal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
dlv_ingest_start
tracer_run lake --set "state_dir=$D/state" --set "upload_url=$DLV_URL" --set "signing_key=$D/signing.key" \
	-- sh -c 'seq 1000 | sort -n > /dev/null; ls /nonexistent-dir 2> /dev/null; exit 3'
expect_rc "the command's status" 3 lake
"$TRACER" report --db "$D/lake.db" >"$TMP/runs.txt" 2>&1 || e2e_fail "tracer report --db failed: $(cat "$TMP/runs.txt")"
grep -q "sh -c seq 1000" "$TMP/runs.txt" || e2e_fail "the run is not listed: $(cat "$TMP/runs.txt")"
run=$(awk 'NR == 2 { print $1 }' "$TMP/runs.txt")
"$TRACER" report --db "$D/lake.db" "$run" >"$TMP/run.txt" 2>&1 || e2e_fail "tracer report --db FILE $run failed"
# The summary as tracer run printed it (its stderr, less tracer's own lines and the daemons' logs).
grep -v -e '^<' -e '^tracer: own cost' "$TMP/lake.err" >"$TMP/printed.txt"
python3 - "$TMP/printed.txt" "$TMP/run.txt" <<'PY' || e2e_fail "the lake's summary differs from what tracer run printed"
import sys
printed = open(sys.argv[1]).read()
stored = open(sys.argv[2]).read()
if printed.strip() not in stored:
    print("printed:\n" + printed + "\nfrom the lake:\n" + stored, file=sys.stderr)
    sys.exit(1)
PY
grep -q "failed.*ls" "$TMP/run.txt" || e2e_fail "the lake has no 'failed' signal for ls: $(cat "$TMP/run.txt")"
# Every record of the run once, checksums right (no load pids here: an empty list).
: >"$D/pids"
dlv_check_lake
