#!/usr/bin/env python3
"""tracer-web's end-to-end checks (tests/e2e/test_web.sh): HTTP access rules, and its pages in headless
Chromium through tests/e2e/cdp.py. Standard library only.

    check_web.py --url http://127.0.0.1:PORT --token-file FILE access --run ID
    check_web.py --url ... --token-file FILE live --pid PID --shots DIR [--timeout S] [--max-latency S]
    check_web.py --url ... --token-file FILE pages --run ID --shots DIR [--docs DIR] --hostile TEXT...
                 [--clamped-host HEX]
    check_web.py static DIR

static: the pages' files (web/page/) as the Content-Security-Policy and docs/web.md want them: no inline
  script, style or event handler in the HTML, scripts only from /static/; no script that makes markup or code
  from a string (innerHTML, outerHTML, insertAdjacentHTML, document.write, eval, Function, string timers).

access: without a token every page, API document, event stream and /metrics is 401; a wrong token (Bearer,
  cookie or ?token=) 403; the right one as Bearer or cookie 200, pages with the Content-Security-Policy;
  ?token= answers 303 to the same path without it and sets tracer_token HttpOnly SameSite=Strict.
live: waits for the run whose key has -PID- (the pipeline's root), opens its page while it runs, and
  watches the DOM without reloading: every step that was not on the page when it opened must appear within
  --max-latency seconds of its start_ns (from /api/runs/ID once the run ended); the live indicator says
  "live", then "finished"; the reader's scroll position survives the redraws.
pages: each page (runs, run ID, its pipeline, hosts) after `/?token=` set the cookie: no console error,
  exception, dialog or request outside the server's own routes; its rows, bars and points counted against
  the API (hosts: a section per host, its finding rows as /api/sweep's findings on it, a chart with points
  when /api/hosts/activity has its beats); each HOSTILE text on it as text, nothing of it run
  (window.__xss, no <img>, the title). Within the host (issue 25): the run page's data knows the run's host
  (its CPUs as /api/hosts has them), no slice of its chart and no beat of a host's chart says more cores or
  memory than the host has, and each chart's legend says "clamped" when, and only when, the API clamped
  (with its count).
Prints what it saw; exits 1 with one line per problem on stderr.
"""
import argparse
import http.client
import json
import os
import re
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402  (tests/e2e/cdp.py)

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
FINAL = ('succeeded', 'failed', 'lost')
WIDTH = 1280
PROBLEMS = []


def problem(text):
    PROBLEMS.append(text)
    print('check_web: ' + text, file=sys.stderr)


class Web:
    """The server under test, over plain HTTP/1.1 (one connection per request)."""

    def __init__(self, url, token):
        u = urllib.parse.urlsplit(url)
        self.base, self.host, self.port, self.token = url.rstrip('/'), u.hostname, u.port, token

    def get(self, path, headers=None, stream=False, timeout=10):
        """(status, headers, body): body the whole answer, or for a stream what came within 3 s."""
        c = http.client.HTTPConnection(self.host, self.port, timeout=3 if stream else timeout)
        try:
            c.request('GET', path, headers=headers or {})
            r = c.getresponse()
            if stream and r.status == 200:
                body = b''
                try:
                    while not re.search(rb'event: update\ndata: .*\n', body):
                        line = r.readline()
                        if not line:
                            break
                        body += line.replace(b'\r\n', b'\n')
                except OSError:
                    pass
            else:
                body = r.read()
            return r.status, r.msg, body
        finally:
            c.close()

    def api(self, path):
        status, _, body = self.get(path, {'Authorization': 'Bearer ' + self.token})
        if status != 200:
            raise RuntimeError('GET %s: HTTP %d: %s' % (path, status, body[:200]))
        return json.loads(body)


# ---- static ---------------------------------------------------------------------------------------------
HTML_BAD = [(r'<script(?![^>]*\bsrc=)[^>]*>', 'an inline script'), (r'<style', 'an inline style element'),
            (r'\sstyle\s*=', 'a style attribute'), (r'\son[a-z]+\s*=', 'an inline event handler'),
            (r'<script[^>]*\bsrc="(?!/static/)', 'a script from elsewhere than /static/'),
            (r'(?:href|src)="(?:https?:)?//', 'a link to another site')]
JS_BAD = [(r'\.innerHTML\b|\.outerHTML\b', 'innerHTML/outerHTML'), (r'insertAdjacentHTML', 'insertAdjacentHTML'),
          (r'document\.write', 'document.write'), (r'\beval\s*\(', 'eval'), (r'\bFunction\s*\(', 'Function()'),
          (r'\bset(?:Timeout|Interval)\s*\(\s*[\'"`]', 'a timer given a string'),
          (r'setAttribute\(\s*[\'"](?:style|on[a-z]+|src|srcdoc)[\'"]', 'setAttribute of style, an event handler or src'),
          (r'createContextualFragment|DOMParser|parseFromString', 'HTML parsing')]


