#!/usr/bin/env bash
# A processor signing with a key the ingest does not know: the ingest
# refuses every batch with 403 and says why; the processor quarantines each
# one (kept in STATE_DIR/spool/quarantine/, counted, acknowledged in its
# spool so it does not retry forever), keeps running and keeps draining
# the ring; nothing of it reaches the lake. Restarted with the enrolled
# key, the same spool delivers what came after, and the quarantined
# records are not sent again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
"$TRACER" keygen --out "$D/rogue.key" --any-host >"$D/rogue.pub" 2>"$D/keygen2.err" ||
	e2e_fail "tracer keygen --any-host failed: $(cat "$D/keygen2.err")"
chown nobody "$D/rogue.key"
rogue_id=$(awk '{ print $2 }' "$D/rogue.pub")
grep -q "$rogue_id" "$D/keys" && e2e_fail "setup: the second key $rogue_id is enrolled at the ingest"
dlv_ingest_start
dlv_load_start
dlv_collector_start
dlv_processor_start --set "signing_key=$D/rogue.key"
dlv_load_go 0
dlv_wait_status spool.quarantined_batches -ge 3 15 "batches signed by an unknown key are quarantined"
dlv_load_pause
dlv_status_fresh
q_before=$(dlv_status spool.quarantined_batches)
files=$(find "$D/state/spool/quarantine" -name '*.batch' 2>/dev/null | wc -l)
dlv_status_fresh
q_batches=$(dlv_status spool.quarantined_batches) q_records=$(dlv_status spool.quarantined_records)
echo "rogue key: $q_batches batches ($q_records records) quarantined, $files files in quarantine/," \
	"http_4xx $(dlv_status upload.http_4xx), last status $(dlv_status upload.last_http_status), acked_seq $(dlv_status spool.acked_seq)"
[ "$files" -ge "$q_before" ] && [ "$files" -le "$q_batches" ] ||
	e2e_fail "expected one file per quarantined batch ($q_before..$q_batches) in $D/state/spool/quarantine, found $files"
[ "$(dlv_status upload.last_http_status)" = 403 ] || e2e_fail "upload.last_http_status: expected 403, saw $(dlv_status upload.last_http_status)"
[ "$(dlv_status upload.batches_acked)" = 0 ] || e2e_fail "upload.batches_acked: expected 0 with an unknown key, saw $(dlv_status upload.batches_acked)"
[ "$(dlv_status spool.acked_seq)" -gt 0 ] || e2e_fail "quarantined records are not acknowledged in the spool (acked_seq 0): retried forever?"
kill -0 "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor died after a 403: $(tail -3 "$D/processor.err")"
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost $(dlv_status ring.lost) records while batches were refused"
grep -q "key $rogue_id: signing key not enrolled (HTTP 403)" "$D/ingest.err" ||
	e2e_fail "the ingest's log does not name the reason: expected 'key $rogue_id: signing key not enrolled (HTTP 403)', saw: $(grep -m2 refused "$D/ingest.err")"
grep -q "refused records .* for good" "$D/processor.err" ||
	e2e_fail "the processor does not log the refusal: $(grep -m3 upload "$D/processor.err")"
stored=$(dlv_lake_sql 'SELECT count(*) FROM records') batches=$(dlv_lake_sql 'SELECT count(*) FROM batches')
[ "$stored" = 0 ] && [ "$batches" = 0 ] || e2e_fail "the lake stored $stored records in $batches batches signed by an unknown key, expected none"
last_quarantined=$(ls "$D/state/spool/quarantine" | sed -E 's/^[0-9]+-[0-9]+-([0-9]+)\.batch$/\1/' | sort -n | tail -1)

# The enrolled key, the same spool: what was not refused is delivered, what was is not sent again.
kill -TERM "$DLV_PROCESSOR"
timeout 10 tail --pid="$DLV_PROCESSOR" -f /dev/null || e2e_fail "the processor did not stop on SIGTERM"
before=$(wc -l <"$D/pids")
dlv_processor_start
dlv_load_resume
sleep 1
dlv_load_stop
dlv_wait_delivered 20
after=$(wc -l <"$D/pids")
min_seq=$(dlv_lake_sql 'SELECT min(seq) FROM records')
echo "enrolled key: lake from seq $min_seq (last quarantined $last_quarantined); $((after - before)) processes after the pause"
[ "$min_seq" -gt "$last_quarantined" ] ||
	e2e_fail "the lake has seq $min_seq, which was quarantined (up to $last_quarantined): quarantined records sent again"
dlv_check_lake --allow-gaps --tail-pids $((after - before))
