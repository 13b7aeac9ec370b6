#!/usr/bin/env bash
# kill -9 of the processor at random moments, 12 times, during a steady
# load: after recovery every record is in the lake exactly once (count and
# checksum per record), and every process of the load has its exec and its
# exit there once. The processor releases ring space only for records that
# are durable in its spool, and a restarted one skips what the spool has.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
dlv_ingest_start
dlv_load_start
dlv_collector_start
dlv_processor_start
dlv_load_go 0
kills=0
while [ "$kills" -lt 12 ]; do
	sleep "0.$((RANDOM % 5 + 1))$((RANDOM % 10))"
	kill -KILL "$DLV_PROCESSOR" 2>/dev/null && kills=$((kills + 1))
	wait "$DLV_PROCESSOR" 2>/dev/null
	dlv_processor_start
done
sleep 1
dlv_load_stop
dlv_wait_delivered 60
echo "kills: $kills; skipped after restarts (last run): $(dlv_status spool.records_skipped_after_restart)"
dlv_check_lake
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost records: $(dlv_status ring.lost)"
# tracer status reads the same file, for a human. One snapshot of it for both (the collector's counters
# keep arriving, once a second, so the live file may move on between two reads).
mkdir -p "$TMP/snap" && cp -p "$D/state/status.json" "$TMP/snap/status.json"
"$TRACER" status --state-dir "$TMP/snap" >"$TMP/status.txt" 2>&1 || e2e_fail "tracer status failed: $(cat "$TMP/status.txt")"
acked=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["spool"]["acked_seq"])' "$TMP/snap/status.json")
grep -q "acknowledged $acked" "$TMP/status.txt" ||
	e2e_fail "tracer status does not show the acknowledged seq: $(cat "$TMP/status.txt")"
