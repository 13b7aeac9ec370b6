#!/usr/bin/env bash
# tracer export otlp (issue 28; docs/export.md, "OpenTelemetry traces"): a real Snakemake pipeline under the
# three daemons (bwa, samtools and wgsim, a step that exits 3, one OOM-killed in a 64 MiB memory cgroup),
# exported to a local OTLP/HTTP receiver (otlp_receiver.py) that keeps every request and answers as told.
# Every request it took is parsed strictly against the official OTLP protobuf definitions
# (check_otlp.py), and the trace checked against tracer report --json: one root, a span per step and per
# process with the right parents, results, events and values. Then:
# - a 503 with Retry-After: 1 is retried after at least 1 s with the same bytes; a 502 without it after
#   the backoff; a 400 is not retried, and its text is shown;
# - a second export, under its unit's system call filter, gives the same trace and span ids;
# - --follow with --state: killed (SIGKILL) after it sent the first run, a second pipeline run meanwhile,
#   restarted: it sends the second run and not the first again; a third run, while it follows, is sent
#   when it ends; across all of it no span arrives twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
for t in snakemake bwa samtools wgsim protoc; do
	command -v "$t" >/dev/null || e2e_fail "$t is not installed (make deps installs it)"
done
/usr/bin/python3 -c 'import google.protobuf' 2>/dev/null || e2e_fail "python3-protobuf is not installed (make deps)"
CHECK_OTLP=$E2E_DIR/check_otlp.py

e2e_memory_cgroup otlp $((64 << 20))
live_init
live_start

# run_pipeline NAME SNAKEFILE [ARGS]: snakemake in $TMP/NAME, to its end; its pid in PIPE_PID, status LIVE_RC.
run_pipeline() {
	local dir=$TMP/$1
	mkdir -p "$dir" && cp "$2" "$dir/Snakefile" && cp "$E2E_DIR/data/Snakefile" "$dir/Snakefile.base" ||
		e2e_fail "setup: $dir"
	shift 2
	(cd "$dir" && exec snakemake -c2 --keep-going "$@") >"$dir.out" 2>&1 &
	PIPE_PID=$!
	live_wait_pid "$PIPE_PID" 180 "the pipeline in $dir"
}
# run_of PID: the lake's number of the run whose root is PID, once it has ended there.
run_of() {
	live_check wait --where "run_key~-$1-" --timeout 30 >/dev/null
	"$TRACER" report --db "$LAKE" --json | python3 -c '
import json, sys
runs = [r for r in json.load(sys.stdin)["runs"] if "-%s-" % sys.argv[1] in (r["run_key"] or "")]
print(runs[0]["run_id"] if len(runs) == 1 else "")' "$1"
}

run_pipeline one "$E2E_DIR/data/otlp/Snakefile" --config cg="$E2E_CG" hog="$W"
[ "$LIVE_RC" != 0 ] || e2e_fail "the pipeline succeeded: its failing and OOM steps did not fail"
[ -s "$TMP/one/sorted.bam.bai" ] || e2e_fail "the pipeline did not make sorted.bam.bai: $(tail -5 "$TMP/one.out")"
[ "$(e2e_oom_kills)" -ge 1 ] 2>/dev/null || e2e_fail "setup: the kernel counted no OOM kill in $E2E_CG"
RUN1=$(run_of "$PIPE_PID")
[ -n "$RUN1" ] || e2e_fail "no run in the lake for the pipeline (pid $PIPE_PID)"
echo "pipeline one: run $RUN1 (snakemake exit $LIVE_RC: a step failed, one OOM-killed)"

RECV=$TMP/recv
mkdir -p "$RECV"
python3 "$E2E_DIR/otlp_receiver.py" "$RECV" 2>"$TMP/receiver.err" &
e2e_on_exit "kill $! 2>/dev/null"
for ((i = 0; i < 50; i++)); do [ -s "$RECV/port" ] && break; sleep 0.1; done
[ -s "$RECV/port" ] || e2e_fail "the receiver did not start: $(cat "$TMP/receiver.err")"
URL=http://127.0.0.1:$(cat "$RECV/port")
nreq() { [ -f "$RECV/requests.ndjson" ] && wc -l <"$RECV/requests.ndjson" || echo 0; }
export_otlp() { "$TRACER" export otlp --db "$LAKE" --endpoint "$URL" "$@"; }

# 1. One run, with its command lines; the first answer a 503 with Retry-After: 1.
echo "503 1" >"$RECV/plan"
first=$(($(nreq) + 1))
OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20s3cret, X-Tenant = lab" \
	export_otlp --run "$RUN1" --with-argv >"$TMP/x1.out" 2>"$TMP/x1.err" ||
	e2e_fail "tracer export otlp failed: $(cat "$TMP/x1.err")"
/usr/bin/python3 "$CHECK_OTLP" retried --recv "$RECV" --first "$first" --code 503 --after 1 || e2e_fail "503 retry"
/usr/bin/python3 "$CHECK_OTLP" tree --recv "$RECV" --first "$first" --tracer "$TRACER" --db "$LAKE" --run "$RUN1" \
	--with-argv --failed-exit 3 --oom-tool workload || e2e_fail "the trace of run $RUN1"
python3 - "$RECV/requests.ndjson" "$first" <<'XEOF' || e2e_fail "the headers from OTEL_EXPORTER_OTLP_HEADERS"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2]) - 1]
assert r["authorization"] == "Bearer s3cret" and r["x_tenant"] == "lab", r
XEOF

