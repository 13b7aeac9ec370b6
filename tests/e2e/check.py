#!/usr/bin/env python3
"""Checks of `tracer run --json` reports (schema tracer.run.v1).

    check.py SUBCOMMAND REPORT [ARGS...]

Each subcommand compares the report with facts the workload printed from
the kernel's own view (wait4() status and rusage, /proc/PID/io of the
zombie; see tests/e2e/workload.c), after the checks every report must pass
(schema, field types, no lost records, one entry per process lifetime, a
single tree rooted at the command). Every failure names the process (pid,
argv) and says what was expected and what the report holds. Exit 0 when
all hold, 1 otherwise.
"""
import argparse
import json
import sys

SCHEMA = "tracer.run.v1"
MIB = 1 << 20
MAX_SHOWN = 25  # failure lines printed; the rest are counted

# Keys every process entry has (DESIGN.md, "never rename these"), and what they may hold.
INT, STR, BOOL, LIST, NULL = int, str, bool, list, type(None)
PROCESS_KEYS = {
    "pid": (INT,), "ppid": (INT,), "start_ns": (INT,), "end_ns": (INT,),
    "exe": (STR,), "argv": (LIST,), "tool": (STR,),
    "exit_code": (INT, NULL), "signal": (INT,),
    "core_dumped": (BOOL,), "oom_killed": (BOOL,),
    "cpu_user_ns": (INT,), "cpu_sys_ns": (INT,), "peak_rss_bytes": (INT,),
    "read_bytes": (INT,), "write_bytes": (INT,), "rchar": (INT,), "wchar": (INT,),
    # Not measured yet: null allowed (DESIGN.md lists them; they must be present).
    "net_tx_bytes": (INT, NULL), "net_rx_bytes": (INT, NULL),
    "files": (LIST, NULL), "cwd": (STR, NULL), "container_id": (STR, NULL),
    "step": (STR, NULL), "cgroup": (STR, NULL),
}
TOP_KEYS = {
    "schema": (STR,), "command": (LIST,), "exit_code": (INT,),
    "start_ns": (INT,), "end_ns": (INT,), "agent": (dict,),
    "processes": (LIST,), "steps": (LIST,), "signals": (LIST,),
}
SIGNAL_KINDS = {"oom_kill", "stalled", "io_wait", "net_wait", "killed", "failed"}


class Failures:
    def __init__(self):
        self.msgs = []

    def add(self, msg):
        self.msgs.append(msg)

    def check(self, cond, msg):
        if not cond:
            self.add(msg)
        return cond

    def finish(self, what):
        if not self.msgs:
            print(f"ok: {what}")
            return 0
        for m in self.msgs[:MAX_SHOWN]:
            print(f"FAIL: {m}")
        if len(self.msgs) > MAX_SHOWN:
            print(f"FAIL: ... and {len(self.msgs) - MAX_SHOWN} more")
        print(f"{len(self.msgs)} failed check(s): {what}")
        return 1


def is_type(v, types):
    # bool is an int in Python: keep them apart.
    if isinstance(v, bool):
        return BOOL in types
    return isinstance(v, types)


def tname(types):
    return " or ".join("null" if t is NULL else t.__name__ for t in types)


def describe(p):
    return f"pid {p.get('pid')} (argv {p.get('argv')})"


def load_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL: cannot read the report {path}: {e}")
        sys.exit(1)


def load_facts(path):
    """`key value...` lines -> {key: [[values...], ...]}."""
    facts = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if parts:
                    facts.setdefault(parts[0], []).append(parts[1:])
    except OSError as e:
        print(f"FAIL: cannot read the workload's output {path}: {e}")
        sys.exit(1)
    return facts


def fact(facts, key, conv=int):
    """The single value of key, converted."""
    if key not in facts or not facts[key] or not facts[key][0]:
        print(f"FAIL: the workload did not print '{key}' (setup problem, not tracer's)")
        sys.exit(1)
    v = facts[key][0][0]
    return None if v == "null" else conv(v)


