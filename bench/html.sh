#!/usr/bin/env bash
# The HTML report of a 100,000-process run (make bench-html; issue 16; docs/benchmarks.md).
#
#   bench/html.sh BUILD_DIR        (PROCESSES, STEPS, RUNS: passed on; KEEP=1 keeps the directory)
#
# 1. BUILD/bench/html_bench writes a synthetic tracer.run.v1 report and its page, with the real code
#    (view/html_data.c, view/html.c), and prints their sizes, the transform's time and peak memory.
# 2. The page is opened RUNS times (default 3) in headless Chromium through tests/e2e/cdp.py --timing, each
#    time in a new browser with a new profile: the time from the navigation to <body data-ready> (the page
#    has parsed its data and drawn itself), and to the frame after it. The median is printed; a page that
#    raised an error, made a request or drew no step fails the benchmark.
# Results as "<metric> <value> <unit>" lines on stdout; a missed target (10 MB, 3 s) as a <4> line on stderr.
set -euo pipefail

B=${1:?usage: bench/html.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-html.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$out"' EXIT

"$B/bench/html_bench" "$out" | tee "$out/metrics"
label=$(sed -n 's/^html\.\([^.]*\)\.bytes .*/\1/p' "$out/metrics")

if ! python3 "$here/../tests/e2e/cdp.py" --help >/dev/null 2>&1 ||
	! { [ -n "${TRACER_BROWSER:-}" ] || [ -x /usr/lib/chromium/chromium-headless-shell ] ||
		[ -x /usr/bin/chromium-headless-shell ]; }; then
	echo "<4>html: no headless Chromium (make deps installs chromium-headless-shell): html.$label.open_ms not measured" >&2
	exit 0
fi

for i in $(seq "$runs"); do
	python3 "$here/../tests/e2e/cdp.py" "$out/report.html" --timing --timeout 60 --ready-timeout 60 \
		--eval "bars=document.querySelectorAll('.step-bar').length" >"$out/open.$i.json" ||
		{ echo "<3>html: cdp.py could not open the page" >&2; exit 1; }
done

python3 - "$label" "$out" "$runs" <<'PY'
import json, statistics, sys
label, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
ready, painted = [], []
for i in range(1, runs + 1):
    got = json.load(open('%s/open.%d.json' % (out, i)))
    v = got['values']
    bad = got['errors'] + got['dialogs'] + got['requests']
    if bad or not v.get('bars') or v.get('ready_ms') is None:
        print('<3>html: the page did not open cleanly: %s, %s step bars, ready %s' % (bad, v.get('bars'), v.get('ready_ms')),
              file=sys.stderr)
        sys.exit(1)
    ready.append(v['ready_ms'])
    painted.append(v['painted_ms'] if v.get('painted_ms') is not None else v['ready_ms'])
print('<7>html: data-ready after %s ms, painted after %s ms' % (', '.join('%.0f' % r for r in ready),
                                                               ', '.join('%.0f' % p for p in painted)), file=sys.stderr)
print('html.%s.open_ms %.0f ms' % (label, statistics.median(ready)))
print('html.%s.painted_ms %.0f ms' % (label, statistics.median(painted)))
if statistics.median(ready) >= 3000:
    print('<4>html: the page opens in %.0f ms (target: under 3000)' % statistics.median(ready), file=sys.stderr)
PY
