#!/usr/bin/env python3
"""tests/e2e/test_sweep.sh's checks of `tracer sweep --json` (tracer.sweep.v1, docs/sweep.md).

  check_sweep.py --tracer T --db LAKE --config CONF --since S [--expect KIND] [--absent KIND]
                 [--run N] [--pid P] [--step NAME] [--min-span S] [--price P]

Every --expect KIND must be among the findings (for --run: of that run; --pid: that process; --step:
that step), each with a span of at least --min-span seconds and, with --price, a cost of price x
hours (1%) - for reserved_unused, of price x hours x the unused share of the host (the larger of its
CPUs' and its memory's, from nproc and MemTotal); every --absent KIND must not be there (with
--step: not for that step). Prints the findings either way.
"""
import argparse
import json
import os
import subprocess
import sys


def unused_share(step):
    """The larger of the step's unused CPUs over the host's and its unused memory over MemTotal."""
    with open("/proc/meminfo") as f:
        total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    share = 0.0
    if step["cpu_unused"]:
        share = (step["cpu_limit_cores"] - step["cpu_used_cores"]) / os.cpu_count()
    if step["memory_unused"]:
        share = max(share, (step["memory_limit_bytes"] - step["memory_peak_bytes"]) / total)
    return min(share, 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracer", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--since", required=True)
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--absent", action="append", default=[])
    ap.add_argument("--run", type=int)
    ap.add_argument("--pid", type=int)
    ap.add_argument("--step")
    ap.add_argument("--min-span", type=float, default=0)
    ap.add_argument("--price", type=float)
    a = ap.parse_args()
    out = subprocess.run([a.tracer, "sweep", "--db", a.db, "--config", a.config, "--since", a.since, "--json"],
                         capture_output=True, text=True)
    if out.returncode:
        print(f"FAIL: tracer sweep exited {out.returncode}: {out.stderr.strip()}")
        return 1
    doc = json.loads(out.stdout)
    fails = []
    if doc.get("schema") != "tracer.sweep.v1":
        fails.append(f"schema {doc.get('schema')!r}")
    found = doc.get("findings", [])
    for f in found:
        for key in ("kind", "host", "start_ns", "end_ns", "evidence", "cost"):
            if key not in f:
                fails.append(f"a finding without {key}: {f}")
        print(f"  {f['kind']}: host {str(f['host'])[:12]} span {f['duration_s']:.1f} s run {f['run_id']} "
              f"cost {f['cost']['usd']}: {f['evidence']['text']}")
    if not found:
        print("  no findings")
    for kind in a.expect:
        mine = [f for f in found if f["kind"] == kind
                and (a.run is None or f.get("run_id") == a.run)
                and (a.pid is None or (f["evidence"].get("process") or {}).get("pid") == a.pid)
                and (a.step is None or (f["evidence"].get("step") or {}).get("name") == a.step)]
        if not mine:
            fails.append(f"no {kind} finding" + (f" for run {a.run}" if a.run is not None else "")
                         + (f" for pid {a.pid}" if a.pid is not None else "")
                         + (f" for step {a.step}" if a.step is not None else ""))
            continue
        f = mine[0]
        if f["duration_s"] < a.min_span:
            fails.append(f"{kind}: span {f['duration_s']:.2f} s, expected at least {a.min_span} s")
        if f["end_ns"] <= f["start_ns"]:
            fails.append(f"{kind}: end {f['end_ns']} not after start {f['start_ns']}")
        if a.price is not None:
            want = a.price * f["duration_s"] / 3600
            if kind == "reserved_unused":
                want *= unused_share(f["evidence"]["step"])
            if kind in ("run_idle", "worker_idle", "idle_host_gcp", "reserved_unused"):
                got = f["cost"]["usd"]
                if got is None or abs(got - want) > 0.01 * want + 1e-9:
                    fails.append(f"{kind}: cost {got}, expected ${want:.6f} (price {a.price}/h x span)")
            if f["cost"]["price_source"] != "config":
                fails.append(f"{kind}: priced from {f['cost']['price_source']}, expected the host's config")
    for kind in a.absent:
        if any(f["kind"] == kind and (a.step is None or (f["evidence"].get("step") or {}).get("name") == a.step)
               for f in found):
            fails.append(f"a {kind} finding" + (f" for step {a.step}" if a.step else "") + ", expected none")
    for x in fails:
        print(f"FAIL: {x}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