def check_static(a):
    files = sorted(f for f in os.listdir(a.dir) if f.endswith(('.html', '.js', '.css')))
    for f in files:
        text = open(os.path.join(a.dir, f), encoding='utf-8').read()
        for pat, what in HTML_BAD if f.endswith('.html') else JS_BAD if f.endswith('.js') else []:
            for m in re.finditer(pat, text, re.I if f.endswith('.html') else 0):
                problem('%s:%d: %s' % (f, text.count('\n', 0, m.start()) + 1, what))
    for page in ('runs.html', 'run.html', 'pipeline.html', 'hosts.html', 'web.js', 'web.css'):
        if page not in files:
            problem('%s: missing from %s' % (page, a.dir))
    if not PROBLEMS:
        print('static: %d files of %s: no inline script or style, nothing parsed as markup or code' % (len(files), a.dir))


# ---- access ---------------------------------------------------------------------------------------------
def check_access(web, a):
    run = a.run
    paths = ['/', '/run?id=%d' % run, '/hosts', '/pipeline', '/api/runs', '/api/runs/%d' % run,
             '/api/runs/%d/page' % run, '/api/hosts', '/api/pipelines', '/api/runs/%d/events' % run, '/metrics',
             '/api/sweep']
    wrong = 'x' + web.token[1:] if web.token[:1] != 'x' else 'y' + web.token[1:]
    for p in paths:
        stream = p.endswith('/events')
        s, _, _ = web.get(p, stream=stream)
        if s != 401:
            problem('GET %s without a token: HTTP %d, not 401' % (p, s))
        for how, h in (('a wrong Bearer token', {'Authorization': 'Bearer ' + wrong}),
                       ('a wrong cookie', {'Cookie': 'tracer_token=' + wrong})):
            s, _, _ = web.get(p, h, stream=stream)
            if s != 403:
                problem('GET %s with %s: HTTP %d, not 403' % (p, how, s))
        for how, h in (('the Bearer token', {'Authorization': 'Bearer ' + web.token}),
                       ('the cookie', {'Cookie': 'tracer_token=' + web.token})):
            s, hd, body = web.get(p, h, stream=stream)
            if s != 200:
                problem('GET %s with %s: HTTP %d, not 200' % (p, how, s))
                continue
            ctype = hd.get('Content-Type', '')
            if p.startswith('/api/') and not stream and not ctype.startswith('application/json'):
                problem('GET %s: Content-Type %r, not application/json' % (p, ctype))
            if stream:
                if not ctype.startswith('text/event-stream'):
                    problem('GET %s: Content-Type %r, not text/event-stream' % (p, ctype))
                m = re.search(rb'event: update\ndata: (.*)\n', body)
                if not m:
                    problem('GET %s: no "event: update" within 3 s; got %r' % (p, body[:300]))
                elif json.loads(m.group(1)).get('run_id') != run:
                    problem('GET %s: the update names another run: %r' % (p, m.group(1)))
            if p in ('/', '/hosts', '/pipeline') or p.startswith('/run?'):
                csp = hd.get('Content-Security-Policy', '')
                if sorted(x.strip() for x in csp.split(';')) != sorted(x.strip() for x in CSP.split(';')):
                    problem('GET %s: Content-Security-Policy %r, not %r' % (p, csp, CSP))
                if not ctype.startswith('text/html'):
                    problem('GET %s: Content-Type %r, not text/html' % (p, ctype))
    # ?token=: a cookie for the whole site, HttpOnly and SameSite=Strict, and a redirect without the token.
    for path, back in (('/?token=%s' % web.token, '/'), ('/run?id=%d&token=%s' % (run, web.token), '/run?id=%d' % run),
                       ('/hosts?token=%s' % web.token, '/hosts')):
        s, hd, _ = web.get(path)
        loc, cookie = hd.get('Location', ''), hd.get('Set-Cookie', '')
        if s != 303:
            problem('GET %s: HTTP %d, not 303' % (path.replace(web.token, 'TOKEN'), s))
        if urllib.parse.urlsplit(loc).path + ('?' + urllib.parse.urlsplit(loc).query if '?' in loc else '') != back:
            problem('GET %s: Location %r, not %r' % (path.replace(web.token, 'TOKEN'), loc, back))
        attrs = [x.strip().lower() for x in cookie.split(';')]
        if not cookie.startswith('tracer_token=' + web.token + ';') or 'httponly' not in attrs or \
                'samesite=strict' not in attrs:
            problem('GET %s: Set-Cookie %r is not tracer_token=TOKEN; HttpOnly; SameSite=Strict'
                    % (path.replace(web.token, 'TOKEN'), cookie.replace(web.token, 'TOKEN')))
    s, hd, _ = web.get('/?token=' + wrong)
    if s != 403 or 'tracer_token' in hd.get('Set-Cookie', ''):
        problem('GET /?token=WRONG: HTTP %d (not 403) or a cookie was set' % s)
    print('access: %d paths checked without a token, with wrong and right tokens, and ?token=' % len(paths))


