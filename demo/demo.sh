#!/bin/sh
# `sudo make demo`: tracer's whole path on one machine, from kernel to lake.
#   1. a signing key (tracer keygen) enrolled in a keys file;
#   2. tracer-ingest on 127.0.0.1 with a SQLite lake;
#   3. demo/pipeline.sh under `tracer run`, which starts the collector and the
#      processor; the processor spools every record, signs batches and uploads
#      them, then the run's report;
#   4. the daemons as their units run them (tracer-collector and
#      tracer-processor with one config file, the whole host traced), and a
#      Snakemake pipeline (or demo/pipeline.sh with TRACER_PIPELINE, without
#      snakemake) started as usual: the processor finds the run and streams
#      it to the lake while it runs;
#      three times;
#   5. the runs read back from the lake (tracer report --db);
#   6. tracer tune over the pipeline's runs; 7. tracer cost;
#   8. a token for tracer-web, and the command that serves the dashboard over this lake;
#   9. tracer sweep over the idle stretch after the runs (windows shortened in the demo's config).
# Everything lives in BUILD/demo (kept, so the lake can be queried after).
set -eu
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
d=$build/demo
if [ "$(id -u)" != 0 ]; then
	echo "make demo needs root (tracer run loads BPF programs): sudo make demo" >&2
	exit 1
fi
rm -rf "$d"
mkdir -p "$d/state"
chmod 711 "$d"
chown nobody "$d/state" # the processor runs as nobody in tracer run
"$build/tracer" keygen --out "$d/signing.key" > "$d/ingest.keys" 2>/dev/null
chown nobody "$d/signing.key"
echo "1. signing key $d/signing.key, enrolled in $d/ingest.keys:"
sed 's/^/     /' "$d/ingest.keys"

"$build/tracer-ingest" --listen 127.0.0.1:0 --db "$d/lake.db" --keys "$d/ingest.keys" --ready-fd 3 \
	3>"$d/ingest.ready" 2>"$d/ingest.log" &
ingest=$!
trap 'kill $ingest 2>/dev/null || true' EXIT
i=0
until grep -q '^ready' "$d/ingest.ready" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 $ingest 2>/dev/null; then
		echo "tracer-ingest did not start:" >&2
		cat "$d/ingest.log" >&2
		exit 1
	fi
	sleep 0.1
done
port=$(awk '{ print $2 }' "$d/ingest.ready")
echo "2. tracer-ingest on 127.0.0.1:$port, lake $d/lake.db"

echo "3. tracer run -- demo/pipeline.sh (collector, processor; records spooled in $d/state and uploaded)"
"$build/tracer" run --json "$d/report.json" --html "$d/report.html" --set "state_dir=$d/state" \
	--set "upload_url=http://127.0.0.1:$port/v1/batches" --set "signing_key=$d/signing.key" \
	-- "$here/pipeline.sh" > "$d/pipeline.out" 2> "$d/run.log" || true
# The summary's first line, its signals (what to act on), totals and losses.
awk '/^(tracer|totals|agent):/ { print; next } /^signals:/ { s = 1; print; next } s && /^  / { print; next }
	{ s = 0 }' "$d/run.log" | sed 's/^/     /'
echo "   the run's report as one page to open in a browser: $d/report.html (docs/html.md)"
echo "4. the daemons, as their units start them (tracer-collector, tracer-processor --config $d/tracer.conf),"
echo "   and a pipeline started as usual: the processor finds the run and streams it live"
mkdir -p "$d/run" "$d/daemon-state" "$d/wf"
chmod 711 "$d/run"
chown nobody "$d/daemon-state" "$d/wf"
cat > "$d/tracer.conf" <<EOF
state_dir = $d/daemon-state
runtime_dir = $d/run
processor_user = nobody
signing_key = $d/signing.key
upload_url = http://127.0.0.1:$port/v1/batches
# The host heartbeat every 2 s (default 60 s), and tracer sweep's windows in seconds, not days, so that
# step 9 can judge the demo's idle stretch (docs/sweep.md gives the real defaults and their anchors).
heartbeat_interval = 2s
sweep_gcp_cpu_millicores = 300
sweep_gcp_min_observed = 10s
sweep_day = 4s
sweep_aws_cpu_percent = 15
sweep_aws_days = 2
sweep_aws_window_days = 3
EOF
"$build/tracer-collector" --config "$d/tracer.conf" --ready-fd 3 3>"$d/collector.ready" 2>"$d/collector.log" &
collector=$!
trap 'kill $ingest $collector ${processor:-} 2>/dev/null || true' EXIT
i=0
until grep -q ready "$d/collector.ready" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 300 ] || ! kill -0 $collector 2>/dev/null; then
		echo "tracer-collector did not start:" >&2
		cat "$d/collector.log" >&2
		exit 1
	fi
	sleep 0.1
