#!/usr/bin/env python3
"""Checks of a real align workflow's runs in the lake (tests/e2e/test_real_align.sh, issue 25).

    check_real.py --tracer TRACER --db LAKE --pipeline P --runs N --hog-run RUN_ID

The lake is read directly (sqlite3, read-only) for the kernel's per-process
figures, and through `tracer tune --format json` for what a user is told:

  - every run's align step (the step with a `bwa mem` process) keeps bwa:
    its tools name bwa mem and samtools sort, and its cpu_ns is within 2% of
    the runtime_ns its processes in the `processes` table sum to;
  - samtools outlived bwa by at least 1 s in every run (the case the test is
    about; else the data is too small to prove anything);
  - the align step has the same name in every run;
  - tune classes it compute, and, in the hog run, reports it slower than
    usual with cause run_queue;
  - the one_core step (threads: 2, one core used) has an allocation of 2 CPUs
    and a CPU efficiency of about 50%.
"""
import argparse
import json
import sqlite3
import subprocess
import sys

errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def tune(args, *extra):
    cmd = [args.tracer, "tune", "--db", args.db, "--pipeline", args.pipeline, "--format", "json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracer", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--pipeline", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--hog-run", type=int, required=True)
    args = ap.parse_args()

    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    runs = [r[0] for r in db.execute(
        "SELECT run_id FROM runs WHERE pipeline = ? AND state = 'succeeded' ORDER BY start_ns", (args.pipeline,))]
    check(len(runs) == args.runs, f"{len(runs)} succeeded runs of {args.pipeline}, not {args.runs}")
    names = set()
    for run in runs:
        steps = db.execute(
            "SELECT s.step_id, s.name, s.tools, s.cpu_ns, s.processes FROM steps s WHERE s.run_id = ? AND "
            "EXISTS (SELECT 1 FROM processes p WHERE p.run_id = s.run_id AND p.step = s.step_id AND "
            "p.tool = 'bwa mem')", (run,)).fetchall()
        if not check(len(steps) == 1, f"run {run}: {len(steps)} steps hold a bwa mem process, not 1"):
            continue
        step_id, name, tools, cpu_ns, nproc = steps[0]
        names.add(name)
        procs = db.execute("SELECT tool, runtime_ns, exit_ts_ns FROM processes WHERE run_id = ? AND step = ?",
                           (run, step_id)).fetchall()
        total = sum(p[1] or 0 for p in procs)
        tl = json.loads(tools or "[]")
        print(f"run {run}: step {step_id} '{name}' tools {tl}, {nproc} processes, cpu {cpu_ns / 1e9:.3f} s; "
              f"its {len(procs)} processes in the lake sum to {total / 1e9:.3f} s")
        check("bwa mem" in tl and "samtools sort" in tl, f"run {run}: step {step_id} tools {tl} lack bwa mem or "
              "samtools sort")
        check(nproc == len(procs), f"run {run}: step says {nproc} processes, the lake holds {len(procs)}")
        check(total > 0 and abs(cpu_ns - total) <= 0.02 * total,
              f"run {run}: step cpu {cpu_ns} ns is not within 2% of its processes' {total} ns")
        ends = {p[0]: p[2] for p in procs if p[0] in ("bwa mem", "samtools sort")}
        if check(len(ends) == 2 and None not in ends.values(), f"run {run}: bwa or samtools has no exit"):
            gap = (ends["samtools sort"] - ends["bwa mem"]) / 1e9
            print(f"run {run}: samtools sort outlived bwa mem by {gap:.2f} s")
            check(gap >= 1.0, f"run {run}: samtools sort outlived bwa by {gap:.2f} s only (< 1 s)")
    check(len(names) == 1, f"the align step's name differs between runs: {sorted(names)}")

    doc = tune(args)
    align = [s for s in doc["steps"] if "bwa mem" in s["tools"]]
    if check(len(align) == 1, f"tune lists {len(align)} steps with bwa mem: {[s['step'] for s in doc['steps']]}"):
        s = align[0]
        print(f"tune: '{s['step']}' class {s['class']} ({s['class_evidence']}); breakdown {s['wall_breakdown']}")
        check(s["class"] == "compute", f"the align step is classed {s['class']}, not compute")
        check(s["runs"] == args.runs, f"the align step has {s['runs']} runs of history, not {args.runs}")
    one = [s for s in doc["steps"] if s["tools"] == ["workload"]]
    if check(len(one) == 1, "tune lists no one_core step (tool workload)"):
        a = one[0]["allocation"]
        print(f"tune: one_core allocation {a}, cores p95 {one[0]['cpu_cores']['p95']}")
        check(a["cpus"] == 2, f"one_core's allocation is {a['cpus']} CPUs, not 2 (threads: 2)")
        eff = a["cpu_efficiency"]
        check(eff is not None and 0.4 <= eff <= 0.6, f"one_core's CPU efficiency {eff} is not about 50%")
    hog = tune(args, "--run", str(args.hog_run))
    slow = [x for x in hog.get("slower_than_usual") or [] if x["step"] in names]
    if check(len(slow) == 1, f"the hog run {args.hog_run}: the align step is not slower than usual: "
             f"{hog.get('slower_than_usual')}"):
        x = slow[0]
        print(f"hog run: {x['why']}")
        check(x["cause"] == "run_queue", f"the hog run's align step is slower because of {x['cause']}, not run_queue")
    if errors:
        for e in errors:
            print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