# ---- the browser ----------------------------------------------------------------------------------------
def browser(height=900):
    binary = cdp.find_browser(None)
    if not binary:
        raise SystemExit('check_web: no headless Chromium (make deps installs chromium-headless-shell)')
    br = cdp.Browser(binary)
    for domain in ('Runtime', 'Log', 'Page', 'Network'):
        br.call(domain + '.enable')
    br.call('Emulation.setDeviceMetricsOverride', {'width': WIDTH, 'height': height, 'deviceScaleFactor': 1,
                                                   'mobile': False})
    return br


ROUTES = re.compile(r'^/(|run|pipeline|hosts|static/[A-Za-z0-9._-]+|api/[A-Za-z0-9/_.-]*)$')


def page_findings(br, web, what):
    """Errors, dialogs, and requests for anything but the server's own routes, since the last navigate."""
    errors, dialogs, _ = cdp.findings(br.events, '')
    for ev in br.events:
        if ev['method'] != 'Network.requestWillBeSent':
            continue
        url = ev['params'].get('request', {}).get('url', '')
        u = urllib.parse.urlsplit(url)
        if url.startswith('data:'):
            continue
        if '%s://%s' % (u.scheme, u.netloc) != web.base or not ROUTES.match(u.path):
            problem('%s: a request for %r' % (what, url))
    for e in errors:
        problem('%s: %s' % (what, e))
    for d in dialogs:
        problem('%s: a dialog opened: %s' % (what, d))


def open_page(br, web, path, what, ready_timeout=20):
    if not br.navigate(web.base + path):
        problem('%s: %s did not load' % (what, path))
    if not br.wait_ready(ready_timeout):
        problem('%s: %s never set <body data-ready> (error box: %r)' % (what, path, br.evaluate(
            "(document.getElementById('error')||{}).textContent")))
    br.pump(0.5)  # late errors and requests


# Distinct data-step values on the run page (rows and bars of the report), in DOM order.
STEPS_JS = ("Array.from(new Set(Array.from(document.querySelectorAll('#report [data-step]'))"
            ".map(function (e) { return e.getAttribute('data-step'); })))")


def step_of(value, steps):
    """The API's step a data-step value names: by id, else by name."""
    for s in steps:
        if value == s.get('id'):
            return s
    for s in steps:
        if value == s.get('name'):
            return s
    return None


def find_run(web, pid, timeout):
    """The run whose key is BOOT-PID-START, once it has a step (it is running then)."""
    end, last = time.time() + timeout, None
    while time.time() < end:
        for r in web.api('/api/runs?limit=500').get('runs', []):
            if re.search(r'-%d-' % pid, str(r.get('run_key'))):
                last = r
                if (r.get('steps') or 0) >= 1:
                    return r
        time.sleep(0.2)
    raise SystemExit('check_web: within %d s no run with key -%d- and a step in /api/runs (last: %r)' % (timeout, pid, last))


