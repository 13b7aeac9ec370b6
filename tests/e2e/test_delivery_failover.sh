#!/usr/bin/env bash
# upload_url names two ingests: two tracer-ingest processes on their own
# ports, writing one SQLite lake. (a) The first is down from the start:
# the first batch fails over to the second, which then keeps the batches
# (the first is not tried again while the second works), and everything
# reaches the lake through it; tracer status names the URL in use and the
# one that failed. (b) Under a steady load, the ingest in use is killed
# with -9 with a batch in its hands, four times, each time the other one
# (restarted on its port after its own kill): the processor sends that
# batch to the other and carries on with it, and at the end every record
# seq of the host is in the lake exactly once with no hole, every batch is
# stored once (none overlaps another, every chain link holds, no record
# came twice), every process of the load has one exec and one exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init

# The two ingests, A (first in upload_url) and B, each on a port of its own.
dlv_ingest_start
PID_A=$DLV_INGEST A_PORT=$DLV_PORT A_URL=$DLV_URL
DLV_PORT=0
dlv_ingest_start
PID_B=$DLV_INGEST B_PORT=$DLV_PORT B_URL=$DLV_URL
[ "$A_PORT" != "$B_PORT" ] || e2e_fail "both ingests on port $A_PORT"

# wait_in_use URL SECONDS WHY: until the processor sends to URL.
wait_in_use() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(dlv_status upload.url_in_use)" = "$1" ] && return 0
		sleep 0.1
	done
	e2e_fail "upload.url_in_use is '$(dlv_status upload.url_in_use)', expected $1 within $2 s ($3);" \
		"processor: $(tail -3 "$D/processor.err")"
}

# wait_in_hands PORT: until the stopped ingest on PORT holds a batch: bytes it has not read (ss: Recv-Q at its
# end of a connection, the kernel's own count), or a request it read before it stopped and has not answered
# (at the processor's end of the connection, data sent after the last data received: lastsnd < lastrcv).
wait_in_hands() {
	local i
	for ((i = 0; i < 150; i++)); do
		ss -Htn state established "( sport = :$1 )" | awk '$1 > 0 { found = 1 } END { exit !found }' && return 0
		ss -Htin state established "( dport = :$1 )" | awk '{
			snd = rcv = -1
			for (f = 1; f <= NF; f++) {
				if ($f ~ /^lastsnd:/) snd = substr($f, 9) + 0
				if ($f ~ /^lastrcv:/) rcv = substr($f, 9) + 0
			}
			if (snd >= 0 && (rcv < 0 || snd < rcv)) found = 1
		} END { exit !found }' && return 0
		sleep 0.1
	done
	e2e_fail "no batch reached the stopped ingest on port $1 within 15 s; processor: $(tail -3 "$D/processor.err")"
}

# (a) The first is down from the start.
DLV_INGEST=$PID_A
dlv_ingest_stop
DLV_URL="$A_URL,$B_URL"
dlv_load_start
dlv_collector_start
dlv_processor_start --set retry_max=1s # a short rest: (b) goes back to an ingest that failed before
dlv_load_go 0
dlv_wait_status upload.batches_acked -ge 5 20 "batches reach the lake through the second ingest"
wait_in_use "$B_URL" 1 "the second ingest took the batches"
dlv_load_pause
dlv_wait_delivered 30
dlv_status_fresh
[ "$(dlv_status upload.failed_url)" = "$A_URL" ] ||
	e2e_fail "upload.failed_url is '$(dlv_status upload.failed_url)', expected the first URL $A_URL"
[ "$(dlv_status upload.net_errors)" = 1 ] && [ "$(dlv_status upload.failovers)" = 1 ] ||
	e2e_fail "expected one failed attempt at the first URL and one failover, then the second kept the" \
		"batches: net_errors $(dlv_status upload.net_errors), failovers $(dlv_status upload.failovers)"
grep -q "to $A_URL: .*(trying $B_URL)" "$D/processor.err" ||
	e2e_fail "the processor does not log the failover: $(grep -m3 upload "$D/processor.err")"
