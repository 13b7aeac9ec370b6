#!/usr/bin/env python3
"""tests/e2e/test_prometheus.sh's checks, against Debian's prometheus server scraping tracer-web.

  scrapes --prom URL --count N --timeout S
      the target (tracer-web's /metrics) up, and N scrapes of it seen (its lastScrape changing, each up)
  lake --prom URL --db LAKE --tracer TRACER
      what the server's query API returns is what the lake holds, computed here with SQL of our own:
      tracer_host_last_seen_seconds per host; tracer_pipeline_runs per pipeline and state;
      tracer_pipeline_steps per pipeline and state; tracer_pipeline_class_steps per pipeline and class:
      the tasks of `tracer tune --db LAKE --format json`'s profiles of each class (zero for the others);
      tracer_step_duration_seconds' buckets (cumulative, at
      the documented bounds), _sum and _count per pipeline and step; tracer_build_info 1 with its labels;
      up 1. The lake must be still (the daemons stopped) and small: at most 20 pipelines and 50 step names
      each, no name of more than 120 bytes or named "other" (else the caps, tested in the unit tests, apply).
"""
import argparse
import json
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request

BOUNDS = [1, 5, 15, 60, 300, 900, 3600, 14400, 86400]
STATES = ("running", "succeeded", "failed", "lost")
CLASSES = ("unknown", "compute", "memory", "io", "network", "idle")


def api(prom, path, **q):
    url = prom + path + ("?" + urllib.parse.urlencode(q) if q else "")
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise RuntimeError(f"{url}: {doc}")
    return doc["data"]


def query(prom, q):
    """An instant query's vector as {frozenset(labels but __name__ and the target's job and instance): value}."""
    out = {}
    for s in api(prom, "/api/v1/query", query=q)["result"]:
        labels = {k: v for k, v in s["metric"].items() if k not in ("__name__", "job", "instance")}
        key = frozenset(labels.items())
        if key in out:
            raise RuntimeError(f"{q}: two series with the labels {labels}")
        out[key] = float(s["value"][1])
    return out


def cmd_scrapes(args):
    seen, last, t0 = set(), None, time.monotonic()
    while time.monotonic() - t0 < args.timeout:
        targets = api(args.prom, "/api/v1/targets")["activeTargets"]
        if targets:
            t = targets[0]
            last = t
            if t["health"] == "up" and t.get("lastScrape"):
                seen.add(t["lastScrape"])
            if len(seen) >= args.count:
                print(f"scrapes: {len(seen)} seen up in {time.monotonic() - t0:.1f} s, "
                      f"the last {t['lastScrapeDuration']:.3f} s long")
                return 0
        time.sleep(0.2)
    print(f"FAIL: within {args.timeout} s, {len(seen)} scrape(s) up; the target: {last}", file=sys.stderr)
    return 1


def lbl(**kw):
    return frozenset((k, v) for k, v in kw.items() if v != "")  # an empty label is no label in Prometheus


def classes(tracer, db, pipes):
    """tracer_pipeline_class_steps as tracer tune's profiles say: each profile's tasks in its class."""
    doc = json.loads(subprocess.run([tracer, "tune", "--db", db, "--format", "json"], check=True,
                                    capture_output=True, text=True).stdout)
    out = {lbl(pipeline=p, **{"class": c}): 0 for p in pipes if p for c in CLASSES}
    for prof in doc["steps"]:
        out[lbl(pipeline=prof["pipeline"], **{"class": prof["class"]})] += prof["tasks"]
    return out