def check_live(web, a):
    br = browser(800)
    try:
        run = find_run(web, a.pid, a.timeout)
        rid = run['run_id']
        print('live: run #%d (%s), %s with %s steps when found' % (rid, run.get('run_key'), run.get('state'), run.get('steps')))
        if run.get('state') != 'running':
            problem('live: the run is %r when first seen, not running: too late to watch it live' % run.get('state'))
        t_open = time.time()
        if not br.navigate('%s/run?id=%d&token=%s' % (web.base, rid, urllib.parse.quote(web.token))):
            problem('live: the run page did not load')
        if not br.wait_ready(15):
            problem('live: the run page never set <body data-ready> (report.js drew nothing)')
        t_ready = time.time()
        first = set(br.evaluate(STEPS_JS) or [])
        print('live: page drawn in %.2f s with steps %s' % (t_ready - t_open, sorted(first)))
        br.evaluate('window.__noReload = 1')
        scroll = None
        if (br.evaluate('document.documentElement.scrollHeight') or 0) > 1200:
            scroll = 300
            br.evaluate('window.scrollTo(0, %d)' % scroll)
        seen, states, api_state, api_next = {}, [], 'running', 0
        deadline = time.time() + a.timeout + 60
        while time.time() < deadline:
            now = time.time()
            for v in br.evaluate(STEPS_JS) or []:
                seen.setdefault(v, now)
            st = br.evaluate("document.getElementById('live-state').textContent")
            if not states or states[-1] != st:
                states.append(st)
            if now >= api_next:
                api_next = now + 1
                r = web.api('/api/runs/%d' % rid)
                api_state = r.get('state')
                nsteps = len(r.get('steps') or [])
            if api_state in FINAL and len(seen) >= nsteps and st == 'finished':
                break
            br.pump(0.1)
        br.pump(1)
        rep = web.api('/api/runs/%d' % rid)
        steps = rep.get('steps') or []
        if rep.get('state') not in FINAL:
            problem('live: run #%d still %r after %d s' % (rid, rep.get('state'), a.timeout + 60))
        if br.evaluate('window.__noReload') != 1:
            problem('live: the page reloaded itself (its window state is gone)')
        if 'live' not in states or states[-1] != 'finished':
            problem('live: #live-state went %r, not through "live" to "finished"' % states)
        if scroll is not None and br.evaluate('window.scrollY') != scroll:
            problem('live: the scroll position moved from %d to %r across the redraws' % (scroll, br.evaluate('window.scrollY')))
        measured = 0
        for v, t in sorted(seen.items(), key=lambda x: x[1]):
            s = step_of(v, steps)
            if s is None:
                problem('live: data-step %r on the page is no step of /api/runs/%d' % (v, rid))
                continue
            if v in first:
                continue
            lat = t - s['start_ns'] / 1e9
            measured += 1
            print('live: step %s (%s) started %.2f s after the page was drawn, on the page %.2f s after its start'
                  % (s.get('name'), s.get('id'), s['start_ns'] / 1e9 - t_ready, lat))
            if lat > a.max_latency:
                problem('live: step %s appeared %.2f s after its start (more than %.1f s)' % (s.get('name'), lat, a.max_latency))
        missing = [s.get('name') for s in steps if s.get('id') not in seen and s.get('name') not in seen]
        if missing:
            problem('live: steps %s never appeared on the page' % missing)
        if not measured:
            problem('live: no step started after the page was drawn: nothing was seen arriving live')
        br.screenshot(os.path.join(a.shots, 'live.png'))
        page_findings(br, web, 'live run page')
        print('live: indicator %s; %d steps seen arriving without a reload' % (' -> '.join(map(repr, states)), measured))
    finally:
        br.stop()


def has_text(br, what, texts):
    body = br.evaluate('document.body.textContent') or ''
    visible = br.evaluate('document.body.innerText') or ''
    for t in texts:
        if t not in body:
            problem('%s: %r is not on the page as text' % (what, t))
        elif t.split('\n')[0] not in visible:
            problem('%s: %r is in the page but not visible' % (what, t))


def no_xss(br, what, title, scripts):
    v = br.evaluate('JSON.stringify({xss: typeof window.__xss, img: document.querySelectorAll("img").length,'
                    ' handlers: document.querySelectorAll("[onerror],[onload],[onclick]").length,'
                    ' title: document.title, scripts: document.scripts.length,'
                    ' markup: document.querySelectorAll("b,iframe,object,embed,frame,base,form").length})')
    v = json.loads(v)
    if v['xss'] != 'undefined':
        problem('%s: window.__xss is %s: a hostile string ran' % (what, v['xss']))
    if v['img'] or v['handlers'] or v['markup']:
        problem('%s: elements from the data: %d img, %d with event handlers, %d b/iframe/object/embed/frame/base/form'
                % (what, v['img'], v['handlers'], v['markup']))
    if (title(v['title']) if callable(title) else v['title'] != title):
        problem('%s: the document title is %r' % (what, v['title']))
    if v['scripts'] != scripts:
        problem('%s: %d script elements, not the page\'s %d' % (what, v['scripts'], scripts))


def shot(br, a, name, docs_name):
    br.screenshot(os.path.join(a.shots, name + '.png'))
    if a.docs:
        br.screenshot(os.path.join(a.docs, docs_name))


