#!/usr/bin/env bash
# Daemon mode's live bounds (DESIGN.md "Live", docs/live.md), with the
# config's default batching (batch_interval 1s, fsync_interval 200ms,
# sample_interval 1s, live_interval 1s: tests/e2e/live.sh sets none of them):
# - a step that starts is in the lake within 3 s of its start;
# - a running run's figures (its last_update_ns) refresh at least every 5 s,
#   and so do those of a running step that works (a step's live record is
#   sent when it changed, docs/live.md; an idle `sleep` step's is shown).
# The pipeline: a script with TRACER_PIPELINE (a run detected_by env) whose
# children are its steps, one started every 2 s (the script waits with a
# builtin: it starts no other child), 5 of them, so steps start while
# others run (about 16 s): `sleep 8` (idle) and, every other one,
# `python3 ticker.py` (8 s, appending a byte to a file every 0.25 s: its
# figures change). check_live.py latency polls `tracer report --db LAKE
# [RUN] --json` every 0.1 s while the run runs: a step's latency is the time
# from its start_ns (the kernel's clock, as the lake has it) to the end of
# the first poll that returned it (an upper bound); a refresh interval is
# the difference between consecutive last_update_ns values. It prints the
# worst of each and fails past a bound.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
live_init
for k in batch_interval fsync_interval sample_interval live_interval live_refresh; do
	! grep -q "^$k" "$CONF" || e2e_fail "setup: $CONF sets $k: the bounds are promised with the defaults"
done
live_start

name=latency-$$
u=$(live_user_dir pipe)
mkfifo "$u/tick" && chown nobody "$u/tick" || e2e_fail "setup: mkfifo"
printf '%s\n' 'import time' 'with open("ticks", "a") as f:' '    for i in range(32):' \
	'        f.write("x"); f.flush(); time.sleep(0.25)' >"$u/ticker.py"
# The 2 s between steps: bash's own `read -t 2` on a FIFO nobody writes (no child: a `sleep 2` would be a step).
live_as_user "$u" env TRACER_PIPELINE="$name" bash -c 'exec 9<>tick
	for i in 1 2 3 4 5; do
		if [ $((i % 2)) = 1 ]; then sleep 8 & else python3 ticker.py & fi
		read -r -t 2 -u 9
	done; wait' >"$TMP/pipe.out" 2>&1 &
pid=$!
echo "pipeline: TRACER_PIPELINE=$name, 5 steps (sleep 8, python3 ticker.py) started 2 s apart, pid $pid"
live_check latency --where "pipeline=$name" --alive "$pid" --timeout 45 --min-steps 5 \
	--step-bound 3 --refresh-bound 5 --busy ticker
live_wait_pid "$pid" 30 "the pipeline"
[ "$LIVE_RC" = 0 ] || e2e_fail "the pipeline failed (exit $LIVE_RC): $(cat "$TMP/pipe.out")"
live_check wait --where "pipeline=$name" --timeout 20
live_check check --where "pipeline=$name" --expect detected_by=env --expect state=succeeded --steps 5 \
	--tools sleep --step-state succeeded
live_alive