def check_common(rep, fl):
    """What every report must satisfy. Returns the process list (possibly empty)."""
    for k, types in TOP_KEYS.items():
        if k not in rep:
            fl.add(f"report: top-level key '{k}' missing")
        elif not is_type(rep[k], types):
            fl.add(f"report: '{k}' should be {tname(types)}, got {rep[k]!r:.80}")
    if rep.get("schema") != SCHEMA:
        fl.add(f"report: schema expected {SCHEMA!r}, got {rep.get('schema')!r}")
    agent = rep.get("agent") if isinstance(rep.get("agent"), dict) else {}
    dropped = agent.get("dropped")
    if not is_type(dropped, (INT,)):
        fl.add(f"report: agent.dropped should be an integer, got {dropped!r}")
    elif dropped != 0:
        fl.add(f"report: agent.dropped = {dropped}: records were lost (expected 0); agent = {agent}")
    procs = rep.get("processes") if isinstance(rep.get("processes"), list) else []
    good = []
    for i, p in enumerate(procs):
        if not isinstance(p, dict):
            fl.add(f"processes[{i}] is not an object: {p!r:.80}")
            continue
        ok = True
        for k, types in PROCESS_KEYS.items():
            if k not in p:
                fl.add(f"processes[{i}] {describe(p)}: key '{k}' missing")
                ok = False
            elif not is_type(p[k], types):
                fl.add(f"processes[{i}] {describe(p)}: '{k}' should be {tname(types)}, got {p[k]!r:.80}")
                ok = False
        if ok:
            good.append(p)
    for p in good:
        if p["end_ns"] < p["start_ns"]:
            fl.add(f"{describe(p)}: end_ns {p['end_ns']} < start_ns {p['start_ns']}")
        if (p["exit_code"] is None) != (p["signal"] != 0):
            fl.add(f"{describe(p)}: exit_code {p['exit_code']} and signal {p['signal']}: "
                   "exactly one of them says how it ended (exit_code null iff signal != 0)")
        if not all(isinstance(a, str) for a in p["argv"]):
            fl.add(f"{describe(p)}: argv holds non-strings")
        if not p["tool"]:
            fl.add(f"{describe(p)}: tool is empty")
    seen = {}
    for p in good:
        key = (p["pid"], p["start_ns"])
        if key in seen:
            fl.add(f"{describe(p)}: listed twice for one lifetime (pid {key[0]}, start_ns {key[1]})")
        seen[key] = p
    # One tree: every process but the command's has its parent in the report.
    pids = {p["pid"] for p in good}
    roots = [p for p in good if p["ppid"] not in pids]
    if good and len(roots) != 1:
        fl.add(f"report: expected one tree rooted at the command, found {len(roots)} processes whose parent "
               f"is not in the report: {[describe(p) for p in roots[:5]]}")
    for i, s in enumerate(rep.get("signals") or []):
        if not isinstance(s, dict) or s.get("kind") not in SIGNAL_KINDS or not is_type(s.get("pid"), (INT,)):
            fl.add(f"signals[{i}] = {s!r:.120}: needs a kind in {sorted(SIGNAL_KINDS)} and an integer pid")
    return good


def by_pid(procs):
    m = {}
    for p in procs:
        m.setdefault(p["pid"], []).append(p)
    return m


def find_one(procs_by_pid, pid, fl, what, ppid=None):
    """The report's entry for pid (with parent ppid when given), or None with a failure."""
    cands = procs_by_pid.get(pid, [])
    if ppid is not None:
        cands = [p for p in cands if p["ppid"] == ppid] or cands
    if not cands:
        fl.add(f"{what} pid {pid} is not in the report")
        return None
    if len(cands) > 1:
        fl.add(f"{what} pid {pid}: {len(cands)} entries {[describe(p) for p in cands]}, expected one")
    p = cands[0]
    if ppid is not None and p["ppid"] != ppid:
        fl.add(f"{what} {describe(p)}: ppid expected {ppid}, got {p['ppid']}")
    return p


def within(got, want, rel, abs_):
    return abs(got - want) <= max(want * rel, abs_)


def check_equal(fl, p, key, want, what=""):
    if p[key] != want or type(p[key]) is not type(want):
        fl.add(f"{describe(p)}: {key} expected {json.dumps(want)}{what}, got {json.dumps(p[key])}")


