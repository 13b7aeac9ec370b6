#!/usr/bin/env bash
# Several bench-fleet configurations in one sitting, one after another, each line of results kept:
#   bench/fleet_sitting.sh NAME:ENV... [NAME:ENV...]
#   e.g. bench/fleet_sitting.sh "sqlite1:DB=sqlite INGESTS=1 HOSTS=1000" "pg2:DB=postgresql INGESTS=2 HOSTS=1000"
# Each runs `env ENV... PROCS=100 SECONDS=$SECS DRAIN_S=$DRAIN bench/fleet.sh $BUILD` (SECS 60, DRAIN 120,
# BUILD build), its stdout and stderr kept in $OUT/NAME.out and .err (OUT: /tmp/sitting), and prints the
# load average before it, its exit status and its main figures on one line. docs/benchmarks.md, "Fleet".
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/sitting}
mkdir -p "$out" || exit 2
[ $# -gt 0 ] || { echo "usage: $0 NAME:ENV... [NAME:ENV...]" >&2; exit 2; }
for spec in "$@"; do
	name=${spec%%:*}
	read -r -a vars <<<"${spec#*:}"
	echo "== $name $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg): ${vars[*]}"
	env "${vars[@]}" PROCS=100 SECONDS="${SECS:-60}" DRAIN_S="${DRAIN:-120}" \
		"$repo/bench/fleet.sh" "${BUILD:-$repo/build}" >"$out/$name.out" 2>"$out/$name.err"
	echo "rc $?"
	grep -E "^fleet\.(records_per_s|offered_records_per_s|records_acked|undelivered|lag_p50_s|lag_p99_s|lost|duplicated|batches_mismatch|sim_cpu_cores|ingest_cpu_cores|pg_cpu_cores|failovers|drain_s|lake_bytes) " \
		"$out/$name.out" | tr '\n' ';'
	echo
done
