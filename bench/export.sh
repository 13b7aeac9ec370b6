#!/usr/bin/env bash
# tracer export table over a 1,000,000-process lake (make bench-export; issue 28; docs/benchmarks.md).
#
#   bench/export.sh BUILD_DIR        (RUNS: the lake's size, default 5000 runs x 100 steps, about 1,000,000
#                                     processes; LAKE_DIR: where it is made, default /var/tmp; KEEP=1 keeps it;
#                                     LAKE=FILE: a lake kept before, used as it is)
#
# 1. Untimed: BUILD/bench/tune_bench makes the lake (its generator, LAKE_OUT: make bench-tune's lake, RUNS
#    times the runs) once.
# 2. `tracer export table --db LAKE processes` in CSV and in NDJSON, each under /usr/bin/time -f %M, its
#    output counted by wc (nothing kept): its peak RSS and its time. The rows must be every process of a run.
# 3. The baseline, in the same run: `tracer export table runs` (the same binary, the lake opened the same
#    way, 5,000 rows) and `sqlite3 LAKE 'select count(*) from processes'` (SQLite alone, walking the table).
# Results as "<metric> <value> <unit>" lines on stdout. Exit 1 when an export failed, missed rows, or held
# more than 64 MiB at its peak (the export streams: its memory must not grow with the lake).
set -euo pipefail

B=${1:?usage: bench/export.sh BUILD_DIR}
runs=${RUNS:-5000}
limit_kib=$((64 * 1024))
dir=$(mktemp -d "${LAKE_DIR:-/var/tmp}/tracer-export-bench.XXXXXX")
[ "${KEEP:-}" = 1 ] && echo "<6>export: keeping $dir" >&2 || trap 'rm -rf "$dir"' EXIT
lake=$dir/lake.db

if [ -n "${LAKE:-}" ]; then # a lake made before by the same generator (KEEP=1 kept it): not made again
	lake=$LAKE
else
	LAKE_OUT=$lake RUNS=$runs "$B/bench/tune_bench"
fi
expected=$(sqlite3 -readonly "$lake" 'SELECT count(*) FROM processes WHERE run_id IS NOT NULL')

# peak RSS (KiB) of "$@" into $dir/rss, its stdout's lines into $dir/lines, its wall seconds into $dir/secs
measure() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$dir/rss" "$@" | wc -l >"$dir/lines"
	t1=$(date +%s%N)
	echo "scale=2; ($t1 - $t0) / 1000000000" | bc >"$dir/secs"
}

failed=0
for format in csv ndjson; do
	measure "$B/tracer" export table --db "$lake" processes --format "$format"
	rows=$(cat "$dir/lines")
	[ "$format" = csv ] && rows=$((rows - 1)) # the header
	rss=$(cat "$dir/rss")
	secs=$(cat "$dir/secs")
	echo "export.processes.$format.rows $rows rows"
	echo "export.processes.$format.peak_rss_kib $rss KiB"
	echo "export.processes.$format.seconds $secs s"
	echo "export.processes.$format.rows_per_s $(echo "$rows / $secs" | bc) rows/s"
	if [ "$rows" != "$expected" ]; then
		echo "<3>export: $format: $rows rows, not the lake's $expected processes of a run" >&2
		failed=1
	fi
	if [ "$rss" -gt "$limit_kib" ]; then
		echo "<3>export: $format: peak RSS $rss KiB, over the 64 MiB ($limit_kib KiB) bound" >&2
		failed=1
	fi
done

measure "$B/tracer" export table --db "$lake" runs
echo "export.baseline.runs.rows $(($(cat "$dir/lines") - 1)) rows"
echo "export.baseline.runs.peak_rss_kib $(cat "$dir/rss") KiB"
measure sqlite3 -readonly "$lake" 'SELECT count(*) FROM processes'
echo "export.baseline.sqlite3_count.peak_rss_kib $(cat "$dir/rss") KiB"
exit $failed