def signals_for(rep, pid, kind):
    return [s for s in rep.get("signals") or [] if isinstance(s, dict) and s.get("pid") == pid
            and s.get("kind") == kind]


# ---- subcommands ---------------------------------------------------------

def cmd_common(rep, args, fl):
    check_common(rep, fl)
    if args.command is not None and rep.get("command") != args.command:
        fl.add(f"report: command expected {args.command}, got {rep.get('command')}")
    return "report shape"


def cmd_storm(rep, args, fl):
    procs = check_common(rep, fl)
    facts = load_facts(args.facts)
    idx = by_pid(procs)
    top = fact(facts, "storm_top")
    workers = [int(v[0]) for v in facts.get("storm_parent", [])]
    children = [tuple(int(x) for x in v) for v in facts.get("child", [])]
    if len(children) != fact(facts, "children"):
        fl.add(f"workload printed {len(children)} children, said {fact(facts, 'children')} (setup problem)")
    topp = find_one(idx, top, fl, "storm top")
    if topp is not None and topp["ppid"] in idx:
        fl.add(f"storm top {describe(topp)} should be the root of the report, but its parent is listed")
    for w in workers:
        find_one(idx, w, fl, "storm worker", ppid=top)
    missing = 0
    for pid, parent, code in children:
        cands = [p for p in idx.get(pid, []) if p["ppid"] == parent]
        if not cands:
            missing += 1
            got = [f"ppid {p['ppid']}" for p in idx.get(pid, [])]
            fl.add(f"storm child pid {pid} (parent {parent}, exit {code}) is not in the report"
                   + (f" with that parent (entries: {got})" if got else ""))
            continue
        p = cands[0]
        check_equal(fl, p, "exit_code", code)
        check_equal(fl, p, "signal", 0)
        tail = ["exit", str(code)]
        if p["argv"][1:] != tail:
            fl.add(f"{describe(p)}: argv expected [..., {tail}], got {p['argv']}")
        if not p["exe"].endswith("/workload"):
            fl.add(f"{describe(p)}: exe expected .../workload, got {p['exe']!r}")
    want = 1 + len(workers) + len(children)
    if len(procs) != want:
        fl.add(f"report lists {len(procs)} processes, expected exactly {want} "
               f"(1 top + {len(workers)} workers + {len(children)} children)")
    if rep.get("exit_code") != 0:
        fl.add(f"report: exit_code expected 0, got {rep.get('exit_code')}")
    return f"exec storm: {len(children) - missing}/{len(children)} children with parent and exit code"


def cmd_exit(rep, args, fl):
    """The command (argv given) ended as expected: --code K or --signal N."""
    procs = check_common(rep, fl)
    expect_rc = args.code if args.signal is None else 128 + args.signal
    if args.rc != expect_rc:
        fl.add(f"tracer's exit status expected {expect_rc}, got {args.rc}")
    if rep.get("command") != args.command:
        fl.add(f"report: command expected {args.command}, got {rep.get('command')}")
    if rep.get("exit_code") != expect_rc:
        fl.add(f"report: top-level exit_code expected {expect_rc} (the command's status, as tracer exits), "
               f"got {rep.get('exit_code')}")
    mine = [p for p in procs if p["argv"] == args.command]
    if len(mine) != 1:
        fl.add(f"expected one process with argv {args.command}, found {len(mine)}: "
               f"{[describe(p) for p in procs][:5]}")
        return "exit status"
    p = mine[0]
    if args.signal is None:
        check_equal(fl, p, "exit_code", args.code)
        check_equal(fl, p, "signal", 0)
    else:
        check_equal(fl, p, "exit_code", None, " (killed by a signal)")
        check_equal(fl, p, "signal", args.signal)
    check_equal(fl, p, "core_dumped", False, " (the workload disabled core dumps)")
    check_equal(fl, p, "oom_killed", False)
    # signals[]: a death by signal is "killed", a non-zero exit "failed", a clean exit neither.
    killed, failed = signals_for(rep, p["pid"], "killed"), signals_for(rep, p["pid"], "failed")
    if args.signal is not None and not killed:
        fl.add(f"{describe(p)}: killed by signal {args.signal}, so signals[] should hold a 'killed' entry for it: "
               f"{rep.get('signals')}")
    if args.signal is None and args.code != 0 and not failed:
        fl.add(f"{describe(p)}: exited {args.code}, so signals[] should hold a 'failed' entry for it: "
               f"{rep.get('signals')}")
    if args.signal is None and args.code == 0 and (killed or failed):
        fl.add(f"{describe(p)} exited 0 but signals[] reports it: {killed + failed}")
    for s in killed + failed:
        if not isinstance(s.get("tool"), str) or not s.get("tool"):
            fl.add(f"signals entry {s} has no tool")
    what = f"signal {args.signal}" if args.signal is not None else f"exit {args.code}"
    return f"{args.command[1:]}: {what}, tracer exit {args.rc}"


