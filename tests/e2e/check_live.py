#!/usr/bin/env python3
"""Checks of the lake's runs, read as a user reads them: through the CLI's JSON.

    check_live.py --tracer TRACER --db LAKE SUBCOMMAND [ARGS...]

The list is `tracer report --db LAKE --json` ({"runs": [...]}, one object a
run: run_id, run_key, engine, pipeline, state, start_ns, end_ns, host,
exit_code, command, run_name, pipeline_run_id, detected_by, last_update_ns,
processes, steps); one run is `tracer report --db LAKE RUN --json` (a
tracer.run.v1 report rebuilt from the lake, plus "state"), RUN being the
run's number. docs/lake.md and docs/live.md.

Runs are picked with --where: FIELD=VALUE (the list's field equals VALUE;
`null` for a JSON null) or FIELD~TEXT (TEXT occurs in the field's JSON
text), all of them. So a test looks at its own runs only, whatever else
the host runs meanwhile (the collector traces the whole host).

Subcommands (each exits 0 when it holds, 1 otherwise, saying what it saw):
  watch   poll until a picked run is "running" with at least --min-steps
          steps, while --alive PID still runs (seen live, not afterwards)
  wait    poll until a picked run's state is no longer "running"
  check   exactly --count picked runs (default 1); fields, steps, tools,
          which processes have a step, signals
  disjoint  two runs (--a, --b): no process in both, each one's processes
          in its own directory
  none    no run at all (idle host), but those of other tests (--foreign)
  latency poll a running run: how long after its start each step is in
          the lake, how often the run's and steps' last_update_ns change
  compare a `tracer run --json` file against RUN --json of the same run
"""
import argparse
import json
import os
import subprocess
import sys
import time

SCHEMA = "tracer.run.v1"
MAX_SHOWN = 25


class Failures:
    def __init__(self):
        self.msgs = []

    def check(self, cond, msg):
        if not cond:
            self.msgs.append(msg)
        return cond

    def add(self, msg):
        self.msgs.append(msg)

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


class Lake:
    """The CLI on one lake."""

    def __init__(self, tracer, db):
        self.tracer, self.db = tracer, db
        self.calls = 0

    def _run(self, args):
        self.calls += 1
        cmd = [self.tracer, "report", "--db", self.db] + args + ["--json"]
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise LakeError(f"'{' '.join(cmd)}' did not answer within 30 s")
        if r.returncode != 0:
            raise LakeError(f"'{' '.join(cmd)}' exited {r.returncode}: "
                            f"{r.stderr.decode(errors='replace').strip()[:400]}")
        try:
            return json.loads(r.stdout)
        except ValueError as e:
            raise LakeError(f"'{' '.join(cmd)}' printed no JSON ({e}): {r.stdout[:300]!r}")

    def runs(self):
        doc = self._run([])
        if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
            raise LakeError(f"tracer report --db --json: expected {{\"runs\": [...]}}, got {str(doc)[:300]}")
        return [r for r in doc["runs"] if isinstance(r, dict)]

    def run(self, r):
        """RUN --json of a run of the list: by its number."""
        doc = self._run([str(r.get("run_id"))])
        if not isinstance(doc, dict):
            raise LakeError(f"tracer report --db LAKE {r.get('run_id')} --json: not an object: {str(doc)[:300]}")
        return doc


class LakeError(Exception):
    pass


def count(v):
    """A list field's size: the list's length, or the number itself."""
    if isinstance(v, list):
        return len(v)
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    return v


def text(v):
    return "null" if v is None else (v if isinstance(v, str) else json.dumps(v))


def picked(runs, where):
    out = []
    for r in runs:
        ok = True
        for w in where or []:
            if "~" in w and ("=" not in w or w.index("~") < w.index("=")):
                k, _, v = w.partition("~")
                ok = ok and k in r and v in json.dumps(r[k])
            else:
                k, _, v = w.partition("=")
                ok = ok and k in r and text(r[k]) == v
        if ok:
            out.append(r)
    return out


def brief(r):
    keys = ("run_id", "run_key", "state", "detected_by", "engine", "pipeline", "pipeline_run_id", "processes",
            "steps", "command")
    return "{" + ", ".join(f"{k}={text(r.get(k))[:90]}" for k in keys if k in r) + "}"


