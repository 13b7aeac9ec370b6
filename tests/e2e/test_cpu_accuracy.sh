#!/usr/bin/env bash
# CPU time is the kernel's: a child that burns 500 ms of CPU has
# cpu_user_ns + cpu_sys_ns within 2% (or 10 ms) of what wait4() reports.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

tracer_run cpu --json "$TMP/cpu.json" -- "$W" measure burn 500
expect_rc "measure exits 0" 0 cpu
check_report cpu "$TMP/cpu.json" "$TMP/cpu.out" --min-ms 500
