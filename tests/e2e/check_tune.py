#!/usr/bin/env python3
"""Checks of `tracer tune --db LAKE --format json` (tracer.tune.v1, docs/tune.md).

    check_tune.py --tracer TRACER --db LAKE --pipeline P SUBCOMMAND [ARGS...]

  steps    each --class STEP=CLASS holds, every step's recommendation
           follows the rule from its own measured figures, and --runs N
           runs were seen
  slow     --step S is slower than usual in the newest run, --cause C
  oom      --step S was OOM-killed at --limit BYTES and is advised more
  cost     the runs are priced by --type in --region of --prices, and a
           cheaper type that fits is found
"""
import argparse
import json
import math
import subprocess
import sys

MiB = 1 << 20


def tune(args, *extra):
    cmd = [args.tracer, "tune", "--db", args.db, "--pipeline", args.pipeline, "--format", "json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}")
    doc = json.loads(out.stdout)
    if doc.get("schema") != "tracer.tune.v1":
        sys.exit(f"FAIL: schema {doc.get('schema')!r}")
    return doc


def by_step(doc):
    return {s["step"]: s for s in doc["steps"]}


def show(s):
    r = s["recommendation"]
    return (f"{s['step']}: class {s['class']} ({s['class_evidence']}), {s['runs']} runs, "
            f"duration p99 {s['duration_s']['p99']:.2f}s, cores p95 {s['cpu_cores']['p95']:.2f}, "
            f"peak {s['peak_memory_bytes']['max'] / MiB:.0f} MiB, breakdown "
            + ", ".join(f"{k} {v:.2f}" for k, v in s["wall_breakdown"].items())
            + f" -> {r['cpus']} CPUs, {(r['memory_bytes'] or 0) / MiB:.0f} MiB, {r['time_s']} s ({r['confidence']})")


def rule_errors(s):
    """The advice against docs/tune.md's rule, from the step's own figures."""
    r, errs = s["recommendation"], []
    if r["confidence"] == "none":
        return ["no advice"]
    cores = s["cpu_cores"]["p95"]
    if r["cpus"] != max(1, math.ceil(cores - 0.05)):
        errs.append(f"cpus {r['cpus']} != ceil(p95 cores {cores:.3f} - 0.05)")
    peak = s["peak_memory_bytes"]["max"]
    want = math.ceil(peak * 1.15 / (64 * MiB)) * 64 * MiB
    if not r["memory_from_oom"] and r["memory_bytes"] != want:
        errs.append(f"memory {r['memory_bytes']} != peak {peak} x 1.15 rounded up to 64 MiB ({want})")
    want_t = max(60.0, s["duration_s"]["p99"] * 1.5)
    if abs(r["time_s"] - want_t) > 1e-6 * want_t:
        errs.append(f"time {r['time_s']} != max(60, p99 {s['duration_s']['p99']} x 1.5)")
    return errs


def cmd_steps(args):
    steps, fails = by_step(tune(args)), []
    for s in steps.values():
        print("  " + show(s))
    for want in args.cls:
        name, cls = want.split("=", 1)
        s = steps.get(name)
        if not s:
            fails.append(f"no step {name} (steps: {sorted(steps)})")
            continue
        b = s.get("breakdown") or {}
        # A machine busy with other work (a parallel build) keeps an I/O step waiting for a CPU: then the
        # analysis rightly calls it compute-bound (run_queue is wall time it wanted a CPU). Taken only when
        # that wait is most of its wall time and its I/O waits are still there.
        contended = (cls == "io" and s["class"] == "compute" and b.get("wall_s", 0) > 0
                     and b.get("run_queue_s", 0) >= 0.4 * b["wall_s"] and b.get("io_wait_s", 0) > 0)
        if contended:
            print(f"  note: {name}: compute, not io, on a busy machine (run_queue {b['run_queue_s']:.1f} s of "
                  f"{b['wall_s']:.1f} s wall, io_wait {b['io_wait_s']:.1f} s)")
        elif s["class"] != cls:
            fails.append(f"{name}: class {s['class']}, expected {cls} ({s['class_evidence']})")
        if s["runs"] != args.runs:
            fails.append(f"{name}: {s['runs']} runs, expected {args.runs}")
        fails += [f"{name}: {e}" for e in rule_errors(s)]
    if args.cores:
        name, lo, hi = args.cores.split(":")
        c = steps.get(name, {}).get("cpu_cores", {}).get("p95", -1)
        if not float(lo) <= c <= float(hi):
            fails.append(f"{name}: p95 cores {c}, expected {lo}..{hi}")
    return fails


def cmd_slow(args):
    doc, fails = tune(args), []
    slow = [x for x in doc["slower_than_usual"] if x["step"] == args.step]
    for x in doc["slower_than_usual"]:
        print(f"  slower than usual: {x['step']}: {x['why']}")
    run = doc.get("run") or {}
    print(f"  run #{run.get('run_id')}: critical path "
          + " -> ".join(f"{p['step']} {p['duration_s']:.1f}s" for p in doc["critical_path"]))
    if not slow:
        fails.append(f"{args.step} is not slower than usual in run #{run.get('run_id')}")
    elif slow[0]["cause"] != args.cause:
        fails.append(f"{args.step}: cause {slow[0]['cause']}, expected {args.cause} ({slow[0]['why']})")
    # The same finding in the run's report, as a slower_than_usual signal.
    if run.get("run_id") is not None:
        rep = json.loads(subprocess.run([args.tracer, "report", "--db", args.db, str(run["run_id"]), "--json"],
                                        capture_output=True, text=True, timeout=60, check=True).stdout)
        sig = [g for g in rep.get("signals", []) if g.get("kind") == "slower_than_usual" and g.get("name") == args.step]
        if not sig or sig[0].get("cause") != args.cause:
            fails.append(f"tracer report {run['run_id']} --json has no slower_than_usual signal for {args.step} "
                         f"with cause {args.cause}: {sig}")
        if not (rep.get("tune") or {}).get("recommendations"):
            fails.append(f"tracer report {run['run_id']} --json has no tune.recommendations")
    for x in doc["slower_than_usual"]:
        if x["ratio"] < 1.3:
            fails.append(f"{x['step']} flagged at a ratio of {x['ratio']} (< 1.3)")
    return fails


