#!/usr/bin/env bash
# Exit statuses are decoded exactly: exit codes 0, 1, 42, 255 as exit_code
# (signal 0); deaths by SIGKILL, SIGTERM, SIGSEGV, SIGABRT as signal N with
# exit_code null and no core; tracer exits with the command's status (128+N
# for a signal). Then a core dump: core_dumped as wait4() saw it.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

for code in 0 1 42 255; do
	tracer_run "exit$code" --json "$TMP/exit$code.json" -- "$W" exit "$code"
	check_report exit "$TMP/exit$code.json" --rc "$TRACER_RC" --code "$code" -- "$W" exit "$code"
done
for sig in 9 15 11 6; do # SIGKILL SIGTERM SIGSEGV SIGABRT
	tracer_run "signal$sig" --json "$TMP/signal$sig.json" -- "$W" signal "$sig"
	check_report exit "$TMP/signal$sig.json" --rc "$TRACER_RC" --signal "$sig" -- "$W" signal "$sig"
done

# A core dump, where the kernel writes cores into the cwd (a relative core_pattern).
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in
'|'* | */*) echo "note: core dump case not run: core_pattern '$pattern' does not write into the cwd" ;;
*)
	mkdir "$TMP/cores"
	tracer_run core --json "$TMP/core.json" -- "$W" measure signal 11 "$TMP/cores"
	expect_rc "measure exits 0" 0 core
	check_report death "$TMP/core.json" "$TMP/core.out" --core yes
	;;
esac
