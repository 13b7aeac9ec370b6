#!/usr/bin/env bash
# Orderly restarts during a load. (a) The processor stopped with SIGTERM
# and started again, 3 times, while the collector runs and the load goes
# on: every record in the lake exactly once, nothing lost. (b) The
# collector stopped with SIGTERM and a new one started for the same
# subtree while the processor runs: the processor reads the old ring to its
# end, says it waits, re-attaches to the new ring (ring.attaches + 1), and
# every process of the load (paused while no collector runs) arrives with
# its exec and exit exactly once.
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

# (a)
for n in 1 2 3; do
	sleep "0.$((RANDOM % 5 + 4))"
	kill -TERM "$DLV_PROCESSOR"
	timeout 10 tail --pid="$DLV_PROCESSOR" -f /dev/null || e2e_fail "the processor did not stop on SIGTERM within 10 s (restart $n)"
	wait "$DLV_PROCESSOR"
	rc=$?
	[ "$rc" = 0 ] || e2e_fail "the processor exited $rc on SIGTERM (restart $n), expected 0: $(tail -3 "$D/processor.err")"
	dlv_processor_start
done
dlv_wait_status ring.attaches -ge 1 10 "the restarted processor attaches"
sleep 0.5

# (b)
dlv_load_pause
attaches=$(dlv_status ring.attaches)
attached_lines=$(grep -c "attached to the collector's ring" "$D/processor.err")
kill -TERM "$DLV_COLLECTOR"
timeout 10 tail --pid="$DLV_COLLECTOR" -f /dev/null || e2e_fail "the collector did not stop on SIGTERM within 10 s"
for ((i = 0; i < 50; i++)); do
	grep -q "the collector has gone .*waiting for the next one" "$D/processor.err" && break
	sleep 0.1
done
grep -q "the collector has gone .*waiting for the next one" "$D/processor.err" ||
	e2e_fail "the processor did not say it waits for the next collector: $(tail -3 "$D/processor.err")"
dlv_wait_status ring.attached -eq 0 3 "detached from the old ring"
kill -0 "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor exited when the collector stopped: $(tail -3 "$D/processor.err")"
dlv_collector_start
dlv_wait_status ring.attaches -eq $((attaches + 1)) 10 "the processor re-attaches to the new collector's ring"
[ "$(grep -c "attached to the collector's ring" "$D/processor.err")" -gt "$attached_lines" ] ||
	e2e_fail "the processor did not log its re-attachment: $(tail -3 "$D/processor.err")"
before=$(wc -l <"$D/pids")
dlv_load_resume
# Until 100 more processes ran (1.5 s on an idle machine; longer on a busy one: not a timed test).
for ((i = 0; i < 200; i++)); do
	[ "$(wc -l <"$D/pids")" -gt $((before + 100)) ] && break
	sleep 0.1
done
dlv_load_stop
dlv_wait_delivered 20
echo "processor restarted 3 times; collector restarted: ring.attaches $attaches -> $(dlv_status ring.attaches);" \
	"$(wc -l <"$D/pids") processes, $(($(wc -l <"$D/pids") - before)) after the collector's restart"
[ "$(wc -l <"$D/pids")" -gt $((before + 100)) ] || e2e_fail "the load did not resume after the collector's restart"
dlv_check_lake
[ "$(dlv_status ring.lost)" = 0 ] || e2e_fail "the ring lost records: $(dlv_status ring.lost)"
