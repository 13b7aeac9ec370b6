#!/usr/bin/env bash
# Key rotation: the processor announces signing_key_next in a batch signed
# with its current key; the ingest enrols the new key for this host from
# that batch; later batches are signed with the new key, which the keys
# file never listed. After a restart the processor signs with the new key
# at once, and with the rotation finished in the config (signing_key = the
# new key) too. Nothing lost or doubled along the way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
"$TRACER" keygen --out "$D/next.key" >"$D/next.pub" 2>/dev/null || e2e_fail "tracer keygen (next key) failed"
chown nobody "$D/next.key"
old=$(awk '{ print $2 }' "$D/keys")
new=$(awk '{ print $2 }' "$D/next.pub")
dlv_ingest_start
dlv_load_start
dlv_collector_start
dlv_processor_start --set "signing_key_next=$D/next.key"
dlv_load_go 0
sleep 1.5
dlv_load_pause
dlv_wait_delivered 30
grep -q "announcing the next signing key $new" "$D/processor.err" ||
	e2e_fail "the processor did not announce $new: $(tail -3 "$D/processor.err")"
[ "$(dlv_lake_sql "SELECT count(*) FROM keys WHERE key_id = '$new' AND source = 'rotation' AND announced_by = '$old'")" = 1 ] ||
	e2e_fail "the lake did not enrol $new by rotation from $old: $(dlv_lake_sql 'SELECT group_concat(key_id || "/" || source) FROM keys')"
# Once the announcement is in, batches are signed with the new key (the load's records came after it).
[ "$(dlv_lake_sql "SELECT count(*) FROM batches WHERE key_id = '$new'")" -ge 1 ] ||
	e2e_fail "no batch signed with the new key $new"
first_new=$(dlv_lake_sql "SELECT min(batch_seq) FROM batches WHERE key_id = '$new'")
[ "$(dlv_lake_sql "SELECT count(*) FROM batches WHERE key_id = '$old' AND batch_seq > $first_new")" = 0 ] ||
	e2e_fail "batches signed with the old key after the switch"
# A restart with the rotation still configured: the new key at once, no second announcement.
kill -TERM "$DLV_PROCESSOR"
wait "$DLV_PROCESSOR"
dlv_processor_start --set "signing_key_next=$D/next.key"
dlv_load_resume
sleep 1
dlv_load_pause
dlv_wait_delivered 30
[ "$(grep -c "announcing the next signing key" "$D/processor.err")" = 1 ] ||
	e2e_fail "the key was announced again after a restart"
# The rotation finished in the config: signing_key is the new key, no next.
kill -TERM "$DLV_PROCESSOR"
wait "$DLV_PROCESSOR"
dlv_processor_start --set "signing_key=$D/next.key"
dlv_load_resume
sleep 1
dlv_load_stop
dlv_wait_delivered 30
[ "$(dlv_lake_sql "SELECT count(*) FROM batches WHERE key_id = '$old' AND batch_seq > $first_new")" = 0 ] ||
	e2e_fail "batches signed with the old key after the rotation"
dlv_check_lake