def check_runs_page(br, web, a, run):
    open_page(br, web, '/', 'runs page')
    shot(br, a, 'runs', 'web-runs.png')
    api = web.api('/api/runs?limit=500')
    rows = json.loads(br.evaluate(
        "JSON.stringify(Array.from(document.querySelectorAll('tr.run-row')).map(function (tr) {"
        " var a = tr.querySelector('a[href^=\"/run?id=\"]'), p = tr.querySelector('a[href^=\"/pipeline?name=\"]'),"
        " s = tr.querySelector('[class*=\"state-\"]');"
        " return {run: tr.getAttribute('data-run'), href: a && a.getAttribute('href'),"
        " pipeline: p && p.getAttribute('href'), pipeline_text: p && p.textContent,"
        " state: s && s.textContent, state_class: s && s.getAttribute('class')}; }))"))
    want = [r for r in api.get('runs', [])]
    if len(rows) != len(want):
        problem('runs page: %d run rows, /api/runs has %d' % (len(rows), len(want)))
    if [r['run'] for r in rows] != [str(r['run_id']) for r in want]:
        problem('runs page: rows %s, /api/runs (newest first) %s' % ([r['run'] for r in rows], [r['run_id'] for r in want]))
    starts = [r.get('start_ns') or 0 for r in want]
    if starts != sorted(starts, reverse=True):
        problem('runs page: /api/runs is not newest first')
    for row, r in zip(rows, want):
        if row['href'] != '/run?id=%d' % r['run_id']:
            problem('runs page: run %d links to %r' % (r['run_id'], row['href']))
        if r.get('pipeline') and (not row['pipeline'] or
                                  urllib.parse.unquote(row['pipeline'][len('/pipeline?name='):]) != r['pipeline']):
            problem('runs page: run %d: pipeline link %r for %r' % (r['run_id'], row['pipeline'], r['pipeline']))
        if row['state'] != r.get('state') or 'state-' + str(r.get('state')) not in (row['state_class'] or '').split():
            problem('runs page: run %d: state %r class %r, the API says %r' % (r['run_id'], row['state'], row['state_class'], r.get('state')))
    mine = [r for r in want if r['run_id'] == run['run_id']]
    if not mine:
        problem('runs page: run #%d is not in /api/runs' % run['run_id'])
    has_text(br, 'runs page', a.hostile)
    no_xss(br, 'runs page', 'tracer: runs', 2)
    # The pipeline filter: the select offers the pipeline; choosing it shows its runs only, and says so in the URL.
    p = run.get('pipeline')
    n = br.evaluate("(function (v) { var s = document.getElementById('f-pipeline');"
                    " if (!Array.prototype.some.call(s.options, function (o) { return o.value === v; })) return -1;"
                    " document.body.removeAttribute('data-ready'); s.value = v;"
                    " s.dispatchEvent(new Event('change')); return 0; })(%s)" % json.dumps(p))
    if n == -1:
        problem('runs page: the pipeline filter does not offer %r' % p)
    else:
        br.wait_ready(10)
        br.pump(0.3)
        got = br.evaluate("document.querySelectorAll('tr.run-row').length")
        exp = len(web.api('/api/runs?limit=500&pipeline=' + urllib.parse.quote(p, safe='')).get('runs', []))
        if got != exp or not exp:
            problem('runs page filtered by pipeline: %r rows, the API has %d' % (got, exp))
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(br.evaluate('location.href')).query)
        if q.get('pipeline') != [p]:
            problem('runs page: the URL does not carry the pipeline filter: %r' % br.evaluate('location.href'))
    page_findings(br, web, 'runs page')
    print('runs page: %d rows as /api/runs; filter by pipeline; hostile text inert' % len(rows))


# The clamp legends and notes the run page draws (view/html/report.js), by id; null where none.
CLAMP_JS = ("JSON.stringify({cpu: (document.getElementById('cpu-clamp') || {}).textContent || null,"
            " mem: (document.getElementById('mem-clamp') || {}).textContent || null,"
            " steps: (document.getElementById('steps-clamp') || {}).textContent || null})")


def run_within_host(br, web, what, run, page):
    """The run page's chart within the run's host: its data's slices no more than the host's CPUs and memory,
    the legend saying "clamped" exactly when the data counts clamped slices."""
    res = page.get('resources') or {}
    cpus, mem, w, n = res.get('host_cpus'), res.get('host_memory_bytes'), res.get('bin_ns') or 1, res.get('bins')
    host = [h for h in web.api('/api/hosts').get('hosts') or [] if h.get('host') == run.get('host')]
    if host and host[0].get('cpus') and cpus != host[0]['cpus']:
        problem('%s: the page data says its host has %r CPUs, /api/hosts %r' % (what, cpus, host[0]['cpus']))
    if cpus and any(x / w > cpus * (1 + 1e-6) for x in res.get('cpu_ns') or []):
        problem('%s: a slice of %.3f cores on a host of %d CPUs' % (what, max(res['cpu_ns']) / w, cpus))
    if mem and any(x > mem for x in res.get('rss_bytes') or []):
        problem('%s: a slice of %d bytes on a host of %d' % (what, max(res['rss_bytes']), mem))
    legend = json.loads(br.evaluate(CLAMP_JS))
    for key, shown, says in (('cpu_clamped', 'cpu', 'CPU clamped to the host'),
                             ('rss_clamped', 'mem', 'memory clamped to the host')):
        k, text = res.get(key) or 0, legend[shown]
        if k and (not text or not text.startswith(says) or not text.endswith(' in %d of %d slices' % (k, n))):
            problem('%s: %d slices clamped (%s), the legend says %r' % (what, k, key, text))
        if not k and text is not None:
            problem('%s: nothing clamped (%s), the legend says %r' % (what, key, text))
    nsteps = len([x for x in page.get('step_stats') or [] if x.get('peak_rss_clamped') is True])
    if bool(nsteps) != (legend['steps'] is not None):
        problem('%s: %d steps\' peaks clamped, the note says %r' % (what, nsteps, legend['steps']))
    return res


