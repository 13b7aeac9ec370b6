#!/usr/bin/env bash
# docs/security.md stays true for the auditor (run by make check):
#
#   tests/audit/check-security-doc.sh
#
# 1. the "Auditing the collector in an hour" table: every file it names
#    exists, its Lines column is the sum of `wc -l` of the files in the row,
#    and every source file the collector is built from is in the table
#    (COLLECTOR_SRC in the Makefile, and the shared ring it links);
# 2. the collector's system call table lists exactly the names in
#    collector/sandbox.c's allowlists, nothing more, nothing less.
# Prints the figures; exits 1 with what differs.
set -euo pipefail
cd "$(dirname "$0")/../.."
doc=docs/security.md
fail=0
say_fail() { echo "FAIL security doc: $*" >&2; fail=1; }

block() { # NAME: the lines between <!-- NAME: start --> and <!-- NAME: end -->
	sed -n "/<!-- $1: start -->/,/<!-- $1: end -->/p" "$doc" | grep '^| ' | tail -n +2 # less the header row
}

# 1. Files and line counts.
listed=()
while IFS= read -r row; do
	files=$(echo "$row" | cut -d'|' -f3 | grep -o '`[^`]*`' | tr -d '`')
	want=$(echo "$row" | cut -d'|' -f4 | tr -d ' ')
	got=0
	for f in $files; do
		[ -f "$f" ] || { say_fail "the audit table names $f, which does not exist"; continue; }
		got=$((got + $(wc -l <"$f")))
		listed+=("$f")
	done
	[ "$got" = "$want" ] || say_fail "audit table: $(echo $files) has $got lines, the table says $want"
	echo "audit.lines $(echo $files | tr ' ' '+') $got"
done < <(block audit-files)
sources=$(make --no-print-directory -s -f Makefile -f <(printf 'print-collector-src:\n\t@echo $(COLLECTOR_SRC)\n') \
	print-collector-src | tr ' ' '\n' | grep -v '^common/config\.c$')
for f in $sources shm/ring.c shm/handover.c; do
	printf '%s\n' "${listed[@]}" | grep -qx "$f" || say_fail "$f is built into the collector but not in the audit table"
done

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
[ $fail = 0 ] && echo "security doc: audit table and system calls match the code"
exit $fail
