#!/usr/bin/env python3
"""Checks of issue 4's report content: context, files, network, steps,
signals and redaction in `tracer run --json` reports.

    check_context.py SUBCOMMAND REPORT [ARGS...]

Every subcommand first applies check.py's common checks (schema, no lost
record, one tree). Failures name the process and what was expected.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402  (the common checks)

MIB = 1 << 20


def describe(p):
    return check.describe(p)


def procs_with(procs, pred):
    return [p for p in procs if pred(p)]


def argv0(p):
    a = p.get("argv") or []
    return os.path.basename(a[0]) if a else ""


def file_modes(p):
    return {f["path"]: f["mode"] for f in (p.get("files") or [])}


def cmd_files(rep, args, fl):
    procs = check.check_common(rep, fl)
    cps = procs_with(procs, lambda p: argv0(p) == "cp")
    if not fl.check(len(cps) == 1, f"expected one cp process, found {len(cps)}"):
        return "files"
    m = file_modes(cps[0])
    fl.check(m.get(args.src) == "r", f"{describe(cps[0])}: {args.src} expected mode r, files = {m}")
    fl.check(m.get(args.dst) == "w", f"{describe(cps[0])}: {args.dst} expected mode w, files = {m}")
    rws = [p for p in procs if args.rw in file_modes(p)]
    fl.check(any(file_modes(p)[args.rw] == "rw" for p in rws),
             f"no process shows {args.rw} with mode rw: {[(describe(p), file_modes(p)[args.rw]) for p in rws]}")
    for p in procs:
        for f in p.get("files") or []:
            fl.check(f["path"].startswith("/"), f"{describe(p)}: file path not absolute: {f}")
    return "files and modes"


def cmd_net(rep, args, fl):
    procs = check.check_common(rep, fl)
    facts = check.load_facts(args.facts)
    want = args.mib * MIB
    for role, key in (("sender", "net_tx_bytes"), ("receiver", "net_rx_bytes")):
        pid = check.fact(facts, role + "_pid")
        p = check.find_one(check.by_pid(procs), pid, fl, role)
        if p is None:
            continue
        got = p.get(key)
        if fl.check(isinstance(got, int), f"{describe(p)}: {key} should be a number, got {got!r}"):
            fl.check(check.within(got, want, 0.05, 0),
                     f"{describe(p)}: {key} = {got}, expected {want} within 5%")
    return f"network bytes of a {args.mib} MiB TCP transfer"


def cmd_stall(rep, args, fl):
    procs = check.check_common(rep, fl)
    cats = procs_with(procs, lambda p: argv0(p) == "cat")
    if not fl.check(len(cats) == 1, f"expected one cat, found {len(cats)}"):
        return "stall"
    cat = cats[0]
    sig = check.signals_for(rep, cat["pid"], "stalled")
    if fl.check(len(sig) == 1, f"{describe(cat)}: expected one 'stalled' signal, got {sig}"):
        s = sig[0]
        fl.check(s.get("duration_ns", 0) >= args.min_s * 1e9,
                 f"{describe(cat)}: stalled for {s.get('duration_ns')} ns, expected >= {args.min_s} s")
        fl.check(s.get("tool") == cat["tool"], f"stalled signal tool {s.get('tool')!r} != {cat['tool']!r}")
        fl.check("step" in s and "cgroup" in s, f"stalled signal lacks step/cgroup: {s}")
    root = [p for p in procs if p["pid"] == cat["ppid"]]
    for p in root:
        fl.check(not check.signals_for(rep, p["pid"], "stalled"),
                 f"{describe(p)} waited for a live child: it must not be reported stalled")
    return "the FIFO reader is stalled, its waiting parent is not"


def cmd_context(rep, args, fl):
    procs = check.check_common(rep, fl)
    facts = check.load_facts(args.facts)
    byp = check.by_pid(procs)
    for line in open(args.facts):
        parts = line.split()
        if len(parts) != 3 or parts[0] != "expect":
            continue
        _, pid_key, expect = parts
        p = check.find_one(byp, check.fact(facts, pid_key), fl, pid_key)
        if p is None:
            continue
        key, _, val = expect.partition("=")
        fl.check(str(p.get(key)) == val, f"{describe(p)}: {key} expected {val!r}, got {p.get(key)!r} "
                 f"(cgroup {p.get('cgroup')!r})")
    return "container and SLURM context from cgroup paths"


def steps_by_id(rep):
    return {s["id"]: s for s in rep.get("steps") or [] if isinstance(s, dict) and "id" in s}


def cmd_snakemake(rep, args, fl):
    procs = check.check_common(rep, fl)
    steps = steps_by_id(rep)
    tools = {}
    for s in steps.values():
        for t in s.get("tools") or []:
            tools.setdefault(t, []).append(s["id"])
    fl.check(len(steps) == args.jobs, f"expected {args.jobs} steps (one per Snakemake job), got {len(steps)}: "
             f"{[(s['id'], s.get('name'), s.get('tools')) for s in steps.values()]}")
    for t in args.tools:
        fl.check(t in tools, f"no step has the tool {t!r}; steps' tools: {sorted(tools)}")
    byp = {p["pid"]: p for p in procs}
    for p in procs:
        name = argv0(p)
        if name in ("bwa", "samtools", "wgsim"):
            fl.check(p.get("step") in steps, f"{describe(p)}: tool process without a step (step={p.get('step')!r})")
    for s in steps.values():
        fl.check(s.get("engine") == "snakemake", f"step {s['id']}: engine {s.get('engine')!r}, expected snakemake")
    sm = [p for p in procs if any("snakemake" in a for a in (p.get("argv") or [])[:3]) and argv0(p) != "bash"]
    for p in sm:
        fl.check(p.get("step") is None, f"{describe(p)}: the engine itself belongs to no step")
    _ = byp
    return f"{len(steps)} Snakemake jobs as steps with their tools"


def cmd_nextflow(rep, args, fl):
    procs = check.check_common(rep, fl)
    steps = steps_by_id(rep)
    fl.check(len(steps) == args.tasks, f"expected {args.tasks} steps (one per task directory), got {len(steps)}: "
             f"{[(s['id'], s.get('workdir')) for s in steps.values()]}")
    dirs = {s.get("workdir") for s in steps.values()}
    fl.check(len(dirs) == len(steps), f"steps should have distinct work directories: {dirs}")
    for p in procs:
        if p.get("cwd", "") and "/work/" in (p.get("cwd") or "") and argv0(p) != "":
            fl.check(p.get("step") in steps, f"{describe(p)} runs in {p.get('cwd')} but has no step")
    for s in steps.values():
        fl.check(s.get("engine") == "nextflow", f"step {s['id']}: engine {s.get('engine')!r}")
    return f"{len(steps)} Nextflow tasks as steps"


def cmd_redact(rep, args, fl):
    check.check_common(rep, fl)
    blobs = {"report": open(args.report, "rb").read()}
    for path in args.also:
        blobs[path] = open(path, "rb").read()
    for name, data in blobs.items():
        for secret in args.secret:
            fl.check(secret.encode() not in data, f"{name}: the secret {secret!r} leaked")
        for plain in args.keep if name == "report" else []:
            fl.check(plain.encode() in data, f"{name}: the ordinary argument {plain!r} is missing (over-redaction)")
    return "secrets never leave the processor"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="sub", required=True)
    sp = sub.add_parser("files")
    sp.add_argument("report")
    sp.add_argument("--src", required=True)
    sp.add_argument("--dst", required=True)
    sp.add_argument("--rw", required=True)
    sp.set_defaults(fn=cmd_files)
    sp = sub.add_parser("net")
    sp.add_argument("report")
    sp.add_argument("facts")
    sp.add_argument("--mib", type=int, required=True)
    sp.set_defaults(fn=cmd_net)
    sp = sub.add_parser("stall")
    sp.add_argument("report")
    sp.add_argument("--min-s", type=float, required=True)
    sp.set_defaults(fn=cmd_stall)
    sp = sub.add_parser("context")
    sp.add_argument("report")
    sp.add_argument("facts", help="lines 'NAME_pid PID' and 'expect NAME_pid KEY=VALUE'")
    sp.set_defaults(fn=cmd_context)
    sp = sub.add_parser("snakemake")
    sp.add_argument("report")
    sp.add_argument("--jobs", type=int, required=True)
    sp.add_argument("--tools", nargs="+", required=True)
    sp.set_defaults(fn=cmd_snakemake)
    sp = sub.add_parser("nextflow")
    sp.add_argument("report")
    sp.add_argument("--tasks", type=int, required=True)
    sp.set_defaults(fn=cmd_nextflow)
    sp = sub.add_parser("redact")
    sp.add_argument("report")
    sp.add_argument("--secret", nargs="+", required=True)
    sp.add_argument("--keep", action="append", required=True, help="one per option: --keep=--threads")
    sp.add_argument("--also", nargs="*", default=[], help="other outputs to search (summary, logs)")
    sp.set_defaults(fn=cmd_redact)
    args = ap.parse_args()
    fl = check.Failures()
    rep = check.load_report(args.report)
    if not isinstance(rep, dict):
        print(f"FAIL: the report is not a JSON object: {rep!r:.80}")
        return 1
    return fl.finish(args.fn(rep, args, fl))


if __name__ == "__main__":
    sys.exit(main())
