#!/usr/bin/python3
"""Checks of tests/e2e/test_export_otlp.sh over what the receiver (otlp_receiver.py) kept.

Every request body the receiver answered 2xx is parsed strictly against the official OTLP protobuf
definitions (tests/e2e/data/otlp, compiled with protoc): google.protobuf.json_format.Parse, unknown fields
refused, after the one documented difference of OTLP/JSON is undone (trace and span ids are hex there,
base64 in the protobuf JSON mapping). Then:

  check_otlp.py tree --recv DIR --first N --tracer T --db LAKE --run RUN [--with-argv]
                     [--failed-exit CODE] [--oom-tool TOOL]
      the trace of run RUN in the requests from number N on, against `tracer report RUN --json`: one root,
      a span per step and per process with the right parents, results, events and attribute values.
  check_otlp.py same --recv DIR --first N --second M --run RUN --tracer T --db LAKE
      the export from request N and the one from request M gave RUN the same trace and span ids.
  check_otlp.py once --recv DIR --first N [--last L] --tracer T --db LAKE --runs R1,R2,...
      in requests N..L, each trace's spans arrived exactly once, and each run listed is there.
  check_otlp.py all --recv DIR
      every request the receiver got, whatever it answered, parses.
  check_otlp.py retried --recv DIR --first N --code C --after S
      request N was answered C and the next one came at least S seconds later, with the same body.

Needs /usr/bin/python3 with python3-protobuf and protoc (make deps installs both).
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOS = os.path.join(HERE, "data", "otlp")


def fail(msg):
    print("check_otlp: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load_protos():
    out = tempfile.mkdtemp(prefix="otlp-pb-")
    files = []
    for root, _, names in os.walk(os.path.join(PROTOS, "opentelemetry")):
        files += [os.path.relpath(os.path.join(root, n), PROTOS) for n in names if n.endswith(".proto")]
    subprocess.run(["protoc", "-I", PROTOS, "--python_out", out] + sorted(files), check=True)
    sys.path.insert(0, out)
    from google.protobuf import json_format  # noqa: E402
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: E402
    return json_format, trace_service_pb2


JSON_FORMAT, TRACE_SERVICE = load_protos()


def hex_to_b64(obj, where):
    """OTLP/JSON's hex ids as the protobuf JSON mapping's base64, checking the hex on the way."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("traceId", "spanId", "parentSpanId"):
                want = 32 if k == "traceId" else 16
                if not isinstance(v, str) or len(v) != want or v != v.lower() or \
                        any(c not in "0123456789abcdef" for c in v) or set(v) == {"0"}:
                    fail("%s: %s %r is not %d lowercase hex digits (not all zero)" % (where, k, v, want))
                obj[k] = base64.b64encode(bytes.fromhex(v)).decode()
            else:
                hex_to_b64(v, where)
    elif isinstance(obj, list):
        for v in obj:
            hex_to_b64(v, where)


def requests(d, first=1, last=None, ok_only=True):
    out = []
    with open(os.path.join(d, "requests.ndjson")) as f:
        for line in f:
            r = json.loads(line)
            if r["n"] < first or (last is not None and r["n"] > last):
                continue
            if ok_only and not 200 <= r["code"] < 300:
                continue
            out.append(r)
    return out


