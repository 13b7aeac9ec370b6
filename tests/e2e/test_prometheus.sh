#!/usr/bin/env bash
# /metrics scraped by a real Prometheus (issue 28): the three daemons as their units start them
# (tests/e2e/live.sh) record two real Snakemake pipelines run by a plain user - bwa and samtools
# (tests/e2e/data/Snakefile, 6 jobs) in a directory whose name carries a double quote and a backslash,
# and one whose second job fails - then stop; tracer-web serves their lake (tests/e2e/web.sh: a 0600 token
# file, port 0), and Debian's prometheus 2.x, in a directory of the test's with its own port and TSDB,
# scrapes it every second with the token file (authorization: credentials_file). Checked:
# - promtool check metrics on the exposition: exit 0 and nothing said (names, types, units, escaping);
# - at least two scrapes up (/api/v1/targets' lastScrape), then the server's query API returns
#   tracer_host_last_seen_seconds per host, tracer_pipeline_runs and tracer_pipeline_steps per pipeline and
#   state, tracer_step_duration_seconds' buckets, _sum and _count per pipeline and step: each series and
#   value what the lake holds (SQL of tests/e2e/check_prometheus.py's own); tracer_pipeline_class_steps per
#   pipeline and class what `tracer tune --format json` says; tracer_build_info 1, up 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
. "$(dirname "$0")/web.sh"
e2e_init "$1"
e2e_require_bpf
[ -x "$B/tracer-web" ] || e2e_fail "not built: $B/tracer-web (run 'make all')"
for c in prometheus promtool snakemake bwa samtools; do
	command -v "$c" >/dev/null || e2e_fail "$c is not installed (make deps)"
done
CHECK_PROM=$E2E_DIR/check_prometheus.py

live_init
live_start

# The pipelines, as a plain user: the pipeline's name (snakemake:DIR/Snakefile) carries a quote and a
# backslash, which the exposition escapes and Prometheus must read back whole.
smk=$(live_user_dir 'prom"q\x')
live_snakefile "$smk" 1
live_as_user "$smk" snakemake -c1 -q >"$TMP/smk.out" 2>&1 &
pid=$!
live_wait_pid "$pid" 120 "the Snakemake pipeline"
[ "$LIVE_RC" = 0 ] || e2e_fail "the pipeline failed (exit $LIVE_RC): $(tail -5 "$TMP/smk.out")"
bad=$(live_user_dir prom-fails)
cat >"$bad/Snakefile" <<'SMK' && chown nobody "$bad/Snakefile" || e2e_fail "setup: $bad/Snakefile"
rule all:
    input: "b.txt"
rule a:
    output: "a.txt"
    shell: "sleep 1; echo a > {output}"
rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "sleep 1; exit 3"
SMK
live_as_user "$bad" snakemake -c1 -q >"$TMP/bad.out" 2>&1 &
pid2=$!
live_wait_pid "$pid2" 60 "the failing Snakemake pipeline"
[ "$LIVE_RC" != 0 ] || e2e_fail "the failing pipeline succeeded: $(tail -5 "$TMP/bad.out")"
live_check wait --where "run_key~-$pid-" --timeout 30
live_check wait --where "run_key~-$pid2-" --timeout 30
# A still lake: the values Prometheus keeps from scrape to scrape are the lake's at the end.
live_alive
dlv_stop_all
echo "pipelines: done; daemons stopped"

web_start "$LAKE"
web_get /metrics >"$TMP/metrics.txt"
out=$(promtool check metrics <"$TMP/metrics.txt" 2>&1) || e2e_fail "promtool check metrics failed: $out"
[ -z "$out" ] || e2e_fail "promtool check metrics has something to say: $out"
echo "promtool check metrics: exit 0, nothing said ($(grep -vc '^#' "$TMP/metrics.txt") samples)"

# Prometheus in the test's directory: its own TSDB and port; the token from the file, as a real job has it.
PROM_DIR=$TMP/prometheus
mkdir -p "$PROM_DIR/data" || e2e_fail "setup: $PROM_DIR"
PROM_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$PROM_DIR/prometheus.yml" <<YML || e2e_fail "setup: $PROM_DIR/prometheus.yml"
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: tracer
    scrape_interval: 1s
    scrape_timeout: 1s
    authorization: { type: Bearer, credentials_file: $TOKEN_FILE }
    static_configs: [ { targets: ["127.0.0.1:$WEB_PORT"] } ]
YML
promtool check config "$PROM_DIR/prometheus.yml" >"$PROM_DIR/check.out" 2>&1 ||
	e2e_fail "promtool check config: $(cat "$PROM_DIR/check.out")"
prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" 2>"$PROM_DIR/prometheus.err" &
PROM_PID=$!
DLV_PIDS+=("$PROM_PID")
prom_show_log_on_failure() {
	case ${rc:-0} in 0 | 77) return 0 ;; esac
	echo "--- prometheus (last 8 lines of $PROM_DIR/prometheus.err)" >&2
	tail -n 8 "$PROM_DIR/prometheus.err" >&2
	return 0
}
e2e_on_exit "prom_show_log_on_failure"
PROM=http://127.0.0.1:$PROM_PORT
for ((i = 0; i < 300; i++)); do
	python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/-/ready", timeout=2)' "$PROM" \
		2>/dev/null && break
	kill -0 "$PROM_PID" 2>/dev/null || e2e_fail "prometheus did not start: $(tail -5 "$PROM_DIR/prometheus.err")"
	sleep 0.1
done
echo "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') on $PROM"

python3 "$CHECK_PROM" scrapes --prom "$PROM" --count 2 --timeout 60 || e2e_fail "prometheus did not scrape tracer-web"
python3 "$CHECK_PROM" lake --prom "$PROM" --db "$LAKE" --tracer "$TRACER" ||
	e2e_fail "prometheus' answers are not the lake's (above)"
kill -0 "$WEB_PID" 2>/dev/null || e2e_fail "tracer-web died during the test: $(tail -5 "$WEB_LOG")"
