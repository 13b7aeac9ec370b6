#!/usr/bin/env bash
# Misuse fails clearly and does nothing: `tracer run` without a command (or
# with an unknown option) exits non-zero with a usage message; run by a
# non-root user it exits non-zero, says to use sudo/root, and does not run
# the command; a command that does not exist gives 127 and names it.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"

# expect_failure NAME PATTERN DESCRIPTION: the last run ($rc, $TMP/NAME.err) failed and said PATTERN.
expect_failure() {
	if [ "$rc" = 0 ]; then
		e2e_fail "$3: tracer exited 0, expected a failure"
	fi
	grep -Eqi "$2" "$TMP/$1.err" || {
		sed 's/^/    /' "$TMP/$1.err" >&2
		e2e_fail "$3: exit $rc, but stderr (above) does not match /$2/"
	}
	echo "ok: $3 (exit $rc): $(head -n 1 "$TMP/$1.err")"
}

"$TRACER" run >"$TMP/nocmd.out" 2>"$TMP/nocmd.err"
rc=$?
expect_failure nocmd usage "tracer run without a command"

"$TRACER" run -- >"$TMP/nocmd2.out" 2>"$TMP/nocmd2.err"
rc=$?
expect_failure nocmd2 usage "tracer run -- (nothing after --)"

"$TRACER" run --no-such-option -- true >"$TMP/badopt.out" 2>"$TMP/badopt.err"
rc=$?
expect_failure badopt usage "tracer run --no-such-option"

# As a non-root user. Copies of the binaries, so the build tree's permissions do not matter.
mkdir -m 755 "$TMP/bin" || e2e_fail "cannot create $TMP/bin"
cp "$B/tracer" "$B/tracer-collector" "$B/tracer-processor" "$TMP/bin/" || e2e_fail "cannot copy the binaries to $TMP/bin"
mkdir -m 1777 "$TMP/marks"
user_cmd=("$TMP/bin/tracer" run -- touch "$TMP/marks/ran")
if [ "$(id -u)" = 0 ]; then
	if command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups -- "${user_cmd[@]}" >"$TMP/user.out" 2>"$TMP/user.err"
	else
		# shellcheck disable=SC2016 # expanded by the inner shell
		su nobody -s /bin/sh -c '"$0" "$@"' -- "${user_cmd[@]}" >"$TMP/user.out" 2>"$TMP/user.err"
	fi
else
	"${user_cmd[@]}" >"$TMP/user.out" 2>"$TMP/user.err"
fi
rc=$?
expect_failure user 'sudo|root' "tracer run as a non-root user"
[ ! -e "$TMP/marks/ran" ] || e2e_fail "tracer run as a non-root user refused, yet ran the command"

# A command that does not exist: like a shell, 127 and its name.
reason=$(e2e_bpf_reason)
if [ -z "$reason" ]; then
	tracer_run notfound -- "$TMP/no-such-command"
	rc=$TRACER_RC
	[ "$rc" = 127 ] || { tracer_show notfound; e2e_fail "tracer run -- (a missing command): exit $rc, expected 127"; }
	expect_failure notfound "no-such-command" "tracer run -- (a missing command)"
else
	echo "note: missing-command case not run: $reason"
fi
