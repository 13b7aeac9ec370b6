#!/usr/bin/env bash
# The daemons confine themselves, also when started by hand (issue 6), proved
# from outside and from inside, on this kernel:
#
# - outside: the collector and the processor in daemon mode, once ready, show
#   no capability, Seccomp 2, NoNewPrivs 1, non-root and different uids; they
#   tell systemd READY=1 on $NOTIFY_SOCKET only then, WATCHDOG=1 while
#   running, STOPPING=1 on SIGTERM;
# - inside: the test builds ($B/testbin/, TRACER_TEST_TRIGGERS) make, once
#   their sandbox is in force, the system call or open that
#   $TRACER_TEST_TRIGGER names. A forbidden system call kills the process
#   (SIGSYS); the collector cannot open a socket of any family; neither can
#   open a file outside its directories though the file modes allow it
#   (Landlock); the processor reaches TCP only on the upload's ports, cannot
#   make an io_uring ring, fork, exec, ptrace or map executable memory.
# - the installed binaries carry no trigger.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
TB=$B/testbin
for f in "$TB/tracer-collector" "$TB/tracer-processor"; do
	[ -x "$f" ] || e2e_fail "not built: $f (make $f)"
	grep -q TRACER_TEST_TRIGGER "$f" || e2e_fail "$f has no test trigger compiled in"
done
for f in "$B/tracer-collector" "$B/tracer-processor"; do
	! grep -q TRACER_TEST_TRIGGER "$f" || e2e_fail "$f, a binary to install, has the test trigger compiled in"
done

# systemd's side of sd_notify: a datagram socket; every message received, one per line, into a file.
notify_listen() { # SOCKET OUT
	python3 - "$1" "$2" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
import os
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(4096).decode() + "\n")
PY
	DLV_PIDS+=("$!")
	for _ in $(seq 50); do [ -S "$1" ] && return 0; sleep 0.1; done
	e2e_fail "the notify listener did not start"
}