def alive(pid):
    """pid runs (a zombie does not: the test's shell reaps its pipeline only after this script returns)."""
    if not pid:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def argv0(p):
    a = p.get("argv") or []
    return os.path.basename(a[0]) if a and isinstance(a[0], str) else ""


def describe(p):
    return f"pid {p.get('pid')} (argv {(p.get('argv') or [])[:6]}, step {p.get('step')!r}, tool {p.get('tool')!r})"


def steps_of(rep):
    return [s for s in rep.get("steps") or [] if isinstance(s, dict)]


def procs_of(rep):
    return [p for p in rep.get("processes") or [] if isinstance(p, dict)]


# ---- watch / wait -------------------------------------------------------------------------------------

def cmd_watch(lake, args, fl):
    t0 = time.monotonic()
    last = "no such run"
    while time.monotonic() - t0 < args.timeout:
        rs = picked(lake.runs(), args.where)
        for r in rs:
            n = count(r.get("steps"))
            if n is None:
                n = len(steps_of(lake.run(r)))
            last = brief(r)
            if r.get("state") == "running" and n >= args.min_steps:
                still = alive(args.alive)
                if fl.check(still, f"the run was first seen running with {n} step(s) only after the pipeline "
                                   f"(pid {args.alive}) had ended: {last}"):
                    print(f"live: after {time.monotonic() - t0:.1f} s the lake shows the run running with {n} "
                          f"step(s) while the pipeline runs: {last}")
                return f"the run is in the lake, running, with {n} step(s), while it runs"
        if args.alive and not alive(args.alive):
            # One last look: what the lake had when the pipeline ended.
            fl.add(f"the pipeline (pid {args.alive}) ended after {time.monotonic() - t0:.1f} s and the lake never "
                   f"showed its run running with >= {args.min_steps} step(s); last seen: {last}")
            return "the run seen live"
        time.sleep(args.poll)
    fl.add(f"within {args.timeout} s no run {args.where} was running with >= {args.min_steps} step(s); "
           f"last seen: {last}")
    return "the run seen live"


def cmd_wait(lake, args, fl):
    t0 = time.monotonic()
    last = "no such run"
    while time.monotonic() - t0 < args.timeout:
        rs = picked(lake.runs(), args.where)
        if rs:
            last = "; ".join(brief(r) for r in rs)
        if len(rs) >= args.count and all(r.get("state") not in (None, "running") for r in rs):
            print(f"ended: after {time.monotonic() - t0:.1f} s: {last}")
            return f"{len(rs)} run(s) ended"
        time.sleep(args.poll)
    fl.add(f"within {args.timeout} s the lake did not show {args.count} ended run(s) {args.where}; last seen: {last}")
    return "the run ended"


# ---- check ----------------------------------------------------------------------------------------------

def cmd_check(lake, args, fl):
    runs = lake.runs()
    rs = picked(runs, args.where)
    if not fl.check(len(rs) == args.count,
                    f"expected {args.count} run(s) {args.where}, found {len(rs)}: {[brief(r) for r in rs]}"
                    + ("" if rs else f"; the lake's runs: {[brief(r) for r in runs][:10]}")):
        return "the runs"
    for r in rs:
        check_one(lake, r, args, fl)
    return f"{len(rs)} run(s) {args.where}: " + ", ".join(args.expect or []) + (
        f", {args.steps} steps" if args.steps is not None else "")


