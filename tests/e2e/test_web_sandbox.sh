#!/usr/bin/env bash
# tracer-web confines itself (docs/web.md, "The sandbox"), proved from outside
# and from inside, on this kernel:
#
# - outside: started as root on a lake tracer-ingest made (owned by nobody,
#   the ingest's fallback user), once ready it runs as the lake's owner, with
#   no capability, Seccomp 2, NoNewPrivs 1, and its descriptors on the lake
#   and the -wal file read-only; it tells systemd READY=1 on
#   $NOTIFY_SOCKET only then, and STOPPING=1 on SIGTERM; a lake owned by
#   root, or a token file others may read, is refused with a reason;
# - inside: the test build ($B/testbin/tracer-web, TRACER_TEST_TRIGGERS)
#   makes, once its sandbox is in force, the system call or open that
#   $TRACER_TEST_TRIGGER names: it reads the lake but nothing outside its
#   directories though the file modes allow it (Landlock), cannot create a
#   file, open a socket, start a process, exec, ptrace or map executable
#   memory (seccomp kills it);
# - the installed binary carries no trigger.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
[ "$(id -u)" = 0 ] || e2e_skip "needs root (it starts tracer-web as root to watch it drop to the lake's owner)"
dlv_init
TB=$B/testbin
[ -x "$TB/tracer-web" ] || e2e_fail "not built: $TB/tracer-web (make $TB/tracer-web)"
grep -q TRACER_TEST_TRIGGER "$TB/tracer-web" || e2e_fail "$TB/tracer-web has no test trigger compiled in"
! grep -q TRACER_TEST_TRIGGER "$B/tracer-web" || e2e_fail "$B/tracer-web, a binary to install, has the test trigger"
nobody=$(id -u nobody)

dlv_ingest_start # creates the lake, owned by nobody
lake=$D/lake.db
[ "$(stat -c %u "$lake")" = "$nobody" ] || e2e_fail "the ingest's lake is not nobody's: $(stat -c %U "$lake")"
token=$TMP/web.token
openssl rand -hex 32 >"$token" && chmod 600 "$token"
echo public >"$TMP/public" && chmod 644 "$TMP/public"

