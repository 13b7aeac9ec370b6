#!/usr/bin/env bash
# Stalls: cat blocked opening an empty FIFO for 4 s makes no CPU or I/O
# progress; with --stall-after 2 it is reported `stalled` (with its tool,
# step and cgroup), while the shell that waits for it is not. Meanwhile the
# processor says so on stderr while it lasts.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

mkfifo "$TMP/fifo" || e2e_fail "setup: mkfifo $TMP/fifo"
tracer_run stall --stall-after 2 --json "$TMP/stall.json" -- \
	sh -c "cat '$TMP/fifo' >/dev/null & python3 -c 'import time; time.sleep(4.5)'; echo done >'$TMP/fifo'; wait"
expect_rc "the reader gets its line" 0 stall
python3 "$E2E_DIR/check_context.py" stall "$TMP/stall.json" --min-s 3.5 ||
	e2e_fail "report check 'stall' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
grep -q "stalled: pid .* (cat)" "$TMP/stall.err" || {
	tracer_show stall
	e2e_fail "no live 'stalled' warning for cat on stderr"
}