def expected(db, tracer):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    c.text_factory = lambda b: b.decode("utf-8", "replace")
    exp = {"tracer_host_last_seen_seconds": {}, "tracer_pipeline_runs": {}, "tracer_pipeline_steps": {},
           "tracer_step_duration_seconds_bucket": {}, "tracer_step_duration_seconds_sum": {},
           "tracer_step_duration_seconds_count": {}}
    for host, seen in c.execute("SELECT host_id, last_seen_ns FROM hosts"):
        exp["tracer_host_last_seen_seconds"][lbl(host=host)] = seen / 1e9
    pipes = set()
    for pipe, state, n in c.execute("SELECT coalesce(pipeline, ''), state, count(*) FROM runs "
                                    "WHERE joined_run_id IS NULL GROUP BY 1, 2"):
        pipes.add(pipe)
        k = lbl(pipeline=pipe, state=state if state in STATES else "other")
        exp["tracer_pipeline_runs"][k] = exp["tracer_pipeline_runs"].get(k, 0) + n
    assert len(pipes) <= 20, f"{len(pipes)} pipelines: more than this check knows of"
    for p in pipes:
        assert len(p.encode()) <= 120 and p != "other", f"pipeline {p!r}: a name this check does not map"
        for st in STATES + ("other",):
            exp["tracer_pipeline_steps"][lbl(pipeline=p, state=st)] = 0
    rows = c.execute("SELECT coalesce(r.pipeline, ''), coalesce(nullif(s.name, ''), s.step_id, ''), s.state, "
                     "coalesce(s.engine, r.engine), s.running, s.start_ns, s.end_ns FROM steps s "
                     "JOIN runs r ON r.run_id = s.run_id WHERE r.joined_run_id IS NULL").fetchall()
    names = {}
    for pipe, name, state, engine, running, start, end in rows:
        assert engine != "nextflow", "a Nextflow step: this check does not take its tags off"
        k = lbl(pipeline=pipe, state=state if state in STATES else "other")
        exp["tracer_pipeline_steps"][k] += 1
        if (running or 0) or state == "running" or not start or start <= 0 or end is None or end < start:
            continue
        assert len(name.encode()) <= 120 and name != "other", f"step {name!r}: a name this check does not map"
        names.setdefault(pipe, set()).add(name)
        d = (end - start) / 1e9
        for b in BOUNDS + ["+Inf"]:
            k = lbl(pipeline=pipe, step=name, le=str(b))
            exp["tracer_step_duration_seconds_bucket"].setdefault(k, 0)
            if b == "+Inf" or d <= b:
                exp["tracer_step_duration_seconds_bucket"][k] += 1
        k = lbl(pipeline=pipe, step=name)
        exp["tracer_step_duration_seconds_sum"][k] = exp["tracer_step_duration_seconds_sum"].get(k, 0) + d
        exp["tracer_step_duration_seconds_count"][k] = exp["tracer_step_duration_seconds_count"].get(k, 0) + 1
    assert all(len(v) <= 50 for v in names.values()), "more than 50 step names in a pipeline"
    exp["tracer_pipeline_class_steps"] = classes(tracer, db, pipes)
    return exp, len(rows)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def cmd_lake(args):
    exp, nsteps = expected(args.db, args.tracer)
    bad = []
    for name, want in exp.items():
        got = query(args.prom, name)
        if set(got) != set(want):
            only = sorted(map(sorted, set(got) ^ set(want)))
            bad.append(f"{name}: {len(only)} series in one only (Prometheus {len(got)}, the lake {len(want)}), "
                       f"the first {only[:3]}")
            continue
        for k, v in want.items():
            if not close(got[k], v):
                bad.append(f"{name}{dict(k)}: Prometheus {got[k]!r}, the lake {v!r}")
        print(f"{name}: {len(want)} series as the lake has them")
    info = query(args.prom, "tracer_build_info")
    if len(info) != 1 or list(info.values()) != [1.0] or \
            not all(dict(k).get(x) for k in info for x in ("version", "commit")):
        bad.append(f"tracer_build_info: {info}")
    up = query(args.prom, 'up{job="tracer"}')
    if list(up.values()) != [1.0]:
        bad.append(f"up: {up}")
    runs = sum(exp["tracer_pipeline_runs"].values())
    if sum(exp["tracer_pipeline_class_steps"].values()) < 2:
        bad.append("tracer tune classed fewer than 2 steps: too few to prove anything")
    if runs < 2 or nsteps < 2:
        bad.append(f"the lake has {runs} runs and {nsteps} steps: too few to prove anything")
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    if not bad:
        print(f"lake: {runs} runs, {nsteps} steps, every figure as Prometheus has it")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("scrapes")
    sp.add_argument("--prom", required=True)
    sp.add_argument("--count", type=int, default=2)
    sp.add_argument("--timeout", type=float, default=60)
    sp.set_defaults(fn=cmd_scrapes)
    sp = sub.add_parser("lake")
    sp.add_argument("--prom", required=True)
    sp.add_argument("--db", required=True)
    sp.add_argument("--tracer", required=True)
    sp.set_defaults(fn=cmd_lake)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
