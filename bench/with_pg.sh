#!/usr/bin/env bash
# bench/with_pg.sh CMD [ARGS...]: CMD with LAKE_DB naming an empty PostgreSQL database of a throwaway
# cluster (tests/e2e/pg.sh; durable commits, PG_FSYNC=on, as SQLite's synchronous=FULL), stopped and removed
# when CMD ends. `make bench-live DB=postgresql` runs bench/live_bench this way.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
# shellcheck source=/dev/null
. "$repo/tests/e2e/pg.sh"
export PG_FSYNC=${PG_FSYNC:-on}
trap pg_stop EXIT
pg_start || exit 2
LAKE_DB=$PG_URI "$@"