def check_run_page(br, web, a, run):
    rid = run['run_id']
    open_page(br, web, '/run?id=%d' % rid, 'run page')
    br.pump(1)  # the event stream's first update and its end
    shot(br, a, 'run', 'web-run.png')
    rep = web.api('/api/runs/%d' % rid)
    page = web.api('/api/runs/%d/page' % rid)
    steps, signals = rep.get('steps') or [], rep.get('signals') or []
    v = json.loads(br.evaluate(
        "JSON.stringify({rows: document.querySelectorAll('#report tr[data-step]').length,"
        " bars: document.querySelectorAll('#report svg [data-step]').length,"
        " signals: document.querySelectorAll('#report .signal').length,"
        " points: Math.max.apply(null, [0].concat(Array.from(document.querySelectorAll('#report polyline'))"
        "   .map(function (p) { return ((p.getAttribute('points') || '').match(/[0-9.]+,[0-9.]+/g) || []).length; }))),"
        " live: document.getElementById('live-state').textContent,"
        " banner: document.querySelectorAll('#banner li').length, bannerHidden: document.getElementById('banner').hidden,"
        " ids: " + STEPS_JS + "})"))
    if v['rows'] != len(steps) or not steps:
        problem('run page: %d step rows (tr[data-step]) for %d steps' % (v['rows'], len(steps)))
    if v['bars'] != len(steps):
        problem('run page: %d timeline bars (svg [data-step]) for %d steps' % (v['bars'], len(steps)))
    if any(step_of(x, steps) is None for x in v['ids']):
        problem('run page: data-step values %r are not the steps of the run' % v['ids'])
    if v['signals'] != len(signals):
        problem('run page: %d signal rows (.signal) for %d signals' % (v['signals'], len(signals)))
    if v['points'] < 2:
        problem('run page: no chart with points (a polyline of the report)')
    if v['live'] != 'finished':
        problem('run page: #live-state says %r for a %s run' % (v['live'], rep.get('state')))
    flagged = [g for g in page.get('signals') or [] if g.get('kind') in ('stalled', 'slower_than_usual')]
    if v['banner'] != len(flagged) or v['bannerHidden'] != (not flagged):
        problem('run page: the banner lists %d steps (hidden %r) for %d flagged' % (v['banner'], v['bannerHidden'], len(flagged)))
    has_text(br, 'run page', a.hostile + a.run_hostile)
    no_xss(br, 'run page', lambda t: not t.startswith('tracer'), 3)
    res = run_within_host(br, web, 'run page', run, page)
    page_findings(br, web, 'run page')
    print('run page: %d step rows, %d bars, %d signal rows, a chart of %d points, %r, %d flagged; host %r CPUs, '
          '%r slices clamped' % (v['rows'], v['bars'], v['signals'], v['points'], v['live'], len(flagged),
                                 res.get('host_cpus'), (res.get('cpu_clamped') or 0) + (res.get('rss_clamped') or 0)))


def check_pipeline_page(br, web, a, run):
    p = run.get('pipeline')
    if not p:
        problem('pipeline page: run #%d has no pipeline' % run['run_id'])
        return
    q = urllib.parse.quote(p, safe='')
    open_page(br, web, '/pipeline?name=' + q, 'pipeline page')
    shot(br, a, 'pipeline', 'web-pipeline.png')
    api = web.api('/api/pipeline?name=' + q)
    v = json.loads(br.evaluate(
        "JSON.stringify({points: Array.from(document.querySelectorAll('.run-point')).map(function (e) {"
        " return e.getAttribute('data-run'); }), rows: document.querySelectorAll('tr.pipeline-run').length,"
        " slower: document.querySelectorAll('tr.pipeline-run.slower').length,"
        " recs: document.querySelectorAll('tr.rec-row').length,"
        " title: document.getElementById('title').textContent})"))
    runs = api.get('runs') or []
    if v['points'] != [str(r['run_id']) for r in runs] or not runs:
        problem('pipeline page: run-points %s for the runs %s' % (v['points'], [r['run_id'] for r in runs]))
    if v['rows'] != len(runs):
        problem('pipeline page: %d run rows for %d runs' % (v['rows'], len(runs)))
    nslow = len([r for r in runs if r.get('slower')])
    if v['slower'] != nslow:
        problem('pipeline page: %d rows marked slower, the API has %d runs with slower steps' % (v['slower'], nslow))
    if v['recs'] != len(api.get('recommendations') or []):
        problem('pipeline page: %d recommendation rows for %d' % (v['recs'], len(api.get('recommendations') or [])))
    if v['title'] != 'Pipeline ' + p:
        problem('pipeline page: title %r for the pipeline %r' % (v['title'], p))
    has_text(br, 'pipeline page', [p])
    no_xss(br, 'pipeline page', 'tracer: pipeline', 2)
    page_findings(br, web, 'pipeline page')
    print('pipeline page: %d run points, %d rows (%d slower), %d recommendations' % (len(v['points']), v['rows'], nslow, v['recs']))


