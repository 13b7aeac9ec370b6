#!/usr/bin/env bash
# A bad /etc/tracer/tracer.conf stops every daemon before it does anything,
# with a message naming the file, the line and the key; a config file that
# others may write is refused by the collector (it reads it as root).
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
[ "$(id -u)" = 0 ] || e2e_skip "needs root (the collector must start as root to read its config)"
conf=$TMP/tracer.conf
# A mistake in a collector key stops both: the processor reads every key, the collector its own.
printf '# a config with one mistake\nstate_dir = %s/state\nkernel_buffer = 12 parsecs\n' "$TMP" >"$conf"
chmod 644 "$conf"
for d in tracer-processor tracer-collector; do
	"$B/$d" --config "$conf" >"$TMP/$d.out" 2>&1
	rc=$?
	[ "$rc" != 0 ] || e2e_fail "$d started with a bad config"
	grep -q "$conf:3:.*kernel_buffer" "$TMP/$d.out" || e2e_fail "$d did not name FILE:3 and the key: $(cat "$TMP/$d.out")"
done
# A mistake in a processor key stops the processor; the collector (collector/conf.c) leaves it to the processor.
printf '# a config with one mistake\nstate_dir = %s/state\nspool_quota = 12 parsecs\n' "$TMP" >"$conf"
"$B/tracer-processor" --config "$conf" >"$TMP/p.out" 2>&1 && e2e_fail "the processor started with a bad config"
grep -q "$conf:3:.*spool_quota" "$TMP/p.out" || e2e_fail "the processor did not name FILE:3 and the key: $(cat "$TMP/p.out")"
printf 'no_such_key = 1\n' >"$conf"
"$B/tracer-processor" --config "$conf" >"$TMP/unknown.out" 2>&1 && e2e_fail "an unknown key was accepted"
grep -q "$conf:1:.*no_such_key" "$TMP/unknown.out" || e2e_fail "the unknown key was not named: $(cat "$TMP/unknown.out")"
printf 'state_dir = %s/state\n' "$TMP" >"$conf"
chmod 666 "$conf"
"$B/tracer-collector" --config "$conf" >"$TMP/mode.out" 2>&1 && e2e_fail "the collector took a config anyone may write"
grep -q "$conf" "$TMP/mode.out" || e2e_fail "the collector did not name the writable config: $(cat "$TMP/mode.out")"
"$B/tracer-processor" --set spool_quota=1KiB >"$TMP/set.out" 2>&1 && e2e_fail "--set accepted a quota below its bound"
grep -q "spool_quota" "$TMP/set.out" || e2e_fail "--set did not name the key: $(cat "$TMP/set.out")"
exit 0
