#!/usr/bin/env python3
"""A small Chrome DevTools Protocol client, standard library only, for the HTML report's browser test.

    cdp.py PAGE.html [--screenshot OUT.png] [--eval NAME=EXPRESSION ...] [--browser PATH] [--ready-timeout S]

Starts the headless shell (chromium-headless-shell, `make deps`) with its own profile in a temporary
directory, opens file://PAGE.html, waits for the page's load event (and for <body data-ready>, which the
report sets when it has drawn itself), evaluates each EXPRESSION in the page and prints one JSON object:

    {"errors": [...], "dialogs": [...], "requests": [...], "values": {NAME: value, ...}}

errors: uncaught exceptions (Runtime.exceptionThrown), console.error calls (Runtime.consoleAPICalled) and
the browser's own error log entries (Log.entryAdded: a Content-Security-Policy violation is one);
dialogs: every alert/confirm/prompt the page opened (Page.javascriptDialogOpening), dismissed;
requests: every request for anything but the page itself (Network.requestWillBeSent).
Exit status 0 when the page was read (the caller judges the findings), 2 when the browser could not be run.

With --timing (bench/html.sh), values also has ready_ms, when <body data-ready> was set, and painted_ms, the
frame after it, in milliseconds since the navigation began (the document's performance.now()), recorded by an
observer DevTools adds before the page's own script runs.

As a module (tests/e2e/check_web.py): Browser (navigate, wait_ready, evaluate, pump, screenshot, stop),
find_browser and findings drive several pages of a server in one browser.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

BROWSERS = ('/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell',
            '/usr/lib/chromium/headless_shell', '/usr/bin/chromium', '/usr/bin/chromium-browser')
WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'  # RFC 6455, section 1.3
# --timing: the moment the page sets <body data-ready> (a mutation observer's callback runs right after the
# script that set it), and the next frame after it.
READY_TIMING_JS = (
    "new MutationObserver(function (list, obs) {"
    "  if (!document.body || document.body.getAttribute('data-ready') !== '1') return;"
    "  obs.disconnect();"
    "  window.__tracerReadyMs = performance.now();"
    "  requestAnimationFrame(function () { setTimeout(function () { window.__tracerPaintedMs = performance.now(); }); });"
    "}).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });")


class WebSocket:
    """A client WebSocket (RFC 6455): text frames out (masked), text frames in, pings answered."""

    def __init__(self, url, timeout=30):
        m = re.match(r'ws://([^/:]+):(\d+)(/.*)$', url)
        if not m:
            raise ValueError('not a ws:// URL: %r' % url)
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode('ascii')
        self.sock.sendall(('GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                           'Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n'
                           % (path, host, port, key)).encode('ascii'))
        head = b''
        while b'\r\n\r\n' not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError('the browser closed the connection during the handshake')
            head += chunk
        head, self.buf = head.split(b'\r\n\r\n', 1)
        lines = head.decode('latin-1').split('\r\n')
        if ' 101 ' not in lines[0] + ' ':
            raise ConnectionError('handshake refused: %s' % lines[0])
        want = base64.b64encode(hashlib.sha1((key + WS_GUID).encode('ascii')).digest()).decode('ascii')
        accept = [ln.split(':', 1)[1].strip() for ln in lines[1:] if ln.lower().startswith('sec-websocket-accept:')]
        if accept != [want]:
            raise ConnectionError('handshake: wrong Sec-WebSocket-Accept')

    def _frame(self, opcode, payload):
        n = len(payload)
        if n < 126:
            head = struct.pack('!BB', 0x80 | opcode, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack('!BBH', 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack('!BBQ', 0x80 | opcode, 0x80 | 127, n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def send(self, text):
        self._frame(0x1, text.encode('utf-8'))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError('the browser closed the connection')
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        """The next whole text message (fragments joined)."""
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0f, b1 & 0x7f
            if n == 126:
                n = struct.unpack('!H', self._read(2))[0]
            elif n == 127:
                n = struct.unpack('!Q', self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:
                self._frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError('the browser closed the WebSocket')
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if b0 & 0x80:
                    return b''.join(parts).decode('utf-8')

    def close(self):
        try:
            self._frame(0x8, b'')
        except OSError:
            pass
        self.sock.close()


class Browser:
    """The headless shell, driven over one flattened DevTools session on one page."""

    def __init__(self, binary, timeout=30):
        self.profile = tempfile.mkdtemp(prefix='tracer-cdp.')
        args = [binary, '--headless', '--remote-debugging-port=0', '--user-data-dir=' + self.profile,
                '--no-first-run', '--no-default-browser-check', '--disable-gpu', '--disable-extensions',
                '--disable-background-networking', '--disable-dev-shm-usage', '--disable-sync', 'about:blank']
        if os.geteuid() == 0:
            args.insert(1, '--no-sandbox')  # Chromium refuses to run as root with its sandbox
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        url, seen, deadline = None, [], time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stderr.readline().decode('utf-8', 'replace')
            if not line:
                break
            seen.append(line)
            m = re.search(r'DevTools listening on (ws://\S+)', line)
            if m:
                url = m.group(1)
                break
        if not url:
            self.stop()
            raise RuntimeError('the browser gave no DevTools URL; it said:\n' + ''.join(seen[-20:]))
        self.ws = WebSocket(url, timeout)
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        self.session = self.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if self.session:
            msg['sessionId'] = self.session
        self.ws.send(json.dumps(msg))
        deadline = time.time() + timeout
        while time.time() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get('id') == self.next_id:
                if 'error' in reply:
                    raise RuntimeError('%s: %s' % (method, reply['error']))
                return reply.get('result', {})
            if 'method' in reply:
                self.on_event(reply)
        raise TimeoutError(method)

    def on_event(self, ev):
        self.events.append(ev)
        if ev['method'] == 'Page.javascriptDialogOpening':  # never leave the page blocked on a dialog
            self.ws.send(json.dumps({'id': 0, 'method': 'Page.handleJavaScriptDialog', 'sessionId': self.session,
                                     'params': {'accept': False}}))

    def pump(self, seconds):
        """Read events for a while (a no-op evaluation every 100 ms keeps the socket busy)."""
        end = time.time() + seconds
        while time.time() < end:
            self.call('Runtime.evaluate', {'expression': '0'})
            time.sleep(0.1)

    def wait_event(self, method, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if any(e['method'] == method for e in self.events):
                return True
            self.pump(0.1)
        return False

    def evaluate(self, expression):
        r = self.call('Runtime.evaluate', {'expression': expression, 'returnByValue': True})
        if 'exceptionDetails' in r:
            return {'exception': r['exceptionDetails'].get('text')}
        return r.get('result', {}).get('value')

    def navigate(self, url, timeout=30):
        """Open url and wait for its load event; True if it came. Events seen before are dropped."""
        self.events = []
        self.call('Page.navigate', {'url': url})
        return self.wait_event('Page.loadEventFired', timeout)

    def wait_ready(self, timeout=30):
        """Wait for <body data-ready="1"> (the report and tracer-web's pages set it); True if it came."""
        end = time.time() + timeout
        while time.time() < end:
            if self.evaluate("document.body && document.body.getAttribute('data-ready')") == '1':
                return True
            self.pump(0.1)
        return False

    def screenshot(self, path):
        """The whole page, beyond the viewport, as a PNG file."""
        shot = self.call('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(shot['data']))

    def stop(self):
        if getattr(self, 'ws', None):
            self.ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def findings(events, page_url):
    errors, dialogs, requests = [], [], []
    for ev in events:
        m, p = ev['method'], ev.get('params', {})
        if m == 'Runtime.exceptionThrown':
            d = p.get('exceptionDetails', {})
            errors.append('exception: %s %s' % (d.get('text'), d.get('exception', {}).get('description', '')))
        elif m == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
            errors.append('console.%s: %s' % (p['type'], ' '.join(str(a.get('value', a.get('description')))
                                                                   for a in p.get('args', []))))
        elif m == 'Log.entryAdded' and p.get('entry', {}).get('level') == 'error':
            errors.append('log (%s): %s' % (p['entry'].get('source'), p['entry'].get('text')))
        elif m == 'Page.javascriptDialogOpening':
            dialogs.append('%s: %s' % (p.get('type'), p.get('message')))
        elif m == 'Network.requestWillBeSent':
            url = p.get('request', {}).get('url', '')
            if url != page_url and not url.startswith('data:'):
                requests.append(url)
    return errors, dialogs, requests


def find_browser(given):
    for b in ([given] if given else []) + [os.environ.get('TRACER_BROWSER', '')] + list(BROWSERS):
        if b and os.access(b, os.X_OK):
            return b
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('page')
    ap.add_argument('--screenshot')
    ap.add_argument('--eval', action='append', default=[], metavar='NAME=EXPRESSION')
    ap.add_argument('--browser')
    ap.add_argument('--timeout', type=float, default=30)
    ap.add_argument('--ready-timeout', type=float, default=30, help='seconds to wait for <body data-ready>')
    ap.add_argument('--timing', action='store_true', help='report ready_ms and painted_ms (see above)')
    a = ap.parse_args()
    binary = find_browser(a.browser)
    if not binary:
        print('cdp.py: no headless Chromium (make deps installs chromium-headless-shell)', file=sys.stderr)
        return 2
    try:
        br = Browser(binary, a.timeout)
    except (RuntimeError, OSError) as e:
        print('cdp.py: cannot drive %s: %s' % (binary, e), file=sys.stderr)
        return 2
    try:
        for domain in ('Runtime', 'Log', 'Page', 'Network'):
            br.call(domain + '.enable')
        br.call('Emulation.setDeviceMetricsOverride', {'width': 1300, 'height': 1800, 'deviceScaleFactor': 1,
                                                       'mobile': False})
        url = 'file://' + os.path.abspath(a.page)
        if a.timing:
            br.call('Page.addScriptToEvaluateOnNewDocument', {'source': READY_TIMING_JS})
        br.call('Page.navigate', {'url': url})
        loaded = br.wait_event('Page.loadEventFired', a.timeout)
        end = time.time() + a.ready_timeout
        while time.time() < end and br.evaluate("document.body && document.body.getAttribute('data-ready')") != '1':
            br.pump(0.1)
        br.pump(0.5)  # late errors (a violation is reported after the fact)
        if a.screenshot:  # the page as it opened, before any expression acts on it
            shot = br.call('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True})
            with open(a.screenshot, 'wb') as f:
                f.write(base64.b64decode(shot['data']))
        values = {'loaded': loaded}
        if a.timing:
            values['ready_ms'] = br.evaluate('window.__tracerReadyMs')
            values['painted_ms'] = br.evaluate('window.__tracerPaintedMs')
        for item in a.eval:
            name, _, expr = item.partition('=')
            values[name] = br.evaluate(expr)
        br.pump(0.2)  # what the expressions set off
        errors, dialogs, requests = findings(br.events, url)
        print(json.dumps({'errors': errors, 'dialogs': dialogs, 'requests': requests, 'values': values}, indent=1))
        return 0
    finally:
        br.stop()


if __name__ == '__main__':
    sys.exit(main())