def measured_child(rep, facts, fl):
    procs = check_common(rep, fl)
    idx = by_pid(procs)
    parent = fact(facts, "measure_parent")
    child = fact(facts, "child")
    find_one(idx, parent, fl, "measure parent")
    return find_one(idx, child, fl, "measured child", ppid=parent)


def cmd_death(rep, args, fl):
    """The measured child's end, as wait4 saw it: exit code, signal, core dump."""
    facts = load_facts(args.facts)
    p = measured_child(rep, facts, fl)
    if p is None:
        return "death"
    sig = fact(facts, "signal")
    check_equal(fl, p, "signal", sig, " (wait4)")
    check_equal(fl, p, "exit_code", fact(facts, "exit_code"), " (wait4)")
    check_equal(fl, p, "core_dumped", fact(facts, "core_dumped") == 1, " (wait4 WCOREDUMP)")
    if args.core is not None and (fact(facts, "core_dumped") == 1) != args.core:
        fl.add(f"setup: the kernel {'did not dump' if args.core else 'dumped'} a core for pid {p['pid']}")
    return f"death of pid {p['pid']}: signal {sig}, core_dumped {fact(facts, 'core_dumped') == 1}"


def cmd_cpu(rep, args, fl):
    facts = load_facts(args.facts)
    p = measured_child(rep, facts, fl)
    if p is None:
        return "cpu"
    ut, st = fact(facts, "utime_ns"), fact(facts, "stime_ns")
    want, got = ut + st, p["cpu_user_ns"] + p["cpu_sys_ns"]
    tol = max(want * 0.02, 10e6)
    if abs(got - want) > tol:
        fl.add(f"{describe(p)}: cpu_user_ns + cpu_sys_ns = {got} ({p['cpu_user_ns']} + {p['cpu_sys_ns']}), "
               f"wait4 utime + stime = {want} ({ut} + {st}): off by {got - want} ns, allowed {tol:.0f}")
    # The workload only spins in user space: the user share must say so too.
    if not within(p["cpu_user_ns"], ut, 0.10, 20e6):
        fl.add(f"{describe(p)}: cpu_user_ns {p['cpu_user_ns']} vs wait4 utime {ut}: beyond 10% / 20 ms")
    if want < args.min_ms * 1e6 * 0.9:
        fl.add(f"setup: wait4 says the child used {want} ns of CPU, less than the {args.min_ms} ms it burned")
    return f"cpu of pid {p['pid']}: report {got} ns, wait4 {want} ns"


def cmd_rss(rep, args, fl):
    facts = load_facts(args.facts)
    p = measured_child(rep, facts, fl)
    if p is None:
        return "rss"
    want = fact(facts, "maxrss_kb") * 1024
    if want < args.min_mib * MIB:
        fl.add(f"setup: wait4 ru_maxrss {want} bytes < the {args.min_mib} MiB the child touched")
    if not within(p["peak_rss_bytes"], want, 0.05, 0):
        fl.add(f"{describe(p)}: peak_rss_bytes {p['peak_rss_bytes']}, wait4 ru_maxrss*1024 = {want}: "
               f"off by {p['peak_rss_bytes'] - want} bytes ({(p['peak_rss_bytes'] - want) / want:+.1%}), allowed 5%")
    return f"peak rss of pid {p['pid']}: report {p['peak_rss_bytes']}, wait4 {want}"


