#!/usr/bin/env bash
# bench/with_pg.sh CMD [ARGS...]: CMD with LAKE_DB naming an empty PostgreSQL database of a throwaway
# cluster (tests/e2e/pg.sh; durable commits, PG_FSYNC=on, as SQLite's synchronous=FULL), stopped and removed
# when CMD ends. `make bench-live DB=postgresql` runs bench/live_bench this way.
# PG_STATS=1: the server counts every statement (pg_stat_statements, track=all) and, when CMD ends, the
# statements that took the most time are printed to stderr, with the WAL written and the CPU time of the
# server's processes (the backends of CMD's connections included): where the server's time went.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
# shellcheck source=/dev/null
. "$repo/tests/e2e/pg.sh"
export PG_FSYNC=${PG_FSYNC:-on}
if [ "${PG_STATS:-0}" = 1 ]; then
	export PG_EXTRA_OPTS="${PG_EXTRA_OPTS:-} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
fi
trap pg_stop EXIT
pg_start || exit 2
[ "${PG_STATS:-0}" = 1 ] && psql -qX "$PG_URI" -c 'CREATE EXTENSION pg_stat_statements' >/dev/null
rc=0
LAKE_DB=$PG_URI "$@" || rc=$?
if [ "${PG_STATS:-0}" = 1 ]; then
	# utime + stime of every process of the cluster that is still there, and of the backends that ended
	# (the kernel adds an exited child's time to its parent's cutime/cstime: the postmaster's)
	pm=$(head -1 "$PG_DIR/data/postmaster.pid")
	ticks=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat")
	echo "with_pg.sh: the server's CPU time (postmaster and its ended children): $(echo "scale=1; $ticks / $(getconf CLK_TCK)" | bc) s" >&2
	psql -qX "$PG_URI" >&2 <<'SQL'
\pset pager off
SELECT sum(calls) AS statements, round(sum(total_exec_time)::numeric / 1000, 1) AS exec_s FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database());
SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 4) AS mean_ms,
       round((100 * total_exec_time / sum(total_exec_time) OVER ())::numeric, 1) AS pct, rows,
       left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS query
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY total_exec_time DESC LIMIT 12;
SELECT pg_size_pretty(wal_bytes) AS wal, wal_sync FROM pg_stat_wal;
SQL
fi
exit $rc
