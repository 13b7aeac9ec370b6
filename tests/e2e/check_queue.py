#!/usr/bin/env python3
"""Queue time of a run whose steps are cluster jobs (tests/e2e/test_slurm_cluster.sh; docs/live.md, "Queue time").

    check_queue.py REPORT.json TUNE.json COST.json PAGE.cdp.json

REPORT: `tracer report --db LAKE RUN --json`; TUNE: `tracer tune --db LAKE --run RUN --format json`; COST:
`tracer cost --db LAKE --run RUN --by step --json`; PAGE: tests/e2e/cdp.py's findings on `tracer report --db
LAKE RUN --html` with the values rows (the steps table's rows' text), heads (every th's text), queuebars (the
timeline's .queue-bar count) and queued (the summary's "queued" row's text, null: none). Checks:
  - the report's queue split equals the one recomputed here from its steps: the time in [start, end) in which
    some job waited (its submitted_ns to its start) and no step ran; queued + running = wall;
  - tune's queued_s is the same within 50 ms (its steps' times come from the same rows) and queued + running
    is its wall; each job on the critical path says its own job's queue wait;
  - cost by step gives each rule its jobs' hours on the node (start to end), never their queue wait, and
    their reserved CPU-hours (allocation x those hours); the report's tune.cost has the same job CPU- and
    GiB-hours as tracer cost's totals;
  - the page shows a job and a queue wait column, each job's "ID on HOST", one queue bar per job that waited,
    and the summary's queued line; no error on the page.
Exits 0 when all hold, 1 otherwise, saying what it saw.
"""
import json
import sys


def queued_only(steps, start, end):
    edges = []
    for s in steps:
        a, b = max(s["start_ns"], start), min(s.get("end_ns") or end, end)
        if a < b:
            edges += [(a, 0, 1), (b, 0, -1)]
        sub = (s.get("job") or {}).get("submitted_ns")
        if sub is not None:
            a, b = max(sub, start), min(s["start_ns"], end)
            if a < b:
                edges += [(a, 1, 0), (b, -1, 0)]
    queued, q, r, prev = 0, 0, 0, None
    for t, dq, dr in sorted(edges):
        if prev is not None and q > 0 and r == 0:
            queued += t - prev
        q, r, prev = q + dq, r + dr, t
    return queued


def main():
    doc, tune, cost, page = (json.load(open(f)) for f in sys.argv[1:5])
    errors = []
    steps = doc["steps"]
    jobs = [s for s in steps if s.get("job")]
    start, end = doc["start_ns"], doc["end_ns"]
    queued = queued_only(steps, start, end)
    split = doc.get("queue") or {}
    print(f"wall {(end - start) / 1e9:.3f} s: queued {split.get('queued_ns', 0) / 1e9:.3f} s, running "
          f"{split.get('running_ns', 0) / 1e9:.3f} s (from the steps: queued {queued / 1e9:.3f} s)")
    if split.get("wall_ns") != end - start or split.get("queued_ns") != queued or \
            split.get("queued_ns", 0) + split.get("running_ns", 0) != end - start:
        errors.append(f"the run's queue split {split} is not the steps' (queued {queued} ns of {end - start})")

    run = tune.get("run") or {}
    print(f"tune: wall {run.get('wall_s')} s, queued {run.get('queued_s')} s, running {run.get('running_s')} s; "
          f"path {[(p['step'], round(p['wait_s'], 3), round(p['queued_s'], 3)) for p in tune['critical_path']]}")
    if abs(run.get("queued_s", -1) + run.get("running_s", -1) - run.get("wall_s", 0)) > 1e-6:
        errors.append(f"tune's queued + running is not its wall: {run}")
    if abs(run.get("queued_s", -1) - queued / 1e9) > 0.05:
        errors.append(f"tune's queued {run.get('queued_s')} s is not the report's {queued / 1e9:.3f} s")
    waits = {s["id"]: s["job"]["queue_wait_ns"] / 1e9 for s in jobs}
    path = [p for p in tune["critical_path"] if p["step_id"] in waits]
    if not path:
        errors.append(f"no job on the critical path: {tune['critical_path']}")
    for p in path:
        if abs(p["queued_s"] - waits[p["step_id"]]) > 0.05:
            errors.append(f"the path's {p['step']} says {p['queued_s']} s queued; its job waited "
                          f"{waits[p['step_id']]} s")

    for rule in sorted({s["name"] for s in jobs}):
        ran = sum(s["end_ns"] - s["start_ns"] for s in jobs if s["name"] == rule) / 3.6e12
        lines = [ln for ln in cost["lines"] if ln["key"].endswith(rule)]
        print(f"cost {rule}: {[(ln['key'], ln['hours']) for ln in lines]}; on the node {ran:.6f} h, queued "
              f"{sum(waits[s['id']] for s in jobs if s['name'] == rule):.3f} s")
        if len(lines) != 1 or abs(lines[0]["hours"] - ran) > 1e-6:
            errors.append(f"cost bills {rule} {[ln['hours'] for ln in lines]} h, not its jobs' {ran:.6f} h "
                          f"on the node")
            continue
        held = sum(s["cpu_limit_cores"] * (s["end_ns"] - s["start_ns"]) for s in jobs if s["name"] == rule) / 3.6e12
        print(f"cost {rule}: jobs reserved {lines[0].get('job_cpu_hours')} CPU-hours (allocation x time on the "
              f"node: {held:.6f})")
        if abs(lines[0].get("job_cpu_hours", -1) - held) > 1e-6:
            errors.append(f"cost says {rule}'s jobs reserved {lines[0].get('job_cpu_hours')} CPU-hours, "
                          f"not {held:.6f}")

    # the run's own report carries the same reservation in its cost (tune.cost), as tracer cost's totals
    mine = ((doc.get("tune") or {}).get("cost") or {})
    print(f"the report's cost: jobs {mine.get('job_cpu_hours')} CPU-hours, {mine.get('job_gib_hours')} GiB-hours; "
          f"tracer cost: {cost['totals'].get('job_cpu_hours')}, {cost['totals'].get('job_gib_hours')}")
    for k in ("job_cpu_hours", "job_gib_hours"):
        if not isinstance(mine.get(k), (int, float)) or abs(mine[k] - cost["totals"].get(k, -1)) > 1e-9:
            errors.append(f"the report's tune.cost.{k} is {mine.get(k)}, tracer cost's {cost['totals'].get(k)}")

    v = page["values"]
    if page["errors"]:
        errors.append(f"the page's errors: {page['errors']}")
    if "job" not in v["heads"] or "queue wait" not in v["heads"]:
        errors.append(f"the steps table has no job / queue wait column: {v['heads']}")
    shown = " ".join(v["rows"])
    for s in jobs:
        if f"{s['job']['slurm_job_id']} on {s['job']['host']}" not in shown:
            errors.append(f"the page does not show job {s['job']['slurm_job_id']} on {s['job']['host']}")
    waited = sum(1 for s in jobs if s["job"]["submitted_ns"] < s["start_ns"])
    if v["queuebars"] != waited:
        errors.append(f"{v['queuebars']} queue bars on the timeline, {waited} jobs waited")
    print(f"the page's summary: queued {v['queued']}")
    if not v["queued"] or "a cluster job waited in the queue" not in v["queued"]:
        errors.append(f"the summary's queued line is {v['queued']!r}")
    for e in errors:
        print(f"FAIL: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