def parsed(d, r):
    """One request: strictly parsed; its JSON (hex ids) returned for the checks."""
    if r["path"] != "/v1/traces":
        fail("request %d went to %s, not /v1/traces" % (r["n"], r["path"]))
    if r["content_type"] != "application/json":
        fail("request %d: Content-Type %r" % (r["n"], r["content_type"]))
    with open(os.path.join(d, "body-%d.json" % r["n"]), "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw)
    except ValueError as e:
        fail("request %d is not JSON: %s" % (r["n"], e))
    mapped = json.loads(raw)
    hex_to_b64(mapped, "request %d" % r["n"])
    try:
        JSON_FORMAT.Parse(json.dumps(mapped), TRACE_SERVICE.ExportTraceServiceRequest(), ignore_unknown_fields=False)
    except JSON_FORMAT.ParseError as e:
        fail("request %d does not parse as an ExportTraceServiceRequest: %s" % (r["n"], e))
    return doc


def value(v):
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        if not isinstance(v["intValue"], str):
            fail("intValue %r is not a string (OTLP/JSON: int64 as a decimal string)" % (v["intValue"],))
        return int(v["intValue"])
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        return [value(x) for x in v["arrayValue"].get("values", [])]
    fail("attribute value of no known kind: %r" % (v,))


def attrs(obj):
    out = {}
    for a in obj.get("attributes", []):
        if a["key"] in out:
            fail("attribute %s twice" % a["key"])
        out[a["key"]] = value(a["value"])
    return out


def spans_of(d, first, last=None):
    """Every span of the 2xx requests in range: (span, its resource's attributes, request number)."""
    out = []
    for r in requests(d, first, last):
        doc = parsed(d, r)
        for rs in doc.get("resourceSpans", []):
            res = attrs(rs.get("resource", {}))
            for ss in rs.get("scopeSpans", []):
                if ss.get("scope", {}).get("name") != "tracer":
                    fail("request %d: scope %r, not tracer" % (r["n"], ss.get("scope")))
                for s in ss.get("spans", []):
                    out.append((s, res, r["n"]))
    return out


def report(args, run):
    p = subprocess.run([args.tracer, "report", "--db", args.db, str(run), "--json"], capture_output=True, text=True)
    if p.returncode:
        fail("tracer report %s --json: %s" % (run, p.stderr))
    return json.loads(p.stdout)


def trace_of(spans, run):
    roots = [s for s, _, _ in spans if "parentSpanId" not in s and attrs(s).get("tracer.run.id") == int(run)]
    if len(roots) != 1:
        fail("run %s: %d root spans, want 1" % (run, len(roots)))
    tid = roots[0]["traceId"]
    return roots[0], [(s, res, n) for s, res, n in spans if s["traceId"] == tid]


def cmd_tree(args):
    spans = spans_of(args.recv, args.first)
    rep = report(args, args.run)
    root, mine = trace_of(spans, args.run)
    ra = attrs(root)
    run = rep["run"]
    want_name = run.get("pipeline") or run.get("run_name")
    if root["name"] != want_name:
        fail("root span named %r, want the pipeline %r" % (root["name"], want_name))
    if ra.get("cicd.pipeline.name") != want_name:
        fail("cicd.pipeline.name %r, want %r" % (ra.get("cicd.pipeline.name"), want_name))
    if ra.get("cicd.pipeline.run.id") != (run.get("run_id") or run.get("key")):
        fail("cicd.pipeline.run.id %r, want %r" % (ra.get("cicd.pipeline.run.id"), run.get("run_id")))
    want_result = {"succeeded": "success", "failed": "failure"}.get(rep["state"], "error")
    if ra.get("cicd.pipeline.result") != want_result:
        fail("cicd.pipeline.result %r, want %r (state %s)" % (ra.get("cicd.pipeline.result"), want_result, rep["state"]))
    if want_result != "success" and root.get("status", {}).get("code") != 2:
        fail("the root span of a %s run has status %r, want code 2 (error)" % (rep["state"], root.get("status")))
    if int(root["startTimeUnixNano"]) != rep["start_ns"] or int(root["endTimeUnixNano"]) != rep["end_ns"]:
        fail("root span times %s..%s, the report's %s..%s" % (root["startTimeUnixNano"], root["endTimeUnixNano"],
                                                             rep["start_ns"], rep["end_ns"]))
    ids = [s["spanId"] for s, _, _ in mine]
    if len(ids) != len(set(ids)):
        fail("a span id sent twice in one export")
    host = rep.get("host") or {}
    for s, res, n in mine:
        if not res.get("host.id"):
            fail("request %d: a resource without host.id" % n)
    root_res = [res for s, res, _ in mine if s is root][0]
    if root_res.get("host.id") != run_host(args, args.run):
        fail("the run's resource host.id %r, want the lake's host %r" % (root_res.get("host.id"),
                                                                        run_host(args, args.run)))
    if host.get("name") and root_res.get("host.name") != host["name"]:
        fail("host.name %r, want %r" % (root_res.get("host.name"), host["name"]))

    steps = {s["spanId"]: s for s, _, _ in mine if s.get("parentSpanId") == root["spanId"] and
             "cicd.pipeline.task.run.id" in attrs(s)}
    by_step_id = {attrs(s)["cicd.pipeline.task.run.id"]: s for s in steps.values()}
    if sorted(by_step_id) != sorted(st["id"] for st in rep["steps"]):
        fail("step spans %s, the report's steps %s" % (sorted(by_step_id), sorted(st["id"] for st in rep["steps"])))
    for st in rep["steps"]:
        sp = by_step_id[st["id"]]
        a = attrs(sp)
        if sp["name"] != (st["name"] or st["id"]) or a.get("cicd.pipeline.task.name") != (st["name"] or st["id"]):
            fail("step %s: span %r, task name %r" % (st["id"], sp["name"], a.get("cicd.pipeline.task.name")))
        want = {"succeeded": "success", "failed": "failure"}.get(st["state"], "error")
        if a.get("cicd.pipeline.task.run.result") != want:
            fail("step %s (%s): result %r, want %r" % (st["id"], st["state"], a.get("cicd.pipeline.task.run.result"),
                                                       want))
        for key, field in (("tracer.step.cpu_ns", "cpu_ns"), ("tracer.step.memory.peak_bytes", "peak_rss_bytes"),
                           ("tracer.step.processes", "processes"), ("tracer.step.exit_code", "exit_code")):
            if a.get(key) != st[field]:
                fail("step %s: %s %r, the report's %s %r" % (st["id"], key, a.get(key), field, st[field]))
    procs = [(s, res) for s, res, _ in mine if "process.pid" in attrs(s) and s["spanId"] not in steps and
             s is not root]
    if len(procs) != len(rep["processes"]):
        fail("%d process spans, the report has %d processes" % (len(procs), len(rep["processes"])))
    by_key = {}
    for s, res in procs:
        a = attrs(s)
        by_key[(a["process.pid"], int(s["startTimeUnixNano"]))] = (s, a)
    for p in rep["processes"]:
        key = (p["pid"], p["start_ns"] or rep["start_ns"])
        if key not in by_key:
            fail("process %s (started %s) has no span" % key)
        s, a = by_key[key]
        want_parent = by_step_id[p["step"]]["spanId"] if p["step"] in by_step_id else root["spanId"]
        if s["parentSpanId"] != want_parent:
            fail("process %d: parent %s, want %s (step %r)" % (p["pid"], s["parentSpanId"], want_parent, p["step"]))
        exe = p["exe"].rsplit("/", 1)[-1] if p["exe"] else None
        checks = (("process.parent_pid", p["ppid"]), ("process.exit.code", p["exit_code"]),
                  ("process.executable.name", exe), ("tracer.process.cpu.user_ns", p["cpu_user_ns"]),
                  ("tracer.process.cpu.system_ns", p["cpu_sys_ns"]),
                  ("tracer.process.memory.peak_bytes", p["peak_rss_bytes"]),
                  ("tracer.process.io.read_bytes", p["read_bytes"]), ("tracer.process.io.write_bytes", p["write_bytes"]),
                  ("tracer.tool", p["tool"]), ("tracer.step.id", p["step"]))
        for key, want in checks:
            if a.get(key) != want:
                fail("process %d (%s): %s %r, the report's %r" % (p["pid"], exe, key, a.get(key), want))
        if args.with_argv:
            if a.get("process.command_args") != p["argv"]:
                fail("process %d: process.command_args %r, the lake's argv %r" % (p["pid"], a.get("process.command_args"),
                                                                                 p["argv"]))
        elif "process.command_args" in a:
            fail("process %d: command line sent without --with-argv" % p["pid"])
        if p["end_ns"] and int(s["endTimeUnixNano"]) != p["end_ns"]:
            fail("process %d: end %s, the report's %s" % (p["pid"], s["endTimeUnixNano"], p["end_ns"]))
    # signals: each one an event, once, with its kind and evidence
    events = [(s, e) for s, _, _ in mine for e in s.get("events", [])]
    kinds = sorted(e["name"] for _, e in events)
    want_kinds = sorted(sg["kind"] for sg in rep.get("signals", []))
    if kinds != want_kinds:
        fail("events %s, the report's signals %s" % (kinds, want_kinds))
    if args.oom_tool:
        oom = [(s, e) for s, e in events if e["name"] == "oom_kill"]
        if not oom:
            fail("no oom_kill event")
        s, e = oom[0]
        a = attrs(s)
        if "process.pid" not in a or a.get("tracer.process.oom_killed") is not True or s.get("status", {}).get("code") != 2:
            fail("the oom_kill event is not on the killed process's span (error status, oom_killed): %r" % (a,))
        if a.get("tracer.tool") != args.oom_tool:
            fail("the OOM-killed process is %r, want the %s" % (a.get("tracer.tool"), args.oom_tool))
        ev = json.loads(attrs(e)["tracer.signal.evidence"])
        if ev.get("kind") != "oom_kill" or "anon_rss_kb" not in ev:
            fail("oom_kill evidence %r" % (ev,))
    if args.failed_exit is not None:
        st = [s for s in steps.values() if attrs(s).get("tracer.step.exit_code") == args.failed_exit]
        if len(st) != 1 or st[0].get("status", {}).get("code") != 2:
            fail("no one step span of exit code %d with an error status" % args.failed_exit)
        if attrs(st[0]).get("cicd.pipeline.task.run.result") != "failure":
            fail("the failed step: result %r" % attrs(st[0]).get("cicd.pipeline.task.run.result"))
        failed = [(s, e) for s, e in events if e["name"] == "failed" and
                  attrs(e).get("tracer.signal.step") == attrs(st[0])["cicd.pipeline.task.run.id"]]
        if not failed:
            fail("no failed event for the step that exited %d" % args.failed_exit)
    print("check_otlp: run %s: 1 root, %d step spans, %d process spans, %d events (%s), ids unique" %
          (args.run, len(steps), len(procs), len(events), ", ".join(sorted(set(kinds)))))


def run_host(args, run):
    p = subprocess.run([args.tracer, "report", "--db", args.db, "--json"], capture_output=True, text=True)
    for r in json.loads(p.stdout)["runs"] if p.stdout.strip().startswith("{") else json.loads(p.stdout):
        if r["run_id"] == int(run):
            return r["host"]
    fail("run %s not in tracer report --json" % run)


def cmd_same(args):
    a_root, a = trace_of(spans_of(args.recv, args.first, args.second - 1), args.run)
    b_root, b = trace_of(spans_of(args.recv, args.second), args.run)
    ia = sorted((s["traceId"], s["spanId"], s.get("parentSpanId")) for s, _, _ in a)
    ib = sorted((s["traceId"], s["spanId"], s.get("parentSpanId")) for s, _, _ in b)
    if ia != ib:
        fail("run %s exported twice: %d and %d spans, ids differ" % (args.run, len(ia), len(ib)))
    print("check_otlp: run %s exported twice: the same trace id and %d span ids" % (args.run, len(ia)))


def cmd_once(args):
    spans = spans_of(args.recv, args.first, args.last)
    seen = {}
    for s, _, n in spans:
        key = (s["traceId"], s["spanId"])
        if key in seen:
            fail("span %s of trace %s sent twice (requests %d and %d)" % (s["spanId"], s["traceId"], seen[key], n))
        seen[key] = n
    for run in args.runs.split(","):
        trace_of(spans, run)
    traces = {s["traceId"] for s, _, _ in spans}
    print("check_otlp: requests %d..%s: %d traces, %d spans, none twice; runs %s there" %
          (args.first, args.last or "end", len(traces), len(seen), args.runs))


def cmd_retried(args):
    rs = {r["n"]: r for r in requests(args.recv, ok_only=False)}
    a, b = rs.get(args.first), rs.get(args.first + 1)
    if not a or a["code"] != args.code:
        fail("request %d was answered %r, want %d" % (args.first, a and a["code"], args.code))
    if not b:
        fail("no request after the %d: not retried" % args.code)
    gap = b["t"] - a["t"]
    if gap < args.after:
        fail("retried %.3f s after the %d, want at least %.3f s" % (gap, args.code, args.after))
    with open(os.path.join(args.recv, "body-%d.json" % a["n"]), "rb") as f:
        ba = f.read()
    with open(os.path.join(args.recv, "body-%d.json" % b["n"]), "rb") as f:
        bb = f.read()
    if ba != bb:
        fail("the retry's body differs from the first attempt's")
    print("check_otlp: %d answered, retried after %.3f s (want >= %.3f s) with the same %d bytes" %
          (args.code, gap, args.after, len(ba)))


def cmd_all(args):
    rs = requests(args.recv, ok_only=False)
    spans = 0
    for r in rs:
        doc = parsed(args.recv, r)
        spans += sum(len(ss.get("spans", [])) for rs_ in doc.get("resourceSpans", []) for ss in rs_.get("scopeSpans", []))
    if not rs:
        fail("no request at all")
    print("check_otlp: all %d requests (%d answered 2xx) parse as ExportTraceServiceRequest: %d spans" %
          (len(rs), sum(1 for r in rs if 200 <= r["code"] < 300), spans))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["tree", "same", "once", "retried", "all"])
    ap.add_argument("--recv", required=True)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--second", type=int)
    ap.add_argument("--last", type=int)
    ap.add_argument("--tracer")
    ap.add_argument("--db")
    ap.add_argument("--run")
    ap.add_argument("--runs")
    ap.add_argument("--with-argv", action="store_true")
    ap.add_argument("--failed-exit", type=int)
    ap.add_argument("--oom-tool")
    ap.add_argument("--code", type=int)
    ap.add_argument("--after", type=float)
    args = ap.parse_args()
    {"tree": cmd_tree, "same": cmd_same, "once": cmd_once, "retried": cmd_retried, "all": cmd_all}[args.cmd](args)


main()
