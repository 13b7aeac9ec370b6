#!/usr/bin/env bash
# tracer run's helpers hold no privilege while the command runs: the
# collector and the processor it started (its own children, not any other
# tracer's) have no capabilities (CapInh/Prm/Eff/Amb 0, and the collector
# CapBnd 0), seccomp filter mode, no_new_privs, non-zero uids and gids, and
# different uids.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

ready=$TMP/ready go=$TMP/go
# The command: say it is running, then wait (at most 120 s) to be let go.
env -u SUDO_UID -u SUDO_GID -u SUDO_USER "$TRACER" run -- sh -c \
	"touch '$ready'; i=0; while [ ! -e '$go' ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done" \
	>"$TMP/priv.out" 2>"$TMP/priv.err" &
tracer=$!
# On a failure before the wait below: let the command finish, then stop tracer if it is still ours.
stop_tracer() {
	touch "$go"
	[ -n "$tracer" ] || return 0
	sleep 1
	kill "$tracer" 2>/dev/null
	wait "$tracer" 2>/dev/null
}
e2e_on_exit stop_tracer

for _ in $(seq 1200); do
	[ -e "$ready" ] && break
	kill -0 "$tracer" 2>/dev/null || break
	sleep 0.1
done
[ -e "$ready" ] || { tracer_show priv; e2e_fail "the command did not start under tracer run (pid $tracer)"; }

# tracer's children, by the name of the program they run.
collector='' processor=''
for d in /proc/[0-9]*; do
	[ "$(awk '$1 == "PPid:" { print $2 }' "$d/status" 2>/dev/null)" = "$tracer" ] || continue
	case $(tr '\0' '\n' <"$d/cmdline" 2>/dev/null | head -n 1) in
	*/tracer-collector) collector=${d#/proc/}; cp "$d/status" "$TMP/collector.status" ;;
	*/tracer-processor) processor=${d#/proc/}; cp "$d/status" "$TMP/processor.status" ;;
	esac
done
touch "$go"
wait "$tracer"
rc=$?
pid=$tracer tracer='' # reaped: never signal that pid again
echo "tracer $pid: collector ${collector:-none}, processor ${processor:-none}"
[ -n "$collector" ] || e2e_fail "no tracer-collector among the children of tracer (pid $pid)"
[ -n "$processor" ] || e2e_fail "no tracer-processor among the children of tracer (pid $pid)"
[ "$rc" = 0 ] || { tracer_show priv; e2e_fail "tracer run exited $rc, expected 0 (the command's status)"; }
tracer_complete priv
python3 "$CHECK" privileges "$TMP/collector.status" "$TMP/processor.status" || e2e_fail "privilege check failed"
