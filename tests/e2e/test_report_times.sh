#!/usr/bin/env bash
# Report times are consistent: the report's [start_ns, end_ns] lies within
# the wall-clock interval around `tracer run`, and every process of the
# command's tree starts and ends within the report's window.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

before=$(date +%s%N)
tracer_run times --json "$TMP/times.json" -- sh -c "'$W' exit 3; '$W' burn 50 >/dev/null; '$W' exit 0"
after=$(date +%s%N)
expect_rc "the last command's status" 0 times
check_report times "$TMP/times.json" --before-ns "$before" --after-ns "$after"
