#!/usr/bin/env python3
"""An OTLP/HTTP receiver for tests/e2e/test_export_otlp.sh: it keeps every request and answers as told.

    otlp_receiver.py DIR

Listens on 127.0.0.1, a port the kernel picks, written to DIR/port once it listens. Each request is kept:
its body in DIR/body-N.json and a line in DIR/requests.ndjson ({"n", "t": CLOCK_MONOTONIC seconds when
it arrived, "path", "content_type", "code": the answer}). The answer is the first line of DIR/plan, taken
off the file: "CODE" or "CODE RETRY_AFTER" (e.g. "503 2", "400"); with no plan, 200. A 2xx carries an
empty ExportTraceServiceResponse ({}), anything else a google.rpc.Status as OTLP/HTTP JSON has it.
"""
import http.server
import json
import os
import sys
import threading
import time

DIR = sys.argv[1]
LOCK = threading.Lock()
COUNT = [0]


def next_answer():
    plan = os.path.join(DIR, "plan")
    try:
        with open(plan) as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
    except FileNotFoundError:
        return 200, None
    if not lines:
        return 200, None
    with open(plan + ".tmp", "w") as f:
        f.write("".join(l + "\n" for l in lines[1:]))
    os.replace(plan + ".tmp", plan)
    words = lines[0].split()
    return int(words[0]), (words[1] if len(words) > 1 else None)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        t = time.monotonic()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
            code, retry_after = next_answer()
            with open(os.path.join(DIR, "body-%d.json" % n), "wb") as f:
                f.write(body)
            with open(os.path.join(DIR, "requests.ndjson"), "a") as f:
                f.write(json.dumps({"n": n, "t": t, "path": self.path, "code": code,
                                    "content_type": self.headers.get("Content-Type"),
                                    "authorization": self.headers.get("Authorization"),
                                    "x_tenant": self.headers.get("X-Tenant")}) + "\n")
        if 200 <= code < 300:
            answer = b"{}"
        else:
            answer = json.dumps({"code": 3 if code == 400 else 14,
                                 "message": "test receiver says %d: span refused on purpose" % code}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.end_headers()
        self.wfile.write(answer)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.replace(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
server.serve_forever()
