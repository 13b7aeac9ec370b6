#!/usr/bin/env bash
# Orphans are followed: a grandchild that outlives its parent (and is
# re-parented) is in the report with its original ppid and exit code, and
# tracer run waits for it before it returns and ends the report.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

tracer_run orphan --json "$TMP/orphan.json" -- "$W" orphan "$TMP"
expect_rc "the orphan's parent exits 0" 0 orphan
# The grandchild writes this 0.3 s after it was orphaned, just before it exits.
[ -f "$TMP/orphan-done" ] || {
	tracer_show orphan
	e2e_fail "tracer run returned before the re-parented grandchild finished ($TMP/orphan-done is missing)"
}
check_report orphan "$TMP/orphan.json" "$TMP/orphan.out"