def check_one(lake, r, args, fl):
    who = f"run {r.get('run_id')} ({r.get('run_key')})"
    for e in args.expect or []:
        k, _, v = e.partition("=")
        fl.check(k in r and text(r[k]) == v, f"{who}: {k} expected {v!r}, the list says {r.get(k, '(missing)')!r}")
    rep = lake.run(r)
    fl.check(rep.get("schema") == SCHEMA, f"{who}: RUN --json schema {rep.get('schema')!r}, expected {SCHEMA!r}")
    fl.check(rep.get("state") == r.get("state"),
             f"{who}: RUN --json state {rep.get('state')!r} but the list says {r.get('state')!r}")
    steps = steps_of(rep)
    procs = procs_of(rep)
    ids = {s.get("id") for s in steps}
    shown = [(s.get("id"), s.get("name"), s.get("tools"), s.get("state")) for s in steps]
    n = count(r.get("steps"))
    fl.check(n is None or n == len(steps), f"{who}: the list counts {n} steps, RUN --json has {len(steps)}")
    n = count(r.get("processes"))
    fl.check(n is None or n == len(procs), f"{who}: the list counts {n} processes, RUN --json has {len(procs)}")
    if args.steps is not None:
        fl.check(len(steps) == args.steps, f"{who}: expected {args.steps} steps, got {len(steps)}: {shown}")
    if args.min_steps is not None:
        fl.check(len(steps) >= args.min_steps, f"{who}: expected >= {args.min_steps} steps, got {len(steps)}: {shown}")
    for e in args.engine_steps or []:
        eng, _, n = e.partition("=")
        mine = [s for s in steps if s.get("engine") == eng]
        fl.check(len(mine) == int(n), f"{who}: expected {n} steps of engine {eng}, got {len(mine)}: {shown}")
    tools = {t for s in steps for t in (s.get("tools") or []) if isinstance(t, str)}
    for t in args.tools or []:
        fl.check(t in tools, f"{who}: no step has the tool {t!r}; the steps: {shown}")
    for s in steps:
        if args.step_engine:
            fl.check(s.get("engine") == args.step_engine,
                     f"{who}: step {s.get('id')} engine {s.get('engine')!r}, expected {args.step_engine!r}")
        if args.step_state:
            fl.check(s.get("state") == args.step_state,
                     f"{who}: step {s.get('id')} ({s.get('name')}) state {s.get('state')!r}, expected {args.step_state!r}")
    tool_names = set((args.tool_procs or "").split(",")) - {""}
    with_tool = [p for p in procs if argv0(p) in tool_names]
    if tool_names:
        fl.check(with_tool, f"{who}: none of the tool processes {sorted(tool_names)} is in RUN --json's processes "
                            f"({len(procs)} processes: {[argv0(p) for p in procs][:30]})")
    for p in with_tool:
        fl.check(p.get("step") in ids, f"{who}: {describe(p)}: a tool process without a step of its run")
    if args.engine_no_step:
        for p in procs:
            a = p.get("argv") or []
            if any(isinstance(x, str) and args.engine_no_step in x for x in a[:3]) and argv0(p) not in ("bash", "sh"):
                fl.check(p.get("step") is None, f"{who}: {describe(p)}: the engine itself belongs to no step")
    if args.cwd_under:
        for p in procs:
            c = p.get("cwd")
            if isinstance(c, str) and c:
                fl.check(c == args.cwd_under or c.startswith(args.cwd_under.rstrip("/") + "/"),
                         f"{who}: {describe(p)} ran in {c}, outside the pipeline's directory {args.cwd_under}")
    if args.max_procs is not None:
        fl.check(len(procs) <= args.max_procs,
                 f"{who}: {len(procs)} processes, expected at most {args.max_procs}: {[argv0(p) for p in procs][:40]}")
    for kind in args.no_signal or []:
        sig = [s for s in rep.get("signals") or [] if isinstance(s, dict) and s.get("kind") == kind]
        fl.check(not sig, f"{who}: unexpected {kind!r} signal(s): {sig[:5]}")
    run = rep.get("run") if isinstance(rep.get("run"), dict) else {}
    for e in args.expect_run or []:
        k, _, v = e.partition("=")
        fl.check(text(run.get(k)) == v, f"{who}: RUN --json run.{k} expected {v!r}, got {run.get(k)!r}")
    if args.by_name:
        # RUN may also be the pipeline's run id or the run key (docs/lake.md).
        for name in (r.get("run_key"), r.get("pipeline_run_id")):
            if not name:
                continue
            try:
                other = lake._run([str(name)])
            except LakeError as e:
                fl.add(f"{who}: RUN given as {name!r}: {e}")
                continue
            fl.check(other == rep, f"{who}: RUN --json given as {name!r} differs from given as {r.get('run_id')}")
    print(f"{who}: {brief(r)}; {len(steps)} steps {[(s.get('name'), s.get('tools'), s.get('state')) for s in steps]}")


# ---- disjoint -------------------------------------------------------------------------------------------