wait_for() { # FILE PATTERN SECONDS WHAT
	for _ in $(seq $(($3 * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	e2e_fail "$4: no '$2' in $1 within $3 s: $(cat "$1" 2>/dev/null)"
}

nobody=$(id -u nobody)
rulesdir=$TMP/rules.d
mkdir -p "$rulesdir" && chmod 755 "$rulesdir"
echo "env MY_RUN_TAG" >"$rulesdir/collector.rules" && chmod 644 "$rulesdir/collector.rules"
# A directory anyone may write and a file anyone may read, outside every daemon's directories:
# the file modes allow what the sandbox must refuse.
open_dir=$TMP/open && mkdir -p "$open_dir" && chmod 1777 "$open_dir"
echo public >"$TMP/public" && chmod 644 "$TMP/public"

# ---- the collector, from outside -------------------------------------------------
notify_listen "$TMP/collector.notify" "$TMP/collector.msgs"
NOTIFY_SOCKET=$TMP/collector.notify WATCHDOG_USEC=1000000 "$B/tracer-collector" \
	--socket "$D/run/collector.sock" --consumer-uid "$nobody" --rules "$rulesdir/collector.rules" \
	2>>"$D/collector.err" &
collector=$!
DLV_PIDS+=("$collector")
wait_for "$TMP/collector.msgs" '^READY=1$' 30 "the collector's readiness"
cp "/proc/$collector/status" "$TMP/collector.status"
wait_for "$TMP/collector.msgs" '^WATCHDOG=1$' 5 "the collector's watchdog"

# ---- the processor, from outside (daemon mode, spooling and uploading) -----------
dlv_ingest_start
notify_listen "$TMP/processor.notify" "$TMP/processor.msgs"
NOTIFY_SOCKET=$TMP/processor.notify WATCHDOG_USEC=1000000 dlv_processor_start
processor=$DLV_PROCESSOR
wait_for "$TMP/processor.msgs" '^READY=1$' 30 "the processor's readiness"
cp "/proc/$processor/status" "$TMP/processor.status"
wait_for "$TMP/processor.msgs" '^WATCHDOG=1$' 5 "the processor's watchdog"
python3 "$CHECK" privileges "$TMP/collector.status" "$TMP/processor.status" || e2e_fail "privilege check failed"
# It still spools and uploads under its sandbox: the collector's counters reach the lake.
for _ in $(seq 100); do
	[ "$(dlv_status spool.acked_seq)" -gt 0 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(dlv_status spool.acked_seq)" -gt 0 ] || e2e_fail "nothing was acknowledged by the ingest: $(tail -5 "$D/processor.err")"
kill -TERM "$processor"
wait_for "$TMP/processor.msgs" '^STOPPING=1$' 10 "the processor's stop"
timeout 20 tail --pid="$processor" -f /dev/null

# ---- inside: each trigger in a fresh daemon -------------------------------------
# trigger_collector TRIGGER: the test collector's exit status; its stderr in $TMP/trig.err.
trigger_collector() {
	TRACER_TEST_TRIGGER=$1 timeout 30 "$TB/tracer-collector" --socket "$TMP/trig.sock" \
		--consumer-uid "$nobody" --rules "$rulesdir/collector.rules" 2>"$TMP/trig.err"
}
# trigger_processor TRIGGER: the same for the test processor, attached to the running collector.
trigger_processor() {
	TRACER_TEST_TRIGGER=$1 timeout 30 "$TB/tracer-processor" --set "state_dir=$D/state" \
		--set "runtime_dir=$D/run" --set processor_user=nobody --set "upload_url=${TRIG_URLS:-$DLV_URL}" \
		--set "signing_key=$D/signing.key" 2>"$TMP/trig.err"
}
# expect_killed WHO TRIGGER: the forbidden system call killed it.
expect_killed() {
	local rc
	"trigger_$1" "$2"
	rc=$?
	[ "$rc" = $((128 + 31)) ] ||
		e2e_fail "$1 with TRACER_TEST_TRIGGER=$2: expected death by SIGSYS (159), got $rc: $(tail -3 "$TMP/trig.err")"
	grep -q "test trigger: calling" "$TMP/trig.err" ||
		e2e_fail "$1 with TRACER_TEST_TRIGGER=$2 died before its trigger: $(tail -3 "$TMP/trig.err")"
	echo "$1: $2 -> killed by SIGSYS"
}
# expect_result WHO TRIGGER RESULT: the trigger ran and printed "= RESULT".
expect_result() {
	local rc
	"trigger_$1" "$2"
	rc=$?
	grep -q "test trigger: .* = $3\$" "$TMP/trig.err" ||
		e2e_fail "$1 with TRACER_TEST_TRIGGER=$2: expected '= $3' (exit $rc): $(tail -3 "$TMP/trig.err")"
	echo "$1: $2 -> $3"
}

# The collector: no socket of any family, no exec, no bpf(), no ptrace, no kill; reads only in its rules'
# directory (with the flags its seccomp filter allows, so Landlock is what refuses).
expect_killed collector "syscall:socket:2:1:0"  # AF_INET, SOCK_STREAM
expect_killed collector "syscall:socket:1:1:0"  # AF_UNIX, SOCK_STREAM
expect_killed collector "syscall:socket:16:3:0" # AF_NETLINK
expect_killed collector "syscall:execve"
expect_killed collector "syscall:bpf"
expect_killed collector "syscall:ptrace"
expect_killed collector "syscall:kill:1:0"
expect_killed collector "syscall:mmap:0:4096:3"
expect_result collector "open:/etc/passwd" -13
expect_result collector "open:$TMP/public" -13
expect_result collector "open:$rulesdir/collector.rules" 0
expect_result collector "syscall:getpid" "[0-9]* (Success): it came back"

# The processor: files only in its state directory (and read-only the CA store, resolver, rules); TCP
# only to the upload's ports; no new io_uring ring, no process, no exec, no executable memory.
ingest_port=${DLV_URL#http://127.0.0.1:}
ingest_port=${ingest_port%%/*}
expect_result processor "open:/etc/passwd" -13
expect_result processor "open:$TMP/public" -13
expect_result processor "create:$open_dir/x" -13
expect_result processor "create:$D/state/trigger-file" 0
expect_result processor "open:/etc/hosts" 0
expect_result processor "connect:127.0.0.1:$ingest_port" 0
expect_result processor "connect:127.0.0.1:1" -13
# upload_url naming several ingests: the port of each (nothing listens on 9: refused, not -13), no other.
TRIG_URLS="$DLV_URL, http://127.0.0.1:9/v1/batches" expect_result processor "connect:127.0.0.1:9" -111
TRIG_URLS="$DLV_URL, http://127.0.0.1:9/v1/batches" expect_result processor "connect:127.0.0.1:1" -13
expect_result processor "syscall:mmap:0:4096:4" "-1 (Operation not permitted): it came back"
expect_killed processor "syscall:io_uring_setup:4:0"
expect_killed processor "syscall:socket:16:3:0" # AF_NETLINK
expect_killed processor "syscall:clone:17"      # SIGCHLD: a new process, not a thread
expect_killed processor "syscall:execve"
expect_killed processor "syscall:ptrace"
expect_killed processor "syscall:bpf"
expect_killed processor "syscall:kill:1:0"
[ ! -e "$open_dir/x" ] || e2e_fail "the processor created $open_dir/x outside its state directory"

kill -TERM "$collector"
wait_for "$TMP/collector.msgs" '^STOPPING=1$' 10 "the collector's stop"

# The unit's CapabilityBoundingSet= is enough to load on this kernel, and each capability in it is needed:
# the collector started with exactly that bounding set (and no_new_privs, as the unit) becomes ready;
# with any one of them missing, it stops and says why.
unit=$(dirname "$0")/../../systemd/tracer-collector.service.in
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_//g')
[ -n "$caps" ] || e2e_fail "no CapabilityBoundingSet= in $unit"
bounded_collector() { # CAPS (space separated): 0 if it became ready
	local set=-all c
	for c in $1; do set="$set,+$c"; done
	rm -f "$TMP/bounded.ready"
	setpriv --bounding-set "$set" --inh-caps=-all --no-new-privs "$B/tracer-collector" \
		--socket "$TMP/bounded.sock" --consumer-uid "$nobody" --ready-fd 3 3>"$TMP/bounded.ready" \
		2>"$TMP/bounded.err" &
	local pid=$!
	for _ in $(seq 300); do
		grep -q ready "$TMP/bounded.ready" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -q ready "$TMP/bounded.ready" 2>/dev/null
}
bounded_collector "$caps" || e2e_fail "the collector did not start with the unit's bounding set ($caps): $(tail -3 "$TMP/bounded.err")"
echo "collector: ready with the unit's capabilities: $caps"
for drop in $caps; do
	! bounded_collector "$(echo " $caps " | sed "s/ $drop / /")" ||
		e2e_fail "the collector started without $drop: the unit's bounding set holds more than it needs"
	grep -q '^<3>' "$TMP/bounded.err" || e2e_fail "without $drop the collector stopped without saying why"
	echo "collector: without $drop: $(grep -m1 '^<3>' "$TMP/bounded.err")"
done
# tracer run reads a rules file as root at start; Landlock must not turn a directory the processor's
# user cannot reach into a failure to start (no rule is needed for what it cannot reach anyway).
mkdir -m 700 "$TMP/private" && echo 'tool mytool when name=true' >"$TMP/private/tool.rules"
env -u SUDO_UID -u SUDO_GID -u SUDO_USER "$TRACER" run --tool-rules "$TMP/private/tool.rules" -- true \
	>"$TMP/private.out" 2>&1 || e2e_fail "tracer run with a rules file in a private directory: $(tail -3 "$TMP/private.out")"
echo "tracer run: a rules file in a directory only root can reach works"
echo "sandboxes hold: collector and processor"
