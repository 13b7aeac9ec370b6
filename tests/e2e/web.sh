# shellcheck shell=bash
# Helpers of the tests that start tracer-web (test_web.sh, test_prometheus.sh): tracer-web on a lake with a
# bearer token in a file only root may read, on 127.0.0.1 port 0 (the kernel picks; it says which on its
# ready descriptor). Sourced after lib.sh (and delivery.sh, whose DLV_PIDS stops it at exit):
#
#   web_start LAKE [EXTRA ARGS]     # sets WEB_PID WEB_PORT URL TOKEN_FILE WEB_LOG
#   web_get PATH                    # the answer's body on stdout, with the token; fails the test on an error

# web_start LAKE [EXTRA ARGS]: tracer-web --db LAKE; returns once it said it is ready.
web_start() {
	local lake=$1 ready=$TMP/web.ready i
	shift
	TOKEN_FILE=$TMP/web.token
	(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN_FILE") ||
		e2e_fail "setup: $TOKEN_FILE"
	# Its ready line and log outside the lake's directory: tracer-web makes every descriptor it holds on a
	# file there read-only once the lake is open (web_lake_fds_readonly), its stdout and stderr included.
	WEB_LOG=$TMP/web.err
	rm -f "$ready"
	"$B/tracer-web" --db "$lake" --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" --ready-fd 3 "$@" \
		3>"$ready" 2>>"$WEB_LOG" &
	WEB_PID=$!
	DLV_PIDS+=("$WEB_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready ' "$ready" 2>/dev/null && break
		kill -0 "$WEB_PID" 2>/dev/null || e2e_fail "tracer-web did not start: $(tail -5 "$WEB_LOG")"
		sleep 0.1
	done
	WEB_PORT=$(awk '/^ready/ { print $2 }' "$ready")
	[ -n "$WEB_PORT" ] || e2e_fail "tracer-web did not say it was ready within 10 s: $(tail -5 "$WEB_LOG")"
	URL=http://127.0.0.1:$WEB_PORT
	e2e_on_exit "web_show_log_on_failure"
	echo "tracer-web on $URL"
}

web_show_log_on_failure() {
	case ${rc:-0} in 0 | 77) return 0 ;; esac
	echo "--- tracer-web (last 8 lines of $WEB_LOG)" >&2
	tail -n 8 "$WEB_LOG" >&2
	return 0
}

# web_get PATH: GET URL/PATH with the Bearer token; the body on stdout.
web_get() {
	python3 -c '
import sys, urllib.request
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + open(sys.argv[2]).read().strip()})
sys.stdout.buffer.write(urllib.request.urlopen(req, timeout=30).read())' "$URL$1" "$TOKEN_FILE" ||
		e2e_fail "GET $1 from tracer-web failed: $(tail -3 "$WEB_LOG")"
}