def cmd_disjoint(lake, args, fl):
    runs = lake.runs()
    got = {}
    for name, where, d in (("a", args.a, args.dir_a), ("b", args.b, args.dir_b)):
        rs = picked(runs, where)
        if not fl.check(len(rs) == 1, f"run {name} {where}: expected one, found {len(rs)}: {[brief(r) for r in rs]}"):
            return "two runs"
        got[name] = (rs[0], lake.run(rs[0]), d)
    ra, rb = got["a"][0], got["b"][0]
    fl.check(ra.get("run_id") != rb.get("run_id") and ra.get("run_key") != rb.get("run_key"),
             f"the two pipelines are one run: {brief(ra)}")
    keys = {}
    for name, (r, rep, d) in got.items():
        procs = procs_of(rep)
        steps = steps_of(rep)
        fl.check(steps, f"run {name} ({brief(r)}) has no step")
        fl.check(procs, f"run {name} ({brief(r)}) has no process")
        ids = {s.get("id") for s in steps}
        for p in procs:
            keys.setdefault((p.get("pid"), p.get("start_ns")), []).append(name)
            fl.check(p.get("step") is None or p.get("step") in ids,
                     f"run {name}: {describe(p)}: its step is not one of its run's steps {sorted(map(str, ids))}")
            c = p.get("cwd")
            if isinstance(c, str) and c:
                fl.check(c == d or c.startswith(d.rstrip("/") + "/"),
                         f"run {name}: {describe(p)} ran in {c}, which is not its pipeline's directory {d}: mixed")
        print(f"run {name}: {brief(r)}: {len(procs)} processes, {len(steps)} steps")
    both = [k for k, v in keys.items() if len(v) > 1]
    fl.check(not both, f"processes in both runs (pid, start_ns): {both[:10]}")
    return "two runs, each with its own steps and processes, none in both"


# ---- none -----------------------------------------------------------------------------------------------

def foreign(r, args):
    """A run another test on this host started meanwhile: it names another e2e temporary directory."""
    if r.get("detected_by") == "tracer_run" and args.no_tracer_run:
        return "a `tracer run` of someone else (this test starts none)"
    blob = json.dumps([r.get("command"), r.get("pipeline")])
    for marker in args.foreign or []:
        if marker in blob and (not args.mine or args.mine not in blob):
            return f"names {marker}... (another test's directory)"
    return None


def cmd_none(lake, args, fl):
    runs = lake.runs()
    mine = []
    for r in runs:
        why = foreign(r, args)
        if why:
            print(f"note: not counted, {why}: {brief(r)}")
        else:
            mine.append(r)
    for r in mine:
        try:
            rep = lake.run(r)
            extra = f"; its processes: {[(p.get('pid'), (p.get('argv') or [])[:4]) for p in procs_of(rep)][:8]}"
        except LakeError as e:
            extra = f"; RUN --json: {e}"
        fl.add(f"a run where no pipeline ran: {brief(r)}{extra}")
    return f"no run on an idle host ({len(runs)} in the lake, {len(runs) - len(mine)} of other tests)"


# ---- latency --------------------------------------------------------------------------------------------

