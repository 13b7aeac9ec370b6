# shellcheck shell=bash
# Helpers of the live tests (tests/e2e/test_live_*.sh): the three daemons
# started the way their systemd units start them - each with the one config
# file (`--config FILE`), nothing else on its command line but a readiness
# descriptor and, for the ingest, the user to run as (no tracer-ingest user
# here) - on loopback, the collector tracing the WHOLE host (no
# --trace-pid), the processor in daemon mode uploading to the ingest with
# the config's default batching. Then the pipelines run as they would
# without tracer, and tests/e2e/check_live.py reads the lake through
# `tracer report --db LAKE [RUN] --json` while they run and after.
# Sourced after lib.sh and delivery.sh:
#
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/delivery.sh"; . "$(dirname "$0")/live.sh"
#   e2e_init "$1"; e2e_require_bpf; live_init
#   live_start                       # ingest, collector, processor; returns once records reach the lake
#   ... run pipelines ...
#   live_check SUBCOMMAND ARGS...    # check_live.py --tracer ... --db LAKE SUBCOMMAND ARGS...
#
# Files: $CONF (the config), $LAKE (the lake), $D/*.err (the daemons' logs,
# shown on failure). Every daemon is stopped on exit (dlv_stop_all).

LIVE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIVE_CHECK=$LIVE_DIR/check_live.py

# live_init: dlv_init's directories and keys, and the config file every daemon reads. Root's, 0644, in a
# root-owned directory nobody else may write (the collector and the ingest, started as root, insist).
live_init() {
	dlv_init
	LAKE=$D/lake.db
	CONF=$D/tracer.conf
	LIVE_GID=$(id -g nobody) # here: in live_as_user it would be a child of the pipeline's first process
	cat >"$CONF" <<EOF || e2e_fail "setup: cannot write $CONF"
# tests/e2e/live.sh: the daemons of one test, on loopback; every other key at its default
# (batch_interval 1s, fsync_interval 200ms, sample_interval 1s: what the live bounds are promised with)
state_dir = $D/state
runtime_dir = $D/run
processor_user = nobody
signing_key = $D/signing.key
ingest_listen = 127.0.0.1:0
ingest_db = $LAKE
ingest_keys = $D/keys
EOF
	chmod 644 "$CONF" "$D/keys"
	e2e_on_exit "live_show_logs_on_failure"
}

# On a failure, the daemons' last words. Runs from e2e_cleanup, whose local rc (the test's exit status) it
# sees through bash's dynamic scoping.
live_show_logs_on_failure() {
	local f
	case ${rc:-0} in 0 | 77) return 0 ;; esac # a skip keeps its reason on the last line
	for f in ingest collector processor; do
		[ -s "$D/$f.err" ] || continue
		echo "--- tracer-$f (last 8 lines of $D/$f.err)"
		tail -n 8 "$D/$f.err"
	done >&2
	return 0
}

# live_ingest_start: tracer-ingest --config CONF (port 0 in the file: the kernel picks one; it says which
# on --ready-fd); then upload_url, with that port, goes into the file for the processor.
live_ingest_start() {
	local ready=$D/ingest.ready i
	rm -f "$ready"
	"$B/tracer-ingest" --config "$CONF" --user nobody --ready-fd 3 3>"$ready" 2>>"$D/ingest.err" &
	DLV_INGEST=$!
	DLV_PIDS+=("$DLV_INGEST")
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready ' "$ready" 2>/dev/null && break
		kill -0 "$DLV_INGEST" 2>/dev/null || e2e_fail "tracer-ingest --config $CONF did not start: $(tail -5 "$D/ingest.err")"
		sleep 0.1
	done
	DLV_PORT=$(awk '/^ready/ { print $2 }' "$ready")
	[ -n "$DLV_PORT" ] || e2e_fail "tracer-ingest did not say it was ready within 10 s: $(tail -5 "$D/ingest.err")"
	DLV_URL=http://127.0.0.1:$DLV_PORT/v1/batches
	echo "upload_url = $DLV_URL" >>"$CONF"
}

# live_collector_start: tracer-collector --config CONF, the whole host.
live_collector_start() {
	local ready=$D/collector.ready i
	rm -f "$ready"
	"$B/tracer-collector" --config "$CONF" --ready-fd 3 3>"$ready" 2>>"$D/collector.err" &
	DLV_COLLECTOR=$!
	DLV_PIDS+=("$DLV_COLLECTOR")
	for ((i = 0; i < 300; i++)); do
		grep -q ready "$ready" 2>/dev/null && return 0
		kill -0 "$DLV_COLLECTOR" 2>/dev/null || e2e_fail "tracer-collector --config $CONF did not start: $(tail -5 "$D/collector.err")"
		sleep 0.1
	done
	e2e_fail "tracer-collector did not become ready within 30 s: $(tail -5 "$D/collector.err")"
}