dlv_check_lake
"$TRACER" status --state-dir "$D/state" >"$TMP/status.txt" 2>&1 || e2e_fail "tracer status failed: $(cat "$TMP/status.txt")"
grep -q "^upload:  to $B_URL: " "$TMP/status.txt" && grep -q "the last failure at $A_URL" "$TMP/status.txt" ||
	e2e_fail "tracer status does not name the URL in use and the one that failed: $(cat "$TMP/status.txt")"
echo "(a) first ingest down: $(dlv_status upload.batches_acked) batches through the second"

# (b) The ingest in use killed with -9 mid-batch, four times: stopped first (SIGSTOP), so that the next
# batch is sent to it and waits for an answer that never comes, then killed.
DLV_PORT=$A_PORT
dlv_ingest_start
PID_A=$DLV_INGEST
dlv_load_resume
for ((kills = 1; kills <= 4; kills++)); do
	sleep "0.$((RANDOM % 9 + 1))"
	if [ "$(dlv_status upload.url_in_use)" = "$A_URL" ]; then
		victim=$PID_A port=$A_PORT other=$B_URL
	else
		victim=$PID_B port=$B_PORT other=$A_URL
	fi
	kill -STOP "$victim"
	wait_in_hands "$port" # a batch is sent within batch_interval; the stopped ingest never reads it
	kill -KILL "$victim"
	wait "$victim" 2>/dev/null
	wait_in_use "$other" 15 "kill $kills: the processor carries on with the other ingest"
	acked=$(dlv_status spool.acked_seq)
	dlv_wait_status spool.acked_seq -gt "$acked" 15 "kill $kills: batches acknowledged by the other ingest"
	DLV_PORT=$port
	dlv_ingest_start
	[ "$DLV_PORT" = "$port" ] || e2e_fail "the ingest came back on port $DLV_PORT, expected $port"
	if [ "$port" = "$A_PORT" ]; then PID_A=$DLV_INGEST; else PID_B=$DLV_INGEST; fi
done
dlv_load_stop
dlv_wait_delivered 60
# Each kill cut a request (the answer never came: "Empty reply", "Recv failure", ...), or, when the batch had
# gone out on a connection kept from before, libcurl sent it again on a new one (as it does when a reused
# connection dies before any answer) and that connect was refused: either way one failed attempt and one
# failover per kill, after the one of (a).
cut=$(grep -c "Empty reply\|Recv failure\|Connection reset\|Send failure" "$D/processor.err")
echo "(b) 4 kills: failovers $(dlv_status upload.failovers), net_errors $(dlv_status upload.net_errors), $cut requests cut"
[ "$(dlv_status upload.failovers)" = 5 ] && [ "$(dlv_status upload.net_errors)" = 5 ] ||
	e2e_fail "expected one failed attempt and one failover per kill (and the one of (a)): failovers" \
		"$(dlv_status upload.failovers), net_errors $(dlv_status upload.net_errors): $(grep upload "$D/processor.err")"
dlv_check_lake
read -r n distinct top <<<"$(dlv_lake_sql "SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || max(seq) FROM records")"
[ "$n" = "$distinct" ] && [ "$n" = "$top" ] ||
	e2e_fail "records: $n rows, $distinct distinct seqs, the highest $top: expected one row per seq 1..$top"
overlaps=$(dlv_lake_sql "SELECT count(*) FROM batches a JOIN batches b ON a.host_id = b.host_id AND
	a.batch_id < b.batch_id AND a.first_seq <= b.last_seq AND b.first_seq <= a.last_seq")
[ "$overlaps" = 0 ] || e2e_fail "$overlaps pairs of stored batches share records: a batch was stored twice"
[ "$(dlv_lake_sql "SELECT count(*) FROM batches WHERE chain <> 'linked'")" = 1 ] ||
	e2e_fail "batches whose chain is not linked to the one before: $(dlv_lake_sql "SELECT group_concat(batch_seq || ' ' || chain) FROM batches WHERE chain <> 'linked'") (only the first may be)"
[ "$(dlv_lake_sql "SELECT sum(records_duplicate) FROM batches")" = 0 ] ||
	e2e_fail "$(dlv_lake_sql "SELECT sum(records_duplicate) FROM batches") records came twice"
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost records: $(dlv_status ring.lost)"
echo "lake: $n records, seqs 1..$top, $(dlv_lake_sql "SELECT count(*) FROM batches") batches"