def cmd_latency(lake, args, fl):
    """Poll the run while it runs. A step's latency: from its start (the lake's start_ns, the kernel's
    clock) to the first poll that returned it (the time after the CLI answered: an upper bound)."""
    t0 = time.monotonic()
    first_seen = {}       # step id -> (latency s, name)
    run_updates = []      # (poll time ns, last_update_ns) of each new value while running
    step_updates = {}     # step id -> [(poll time ns, last_update_ns)] while that step runs
    step_names = {}       # step id -> [name, tools]
    run_stale = 0.0
    state = None
    polls = 0
    r = None
    while time.monotonic() - t0 < args.timeout:
        rs = picked(lake.runs(), args.where)
        if not rs:
            if args.alive and not alive(args.alive):
                break
            time.sleep(args.poll)
            continue
        r = rs[0]
        rep = lake.run(r)
        now = time.time_ns()
        polls += 1
        state = r.get("state")
        if state != "running":
            break
        lu = r.get("last_update_ns")
        if isinstance(lu, int) and (not run_updates or run_updates[-1][1] != lu):
            run_updates.append((now, lu))
        if isinstance(lu, int):
            run_stale = max(run_stale, (now - lu) / 1e9)
        for s in steps_of(rep):
            sid = s.get("id")
            st = s.get("start_ns")
            if sid not in first_seen and isinstance(st, int):
                first_seen[sid] = ((now - st) / 1e9, s.get("name"), s.get("tools"))
                print(f"step {sid} ({s.get('name')}, {s.get('tools')}): in the lake "
                      f"{first_seen[sid][0]:.2f} s after it started")
            step_names[sid] = [s.get("name"), s.get("tools")]
            slu = s.get("last_update_ns")
            if s.get("state") == "running" and isinstance(slu, int):
                u = step_updates.setdefault(sid, [])
                if not u or u[-1][1] != slu:
                    u.append((now, slu))
        time.sleep(args.poll)
    if not fl.check(r is not None, f"no run {args.where} in the lake within {args.timeout} s"):
        return "latency"
    print(f"{polls} polls of the run while it ran ({lake.calls} CLI calls)")

    fl.check(len(first_seen) >= args.min_steps,
             f"only {len(first_seen)} step(s) seen while the run ran, expected >= {args.min_steps}")
    if first_seen:
        worst = max(first_seen.items(), key=lambda kv: kv[1][0])
        print(f"live.step_latency.worst {worst[1][0]:.2f} s (step {worst[0]}, {worst[1][1]}); "
              f"over {len(first_seen)} steps: " + ", ".join(f"{v[0]:.2f}" for v in first_seen.values()))
        for sid, (lat, name, _) in first_seen.items():
            fl.check(lat <= args.step_bound, f"step {sid} ({name}) reached the lake {lat:.2f} s after it started "
                                             f"(bound {args.step_bound} s)")

    def gaps(updates):
        # Between consecutive values of last_update_ns as written by the processor (its own clock).
        return [(b[1] - a[1]) / 1e9 for a, b in zip(updates, updates[1:])]

    g = gaps(run_updates)
    fl.check(len(run_updates) >= 3, f"the run's last_update_ns changed only {len(run_updates)} time(s) while it ran "
                                    f"(values {[u[1] for u in run_updates]})")
    if g:
        print(f"live.run_refresh.worst {max(g):.2f} s over {len(g)} refreshes; the lake's figures were at most "
              f"{run_stale:.2f} s old when read")
        fl.check(max(g) <= args.refresh_bound, f"the run's last_update_ns went {max(g):.2f} s without a refresh "
                                               f"(bound {args.refresh_bound} s): gaps {['%.2f' % x for x in g]}")
    # A running step's record is sent when the step changed (docs/live.md: steps are deltas): a step whose
    # processes work (--busy: its name or tools contain that text) must refresh at least as often as the
    # bound; an idle one (sleep) has nothing new, and the run's refreshes say it still runs: shown only.
    worst_busy, busy_seen = 0.0, 0
    for sid, u in step_updates.items():
        sg = gaps(u)
        busy = bool(args.busy) and args.busy in json.dumps(step_names.get(sid))
        kind = "busy" if busy else "idle"
        print(f"running step {sid} ({kind}): {len(u)} value(s) of last_update_ns seen, gaps "
              f"{['%.2f' % x for x in sg]}")
        if not busy:
            continue
        busy_seen += 1
        fl.check(len(u) >= 3, f"busy step {sid}: its last_update_ns changed only {len(u)} time(s) while it ran "
                              f"({step_names.get(sid)})")
        if sg:
            worst_busy = max(worst_busy, max(sg))
            fl.check(max(sg) <= args.refresh_bound, f"busy step {sid}: last_update_ns went {max(sg):.2f} s "
                                                    f"without a refresh (bound {args.refresh_bound} s): "
                                                    f"{['%.2f' % x for x in sg]}")
    if args.busy:
        fl.check(busy_seen > 0, f"no running step matching {args.busy!r} was seen: {step_names}")
        print(f"live.step_refresh.worst {worst_busy:.2f} s over {busy_seen} busy running steps")
    return (f"{len(first_seen)} steps in the lake within {args.step_bound} s of their start, running figures "
            f"refreshed at least every {args.refresh_bound} s")


# ---- compare --------------------------------------------------------------------------------------------

# Keys of `tracer run --json` the lake's rebuilt report need not carry the same (docs: "state" is added; a
# difference not listed here is a failure). Paths: top-level KEY, processes[].KEY, steps[].KEY, signals[].KEY.
ALLOWED_EXTRA = {"state", "tune"}  # tune: the analysis of the run's pipeline (docs/tune.md)


