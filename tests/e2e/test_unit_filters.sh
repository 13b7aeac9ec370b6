#!/usr/bin/env bash
# The daemons start and deliver under their units' own confinement, as far
# as it can be reproduced without systemd as PID 1: each runs under the
# exact system call filter its unit gives it (SystemCallFilter= lines of
# systemd/*.service.in resolved with this machine's systemd, @default added,
# every other call EPERM: tests/units/unit_exec), no_new_privs, the unit's
# capability bounding set (collector) or its unprivileged user from the
# start (processor, ingest). Then: the collector becomes ready, the ingest
# serves, the processor attaches, spools and has records acknowledged by
# the ingest - the whole chain under the units' filters. And a filter
# without seccomp() or without the landlock_*() calls - as the units had
# before they allowed them - stops the processor at start-up with a
# message, rather than letting it run unconfined: the emulation can fail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
UX=$B/testbin/unit_exec
UNITS=$(cd "$(dirname "$0")/../../systemd" && pwd)
[ -x "$UX" ] || e2e_fail "not built: $UX (make $UX)"
command -v systemd-analyze >/dev/null || e2e_fail "systemd-analyze is missing (make deps)"
for u in collector processor ingest; do
	python3 "$(dirname "$0")/../units/unit-syscalls.py" "$UNITS/tracer-$u.service.in" >"$TMP/$u.allowed" ||
		e2e_fail "cannot resolve tracer-$u's SystemCallFilter="
	echo "tracer-$u: $(wc -l <"$TMP/$u.allowed") system calls allowed by its unit"
done
nobody=$(id -u nobody)
nogroup=$(id -g nobody)
# A command, not a function: backgrounded, $! must be the daemon's own pid (setpriv and unit_exec exec it).
as_nobody=(setpriv --reuid "$nobody" --regid "$nogroup" --clear-groups --inh-caps=-all)

# The collector: root with the unit's bounding set, under the unit's filter.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNITS/tracer-collector.service.in" | tr 'A-Z' 'a-z' | sed 's/cap_//g')
set=-all
for c in $caps; do set="$set,+$c"; done
rm -f "$D/collector.ready"
setpriv --bounding-set "$set" --inh-caps=-all "$UX" "$TMP/collector.allowed" -- "$B/tracer-collector" \
	--socket "$D/run/collector.sock" --consumer-uid "$nobody" --ready-fd 3 3>"$D/collector.ready" \
	2>>"$D/collector.err" &
DLV_PIDS+=("$!")
for _ in $(seq 300); do grep -q ready "$D/collector.ready" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$D/collector.ready" ||
	e2e_fail "the collector did not start under its unit's filter and capabilities: $(tail -3 "$D/collector.err")"
echo "collector: ready under its unit's filter"

# The ingest: its user from the start (nobody here), under the unit's filter.
mkdir -p "$D/lake" && chown nobody "$D/lake" && chmod 644 "$D/keys"
"${as_nobody[@]}" "$UX" "$TMP/ingest.allowed" -- "$B/tracer-ingest" --listen 127.0.0.1:0 --db "$D/lake/lake.db" \
	--keys "$D/keys" --ready-fd 3 3>"$D/ingest.ready" 2>>"$D/ingest.err" &
DLV_PIDS+=("$!")
for _ in $(seq 100); do grep -q '^ready ' "$D/ingest.ready" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^ready/ { print $2 }' "$D/ingest.ready")
[ -n "$port" ] || e2e_fail "the ingest did not start under its unit's filter: $(tail -3 "$D/ingest.err")"
echo "ingest: serving on port $port under its unit's filter"

# The processor: its user from the start, under the unit's filter; it must deliver.
processor_args=(--set "state_dir=$D/state" --set "runtime_dir=$D/run" --set processor_user=nobody
	--set "upload_url=http://127.0.0.1:$port/v1/batches" --set "signing_key=$D/signing.key"
	--set batch_interval=100ms)
"${as_nobody[@]}" "$UX" "$TMP/processor.allowed" -- "$B/tracer-processor" "${processor_args[@]}" 2>>"$D/processor.err" &
DLV_PROCESSOR=$!
DLV_PIDS+=("$DLV_PROCESSOR")
for _ in $(seq 150); do
	[ "$(dlv_status spool.acked_seq)" -gt 0 ] 2>/dev/null && break
	kill -0 "$DLV_PROCESSOR" 2>/dev/null || break
	sleep 0.1
done
[ "$(dlv_status spool.acked_seq)" -gt 0 ] 2>/dev/null ||
	e2e_fail "under its unit's filter the processor delivered nothing: $(tail -5 "$D/processor.err")"
echo "processor: records acknowledged by the ingest (seq $(dlv_status spool.acked_seq)) under its unit's filter"
kill -TERM "$DLV_PROCESSOR"
wait "$DLV_PROCESSOR"
rc=$?
[ "$rc" = 0 ] || e2e_fail "the processor exited $rc on SIGTERM under its unit's filter: $(tail -3 "$D/processor.err")"

# Control: without seccomp() in the filter the processor must refuse to start, and say why.
grep -vx seccomp "$TMP/processor.allowed" >"$TMP/no-seccomp.allowed"
"${as_nobody[@]}" "$UX" "$TMP/no-seccomp.allowed" -- "$B/tracer-processor" "${processor_args[@]}" 2>"$TMP/no-seccomp.err" &
pid=$!
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
	kill -KILL "$pid"
	e2e_fail "the processor ran although it could not install its seccomp filter"
fi
wait "$pid"
rc=$?
[ "$rc" != 0 ] || e2e_fail "the processor exited 0 without its seccomp filter"
grep -q 'seccomp' "$TMP/no-seccomp.err" || e2e_fail "no word of seccomp in: $(cat "$TMP/no-seccomp.err")"
echo "control: without seccomp() the processor stops: $(grep -m1 seccomp "$TMP/no-seccomp.err")"

# Control: without the landlock_* calls the collector and the processor refuse to start, and say why
# (a kernel without Landlock is another matter: they run, and warn).
grep -v '^landlock_' "$TMP/processor.allowed" >"$TMP/no-landlock.allowed"
"${as_nobody[@]}" "$UX" "$TMP/no-landlock.allowed" -- "$B/tracer-processor" "${processor_args[@]}" \
	2>"$TMP/no-landlock.err"
rc=$?
[ "$rc" != 0 ] || e2e_fail "the processor exited 0 without Landlock"
grep -q 'Landlock refused' "$TMP/no-landlock.err" || e2e_fail "no word of Landlock in: $(cat "$TMP/no-landlock.err")"
echo "control: without landlock_*() the processor stops: $(grep -m1 'Landlock refused' "$TMP/no-landlock.err")"
