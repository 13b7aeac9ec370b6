#!/usr/bin/env bash
# Started through sudo, tracer run runs the command as the invoking user
# (SUDO_UID/SUDO_GID), not as root, and still exits with its status.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

uid=65534 gid=65534
# shellcheck disable=SC2016 # expanded by the command's shell
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=nobody timeout -k 10 "$E2E_TIMEOUT" "$TRACER" run -- \
	sh -c 'echo "uid $(id -ru) gid $(id -rg) euid $(id -u) groups $(id -G)"; exit 3' >"$TMP/sudo.out" 2>"$TMP/sudo.err"
TRACER_RC=$?
expect_rc "the command's status" 3 sudo
tracer_complete sudo
got=$(cat "$TMP/sudo.out")
case $got in
"uid $uid gid $gid euid $uid groups "*) ;;
*) tracer_show sudo; e2e_fail "the command should run as uid $uid gid $gid (SUDO_UID/SUDO_GID), it said: '$got'" ;;
esac
case " ${got#*groups } " in
*" 0 "*) e2e_fail "the command kept root's group 0: '$got'" ;;
esac