# live_processor_start [--set KEY=VALUE]...: tracer-processor --config CONF (daemon mode: spool, upload,
# runs found and streamed live).
live_processor_start() {
	"$B/tracer-processor" --config "$CONF" "$@" 2>>"$D/processor.err" &
	DLV_PROCESSOR=$!
	DLV_PIDS+=("$DLV_PROCESSOR")
}

# live_wait_ready [SECONDS]: the chain works end to end: the processor has the ring and the lake has
# acknowledged records (the collector's counters arrive every second, so this needs no workload).
live_wait_ready() {
	local limit=$((${1:-30} * 10)) i
	for ((i = 0; i < limit; i++)); do
		kill -0 "$DLV_PROCESSOR" 2>/dev/null || e2e_fail "tracer-processor --config $CONF exited: $(tail -5 "$D/processor.err")"
		kill -0 "$DLV_COLLECTOR" 2>/dev/null || e2e_fail "tracer-collector exited: $(tail -5 "$D/collector.err")"
		[ "$(dlv_status ring.attached)" = 1 ] && [ "$(dlv_status spool.acked_seq)" -gt 0 ] 2>/dev/null && return 0
		sleep 0.1
	done
	e2e_fail "within ${1:-30} s the chain did not deliver: ring.attached=$(dlv_status ring.attached)," \
		"spool.acked_seq=$(dlv_status spool.acked_seq), upload.last_error='$(dlv_status upload.last_error)'"
}

# live_start [PROCESSOR ARGS]: all three, in the units' order, and wait until records reach the lake.
live_start() {
	live_ingest_start
	live_collector_start
	live_processor_start "$@"
	live_wait_ready 30
	echo "daemons: ingest on port $DLV_PORT, collector (whole host) and processor (daemon mode) delivering"
}

# live_alive: fail if a daemon died meanwhile.
live_alive() {
	local p
	for p in "$DLV_INGEST:ingest" "$DLV_COLLECTOR:collector" "$DLV_PROCESSOR:processor"; do
		kill -0 "${p%%:*}" 2>/dev/null || e2e_fail "tracer-${p#*:} died during the test: $(tail -5 "$D/${p#*:}.err")"
	done
}

# live_check SUBCOMMAND ARGS...: check_live.py on the lake through the CLI.
live_check() {
	python3 "$LIVE_CHECK" --tracer "$TRACER" --db "$LAKE" "$@" ||
		e2e_fail "check_live.py $1 failed (TRACER_E2E_KEEP=1 keeps $TMP)"
}

# live_as_user DIR CMD...: CMD as a plain user would run it: uid/gid nobody, no supplementary group, no
# capability, HOME in DIR (nobody's is /nonexistent), in DIR. Exec'd: the caller's $! is CMD's pid.
live_as_user() {
	local dir=$1
	shift
	cd "$dir" && exec setpriv --reuid nobody --regid "$LIVE_GID" --clear-groups --inh-caps=-all \
		env -u SUDO_UID -u SUDO_GID -u SUDO_USER HOME="$dir" XDG_CACHE_HOME="$dir/.cache" "$@"
}

# live_user_dir NAME: a fresh directory under $TMP owned by the plain user.
live_user_dir() {
	mkdir -p "$TMP/$1" && chown nobody "$TMP/$1" || e2e_fail "setup: mkdir $TMP/$1"
	echo "$TMP/$1"
}

# live_snakefile DIR [SLEEP]: the e2e Snakefile (bwa, samtools, wgsim: 6 jobs) in DIR, its first job
# (rule ref) made SLEEP seconds (default 5) slower with a `sleep` before its command, so the run and a
# step can be seen in the lake while they run. Still 6 jobs; the ref step's tools gain "sleep".
live_snakefile() {
	local dir=$1 s=${2:-5}
	sed "s/^    shell: \"python3 -c/    shell: \"sleep $s; python3 -c/" "$E2E_DIR/data/Snakefile" >"$dir/Snakefile" ||
		e2e_fail "setup: cannot write $dir/Snakefile"
	grep -q "sleep $s; python3" "$dir/Snakefile" || e2e_fail "setup: the Snakefile's ref rule was not found to slow down"
	chown nobody "$dir/Snakefile"
}

# live_wait_pid PID SECONDS WHAT: wait for a background job of this shell; its status in LIVE_RC.
# shellcheck disable=SC2034
live_wait_pid() {
	local pid=$1 limit=$(($2 * 10)) i
	for ((i = 0; i < limit; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		e2e_fail "$3 did not finish within $2 s"
	fi
	wait "$pid"
	LIVE_RC=$?
}
