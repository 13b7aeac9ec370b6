# shellcheck shell=bash
# A throwaway PostgreSQL 15 cluster for the end-to-end tests and the
# benchmarks, as tests/pg_cluster.h makes one for the unit tests. Sourced:
#
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/pg.sh"
#   e2e_init "$1"
#   pg_start            # or: pg_start --tcp
#   psql "$PG_URI" -c 'select 1'
#
# pg_start makes a directory (PG_DIR: data/, the Unix socket, server.log),
# runs initdb and pg_ctl start as an unprivileged user (nobody when run as
# root: PostgreSQL refuses root), waits until the server accepts
# connections, makes the database "lake" and exports PG_URI, a libpq URI of
# it through the socket in PG_DIR (postgresql:///lake?host=PG_DIR&port=...&
# user=tracer). No TCP unless --tcp: then the server also listens on
# 127.0.0.1 on a free port, PG_TCP_PORT, and PG_TCP_URI names it
# (postgresql://tracer@127.0.0.1:PORT/lake). Trust authentication (anyone
# who reaches the socket or the port connects as any role) and fsync=off
# (PG_FSYNC=on: durable commits, as a real lake's; the benchmarks set it;
# PG_EXTRA_OPTS: more server options, "-c name=value ..."):
# a test's own cluster, never a real lake. PG_BIN: PostgreSQL's programs
# (TRACER_PG_BIN overrides /usr/lib/postgresql/15/bin).
#
# pg_stop (pg_ctl stop -m fast, then the directory removed; PG_KEEP=1 keeps
# it, and says how to start the cluster again) is registered
# with lib.sh's e2e_on_exit when lib.sh is sourced, so it runs however the
# test ends; a script without lib.sh (a benchmark) calls it itself, or
# traps it. One cluster per shell; pg_stop twice is harmless.
# pg_ctl_owner ARGS runs pg_ctl on the cluster as its owner (a restart).

PG_BIN=${TRACER_PG_BIN:-/usr/lib/postgresql/15/bin}
PG_DB=lake
PG_USER=tracer

# A failure: lib.sh's e2e_fail when there is one (its exit runs pg_stop), else a message, the cluster
# stopped and removed, and status 1.
_pg_fail() {
	declare -F e2e_fail >/dev/null && e2e_fail "$*"
	echo "pg.sh: $*" >&2
	pg_stop
	return 1
}

# _pg_as_owner CMD...: CMD as the cluster's owner (nobody when we are root).
_pg_as_owner() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups -- "$@"
	else
		"$@"
	fi
}

pg_ctl_owner() {
	_pg_as_owner env -u PGPORT -u PGDATA "$PG_BIN/pg_ctl" -D "$PG_DIR/data" "$@"
}

# A TCP port free on 127.0.0.1 right now (the server may still lose it to another: pg_start retries).
_pg_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_pg_show_logs() {
	local f
	for f in "$PG_DIR/setup.log" "$PG_DIR/server.log"; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }
	done >&2
}

# pg_start [--tcp]
pg_start() {
	local tcp=0 port=5432 listen="''" try p
	[ "${1:-}" = --tcp ] && tcp=1
	for p in initdb pg_ctl createdb; do
		[ -x "$PG_BIN/$p" ] ||
			{ _pg_fail "PostgreSQL 15 is not installed here (no $PG_BIN/$p): run 'make deps' (postgresql-15)"; return 1; }
	done
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null || { _pg_fail "setpriv is needed to run PostgreSQL as nobody (util-linux: make deps)"; return 1; }
		id nobody >/dev/null 2>&1 || { _pg_fail "running as root, and there is no user nobody to run PostgreSQL as"; return 1; }
	fi
	if [ -n "${PG_DIR:-}" ]; then # not _pg_fail: that one is not ours to stop
		echo "pg.sh: pg_start: a cluster is already running in $PG_DIR (pg_stop it first)" >&2
		declare -F e2e_fail >/dev/null && e2e_fail "pg_start twice"
		return 1
	fi
	# /tmp, not $TMP: the socket's path must stay short (108 bytes)
	PG_DIR=$(mktemp -d /tmp/tracer-pg.XXXXXX) || { _pg_fail "cannot create a temporary directory"; return 1; }
	export PG_DIR PG_BIN
	declare -F e2e_on_exit >/dev/null && e2e_on_exit pg_stop
	chmod 755 "$PG_DIR"
	[ "$(id -u)" = 0 ] && chown nobody: "$PG_DIR"
	(cd "$PG_DIR" && _pg_as_owner env -u PGPORT -u PGDATA LC_ALL=C "$PG_BIN/initdb" -D "$PG_DIR/data" \
		-U "$PG_USER" -A trust -E UTF8 --locale=C --no-sync --no-instructions) >>"$PG_DIR/setup.log" 2>&1 ||
		{ _pg_show_logs; _pg_fail "initdb failed (its output above)"; return 1; }
	for try in 1 2 3; do
		if [ "$tcp" = 1 ]; then
			port=$(_pg_free_port) || { _pg_fail "no free TCP port on 127.0.0.1 (python3: make deps)"; return 1; }
			listen=127.0.0.1
		fi
		PG_OPTS="-k $PG_DIR -c listen_addresses=$listen -p $port -c fsync=${PG_FSYNC:-off} ${PG_EXTRA_OPTS:-}"
		(cd "$PG_DIR" && pg_ctl_owner start -l "$PG_DIR/server.log" -w -t 60 -s -o "$PG_OPTS") \
			>>"$PG_DIR/setup.log" 2>&1 && break
		# a port someone took in between: another one
		[ "$tcp" = 1 ] && [ "$try" -lt 3 ] && grep -q "could not bind" "$PG_DIR/server.log" 2>/dev/null && continue
		_pg_show_logs
		_pg_fail "pg_ctl start failed (the logs above)"
		return 1
	done
	env -u PGPORT "$PG_BIN/createdb" -h "$PG_DIR" -p "$port" -U "$PG_USER" "$PG_DB" >>"$PG_DIR/setup.log" 2>&1 ||
		{ _pg_show_logs; _pg_fail "createdb $PG_DB failed (the logs above)"; return 1; }
	export PG_URI="postgresql:///$PG_DB?host=$PG_DIR&port=$port&user=$PG_USER"
	if [ "$tcp" = 1 ]; then
		export PG_TCP_PORT=$port
		export PG_TCP_URI="postgresql://$PG_USER@127.0.0.1:$port/$PG_DB"
	fi
	return 0
}

# pg_stop: the server stopped (fast; immediate if that fails) and its directory removed.
pg_stop() {
	[ -n "${PG_DIR:-}" ] || return 0
	if [ -f "$PG_DIR/data/postmaster.pid" ]; then
		pg_ctl_owner stop -m fast -w -t 30 -s >>"$PG_DIR/setup.log" 2>&1 ||
			pg_ctl_owner stop -m immediate -w -t 30 -s >>"$PG_DIR/setup.log" 2>&1
	fi
	if [ "${PG_KEEP:-0}" = 1 ]; then
		echo "pg.sh: kept the cluster in $PG_DIR; to start it again, as $(stat -c %U "$PG_DIR/data"):" \
			"$PG_BIN/pg_ctl -D $PG_DIR/data -l $PG_DIR/server.log -o '$PG_OPTS' start; then psql '$PG_URI'" >&2
	else
		rm -rf "$PG_DIR"
	fi
	unset PG_DIR PG_URI PG_TCP_URI PG_TCP_PORT
	return 0
}
