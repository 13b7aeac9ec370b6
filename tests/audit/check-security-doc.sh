#!/usr/bin/env bash
# docs/security.md stays true for the auditor (make audit-check, part of make check):
#
#   tests/audit/check-security-doc.sh [BUILD]             check (BUILD: build/ by default)
#   tests/audit/check-security-doc.sh --print [BUILD]     the audit tables as they should be
#   tests/audit/check-security-doc.sh --update [BUILD]    write them into docs/security.md
#
# 1. the "Auditing the collector in an hour" tables are computed from what
#    BUILD/tracer-collector is built from (its debug line table:
#    tests/audit/collector_lines.py says what is counted): every repository
#    file with code in it, with its line count, and the total, at most 2100
#    (and the strict count: every file it names, whole, printed beside it);
#    then the headers it uses without code in them. The check fails when
#    the doc's tables differ, when a file in them has no "what to check"
#    yet, or when the total is over the limit;
# 2. the collector's system call table lists exactly the names in
#    collector/sandbox.c's allowlists, nothing more, nothing less.
# Prints the figures; exits 1 with what differs.
set -euo pipefail
cd "$(dirname "$0")/../.."
doc=docs/security.md
mode=
case ${1:-} in --print | --update) mode=$1; shift ;; esac
build=${1:-build}
bin=$build/tracer-collector
[ -x "$bin" ] || { echo "FAIL security doc: no $bin (make BUILD=$build $bin)" >&2; exit 1; }
if [ -n "$mode" ]; then
	exec python3 tests/audit/collector_lines.py "$mode" "$bin"
fi
fail=0
say_fail() { echo "FAIL security doc: $*" >&2; fail=1; }

block() { # NAME: the lines between <!-- NAME: start --> and <!-- NAME: end -->
	sed -n "/<!-- $1: start -->/,/<!-- $1: end -->/p" "$doc" | grep '^| ' | tail -n +2 # less the header row
}

# 1. Files and line counts, from the binary.
python3 tests/audit/collector_lines.py "$bin" || fail=1

# 2. System calls.
code=$(sed -n '/collector_syscalls\[\] = {/,/NULL/p; /reload_syscalls\[\] = {/,/NULL, 0/p' collector/sandbox.c |
	sed 's,/\*.*\*/,,' | grep -o '"[a-z0-9_]*"' | tr -d '"' | sort -u)
documented=$(block collector-syscalls | cut -d'|' -f2 | grep -o '`[a-z0-9_]*`' | tr -d '`' | sort -u)
[ -n "$code" ] || say_fail "no system call found in collector/sandbox.c"
extra=$(comm -13 <(echo "$code") <(echo "$documented"))
missing=$(comm -23 <(echo "$code") <(echo "$documented"))
[ -z "$missing" ] || say_fail "allowed in collector/sandbox.c but not in $doc: $(echo $missing)"
[ -z "$extra" ] || say_fail "in $doc's table but not allowed by collector/sandbox.c: $(echo $extra)"
echo "audit.collector_syscalls $(echo "$code" | wc -l)"
[ $fail = 0 ] && echo "security doc: audit tables match $bin and system calls match the code"
exit $fail