def check_io_exact(fl, p, facts):
    """The report's counters are the kernel's final ones: those of the zombie's /proc/PID/io."""
    for key in ("rchar", "wchar", "read_bytes", "write_bytes"):
        if f"io_{key}" in facts:
            want = fact(facts, f"io_{key}")
            if p[key] != want:
                fl.add(f"{describe(p)}: {key} {p[key]}, the kernel's final /proc/{p['pid']}/io says {want}")


def cmd_io_write(rep, args, fl):
    facts = load_facts(args.facts)
    p = measured_child(rep, facts, fl)
    if p is None:
        return "write accounting"
    size = args.mib * MIB
    if p["wchar"] < size:
        fl.add(f"{describe(p)}: wchar {p['wchar']} < the {size} bytes it wrote")
    if args.storage and not within(p["write_bytes"], size, 0.05, 0):
        fl.add(f"{describe(p)}: write_bytes {p['write_bytes']}, expected {size} (it wrote and fsynced "
               f"{args.mib} MiB to a disk-backed file) within 5%")
    check_io_exact(fl, p, facts)
    return f"write accounting of pid {p['pid']}: wchar {p['wchar']}, write_bytes {p['write_bytes']}"


def cmd_io_read(rep, args, fl):
    facts = load_facts(args.facts)
    p = measured_child(rep, facts, fl)
    if p is None:
        return "read accounting"
    if p["rchar"] < args.size:
        fl.add(f"{describe(p)}: rchar {p['rchar']} < the file's {args.size} bytes it read")
    check_io_exact(fl, p, facts)
    return f"read accounting of pid {p['pid']}: rchar {p['rchar']}, read_bytes {p['read_bytes']}"


def cmd_oom(rep, args, fl):
    procs = check_common(rep, fl)
    facts = load_facts(args.facts)
    idx = by_pid(procs)
    p = find_one(idx, fact(facts, "hog_pid"), fl, "hog")
    if p is None:
        return "oom kill"
    check_equal(fl, p, "oom_killed", True, " (the cgroup's memory.events/oom_control counted the kill)")
    check_equal(fl, p, "signal", 9)
    check_equal(fl, p, "exit_code", None)
    if p["argv"][1:] != ["hog", str(args.mib)]:
        fl.add(f"{describe(p)}: argv expected [..., 'hog', '{args.mib}'] (its last exec), got {p['argv']}")
    ooms = signals_for(rep, p["pid"], "oom_kill")
    if len(ooms) != 1:
        fl.add(f"signals[]: expected one oom_kill entry for pid {p['pid']}, got {len(ooms)}: {rep.get('signals')}")
    for s in ooms:
        if not isinstance(s.get("tool"), str) or not s.get("tool"):
            fl.add(f"oom_kill entry {s}: tool missing or empty")
        if args.cgroup:
            if s.get("memcg") != args.cgroup:
                fl.add(f"oom_kill entry: memcg expected {args.cgroup!r} (the cgroup whose limit was hit), got {s}")
            if s.get("memcg_limit_bytes") != args.limit:
                fl.add(f"oom_kill entry: memcg_limit_bytes expected {args.limit}, got {s.get('memcg_limit_bytes')}")
            if args.cgroup not in (p.get("cgroup"), p.get("cgroup_v1_memory")):
                fl.add(f"{describe(p)}: its cgroup ({p.get('cgroup')!r}, v1 memory {p.get('cgroup_v1_memory')!r}) "
                       f"should be {args.cgroup!r}")
        if args.step:
            steps = {st.get("id") for st in rep.get("steps") or []}
            if s.get("step") is None or s.get("step") not in steps or s.get("step") != p.get("step"):
                fl.add(f"oom_kill entry: step should be the hog's step (one of {sorted(steps)}), got {s.get('step')!r}"
                       f" (process step {p.get('step')!r})")
    others = [q for q in procs if q["oom_killed"] and q is not p]
    if others:
        fl.add(f"only the hog was OOM-killed, yet the report says so of {[describe(q) for q in others]}")
    return f"oom kill of pid {p['pid']}"


