#!/usr/bin/env python3
"""An HTTP proxy in front of tracer-ingest that can stop answering.

  hang_proxy.py --upstream 127.0.0.1:PORT --flag FILE --port-file FILE [--log FILE]

Listens on 127.0.0.1 (a port the kernel picks, written to --port-file once
listening). Each request (HTTP/1.1, keep-alive, a Content-Length body) is:

- while FILE does not exist: forwarded to the upstream, and its answer
  relayed (status, Content-Type, Retry-After, body);
- while FILE exists and is empty: read whole, then never answered: the
  connection is held open, silent, until the client gives up and closes it;
- while FILE exists and says "forward": forwarded (so the ingest stores the
  batch), the upstream's answer dropped, then held open the same way: the
  client times out and must retry a batch the lake already has.

With --mirror HOST:PORT every request is also forwarded there (a second
ingest, of another lake), and answered with the upstream's answer only
when the mirror's is 2xx too (else the mirror's): both lakes get every
batch the client sends (test_lake_pg_same.sh).

One line per request goes to --log: "forwarded STATUS", "hung", or
"forwarded-hung STATUS", so a test can count what happened.

With --tls-cert/--tls-key it speaks HTTPS (Python's ssl, TLS 1.2+), and with
--client-ca it also demands a client certificate signed by that CA: a TLS
front for the uploader's verification tests (test_delivery_tls.sh).
"""
import argparse
import http.client
import os
import socket
import socketserver
import ssl
import sys
import threading

LOCK = threading.Lock()


def log(args, line):
    if not args.log:
        return
    with LOCK, open(args.log, 'a') as f:
        f.write(line + '\n')


def read_request(rfile):
    """(method, path, headers dict lower-cased, body) or None at EOF."""
    line = rfile.readline(65536)
    if not line:
        return None
    parts = line.decode('latin-1').split()
    if len(parts) < 2:
        return None
    headers = {}
    while True:
        h = rfile.readline(65536)
        if not h or h in (b'\r\n', b'\n'):
            break
        k, _, v = h.decode('latin-1').partition(':')
        headers[k.strip().lower()] = v.strip()
    body = b''
    n = int(headers.get('content-length', '0') or 0)
    while len(body) < n:
        chunk = rfile.read(n - len(body))
        if not chunk:
            return None
        body += chunk
    return parts[0], parts[1], headers, body


def forward(args, method, path, headers, body, upstream=None):
    host, port = (upstream or args.upstream).rsplit(':', 1)
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    fwd = {k: v for k, v in headers.items() if k in ('content-type', 'idempotency-key')}
    c.request(method, path, body=body if method in ('POST', 'PUT') else None, headers=fwd)
    r = c.getresponse()
    data = r.read()
    out = (r.status, r.reason, r.getheader('Content-Type', 'application/json'), r.getheader('Retry-After'), data)
    c.close()
    return out


def hang(sock):
    """Say nothing until the client closes the connection."""
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        args = self.server.args
        while True:
            req = read_request(self.rfile)
            if req is None:
                return
            method, path, headers, body = req
            mode = None
            try:
                with open(args.flag) as f:
                    mode = 'forward' if 'forward' in f.read() else 'hang'
            except FileNotFoundError:
                pass
            if mode == 'hang':
                log(args, 'hung')
                hang(self.request)
                return
            try:
                status, reason, ctype, retry_after, data = forward(args, method, path, headers, body)
                if args.mirror and 200 <= status < 300:
                    m = forward(args, method, path, headers, body, args.mirror)
                    if not 200 <= m[0] < 300:
                        status, reason, ctype, retry_after, data = m
            except OSError as e:
                log(args, f'upstream-error {e}')
                self.wfile.write(b'HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
                return
            if mode == 'forward':
                log(args, f'forwarded-hung {status}')
                hang(self.request)
                return
            log(args, f'forwarded {status}')
            head = f'HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(data)}\r\n'
            if retry_after:
                head += f'Retry-After: {retry_after}\r\n'
            self.wfile.write(head.encode('latin-1') + b'\r\n' + data)
            self.wfile.flush()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    tls = None

    def get_request(self):
        conn, addr = self.socket.accept()
        if self.tls is None:
            return conn, addr
        conn.settimeout(10)
        try:
            return self.tls.wrap_socket(conn, server_side=True), addr
        except (ssl.SSLError, OSError) as e:  # a client that does not trust us, or has no certificate
            log(self.args, f'tls-refused {e.__class__.__name__}: {e}')
            conn.close()
            raise


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upstream', required=True)
    ap.add_argument('--flag', required=True)
    ap.add_argument('--port-file', required=True)
    ap.add_argument('--log')
    ap.add_argument('--mirror')
    ap.add_argument('--tls-cert')
    ap.add_argument('--tls-key')
    ap.add_argument('--client-ca')
    args = ap.parse_args()
    srv = Server(('127.0.0.1', 0), Handler)
    srv.args = args
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        if args.client_ca:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(args.client_ca)
        srv.tls = ctx
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write(f'{srv.server_address[1]}\n')
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
