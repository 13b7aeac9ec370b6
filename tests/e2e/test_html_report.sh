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
# again replaces what it drew. A page whose script was changed
# by one byte does not run (its CSP hash no longer matches). Screenshots are
# kept in BUILD/e2e-html/.
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

# page_check NAME PAGE REPORT.json: open PAGE, judge it against REPORT.
page_check() {
	local name=$1 page=$2 report=$3
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
		--eval "rerender=(function(){var r=document.getElementById('report');window.tracerReport.render(JSON.parse(document.getElementById('run-data').textContent),r);return [r.querySelectorAll('section').length,r.querySelectorAll('.step-bar').length,document.body.getAttribute('data-ready')]})()" \
		>"$TMP/$name.cdp.json" 2>"$TMP/$name.cdp.err" ||
		e2e_fail "cdp.py could not read $page: $(tail -5 "$TMP/$name.cdp.err")"
	python3 - "$TMP/$name.cdp.json" "$report" "$page" <<'PY' || e2e_fail "the HTML page ($name) is wrong (TRACER_E2E_KEEP=1 keeps $TMP)"
import json, re, sys
got = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
page = open(sys.argv[3], 'rb').read()
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
exit 0