def cmd_orphan(rep, args, fl):
    procs = check_common(rep, fl)
    facts = load_facts(args.facts)
    idx = by_pid(procs)
    top = fact(facts, "orphan_parent")
    child, child_code = (int(x) for x in facts["orphan_child"][0])
    grand, grand_code = (int(x) for x in facts["orphan_grandchild"][0])
    find_one(idx, top, fl, "orphan's parent")
    c = find_one(idx, child, fl, "orphan's child", ppid=top)
    g = find_one(idx, grand, fl, "re-parented grandchild", ppid=child)
    if c is not None:
        check_equal(fl, c, "exit_code", child_code)
    if g is not None:
        check_equal(fl, g, "exit_code", grand_code)
        if g["end_ns"] > rep.get("end_ns", 0):
            fl.add(f"{describe(g)}: end_ns {g['end_ns']} after the report's end_ns {rep.get('end_ns')}: "
                   "tracer did not wait for the orphan")
        if c is not None and g["end_ns"] <= c["end_ns"]:
            fl.add(f"{describe(g)} outlived its parent by 0.3 s, yet its end_ns {g['end_ns']} <= "
                   f"the parent's {c['end_ns']}")
    return f"orphan {grand} (parent {child}) waited for and reported"


def cmd_scope(rep, args, fl):
    """Only the command's tree: none of the outside processes, none of tracer's own."""
    procs = check_common(rep, fl)
    inside = load_facts(args.facts)
    outside = load_facts(args.outside)
    outside_pids = {int(v[0]) for v in outside.get("child", [])} | {int(v[0]) for v in outside.get("storm_parent", [])}
    outside_pids |= {int(v[0]) for v in outside.get("storm_top", [])}
    if not outside.get("child"):
        fl.add("setup: the outside storm spawned nothing during the run")
    for p in procs:
        if p["pid"] in outside_pids:
            fl.add(f"{describe(p)} ran outside the command's tree (a concurrent storm), yet is in the report")
    want = 1 + len(inside.get("storm_parent", [])) + len(inside.get("child", []))
    if len(procs) != want:
        strangers = [describe(p) for p in procs if p["argv"][1:2] != ["exit"] and p["argv"][1:2] != ["storm"]]
        fl.add(f"report lists {len(procs)} processes, the command's tree has {want}; not the workload's: "
               f"{strangers[:5]}")
    for p in procs:
        if any(n in p["exe"] for n in ("tracer-collector", "tracer-processor")) or p["exe"].endswith("/tracer"):
            fl.add(f"tracer's own process {describe(p)} is in the report")
    return f"scope: {len(procs)} processes, none from outside"


def cmd_times(rep, args, fl):
    """Times: every process lies in the run's window; the window is plausible."""
    procs = check_common(rep, fl)
    start, end = rep.get("start_ns", 0), rep.get("end_ns", 0)
    if not args.before_ns <= start <= end <= args.after_ns:
        fl.add(f"report window [{start}, {end}] is not within the wall-clock window the test measured "
               f"around tracer run [{args.before_ns}, {args.after_ns}]")
    for p in procs:
        if p["start_ns"] < start:
            fl.add(f"{describe(p)}: start_ns {p['start_ns']} is {(start - p['start_ns']) / 1e6:.1f} ms before "
                   f"the report's start_ns {start}")
        if p["end_ns"] > end:
            fl.add(f"{describe(p)}: end_ns {p['end_ns']} is {(p['end_ns'] - end) / 1e6:.1f} ms after "
                   f"the report's end_ns {end}")
    return f"times of {len(procs)} processes within [{start}, {end}]"