# Two observers of one process (tracer run's processor and the daemons') read the same kernel start time but
# convert it with clock offsets taken at different moments, and their exit programs run one after the other:
# their times may differ by this much (--time-tolerance-ns; 0 for one observer).
TIME_TOLERANCE_NS = 0


def walk_diff(a, b, path, out, ignore):
    if path in ignore:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            p = f"{path}.{k}" if path else k
            gp = generic(p)
            if gp in ignore:
                continue
            if k not in b:
                out.append(f"{p}: in the --json file ({json.dumps(a[k])[:80]}), missing from the lake's")
            elif k not in a:
                if gp not in ALLOWED_EXTRA:
                    out.append(f"{p}: only in the lake's ({json.dumps(b[k])[:80]})")
            else:
                walk_diff(a[k], b[k], p, out, ignore)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} elements in the --json file, {len(b)} in the lake's")
        for i, (x, y) in enumerate(zip(a, b)):
            walk_diff(x, y, f"{path}[{i}]", out, ignore)
    elif (TIME_TOLERANCE_NS and path.endswith("_ns") and type(a) is int and type(b) is int
          and abs(a - b) <= TIME_TOLERANCE_NS):
        return
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: --json file {json.dumps(a)[:100]}, lake {json.dumps(b)[:100]}")


def generic(path):
    """processes[3].files[0].path -> processes[].files[].path"""
    out, skip = [], False
    for ch in path:
        if ch == "[":
            skip = True
            out.append("[]")
        elif ch == "]":
            skip = False
        elif not skip:
            out.append(ch)
    return "".join(out)


# DESIGN.md's tracer.run.v1 minimum fields: what a report rebuilt from the daemons' live records carries
# (docs/lake.md lists what else it lacks: the agent's counters, series, peaks, earlier execs, extras).
CONTRACT = {
    "": ["schema", "command", "exit_code", "start_ns", "end_ns", "processes", "steps", "signals"],
    "processes[]": ["pid", "ppid", "start_ns", "end_ns", "exe", "argv", "cwd", "tool", "step", "exit_code", "signal",
                    "core_dumped", "oom_killed", "cpu_user_ns", "cpu_sys_ns", "peak_rss_bytes", "read_bytes",
                    "write_bytes", "rchar", "wchar", "net_tx_bytes", "net_rx_bytes", "container_id", "cgroup",
                    "files"],
    "steps[]": ["id", "name", "tools", "start_ns", "end_ns", "peak_rss_bytes"],
    "signals[]": ["kind", "pid", "step", "tool"],
}


def contract(rep):
    def pick(obj, keys):
        return {k: obj[k] for k in keys if k in obj} if isinstance(obj, dict) else obj
    out = pick(rep, CONTRACT[""])
    for arr in ("processes", "steps", "signals"):
        if isinstance(out.get(arr), list):
            out[arr] = [pick(x, CONTRACT[arr + "[]"]) for x in out[arr]]
    return out


