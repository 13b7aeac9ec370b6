#!/usr/bin/env bash
# The systemd side of the daemons, checked with systemd's own tools:
#
#   tests/units/check-units.sh BUILD_DIR
#
# 1. every unit in BUILD_DIR/systemd/ (made from systemd/*.service.in, with
#    ExecStart= pointing at BUILD_DIR's binaries) passes
#    `systemd-analyze verify` without a word;
# 2. `systemd-analyze security --offline=yes` rates each unit's exposure at or
#    below its threshold (docs/security.md): processor 1.5, ingest 1.5, web 1.5,
#    export-otlp 1.5, collector 3.0; the figures are printed;
# 3. ordering: the processor is ordered after the collector and wants it,
#    but nothing binds them (a processor restart never touches the
#    collector; a collector restart never stops the processor, which
#    re-attaches by itself: tests/e2e/test_delivery_restarts.sh), and no
#    unit is enabled or started by anything but [Install];
# 4. systemd-sysusers and systemd-tmpfiles, into a scratch root, create the
#    users and directories with the owners and modes the units expect.
set -euo pipefail
[ -d "${1:-}" ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
B=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL units: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (make deps installs systemd)"

# systemd-analyze takes the threshold in tenths (15: an exposure of 1.5).
declare -A threshold=([tracer-collector]=30 [tracer-processor]=15 [tracer-ingest]=15 [tracer-web]=15
	[tracer-export-otlp]=15)
for u in tracer-collector tracer-processor tracer-ingest tracer-web tracer-export-otlp; do
	f=$B/systemd/$u.service
	[ -f "$f" ] || fail "$f is not built"
	out=$(cd "$B/systemd" && systemd-analyze verify "./$u.service" 2>&1) || fail "$u: systemd-analyze verify failed: $out"
	[ -z "$out" ] || fail "$u: systemd-analyze verify said: $out"
	sec=$(cd "$B/systemd" && systemd-analyze security --offline=yes --threshold="${threshold[$u]}" \
		"./$u.service" 2>&1) || fail "$u: exposure above ${threshold[$u]} tenths: $(echo "$sec" | grep -E '✗|Overall')"
	level=$(echo "$sec" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	[ -n "$level" ] || fail "$u: no exposure level in: $sec"
	echo "units.$u.exposure $level (at most $((threshold[$u] / 10)).$((threshold[$u] % 10)))"
done

p=$B/systemd/tracer-processor.service c=$B/systemd/tracer-collector.service
grep -Eq '^After=.*tracer-collector\.service' "$p" || fail "the processor is not ordered after the collector"
grep -Eq '^Wants=.*tracer-collector\.service' "$p" || fail "the processor does not pull in the collector"
! grep -Eq '^(Requires|BindsTo|PartOf|Requisite)=.*tracer-collector' "$p" ||
	fail "the processor is bound to the collector: a collector restart would stop it"
! grep -Eq '^[A-Za-z]+=.*tracer-processor' "$c" || fail "the collector depends on the processor: a processor restart would reach it"
for u in "$B"/systemd/*.service; do
	grep -q '^Type=notify$' "$u" || fail "$u: not Type=notify (readiness)"
	grep -Eq '^Restart=on-failure$' "$u" || fail "$u: no restart policy"
done
grep -q '^CapabilityBoundingSet=$' "$p" || fail "the processor's capability bounding set is not empty"
grep -q '^User=tracer$' "$p" || fail "the processor does not run as the tracer user"
grep -q '^PrivateNetwork=yes$' "$c" || fail "the collector has a network"
# SecureBits=noroot would leave root without capabilities at exec: the collector could not load.
! grep -Eq '^SecureBits=.*noroot' "$c" || fail "the collector has SecureBits=noroot: it would start without capabilities"
grep -q '^User=' "$c" && fail "the collector must start as root (it drops to collector_user itself)"
grep -q '^RestrictAddressFamilies=AF_UNIX$' "$c" || fail "the collector may open sockets other than AF_UNIX"
w=$B/systemd/tracer-web.service
grep -q '^CapabilityBoundingSet=$' "$w" || fail "tracer-web's capability bounding set is not empty"
grep -q '^User=tracer-ingest$' "$w" || fail "tracer-web does not run as the lake's owner (tracer-ingest)"
! grep -Eq '^(StateDirectory|ReadWritePaths)=' "$w" || fail "tracer-web is given a directory to write"
x=$B/systemd/tracer-export-otlp.service
grep -q '^CapabilityBoundingSet=$' "$x" || fail "tracer-export-otlp's capability bounding set is not empty"
grep -q '^User=tracer-ingest$' "$x" || fail "tracer-export-otlp does not run as the lake's owner (tracer-ingest)"
[ "$(grep -c '^StateDirectory=tracer-export-otlp$' "$x")" = 1 ] && ! grep -q '^ReadWritePaths=' "$x" ||
	fail "tracer-export-otlp may write elsewhere than its state directory"
grep -q -- '--state /var/lib/tracer-export-otlp/' "$x" || fail "tracer-export-otlp keeps its state outside its state directory"

# sysusers.d and tmpfiles.d, applied to a scratch root.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc"
systemd-sysusers --root="$root" "$here/systemd/tracer.sysusers" >/dev/null 2>&1 || fail "systemd-sysusers refused tracer.sysusers"
for user in tracer tracer-ingest; do
	line=$(grep "^$user:" "$root/etc/passwd") || fail "systemd-sysusers did not create the user $user"
	uid=$(echo "$line" | cut -d: -f3)
	[ "$uid" -gt 0 ] && [ "$uid" -lt 1000 ] || fail "$user has uid $uid, not a system uid"
	case $(echo "$line" | cut -d: -f7) in */nologin | */false) ;; *) fail "$user can log in: $line" ;; esac
done
systemd-tmpfiles --root="$root" --create "$here/systemd/tracer.tmpfiles" >/dev/null 2>&1 ||
	fail "systemd-tmpfiles refused tracer.tmpfiles"
check_dir() { # PATH MODE USER
	[ -d "$root$1" ] || fail "tmpfiles did not create $1"
	got=$(stat -c '%a %U' "$root$1" 2>/dev/null)
	want="$2 $(grep "^$3:" "$root/etc/passwd" | cut -d: -f3)"
	[ "$(stat -c '%a %u' "$root$1")" = "$want" ] || fail "$1: mode and owner $got, want $2 $3"
}
check_dir /var/lib/tracer 700 tracer
check_dir /var/lib/tracer-ingest 700 tracer-ingest
echo "units: verify, security, ordering, sysusers and tmpfiles: ok"
