#!/usr/bin/env bash
# An upload endpoint that takes the request and never answers (hang_proxy.py
# in front of the real ingest). With transfer_timeout=1s the processor
# times out, counts it and retries, and meanwhile keeps draining the ring
# into its spool (ring records, released position and durable seq keep
# rising; the ring loses nothing). Then the proxy forwards the batch to the
# ingest but still drops the answer: the lake has a batch the processor
# believes unsent, and its retry must not store anything twice. With the
# proxy answering again, every record arrives exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
dlv_ingest_start
flag=$D/hang
python3 "$DLV_DIR/hang_proxy.py" --upstream "127.0.0.1:$DLV_PORT" --flag "$flag" --port-file "$D/proxy.port" \
	--log "$D/proxy.log" 2>"$D/proxy.err" &
DLV_PIDS+=("$!")
for ((i = 0; i < 50; i++)); do
	[ -s "$D/proxy.port" ] && break
	sleep 0.1
done
[ -s "$D/proxy.port" ] || e2e_fail "hang_proxy.py did not start: $(tail -3 "$D/proxy.err")"
DLV_URL=http://127.0.0.1:$(cat "$D/proxy.port")/v1/batches
dlv_load_start
dlv_collector_start
dlv_processor_start --set transfer_timeout=1s --set retry_max=1s
dlv_load_go 0
dlv_wait_status upload.batches_acked -gt 0 10 "delivery through the proxy works before it hangs"

# Phase 1: requests are taken and never answered.
: >"$flag"
dlv_status_fresh
acked0=$(dlv_status spool.acked_seq)
errors0=$(dlv_status upload.net_errors)
dlv_wait_status upload.net_errors -ge $((errors0 + 2)) 8 "two uploads time out after transfer_timeout=1s"
last_error=$(dlv_status upload.last_error)
case $last_error in
*[Tt]imeout* | *"timed out"*) ;;
*) e2e_fail "upload.last_error: expected a timeout, saw '$last_error'" ;;
esac
prev_records=0 prev_durable=0 prev_released=0
for n in 1 2 3; do
	dlv_status_fresh
	records=$(dlv_status ring.records) durable=$(dlv_status spool.durable_seq) released=$(dlv_status ring.released_pos)
	echo "hung, sample $n: ring.records $records, spool.durable_seq $durable, ring.released_pos $released," \
		"acked_seq $(dlv_status spool.acked_seq), net_errors $(dlv_status upload.net_errors), retries $(dlv_status upload.retries)"
	[ "$records" -gt "$prev_records" ] && [ "$durable" -gt "$prev_durable" ] && [ "$released" -gt "$prev_released" ] ||
		e2e_fail "the ring was not drained while the upload hung: ring.records $prev_records -> $records," \
			"durable_seq $prev_durable -> $durable, released_pos $prev_released -> $released (each expected to rise)"
	prev_records=$records prev_durable=$durable prev_released=$released
done
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost $(dlv_status ring.lost) records while the upload hung (expected 0)"
# a batch sent just before the flag may have been acknowledged; none after
acked1=$(dlv_status spool.acked_seq)
[ "$(grep -c '^hung' "$D/proxy.log")" -ge 2 ] || e2e_fail "the proxy hung $(grep -c '^hung' "$D/proxy.log") requests, expected >= 2"
[ "$(dlv_status upload.retries)" -gt 0 ] || e2e_fail "no retry counted after the timeouts"

# Phase 2: the lake stores the batch, the processor never hears so.
echo forward >"$flag"
errors1=$(dlv_status upload.net_errors)
for ((i = 0; i < 80; i++)); do
	grep -q '^forwarded-hung 200' "$D/proxy.log" && break
	sleep 0.1
done
grep -q '^forwarded-hung 200' "$D/proxy.log" ||
	e2e_fail "the proxy did not get a batch stored while hiding the answer: $(tail -3 "$D/proxy.log")"
dlv_wait_status upload.net_errors -gt "$errors1" 5 "the hidden answer times out"
[ "$(dlv_status spool.acked_seq)" = "$acked1" ] ||
	e2e_fail "acked_seq moved while no answer reached the processor: $acked1 -> $(dlv_status spool.acked_seq)"

# Phase 3: answers again.
rm -f "$flag"
dlv_wait_status spool.acked_seq -gt "$acked1" 10 "uploads succeed once the proxy answers"
dlv_load_stop
dlv_wait_delivered 20
echo "proxy: $(sort "$D/proxy.log" | cut -d' ' -f1-2 | uniq -c | tr -s ' \n' ' '); acked before the hang $acked0"
dlv_check_lake
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost records: $(dlv_status ring.lost)"