def cmd_oom(args):
    steps, fails = by_step(tune(args)), []
    s = steps.get(args.step)
    if not s:
        return [f"no step {args.step} (steps: {sorted(steps)})"]
    print("  " + show(s))
    r, limit = s["recommendation"], args.limit
    if s["oom_kills"] < 1:
        fails.append(f"{args.step}: no OOM kill counted")
    if r["confidence"] == "none":
        fails.append(f"{args.step}: no advice")
    elif not (r["memory_from_oom"] and r["memory_bytes"] >= max(limit * 1.2, limit + 100 * MiB)):
        fails.append(f"{args.step}: memory {r['memory_bytes']} (from OOM: {r['memory_from_oom']}) is not "
                     f"above the limit {limit} by the OOM rule (max(L x 1.2, L + 100 MiB))")
    return fails


def cmd_cost(args):
    """The runs priced from the table by the host's configured type, reserved = wall hours x price, and the
    instance fit: a cheaper type of the table that still holds what the runs used at once."""
    fails = []
    price = None
    for line in open(args.prices):
        f = line.strip().split(",")
        if len(f) == 7 and f[1] == args.type and f[2] == args.region:
            price = float(f[5])
    if price is None:
        return [f"{args.type} in {args.region} is not in {args.prices}"]
    cmd = [args.tracer, "cost", "--db", args.db, "--pipeline", args.pipeline, "--by", "run", "--json",
           "--prices", args.prices]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return [f"{' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}"]
    doc = json.loads(out.stdout)
    runs = json.loads(subprocess.run([args.tracer, "report", "--db", args.db, "--json"], capture_output=True,
                                     text=True, timeout=60, check=True).stdout)["runs"]
    mine = [r for r in runs if r.get("pipeline") == args.pipeline and r.get("end_ns")]
    hours = sum((r["end_ns"] - r["start_ns"]) / 3600e9 for r in mine)
    t = doc["totals"]
    print(f"  cost: {t['runs']} runs, reserved ${t['reserved_usd']:.6f} (expected {hours:.6f} h x ${price}), "
          f"used ${t['used_usd']:.6f}, idle ${t['idle_usd']:.6f}")
    if doc.get("schema") != "tracer.cost.v1":
        fails.append(f"schema {doc.get('schema')!r}")
    if t["unpriced_runs"] != 0 or t["runs"] != len(mine):
        fails.append(f"{t['unpriced_runs']} unpriced of {t['runs']} runs (expected 0 of {len(mine)})")
    if t["reserved_usd"] is None or abs(t["reserved_usd"] - hours * price) > 0.01 * hours * price:
        fails.append(f"reserved {t['reserved_usd']} != {hours:.6f} h x {price}")
    if t["used_usd"] is None or not 0 < t["used_usd"] < t["reserved_usd"]:
        fails.append(f"used {t['used_usd']} is not between 0 and the reserved {t['reserved_usd']}")
    fit = [x for x in doc["instance_fit"] if x["pipeline"] == args.pipeline]
    if not fit:
        return fails + ["no instance_fit for the pipeline"]
    x, best = fit[0], fit[0]["best"]
    print(f"  fit: {x['why']}; best {best and best['instance_type']}, saves ${x['saving_per_run_usd']} a run")
    if x["current_type"] != args.type:
        fails.append(f"current type {x['current_type']}, expected {args.type}")
    if not best or best["vcpus"] < math.ceil(x["need_cores"] - 0.05) or best["memory_bytes"] < x["need_memory_bytes"]:
        fails.append(f"the best type {best} does not hold {x['need_cores']} cores and {x['need_memory_bytes']} bytes")
    elif best["on_demand_usd_per_hour"] >= price or not x["saving_per_run_usd"] > 0:
        fails.append(f"the best type {best['instance_type']} is not cheaper than {args.type}")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracer", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--pipeline", required=True)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("steps")
    sp.add_argument("--class", dest="cls", action="append", default=[])
    sp.add_argument("--runs", type=int, required=True)
    sp.add_argument("--cores", help="STEP:LOW:HIGH")
    sp = sub.add_parser("slow")
    sp.add_argument("--step", required=True)
    sp.add_argument("--cause", required=True)
    sp = sub.add_parser("oom")
    sp.add_argument("--step", required=True)
    sp.add_argument("--limit", type=int, required=True)
    sp = sub.add_parser("cost")
    sp.add_argument("--prices", required=True)
    sp.add_argument("--type", required=True)
    sp.add_argument("--region", required=True)
    args = ap.parse_args()
    fails = {"steps": cmd_steps, "slow": cmd_slow, "oom": cmd_oom, "cost": cmd_cost}[args.cmd](args)
    for f in fails:
        print(f"FAIL: {f}")
    if fails:
        return 1
    print(f"ok: {args.cmd}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