wait_for() { # FILE PATTERN SECONDS WHAT
	for _ in $(seq $(($3 * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	e2e_fail "no $4 within $3 s: $(tail -3 "$TMP/web.err" 2>/dev/null)"
}

# ---- from outside ------------------------------------------------------------------
python3 - "$TMP/web.notify" "$TMP/web.msgs" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(4096).decode() + "\n")
PY
DLV_PIDS+=("$!")
for _ in $(seq 50); do [ -S "$TMP/web.notify" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$TMP/web.notify "$B/tracer-web" --db "$lake" --listen 127.0.0.1:0 --token-file "$token" \
	--ready-fd 3 3>"$TMP/web.ready" 2>"$TMP/web.err" &
web=$!
DLV_PIDS+=("$web")
wait_for "$TMP/web.msgs" '^READY=1$' 20 "READY=1 from tracer-web"
grep -q '^ready [0-9]' "$TMP/web.ready" || e2e_fail "no ready line on --ready-fd"
st=/proc/$web/status
grep -Eq "^Uid:[[:space:]]+$nobody[[:space:]]+$nobody[[:space:]]+$nobody" "$st" ||
	e2e_fail "tracer-web does not run as the lake's owner ($nobody): $(grep ^Uid "$st")"
grep -Eq '^CapEff:[[:space:]]+0+$' "$st" || e2e_fail "tracer-web holds capabilities: $(grep ^Cap "$st")"
grep -Eq '^CapPrm:[[:space:]]+0+$' "$st" || e2e_fail "tracer-web may regain capabilities: $(grep ^CapPrm "$st")"
grep -Eq '^Seccomp:[[:space:]]+2$' "$st" || e2e_fail "tracer-web has no seccomp filter: $(grep ^Seccomp "$st")"
grep -Eq '^NoNewPrivs:[[:space:]]+1$' "$st" || e2e_fail "tracer-web can gain privileges: $(grep ^NoNewPrivs "$st")"
# Its descriptors on the lake: the database and the -wal file read-only (SQLite opens the -wal read-write
# when it may; tracer-web replaces that descriptor), only the -shm file (the readers' lock table) writable.
lake_fds=0
for fd in /proc/$web/fd/*; do
	target=$(readlink "$fd") || continue
	case $target in "$(realpath "$lake")" | "$(realpath "$lake")-wal") ;; *) continue ;; esac
	flags=$(awk '/^flags:/ { print $2 }' "/proc/$web/fdinfo/${fd##*/}")
	[ $((8#$flags & 3)) = 0 ] || e2e_fail "tracer-web holds $target open for writing (flags $flags)"
	lake_fds=$((lake_fds + 1))
done
[ "$lake_fds" -ge 2 ] || e2e_fail "tracer-web holds $lake_fds descriptors on the lake and its -wal, want 2"
echo "outside: uid $nobody, no capabilities, Seccomp 2, NoNewPrivs 1, READY=1 after the ready line; the lake and its -wal open read-only"
port=$(awk '{print $2}' "$TMP/web.ready")
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/runs")
[ "$code" = 401 ] || e2e_fail "a request without the token got $code, not 401"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$token")" "http://127.0.0.1:$port/api/runs")
[ "$code" = 200 ] || e2e_fail "a request with the token got $code, not 200: $(tail -3 "$TMP/web.err")"
kill -TERM "$web"
wait_for "$TMP/web.msgs" '^STOPPING=1$' 10 "STOPPING=1"
timeout 10 tail --pid="$web" -f /dev/null || e2e_fail "tracer-web did not stop on SIGTERM"

# Refusals that say what to do.
chmod 644 "$token"
"$B/tracer-web" --db "$lake" --listen 127.0.0.1:0 --token-file "$token" 2>"$TMP/refused.err" &&
	e2e_fail "tracer-web started with a token file others may read"
grep -q "chmod 600" "$TMP/refused.err" || e2e_fail "the refusal does not say what to do: $(cat "$TMP/refused.err")"
chmod 600 "$token"
cp "$lake" "$TMP/root-lake.db"
"$B/tracer-web" --db "$TMP/root-lake.db" --listen 127.0.0.1:0 --token-file "$token" 2>"$TMP/refused.err" &&
	e2e_fail "tracer-web started as root on root's lake (it would run as root)"
grep -q -- "--user" "$TMP/refused.err" || e2e_fail "the refusal does not say what to do: $(cat "$TMP/refused.err")"
echo "outside: a token file others may read and a lake of root's are refused, saying what to do"

# ---- from inside -----------------------------------------------------------------------
trigger() { # TRIGGER: the test build's exit status; its stderr in $TMP/trig.err
	TRACER_TEST_TRIGGER=$1 timeout 30 "$TB/tracer-web" --db "$lake" --listen 127.0.0.1:0 \
		--token-file "$token" 2>"$TMP/trig.err"
}
expect_killed() {
	local rc
	trigger "$1"
	rc=$?
	[ "$rc" = $((128 + 31)) ] || e2e_fail "TRACER_TEST_TRIGGER=$1: expected death by SIGSYS (159), got $rc: $(tail -3 "$TMP/trig.err")"
	# A system call says so before it is made; an open does not (SIGSYS comes only from the filter anyway).
	case $1 in syscall:*) grep -q "test trigger: calling" "$TMP/trig.err" ||
		e2e_fail "TRACER_TEST_TRIGGER=$1 died before its trigger" ;; esac
	echo "inside: $1 -> killed by SIGSYS"
}
expect_result() {
	local rc
	trigger "$1"
	rc=$?
	grep -q "test trigger: .* = $2\$" "$TMP/trig.err" ||
		e2e_fail "TRACER_TEST_TRIGGER=$1: expected '= $2' (exit $rc): $(tail -3 "$TMP/trig.err")"
	echo "inside: $1 -> $2"
}
expect_result "open:$lake" 0
expect_result "open:/etc/passwd" -13
expect_result "open:$TMP/public" -13
expect_killed "create:$D/x"
expect_killed "create:$TMP/x"
expect_killed "syscall:socket:2:1:0"
expect_killed "syscall:socket:1:1:0"
expect_killed "syscall:clone:17"
expect_killed "syscall:execve"
expect_killed "syscall:ptrace"
expect_killed "syscall:kill:1:0"
expect_killed "syscall:mmap:0:4096:4"
expect_killed "syscall:unlink"
expect_result "syscall:getpid" "[0-9]* (Success): it came back"
[ ! -e "$D/x" ] && [ ! -e "$TMP/x" ] || e2e_fail "a file was created under the sandbox"
exit 0