# What /api/hosts/activity counts as clamped, and how the hosts page's legend starts to say it.
CLAMP_BEATS = (('cpu_clamped', 'CPU clamped'), ('mem_clamped', 'memory used clamped'))


def check_hosts_page(br, web, a):
    open_page(br, web, '/hosts', 'hosts page')
    shot(br, a, 'hosts', 'web-hosts.png')
    api = web.api('/api/hosts')
    hosts = api.get('hosts') or []
    rows = br.evaluate("document.querySelectorAll('tr.host-row').length")
    if rows != len(hosts) or not hosts:
        problem('hosts page: %r host rows, /api/hosts has %d' % (rows, len(hosts)))
    has_text(br, 'hosts page', [str(h.get('host')) for h in hosts if h.get('host')])
    # Per host: its findings as /api/sweep has them (the run's are final by now: the same a minute on), and
    # a chart with points when the lake has its beats (the daemons beat every second).
    sweep = web.api('/api/sweep')
    if sweep.get('schema') != 'tracer.sweep.v1':
        problem('hosts page: /api/sweep is not tracer.sweep.v1: %r' % sweep.get('schema'))
    if (sweep.get('thresholds') or {}).get('run_idle_min_s') != a.run_idle_min_s:
        problem('hosts page: /api/sweep judges with run_idle_min_s %r, not the config\'s %r'
                % ((sweep.get('thresholds') or {}).get('run_idle_min_s'), a.run_idle_min_s))
    sections = json.loads(br.evaluate(
        "JSON.stringify(Array.from(document.querySelectorAll('section.host-activity')).map(function (s) {"
        " var p = s.querySelector('path.activity-cpu');"
        " return {host: s.getAttribute('data-host'), findings: s.querySelectorAll('tr.finding-row').length,"
        " beats: p ? +p.getAttribute('data-beats') : 0,"
        " clamp: Array.from(s.querySelectorAll('.activity-clamp')).map(function (e) { return e.textContent; }),"
        " points: p ? ((p.getAttribute('d') || '').match(/[ML]/g) || []).length : 0}; }))"))
    by_host = {s['host']: s for s in sections}
    nfind = npoints = 0
    unsaid = []
    for h in [h.get('host') for h in hosts if h.get('host')]:
        s = by_host.get(h)
        if not s:
            problem('hosts page: no activity section for host %s' % h)
            continue
        want = [f for f in sweep.get('findings') or [] if f.get('host') == h]
        if s['findings'] != len(want):
            problem('hosts page: host %s: %d finding rows, /api/sweep has %d' % (h, s['findings'], len(want)))
        status, _, body = web.get('/api/hosts/activity?host=' + urllib.parse.quote(h),
                                  {'Authorization': 'Bearer ' + web.token})
        act = json.loads(body) if status == 200 else {}
        beats = act.get('beats') or []
        # Within the host: no beat beyond its CPUs or memory; the legend says what the API clamped, and only then.
        for b in beats:
            if b.get('cpus') and (b.get('cpu_cores') or 0) > b['cpus'] * (1 + 1e-9):
                problem('hosts page: host %s: a beat of %r cores on %r CPUs' % (h, b['cpu_cores'], b['cpus']))
            if b.get('mem_total_bytes') and (b.get('mem_used_bytes') or 0) > b['mem_total_bytes']:
                problem('hosts page: host %s: a beat of %r bytes used of %r' % (h, b['mem_used_bytes'], b['mem_total_bytes']))
        for key, says in CLAMP_BEATS:
            shown = [t for t in s['clamp'] if t.startswith(says)]
            if act.get(key) and s['beats'] and not shown:
                unsaid.append((h, key, act[key]))  # or a beat clamped since the page asked: looked at again below
            if not act.get(key) and shown:
                problem('hosts page: host %s: nothing clamped (%s), the legend says %r' % (h, key, shown))
        if status not in (200, 404):
            problem('hosts page: /api/hosts/activity?host=%s: HTTP %d' % (h, status))
        if [b for b in beats if b.get('cpu_cores') is not None] and (s['beats'] < 1 or s['points'] < 2):
            problem('hosts page: host %s has %d beats in the lake, its chart %d (%d points)'
                    % (h, len(beats), s['beats'], s['points']))
        for b, c in zip(beats, beats[1:]):
            if c['start_ns'] < b['start_ns']:
                problem('hosts page: /api/hosts/activity?host=%s: beats not oldest first' % h)
                break
        nfind += s['findings']
        npoints += s['points']
    if a.clamped_host:
        s = by_host.get(a.clamped_host) or {}
        act = web.api('/api/hosts/activity?host=' + a.clamped_host)
        if not act.get('cpu_clamped') or not act.get('mem_clamped'):
            problem('hosts page: host %s: its beats beyond its CPUs and memory are not clamped (%r, %r)'
                    % (a.clamped_host, act.get('cpu_clamped'), act.get('mem_clamped')))
        if len([t for t in s.get('clamp') or [] if t.startswith(('CPU clamped to the host\'s 2 CPUs in ',
                                                                  'memory used clamped to the host\'s total in '))]) != 2:
            problem('hosts page: host %s: its chart\'s legend says %r, not that CPU and memory were clamped'
                    % (a.clamped_host, s.get('clamp')))
        else:
            print('hosts page: host %s clamped, its legend says %r' % (a.clamped_host, s['clamp']))
    if unsaid:  # drawn again, from the API's answer of now: its legend must say what was clamped by then
        open_page(br, web, '/hosts', 'hosts page (again)')
        legends = json.loads(br.evaluate(
            "JSON.stringify(Array.from(document.querySelectorAll('section.host-activity')).map(function (s) {"
            " return [s.getAttribute('data-host'), Array.from(s.querySelectorAll('.activity-clamp'))"
            " .map(function (e) { return e.textContent; })]; }))"))
        legends = dict((h, t) for h, t in legends)
        for h, key, k in unsaid:
            says = dict(CLAMP_BEATS)[key]
            if not [t for t in legends.get(h) or [] if t.startswith(says)]:
                problem('hosts page: host %s: %d beats clamped (%s), the legend does not say so' % (h, k, key))
    if nfind < a.findings_at_least:
        problem('hosts page: %d finding rows, the config makes at least %d' % (nfind, a.findings_at_least))
    no_xss(br, 'hosts page', 'tracer: hosts', 2)
    page_findings(br, web, 'hosts page')
    print('hosts page: %d host rows; %d activity sections, %d chart points, %d finding rows (/api/sweep: %d findings)'
          % (rows, len(sections), npoints, nfind, len(sweep.get('findings') or [])))