# 2. Again, without argv, under the system call filter of its unit (systemd/tracer-export-otlp.service.in,
# resolved as tests/e2e/test_unit_filters.sh does: systemd cannot start units here); a 502 without
# Retry-After first: the backoff (at least 0.5 s, the first's half).
UX=$B/testbin/unit_exec
[ -x "$UX" ] || e2e_fail "not built: $UX (make $UX)"
python3 "$E2E_DIR/../units/unit-syscalls.py" "$E2E_DIR/../../systemd/tracer-export-otlp.service.in" \
	>"$TMP/export.allowed" || e2e_fail "cannot resolve tracer-export-otlp's SystemCallFilter="
echo "502" >"$RECV/plan"
second=$(($(nreq) + 1))
"$UX" "$TMP/export.allowed" -- "$TRACER" export otlp --db "$LAKE" --endpoint "$URL" --run "$RUN1" \
	>"$TMP/x2.out" 2>"$TMP/x2.err" ||
	e2e_fail "the second export, under its unit's filter ($(wc -l <"$TMP/export.allowed") calls), failed: $(cat "$TMP/x2.err")"
/usr/bin/python3 "$CHECK_OTLP" retried --recv "$RECV" --first "$second" --code 502 --after 0.5 || e2e_fail "502 retry"
/usr/bin/python3 "$CHECK_OTLP" tree --recv "$RECV" --first "$second" --tracer "$TRACER" --db "$LAKE" --run "$RUN1" ||
	e2e_fail "the trace of run $RUN1, without argv"
/usr/bin/python3 "$CHECK_OTLP" same --recv "$RECV" --first "$first" --second "$second" --run "$RUN1" \
	--tracer "$TRACER" --db "$LAKE" || e2e_fail "a re-export changed the ids"

# 3. A 400: not retried, its text shown, exit status 1.
echo "400" >"$RECV/plan"
before=$(nreq)
export_otlp --run "$RUN1" >"$TMP/x3.out" 2>"$TMP/x3.err" && e2e_fail "a refused export exited 0"
[ "$(nreq)" = $((before + 1)) ] || e2e_fail "a 400 was retried: $(($(nreq) - before)) requests"
grep -q "answered 400: .*span refused on purpose" "$TMP/x3.err" || e2e_fail "the 400's text not shown: $(cat "$TMP/x3.err")"
echo "400: not retried; said: $(grep -m1 'answered 400' "$TMP/x3.err")"

# 4. --follow with a state file, across a SIGKILL and a restart.
STATE=$TMP/otlp.state
follow_start() {
	"$TRACER" export otlp --db "$LAKE" --endpoint "$URL" --follow --state "$STATE" --interval 1s --since 1h \
		>>"$TMP/follow.out" 2>>"$TMP/follow.err" &
	FOLLOW=$!
	e2e_on_exit "kill $FOLLOW 2>/dev/null"
}
# wait_sent RUN: until the state file holds RUN's trace (the follower wrote it down after a 2xx)
wait_sent() {
	for ((i = 0; i < 300; i++)); do
		grep -q "^run $1 " "$TMP/follow.out" 2>/dev/null && return 0
		sleep 0.1
	done
	e2e_fail "the follower did not send run $1 within 30 s: $(tail -5 "$TMP/follow.err")"
}
follow_first=$(($(nreq) + 1))
follow_start
wait_sent "$RUN1"
kill -KILL "$FOLLOW"
wait "$FOLLOW" 2>/dev/null
lines=$(wc -l <"$STATE")
run_pipeline two "$E2E_DIR/data/Snakefile"
[ "$LIVE_RC" = 0 ] || e2e_fail "pipeline two failed: $(tail -5 "$TMP/two.out")"
RUN2=$(run_of "$PIPE_PID")
[ -n "$RUN2" ] || e2e_fail "no run in the lake for pipeline two"
follow_start
wait_sent "$RUN2"
run_pipeline three "$E2E_DIR/data/Snakefile"
RUN3=$(run_of "$PIPE_PID")
[ -n "$RUN3" ] || e2e_fail "no run in the lake for pipeline three"
wait_sent "$RUN3"
kill -TERM "$FOLLOW"
wait "$FOLLOW"
rc=$?
[ "$rc" = 0 ] || e2e_fail "the follower exited $rc on SIGTERM: $(tail -5 "$TMP/follow.err")"
[ "$(grep -c "^run $RUN1 " "$TMP/follow.out")" = 1 ] || e2e_fail "run $RUN1 sent again after the restart"
echo "follow: the state file had $lines lines at the SIGKILL, $(wc -l <"$STATE") at the end"
/usr/bin/python3 "$CHECK_OTLP" once --recv "$RECV" --first "$follow_first" --tracer "$TRACER" --db "$LAKE" \
	--runs "$RUN1,$RUN2,$RUN3" || e2e_fail "--follow across a restart"
/usr/bin/python3 "$CHECK_OTLP" tree --recv "$RECV" --first "$follow_first" --tracer "$TRACER" --db "$LAKE" \
	--run "$RUN3" || e2e_fail "the trace of run $RUN3"
/usr/bin/python3 "$CHECK_OTLP" all --recv "$RECV" || e2e_fail "a request that does not parse"
live_alive
