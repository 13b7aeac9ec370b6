#!/usr/bin/env bash
# A damaged spool: a processor without upload spools a load, is stopped,
# and its spool is damaged on disk: bits flipped in one frame in the middle
# of a segment, the last segment cut in the middle of its last frame, the
# ledger deleted. The next processor (with upload) recovers without a
# crash, counts what it found (corrupt_frames, torn_bytes, ledger_resets),
# and delivers everything else: every seq spooled is in the lake exactly
# once except exactly the two damaged ones, every process of the load too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
spool=$D/state/spool

# Phase 1: spool only (upload_url empty), small segments so there are several.
dlv_load_start
dlv_collector_start
dlv_processor_start --set segment_size=1MiB
dlv_wait_status ring.attaches -ge 1 10 "the processor attaches"
dlv_load_go 2500
dlv_load_wait
sleep 1.5 # the collector's next counters record: the last frame is not one of the load's
kill -TERM "$DLV_PROCESSOR"
timeout 10 tail --pid="$DLV_PROCESSOR" -f /dev/null || e2e_fail "the processor did not stop on SIGTERM within 10 s"
spooled=$(($(dlv_status spool.next_seq) - 1))
[ "$(dlv_status upload.enabled)" = 0 ] || e2e_fail "phase 1 should not upload (upload.enabled $(dlv_status upload.enabled))"
[ -f "$spool/ledger" ] || e2e_fail "no ledger in $spool after phase 1: $(ls "$spool")"

# The damage. Prints: LAST_SEQ (cut) FLIPPED_SEQ TORN_BYTES (what is left of the cut frame)
damage=$(python3 - "$spool" <<'PY'
import os, struct, sys
spool = sys.argv[1]
segs = sorted(f for f in os.listdir(spool) if f.endswith('.seg'))
if len(segs) < 2:
    sys.exit(f'need 2 segments at least, found {segs}')

def frames(path):
    data = open(path, 'rb').read()
    off, out = 56, []
    while off + 32 <= len(data):
        seq, _, _, rtype, _, length, _ = struct.unpack_from('<QQIHHII', data, off)
        size = 32 + ((length + 7) & ~7)
        if off + size > len(data):
            break
        out.append((off, size, seq, rtype, length))
        off += size
    return out

# one frame in the middle of a middle segment (not the last): not an exec or exit of the load
path = os.path.join(spool, segs[(len(segs) - 1) // 2])
fr = frames(path)
cand = [f for f in fr[len(fr) // 2:-1] if f[3] not in (16, 18) and f[4] >= 16]
if not cand:
    sys.exit(f'no frame to damage in {path}')
off, size, flipped, _, length = cand[0]
with open(path, 'r+b') as f:
    f.seek(off + 32 + length // 2)
    b = f.read(4)
    f.seek(off + 32 + length // 2)
    f.write(bytes(x ^ 0x5a for x in b))
# the last segment cut in the middle of its last frame
path = os.path.join(spool, segs[-1])
fr = frames(path)
off, size, torn, rtype, _ = fr[-1]
if rtype in (16, 18):
    sys.exit(f'the last frame (seq {torn}) is an exec or exit: the load was still running?')
os.truncate(path, off + size // 2)
os.unlink(os.path.join(spool, 'ledger'))
print(torn, flipped, size // 2)
PY
) || e2e_fail "could not damage the spool: $damage"
read -r last flipped torn_expected <<<"$damage"
echo "phase 1: $spooled records spooled (last on disk $last); damaged seqs $flipped (bits flipped) and $last (cut, $torn_expected bytes left), ledger deleted"
[ "$last" = "$spooled" ] || e2e_fail "the last frame on disk is seq $last, the status said next_seq-1 = $spooled"

# Phase 2: recovery, then upload.
dlv_ingest_start
dlv_processor_start --set segment_size=1MiB
dlv_wait_status ring.attaches -ge 1 10 "the processor recovers its spool and attaches"
dlv_status_fresh
kill -0 "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "the processor died on the damaged spool: $(tail -3 "$D/processor.err")"
corrupt=$(dlv_status spool.corrupt_frames) torn=$(dlv_status spool.torn_bytes) resets=$(dlv_status spool.ledger_resets)
echo "recovery: corrupt_frames $corrupt, torn_bytes $torn, ledger_resets $resets, recovery $(($(dlv_status spool.recovery_ns) / 1000000)) ms"
[ "$corrupt" = 1 ] || e2e_fail "spool.corrupt_frames: expected 1 (one frame flipped), saw $corrupt"
[ "$torn" = "$torn_expected" ] || e2e_fail "spool.torn_bytes: expected $torn_expected (half of the last frame), saw $torn"
[ "$resets" -ge 1 ] || e2e_fail "spool.ledger_resets: expected >= 1 (ledger deleted), saw $resets"
dlv_wait_delivered 20
# Recovery hands the torn frame's seq out again (next_seq follows the last good frame; no ledger says
# it was ever sent): the check stops before it.
in_lake=$(dlv_lake_sql "SELECT count(*) FROM records WHERE seq < $last")
expect=$((last - 1 - corrupt))
echo "lake: $in_lake records below seq $last, expected $((last - 1)) spooled - $corrupt corrupt = $expect"
[ "$in_lake" = "$expect" ] || e2e_fail "the lake has $in_lake records below seq $last, expected $expect"
dlv_check_lake --allow-gaps --seq-range 1 $((last - 1)) --lost "$flipped"