def parse_status(path):
    with open(path, encoding="utf-8") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def cmd_privileges(args, fl):
    """tracer's helpers, while the command runs: no capabilities, seccomp, no_new_privs, not root."""
    st = {}
    for who, path in (("collector", args.collector), ("processor", args.processor)):
        try:
            s = st[who] = parse_status(path)
        except OSError as e:
            fl.add(f"{who}: cannot read its saved /proc/PID/status {path}: {e}")
            continue
        name = f"{who} (pid {s.get('Pid')}, {s.get('Name')})"
        caps = ["CapInh", "CapPrm", "CapEff", "CapAmb"] + (["CapBnd"] if who == "collector" else [])
        for k in caps:
            if s.get(k) != "0000000000000000":
                fl.add(f"{name}: {k} expected 0000000000000000, got {s.get(k)}")
        if s.get("Seccomp") != "2":
            fl.add(f"{name}: Seccomp expected 2 (filter mode), got {s.get('Seccomp')}")
        if s.get("NoNewPrivs") != "1":
            fl.add(f"{name}: NoNewPrivs expected 1, got {s.get('NoNewPrivs')}")
        for k in ("Uid", "Gid"):
            ids = (s.get(k) or "").split()
            if len(ids) != 4 or "0" in ids:
                fl.add(f"{name}: {k} (real, effective, saved, fs) must all be non-zero, got {ids}")
        groups = (s.get("Groups") or "").split()
        if "0" in groups:
            fl.add(f"{name}: still in group 0: Groups {groups}")
    if len(st) == 2:
        cu, pu = st["collector"].get("Uid", "").split()[:1], st["processor"].get("Uid", "").split()[:1]
        if cu == pu:
            fl.add(f"collector and processor run as the same uid {cu}: the processor could signal the collector")
    return "privileges of the collector and the processor"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="sub", required=True)

    def add(name, fn, facts=True):
        sp = sub.add_parser(name)
        sp.add_argument("report")
        if facts:
            sp.add_argument("facts", help="the workload's stdout")
        sp.set_defaults(fn=fn)
        return sp

    sp = add("common", cmd_common, facts=False)
    sp.add_argument("--command", nargs="+")
    add("storm", cmd_storm)
    sp = add("exit", cmd_exit, facts=False)
    sp.add_argument("--rc", type=int, required=True, help="tracer's exit status")
    g = sp.add_mutually_exclusive_group(required=True)
    g.add_argument("--code", type=int)
    g.add_argument("--signal", type=int)
    sp.add_argument("command", nargs="+", help="after --: the command tracer ran")
    sp = add("death", cmd_death)
    sp.add_argument("--core", type=lambda s: s == "yes", help="yes/no: whether the kernel must have dumped")
    sp = add("cpu", cmd_cpu)
    sp.add_argument("--min-ms", type=int, default=0)
    sp = add("rss", cmd_rss)
    sp.add_argument("--min-mib", type=int, default=0)
    sp = add("io-write", cmd_io_write)
    sp.add_argument("--mib", type=int, required=True)
    sp.add_argument("--no-storage", dest="storage", action="store_false",
                    help="the file is not on a disk: skip write_bytes")
    sp = add("io-read", cmd_io_read)
    sp.add_argument("--size", type=int, required=True)
    sp = add("oom", cmd_oom)
    sp.add_argument("--mib", type=int, required=True)
    sp.add_argument("--cgroup", help="the memory cgroup's path below its hierarchy's root")
    sp.add_argument("--limit", type=int, help="its limit in bytes (with --cgroup)")
    sp.add_argument("--step", action="store_true", help="the hog must belong to a step, and so its signal")
    add("orphan", cmd_orphan)
    sp = add("scope", cmd_scope)
    sp.add_argument("outside", help="stdout of the storm that ran outside tracer")
    sp = add("times", cmd_times, facts=False)
    sp.add_argument("--before-ns", type=int, required=True)
    sp.add_argument("--after-ns", type=int, required=True)

    sp = sub.add_parser("privileges")
    sp.add_argument("collector", help="a copy of the collector's /proc/PID/status")
    sp.add_argument("processor", help="a copy of the processor's /proc/PID/status")
    sp.set_defaults(fn=None)

    args = ap.parse_args()
    fl = Failures()
    if args.fn is None:
        return fl.finish(cmd_privileges(args, fl))
    rep = load_report(args.report)
    if not isinstance(rep, dict):
        print(f"FAIL: the report is not a JSON object: {rep!r:.80}")
        return 1
    what = args.fn(rep, args, fl)
    return fl.finish(what)


if __name__ == "__main__":
    sys.exit(main())
