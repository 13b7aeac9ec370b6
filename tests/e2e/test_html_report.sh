#!/usr/bin/env bash
# The HTML report (docs/html.md) keeps hostile text inert and works offline:
# `tracer run --html` and `tracer report --db LAKE RUN --html` on a command
# tree whose argv, file names and tool names carry markup, quotes, a newline
# and bytes that are not UTF-8, opened in headless Chromium (tests/e2e/cdp.py):
# no console error, no exception, no Content-Security-Policy violation, no
# dialog, no request; no element came from the data; the hostile strings are
# on the page as text; a bar per step, a row per signal, a resource chart
# with points, a zoom down to a millisecond; the data embedded is the page's
# (tracer.page.v1), each step's bar and row carry its id (data-step), each
# signal row the class "signal", and window.tracerReport.render() drawing it
# again replaces what it drew. Within the host (issue 25): no slice of the
# resource chart says more cores or memory than the host has, and the
# legend says "clamped" exactly when the data clamped (its count of slices);
# the same run from a copy of the lake whose report says its host had 1 CPU
# and 1 MiB is clamped, and its legend and the steps' note say so. A page
# whose script was changed by one byte does not run (its CSP hash no longer
# matches). Screenshots are kept in BUILD/e2e-html/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
CDP=$E2E_DIR/cdp.py
python3 "$CDP" --help >/dev/null || e2e_fail "tests/e2e/cdp.py does not start"
[ -x /usr/lib/chromium/chromium-headless-shell ] || [ -x /usr/bin/chromium-headless-shell ] ||
	[ -n "${TRACER_BROWSER:-}" ] || e2e_skip "no headless Chromium (make deps installs chromium-headless-shell)"
SHOTS=$B/e2e-html
mkdir -p "$SHOTS"

