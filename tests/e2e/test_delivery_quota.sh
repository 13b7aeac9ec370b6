#!/usr/bin/env bash
# The spool's quota reached while the ingest is away: with the smallest
# quota (16 MiB, 1 MiB segments) and a load that spools several times that
# (150 processes each opening 1024 distinct files with long paths: one
# TR_FILE record of ~300 bytes per first open), the processor evicts the
# oldest segments and counts them, the spool stays within quota + one
# segment, and collector and processor stay alive and keep up. Once the
# ingest is there, the newest records arrive (the last processes of the
# load, exec and exit once each), the lake records the hole as a gap, and
# nothing arrives twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
dlv_ingest_start # for a port (and the lake); then away
dlv_ingest_stop
QUOTA=$((16 << 20)) SEGMENT=$((1 << 20)) TAIL=300

# 1024 files under a long directory name, made before tracing starts
dir=$D/files/$(printf 'a%.0s' {1..120})/$(printf 'b%.0s' {1..100})
mkdir -p "$dir" && python3 -c '
import sys
for i in range(1024):
    open(f"{sys.argv[1]}/file-{i:04d}", "w").close()' "$dir" || e2e_fail "setup: cannot create files in $dir"
cat >"$D/heavy.py" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
names = [os.path.join(d, x) for x in sorted(os.listdir(d))]
with open(sys.argv[3], "w") as out:
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            for p in names:
                os.close(os.open(p, os.O_RDONLY))
            os._exit(0)
        out.write(f"{pid}\n")
        os.waitpid(pid, 0)
PY

dlv_load_start python3 "$D/heavy.py" "$dir" 150 "$D/heavy.pids"
dlv_collector_start
dlv_processor_start --set spool_quota=16MiB --set segment_size=1MiB --set retry_max=1s
dlv_wait_status ring.attaches -ge 1 10 "the processor attaches"
dlv_load_go "$TAIL"
max_status=0 max_disk=0
for ((i = 0; i < 600; i++)); do
	b=$(dlv_status spool.bytes_on_disk)
	[ "$b" -gt "$max_status" ] && max_status=$b
	disk=$(find "$D/state/spool" -maxdepth 1 -name '*.seg' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	[ "$disk" -gt "$max_disk" ] && max_disk=$disk
	[ -f "$D/pids.done" ] && break
	sleep 0.1
done
dlv_load_wait
dlv_status_fresh
appended=$(dlv_status spool.records_appended) evicted=$(dlv_status spool.evicted_records)
echo "ingest away: $appended records appended ($(($(dlv_status spool.next_seq) - 1)) seqs), evicted $evicted records" \
	"($(dlv_status spool.evicted_bytes) bytes), max bytes_on_disk $max_status (status) / $max_disk (segment files)," \
	"ring.lost $(dlv_status ring.lost), net_errors $(dlv_status upload.net_errors)"
[ "$evicted" -gt 0 ] || e2e_fail "spool.evicted_records: expected > 0 after $appended records with a 16 MiB quota, saw $evicted"
[ "$max_status" -le $((QUOTA + SEGMENT)) ] ||
	e2e_fail "spool.bytes_on_disk reached $max_status, expected <= quota + one segment = $((QUOTA + SEGMENT))"
[ "$max_disk" -le $((QUOTA + SEGMENT)) ] ||
	e2e_fail "the spool's segment files reached $max_disk bytes, expected <= quota + one segment = $((QUOTA + SEGMENT))"
kill -0 "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor died at the quota: $(tail -3 "$D/processor.err")"
kill -0 "$DLV_COLLECTOR" 2>/dev/null || e2e_fail "the collector died at the quota: $(tail -3 "$D/collector.err")"
[ "$(dlv_status ring.attached)" = 1 ] || e2e_fail "the processor is not attached to the ring at the quota"
# Eviction waits for two small fsyncs (the ledger): on a loaded machine this load can outrun the
# 4 MiB ring meanwhile. A full ring drops and counts; what must hold is that the lake is told.
ring_lost=$(dlv_status ring.lost)

dlv_ingest_start
dlv_wait_delivered 20
dlv_check_lake --allow-gaps --tail-pids "$TAIL"
gaps=$(dlv_lake_sql 'SELECT count(*) FROM gaps')
gap_seqs=$(dlv_lake_sql 'SELECT sum(to_seq - from_seq + 1 - filled) FROM gaps')
losses=$(dlv_lake_sql "SELECT count(*) FROM losses WHERE reason = 'evicted'")
lost=$(dlv_lake_sql "SELECT sum(records) FROM losses WHERE reason = 'evicted'")
first=$(dlv_lake_sql 'SELECT min(seq) FROM records')
echo "lake: first seq $first, $gaps gaps of $gap_seqs seqs; $losses TL_LOSS evicted records for $lost records"
[ "$gaps" -gt 0 ] || e2e_fail "the lake recorded no gap (table gaps) although $evicted records were evicted; first seq $first"
[ "$gap_seqs" -gt 0 ] && [ "$gap_seqs" -le "$evicted" ] ||
	e2e_fail "the lake's gaps miss $gap_seqs seqs, expected 1..$evicted (at most the evicted records)"
[ "$losses" -gt 0 ] && [ "$lost" -le "$evicted" ] && [ "$lost" -gt 0 ] ||
	e2e_fail "the lake's losses table says $lost records evicted in $losses TL_LOSS records; the processor evicted $evicted"
ring_told=$(dlv_lake_sql "SELECT coalesce(sum(records), 0) FROM losses WHERE reason = 'ring'")
# (A TL_LOSS record can itself be evicted when the quota is still being hit after it: at most equal.)
[ "$ring_told" -le "$ring_lost" ] ||
	e2e_fail "the ring lost $ring_lost records but the lake was told of $ring_told (TL_LOSS ring)"
echo "ring: $ring_lost records lost at the quota, $ring_told of them reported to the lake"
