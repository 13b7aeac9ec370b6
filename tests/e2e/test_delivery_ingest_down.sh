#!/usr/bin/env bash
# The ingest stopped for a while during a steady load: the processor keeps
# draining the ring into its spool (the unsent records grow, the failed
# attempts are counted and retried, the ring loses nothing), and once the
# ingest is back on the same port the spool drains: every record in the
# lake exactly once, every process of the load with its exec and exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
dlv_ingest_start
dlv_load_start
dlv_collector_start
dlv_processor_start --set retry_max=1s # a short backoff: the test waits for the drain
dlv_load_go 0
dlv_wait_status upload.batches_acked -gt 0 10 "delivery works before the ingest goes"

dlv_ingest_stop
dlv_status_fresh
acked0=$(dlv_status spool.acked_seq)
durable0=$(dlv_status spool.durable_seq)
records0=$(dlv_status ring.records)
dlv_wait_status upload.net_errors -gt 0 10 "uploads to a closed port fail"
dlv_wait_status upload.retries -gt 0 5 "failed uploads are retried"
dlv_wait_status upload.pending_records -gt 500 10 "the load's records wait in the spool"
sleep 2 # down a while longer: several retries fail
dlv_status_fresh
acked1=$(dlv_status spool.acked_seq)
durable1=$(dlv_status spool.durable_seq)
records1=$(dlv_status ring.records)
pending=$(dlv_status upload.pending_records)
echo "ingest down: ring records $records0 -> $records1, durable_seq $durable0 -> $durable1," \
	"acked_seq $acked0 -> $acked1, pending $pending, net_errors $(dlv_status upload.net_errors)," \
	"retries $(dlv_status upload.retries), last_error '$(dlv_status upload.last_error)'"
[ "$acked1" = "$acked0" ] || e2e_fail "acked_seq moved while the ingest was down: $acked0 -> $acked1"
[ "$records1" -gt "$records0" ] || e2e_fail "the ring was not drained while the ingest was down: ring.records $records0 -> $records1"
[ "$durable1" -gt "$durable0" ] || e2e_fail "the spool did not grow while the ingest was down: durable_seq $durable0 -> $durable1"
[ "$pending" -ge $((durable1 - acked1)) ] || e2e_fail "upload.pending_records $pending, expected durable - acked = $((durable1 - acked1))"
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost $(dlv_status ring.lost) records while the ingest was down (expected 0)"
kill -0 "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor died while the ingest was down: $(tail -3 "$D/processor.err")"

port=$DLV_PORT
dlv_ingest_start
[ "$DLV_PORT" = "$port" ] || e2e_fail "the ingest came back on port $DLV_PORT, expected $port"
dlv_wait_status spool.acked_seq -ge "$durable1" 15 "the spool drains once the ingest is back"
dlv_load_stop
dlv_wait_delivered 20
dlv_check_lake
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost records: $(dlv_status ring.lost)"