done
"$build/tracer-processor" --config "$d/tracer.conf" 2>"$d/processor.log" &
processor=$!
sleep 2
if command -v snakemake > /dev/null && command -v bwa > /dev/null && command -v wgsim > /dev/null; then
	cp "$here/../tests/e2e/data/Snakefile" "$d/wf/"
	pipeline="snakemake:$d/wf/Snakefile"
	for n in 1 2 3; do # three runs: enough history for tracer tune's advice (step 6)
		echo "   (cd $d/wf && snakemake -c2 -q --forceall), as the user nobody: run $n of 3"
		(cd "$d/wf" && setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups env HOME="$d/wf" \
			snakemake -c2 -q --forceall > "$d/snakemake.out" 2>&1) || echo "   the pipeline failed: see $d/snakemake.out"
	done
else
	pipeline=demo
	echo "   TRACER_PIPELINE=demo $here/pipeline.sh (snakemake, bwa or wgsim missing: make deps installs them)"
	for n in 1 2 3; do
		TRACER_PIPELINE=demo "$here/pipeline.sh" > "$d/pipeline-daemon.out" 2>&1 || true
	done
fi
echo "   then 14 s of nothing but the daemons: an idle host, for tracer sweep (step 9)"
sleep 14 # the run's last record, then an idle stretch the heartbeats record
kill -TERM $processor $collector
wait $processor $collector 2>/dev/null || true
kill $ingest
wait $ingest 2>/dev/null || true
trap - EXIT

echo "5. from the lake: tracer report --db $d/lake.db (the tracer run, then the runs the daemons found)"
"$build/tracer" report --db "$d/lake.db"
runs=$("$build/tracer" report --db "$d/lake.db" | awk 'NR > 1 { print $1 }')
for run in $(echo "$runs" | head -n 1) $(echo "$runs" | tail -n 1); do # tracer run's, the daemons' newest
	echo
	echo "   tracer report --db $d/lake.db $run"
	"$build/tracer" report --db "$d/lake.db" "$run"
done
echo
echo "6. tracer tune --db $d/lake.db --pipeline $pipeline"
echo "   (each step over its runs: time, cores, memory, where the time went, and what to ask for)"
"$build/tracer" tune --db "$d/lake.db" --pipeline "$pipeline"
echo
echo "7. tracer cost --db $d/lake.db (priced when the host's instance type or price_per_hour is known)"
"$build/tracer" cost --db "$d/lake.db"

openssl rand -hex 32 > "$d/web.token" 2>/dev/null || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$d/web.token"
chmod 600 "$d/web.token"
echo
echo "8. the live dashboard over this lake (docs/web.md): start it with"
echo "     sudo $build/tracer-web --db $d/lake.db --listen 127.0.0.1:8760 --token-file $d/web.token"
echo "   then open, once: http://127.0.0.1:8760/?token=$(cat "$d/web.token")"
echo
echo "9. tracer sweep --db $d/lake.db --config $d/tracer.conf --since 12s"
echo "   (idle hosts, idle time in runs, stuck workers, forgotten sessions, idle processes holding memory, steps reserving what they do not use; the demo's windows are seconds)"
"$build/tracer" sweep --db "$d/lake.db" --config "$d/tracer.conf" --since 12s