def cmd_compare(lake, args, fl):
    try:
        with open(args.report, encoding="utf-8") as f:
            want = json.load(f)
    except (OSError, ValueError) as e:
        fl.add(f"cannot read {args.report}: {e}")
        return "compare"
    rs = picked(lake.runs(), args.where)
    if not fl.check(len(rs) == 1, f"expected one run {args.where}, found {len(rs)}: {[brief(r) for r in rs]}"):
        return "compare"
    got = lake.run(rs[0])
    fl.check(got.get("state") in ("succeeded", "failed"), f"RUN --json: state {got.get('state')!r}, expected "
                                                          "succeeded or failed (the run has ended)")
    ignore = set(args.ignore or [])
    diffs = []
    global TIME_TOLERANCE_NS
    TIME_TOLERANCE_NS = args.time_tolerance_ns
    if args.contract:
        want, got = contract(want), contract(got)
    walk_diff(want, got, "", diffs, ignore)
    for d in diffs:
        fl.add(f"RUN --json differs from the tracer run --json file: {d}")
    print(f"compared {len(json.dumps(want))} bytes of report: {len(diffs)} difference(s) "
          f"(ignored, as documented: {sorted(ignore) or 'none'}; the lake adds: {sorted(ALLOWED_EXTRA)})")
    return "the lake's report of the run equals tracer run's --json file, field by field"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tracer", required=True)
    ap.add_argument("--db", required=True)
    sub = ap.add_subparsers(dest="sub", required=True)

    def where(sp):
        sp.add_argument("--where", action="append", default=[], help="FIELD=VALUE or FIELD~TEXT")

    sp = sub.add_parser("watch")
    where(sp)
    sp.add_argument("--min-steps", type=int, default=1)
    sp.add_argument("--alive", type=int, default=0, help="the pipeline's pid: it must still run when seen")
    sp.add_argument("--timeout", type=float, default=30)
    sp.add_argument("--poll", type=float, default=0.2)
    sp.set_defaults(fn=cmd_watch)
    sp = sub.add_parser("wait")
    where(sp)
    sp.add_argument("--count", type=int, default=1)
    sp.add_argument("--timeout", type=float, default=30)
    sp.add_argument("--poll", type=float, default=0.25)
    sp.set_defaults(fn=cmd_wait)
    sp = sub.add_parser("check")
    where(sp)
    sp.add_argument("--count", type=int, default=1)
    sp.add_argument("--expect", action="append", help="FIELD=VALUE of the list's entry")
    sp.add_argument("--expect-run", action="append", help="KEY=VALUE of RUN --json's run object")
    sp.add_argument("--steps", type=int)
    sp.add_argument("--min-steps", type=int)
    sp.add_argument("--engine-steps", action="append", help="ENGINE=N: exactly N steps of that engine")
    sp.add_argument("--tools", nargs="+")
    sp.add_argument("--tool-procs", help="argv[0] names, comma-separated: each such process has a step of its run")
    sp.add_argument("--step-engine")
    sp.add_argument("--step-state")
    sp.add_argument("--engine-no-step", help="processes with this in argv[0..2] (the engine) have no step")
    sp.add_argument("--cwd-under")
    sp.add_argument("--max-procs", type=int)
    sp.add_argument("--no-signal", action="append")
    sp.add_argument("--by-name", action="store_true", help="RUN --json by run key and pipeline run id: the same")
    sp.set_defaults(fn=cmd_check)
    sp = sub.add_parser("disjoint")
    sp.add_argument("--a", action="append", required=True)
    sp.add_argument("--b", action="append", required=True)
    sp.add_argument("--dir-a", required=True)
    sp.add_argument("--dir-b", required=True)
    sp.set_defaults(fn=cmd_disjoint)
    sp = sub.add_parser("none")
    sp.add_argument("--foreign", action="append", help="text naming other tests' directories (not counted)")
    sp.add_argument("--mine", help="this test's directory: a run naming it always counts")
    sp.add_argument("--no-tracer-run", action="store_true", help="this test starts no tracer run")
    sp.set_defaults(fn=cmd_none)
    sp = sub.add_parser("latency")
    where(sp)
    sp.add_argument("--alive", type=int, default=0)
    sp.add_argument("--timeout", type=float, default=40)
    sp.add_argument("--poll", type=float, default=0.1)
    sp.add_argument("--min-steps", type=int, default=3)
    sp.add_argument("--step-bound", type=float, default=3.0)
    sp.add_argument("--refresh-bound", type=float, default=5.0)
    sp.add_argument("--busy", help="text in the name or tools of steps that work while they run: their "
                    "last_update_ns must refresh within the bound too")
    sp.set_defaults(fn=cmd_latency)
    sp = sub.add_parser("compare")
    where(sp)
    sp.add_argument("--report", required=True)
    sp.add_argument("--ignore", action="append", help="a documented difference: generic path, e.g. agent")
    sp.add_argument("--contract", action="store_true", help="only DESIGN.md's minimum fields (a live rebuild)")
    sp.add_argument("--time-tolerance-ns", type=int, default=0, help="times of two observers may differ this much")
    sp.set_defaults(fn=cmd_compare)
    args = ap.parse_args()
    fl = Failures()
    lake = Lake(args.tracer, args.db)
    try:
        what = args.fn(lake, args, fl)
    except LakeError as e:
        fl.add(str(e))
        what = args.sub
    return fl.finish(what)


if __name__ == "__main__":
    sys.exit(main())
