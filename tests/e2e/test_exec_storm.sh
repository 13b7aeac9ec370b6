#!/usr/bin/env bash
# An exec storm loses nothing: every one of 5000 children spawned (fork+exec,
# exit) as fast as two workers can is in the report, with its real parent
# and exit code; nothing else is; agent.dropped is 0; tracer exits 0.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

n=${TRACER_E2E_STORM:-5000}
tracer_run storm --json "$TMP/storm.json" -- "$W" storm "$n"
expect_rc "the storm's own status" 0 storm
check_report storm "$TMP/storm.json" "$TMP/storm.out"