# Hostile names: files (no '/' in a name), tools (symlinks named so), arguments.
H=$TMP/hostile
mkdir -p "$H"
chmod 755 "$H"
touch "$H/<img src=x onerror=alert(1)>" "$H/\"'<b>bold" "$H/"$'new\nline' "$H/"$'bad\xff\xfeutf8<b>'
ln -s /bin/cat "$H/<b>cat\"'"
ln -s /bin/true "$H/"$'\xff<img src=x onerror=alert(2)>'
cat >"$H/tree.sh" <<'EOF'
cd "$1" || exit 9
./"<b>cat\"'" ./* >/dev/null 2>&1
./$'\xff<img src=x onerror=alert(2)>' '</script><img src=x onerror=alert(1)>' "\"'<b>" $'two\nlines' \
	$'\xc3\x28\xff' $'\xe2\x80\xa8sep' '<!--'
sh -c 'kill -TERM $$'
exit 3
EOF

dlv_init
dlv_ingest_start
tracer_run html --json "$TMP/run.json" --html "$TMP/run.html" --set "state_dir=$D/state" \
	--set "upload_url=$DLV_URL" --set "signing_key=$D/signing.key" \
	-- bash "$H/tree.sh" "$H" '</script><img src=x onerror=alert(3)>' $'\xff\xfe'
expect_rc "the tree's status" 3 html
[ -s "$TMP/run.html" ] || e2e_fail "tracer run --html wrote nothing"

# page_check NAME PAGE REPORT.json [clamped]: open PAGE, judge it against REPORT; "clamped": its host is
# too small for the run, the memory must have been clamped.
page_check() {
	local name=$1 page=$2 report=$3 expect=${4:-}
	python3 "$CDP" "$page" --screenshot "$SHOTS/$name.png" \
		--eval "bars=document.querySelectorAll('.step-bar').length" \
		--eval "signals=document.querySelectorAll('.signal-row').length" \
		--eval "markup=document.querySelectorAll('img,b,iframe,object,embed,a').length" \
		--eval "scripts=document.scripts.length" \
		--eval "points=(document.getElementById('cpu-line').getAttribute('points').match(/[0-9.]+,[0-9.]+/g)||[]).length" \
		--eval "text=document.body.textContent" \
		--eval "zoomed=(function(){for(var i=0;i<40;i++)document.getElementById('zoom-in').click();return document.getElementById('timeline-range').textContent})()" \
		--eval "barsteps=Array.from(document.querySelectorAll('.step-bar[data-step]')).map(function(e){return e.getAttribute('data-step')})" \
		--eval "rowsteps=Array.from(document.querySelectorAll('tr.step-row[data-step]')).map(function(e){return e.getAttribute('data-step')})" \
		--eval "signalrows=document.querySelectorAll('tr.signal').length" \
		--eval "schema=JSON.parse(document.getElementById('run-data').textContent).schema" \
		--eval "clamp=(function(){var d=JSON.parse(document.getElementById('run-data').textContent);function t(id){var e=document.getElementById(id);return e?e.textContent:null}return {res:d.resources,steps:(d.step_stats||[]).filter(function(s){return s.peak_rss_clamped===true}).length,cpu:t('cpu-clamp'),mem:t('mem-clamp'),stepsNote:t('steps-clamp')}})()" \
		--eval "rerender=(function(){var r=document.getElementById('report');window.tracerReport.render(JSON.parse(document.getElementById('run-data').textContent),r);return [r.querySelectorAll('section').length,r.querySelectorAll('.step-bar').length,document.body.getAttribute('data-ready')]})()" \
		>"$TMP/$name.cdp.json" 2>"$TMP/$name.cdp.err" ||
		e2e_fail "cdp.py could not read $page: $(tail -5 "$TMP/$name.cdp.err")"
	python3 - "$TMP/$name.cdp.json" "$report" "$page" "$expect" <<'PY' || e2e_fail "the HTML page ($name) is wrong (TRACER_E2E_KEEP=1 keeps $TMP)"
import json, re, sys
got = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
page = open(sys.argv[3], 'rb').read()
expect = sys.argv[4]
v, bad = got['values'], []
for what in ('errors', 'dialogs', 'requests'):
    if got[what]:
        bad.append('%s: %s' % (what, got[what]))
if v.get('markup') != 0:
    bad.append('%s elements img/b/iframe/object/embed/a on the page: markup came from the data' % v.get('markup'))
if v.get('scripts') != 2:
    bad.append('%s script elements, not 2' % v.get('scripts'))
if v.get('bars') != min(len(rep['steps']), 2000) or not rep['steps']:
    bad.append('%s step bars for %d steps' % (v.get('bars'), len(rep['steps'])))
if v.get('signals') != len(rep['signals']) or not rep['signals']:
    bad.append('%s signal rows for %d signals' % (v.get('signals'), len(rep['signals'])))
if not v.get('points'):
    bad.append('the CPU chart has no points')
# The hooks tracer-web's dashboard finds: each step's bar and row carry its id, each signal row its class.
ids = sorted(s['id'] for s in rep['steps'])
if sorted(v.get('barsteps') or []) != ids or sorted(v.get('rowsteps') or []) != ids:
    bad.append('data-step of the bars %r and rows %r, not the step ids %r' % (v.get('barsteps'), v.get('rowsteps'), ids))
if v.get('signalrows') != len(rep['signals']):
    bad.append('%s rows of class signal for %d signals' % (v.get('signalrows'), len(rep['signals'])))
if v.get('schema') != 'tracer.page.v1':
    bad.append('the embedded data is not the page data: schema %r' % v.get('schema'))
# Drawn again into the same element, the page replaces what it drew: nine sections, a bar per step.
if v.get('rerender') != [9, len(rep['steps']), '1']:
    bad.append('render() a second time gives %r (sections, step bars, data-ready)' % v.get('rerender'))
if not str(v.get('zoomed', '')).endswith('(1.00ms)'):
    bad.append('zooming in does not reach a millisecond: %r' % v.get('zoomed'))
# Within the host: no slice beyond its CPUs or memory; the legend says "clamped" when, and only when, the data
# clamped, with its count of slices.
c = v.get('clamp') or {}
res = c.get('res') or {}
cpus, mem, w, n = res.get('host_cpus'), res.get('host_memory_bytes'), res.get('bin_ns') or 1, res.get('bins')
if cpus and any(x / w > cpus * (1 + 1e-6) for x in res.get('cpu_ns') or []):
    bad.append('a slice of %.3f cores on a host of %d CPUs' % (max(res['cpu_ns']) / w, cpus))
if mem and any(x > mem for x in res.get('rss_bytes') or []):
    bad.append('a slice of %d bytes on a host of %d' % (max(res['rss_bytes']), mem))
for key, legend, says in (('cpu_clamped', 'cpu', 'CPU clamped to the host'), ('rss_clamped', 'mem', 'memory clamped to the host')):
    k, text = res.get(key) or 0, c.get(legend)
    if k and (not text or not text.startswith(says) or not text.endswith(' in %d of %d slices' % (k, n))):
        bad.append('%d slices clamped (%s), the legend says %r' % (k, key, text))
    if not k and text is not None:
        bad.append('nothing clamped (%s), the legend says %r' % (key, text))
if bool(c.get('steps')) != (c.get('stepsNote') is not None):
    bad.append('%s steps\' peaks clamped, the note says %r' % (c.get('steps'), c.get('stepsNote')))
if expect == 'clamped':
    if (cpus, mem) != (1, 1 << 20):
        bad.append('the small host is %r CPUs and %r bytes, not 1 and 1 MiB' % (cpus, mem))
    if not res.get('rss_clamped') or not c.get('steps') or not (c.get('stepsNote') or '').startswith('Peak memory of'):
        bad.append('a run of 1 MiB host: nothing clamped (%r slices, %r steps, note %r)'
                   % (res.get('rss_clamped'), c.get('steps'), c.get('stepsNote')))
text = v.get('text') or ''
for s in ('</script><img src=x onerror=alert(1)>', "'<b>", '<img src=x onerror=alert(2)>', '<!--', 'two\nlines'):
    if s not in text:
        bad.append('%r is not on the page as text' % s)
# In the file: one data element, nothing that ends it early, no URL but the SVG namespace's name.
low = page.lower()
if low.count(b'</script') != 2 or low.count(b'<!--') != 0:
    bad.append('the file has %d "</script" and %d "<!--"' % (low.count(b'</script'), low.count(b'<!--')))
if re.search(rb'(https?|ftp|wss?):|//[a-z]', low.replace(b'http://www.w3.org/2000/svg', b'')):
    bad.append('the file names a URL')
if b'content-security-policy' not in low:
    bad.append('no Content-Security-Policy')
for b in bad:
    print('html check:', b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
page_check run "$TMP/run.html" "$TMP/run.json"

# The page's script changed by one byte: its hash no longer matches, the browser refuses to run it.
sed 's/var MAX_ROWS = 2000;/var MAX_ROWS = 2001;/' "$TMP/run.html" >"$TMP/tampered.html"
cmp -s "$TMP/run.html" "$TMP/tampered.html" && e2e_fail "the tampering did not change the page"
python3 "$CDP" "$TMP/tampered.html" --ready-timeout 2 --eval "ready=document.body.getAttribute('data-ready')" \
	>"$TMP/tampered.cdp.json" 2>"$TMP/tampered.cdp.err" || e2e_fail "cdp.py: $(tail -5 "$TMP/tampered.cdp.err")"
python3 - "$TMP/tampered.cdp.json" <<'PY' || e2e_fail "a page whose script does not match its CSP hash ran"
import json, sys
got = json.load(open(sys.argv[1]))
ok = got['values'].get('ready') is None and any('Content Security Policy' in e for e in got['errors'])
sys.exit(0 if ok else 1)
PY

# The same run from the lake: tracer report --db LAKE RUN --html, against its --json.
run=
for _ in $(seq 50); do
	run=$("$TRACER" report --db "$D/lake.db" --json 2>/dev/null | python3 -c '
import json, sys
runs = [r for r in json.load(sys.stdin)["runs"] if r.get("exit_code") == 3]
print(runs[0]["run_id"] if runs else "")')
	[ -n "$run" ] && break
	sleep 0.2
done
[ -n "$run" ] || e2e_fail "the run did not reach the lake: $(tail -5 "$D/ingest.err")"
"$TRACER" report --db "$D/lake.db" "$run" --json >"$TMP/lake.json" 2>"$TMP/lake.err" ||
	e2e_fail "tracer report --json failed: $(cat "$TMP/lake.err")"
"$TRACER" report --db "$D/lake.db" "$run" --html "$TMP/lake.html" >"$TMP/lake.out" 2>"$TMP/lake.err" ||
	e2e_fail "tracer report --html failed: $(cat "$TMP/lake.err")"
[ -s "$TMP/lake.out" ] && e2e_fail "tracer report --html wrote to stdout too"
page_check lake "$TMP/lake.html" "$TMP/lake.json"

# A host too small for the run (issue 25): a copy of the lake whose report of the run says its host had 1 CPU
# and 1 MiB, the resident sets of its shells alone more than that. The page's data clamps to the host, counts
# the slices, and the legend and the steps' note say so.
python3 - "$D/lake.db" "$TMP/small.db" "$run" <<'PY' || e2e_fail "could not make the small host's lake"
import sqlite3, sys
src = sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True)
dst = sqlite3.connect(sys.argv[2])
src.backup(dst)
src.close()
n = dst.execute("UPDATE records SET payload = CAST(json_set(CAST(payload AS TEXT), '$.report.host.cpus', 1, "
                "'$.report.host.memory_bytes', 1048576) AS BLOB) WHERE type = 64 AND (host_id, seq) IN "
                "(SELECT host_id, seq FROM runs WHERE run_id = ?)", (int(sys.argv[3]),)).rowcount
dst.execute("UPDATE runs SET host_cpus = 1, host_memory_bytes = 1048576 WHERE run_id = ?", (int(sys.argv[3]),))
dst.commit()
sys.exit(0 if n == 1 else 1)
PY
"$TRACER" report --db "$TMP/small.db" "$run" --html "$TMP/small.html" >"$TMP/small.out" 2>"$TMP/small.err" ||
	e2e_fail "tracer report --html (the small host's lake) failed: $(cat "$TMP/small.err")"
page_check small-host "$TMP/small.html" "$TMP/lake.json" clamped
exit 0