def check_pages(web, a):
    run = [r for r in web.api('/api/runs?limit=500').get('runs', []) if r.get('run_id') == a.run]
    if not run:
        raise SystemExit('check_web: run #%d is not in /api/runs' % a.run)
    br = browser(900)
    try:
        # The cookie: ?token= sets it and redirects to the same path without the token.
        br.navigate('%s/?token=%s' % (web.base, urllib.parse.quote(web.token)))
        href = br.evaluate('location.href')
        if href != web.base + '/':
            problem('/?token=: the browser is at %r, not %s/' % (href, web.base))
        cookies = [c for c in br.call('Network.getCookies', {'urls': [web.base + '/']}).get('cookies', [])
                   if c.get('name') == 'tracer_token']
        if len(cookies) != 1 or not cookies[0].get('httpOnly') or cookies[0].get('sameSite') != 'Strict':
            problem('/?token=: the browser keeps %r, not one tracer_token cookie HttpOnly SameSite=Strict' % cookies)
        if 'tracer_token' in (br.evaluate('document.cookie') or ''):
            problem('/?token=: the page script can read the token cookie')
        check_runs_page(br, web, a, run[0])
        check_run_page(br, web, a, run[0])
        check_pipeline_page(br, web, a, run[0])
        check_hosts_page(br, web, a)
    finally:
        br.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--url')
    ap.add_argument('--token-file')
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('static')
    p.add_argument('dir')
    p = sub.add_parser('access')
    p.add_argument('--run', type=int, required=True)
    p = sub.add_parser('live')
    p.add_argument('--pid', type=int, required=True)
    p.add_argument('--shots', required=True)
    p.add_argument('--timeout', type=float, default=40)
    p.add_argument('--max-latency', type=float, default=5)
    p = sub.add_parser('pages')
    p.add_argument('--run', type=int, required=True)
    p.add_argument('--shots', required=True)
    p.add_argument('--docs', help='also save the docs screenshots (web-runs.png, ...) here')
    p.add_argument('--hostile', nargs='+', default=[], help='texts every page of the run shows')
    p.add_argument('--run-hostile', nargs='*', default=[], help='texts the run page shows too')
    p.add_argument('--run-idle-min-s', type=float, default=300,
                   help="tracer-web's config's sweep_run_idle_min, in seconds (what /api/sweep must judge with)")
    p.add_argument('--findings-at-least', type=int, default=0, help='finding rows the hosts page must show')
    p.add_argument('--clamped-host', help='a host whose beats say more than it has: its chart must say it was clamped')
    a = ap.parse_args()
    if a.cmd == 'static':
        check_static(a)
        return 1 if PROBLEMS else 0
    if not a.url or not a.token_file:
        ap.error('--url and --token-file are needed')
    with open(a.token_file) as f:
        web = Web(a.url, f.read().strip())
    {'access': check_access, 'live': check_live, 'pages': check_pages}[a.cmd](web, a)
    return 1 if PROBLEMS else 0


if __name__ == '__main__':
    sys.exit(main())
