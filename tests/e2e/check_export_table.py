#!/usr/bin/env python3
"""tracer export table, read back as a notebook reads it (issue 28, docs/export.md).

    check_export_table.py --tracer TRACER --db LAKE --run-key-part TEXT

Exports every table (runs, steps, processes, signals, samples) in both
formats and loads them with Python's own csv and json modules:

  - CSV: the header is the documented columns, in order; every row has
    every field; NDJSON: every line one object with exactly those keys,
    in that order; integer columns hold integers (or NULL: an empty field,
    null), text columns strings, the price a number; the two formats give
    the same rows, value for value (samples: the NDJSON, exported
    second, may add those that arrived in between on the live lake);
  - the run whose key holds TEXT is there, and its steps and processes in
    the export equal `tracer report --db LAKE RUN --json`'s: the same step
    ids, names, tools, times, CPU, peak memory, exit codes, states; the
    same processes (pid and start) with the same ppid, exe, argv, step,
    tool, exit code, signal, CPU split, peak RSS and its source, I/O and
    network bytes, cgroup; its signals the report's (kind, pid, step, tool);
  - its processes have samples in the samples table, each within its
    process's life, and the ids join: every step_id of a process is a
    step of the run; --since 1d keeps the run, and its rows.

Exits 0 when all that holds, 1 saying what did not.
"""
import argparse
import collections
import csv
import io
import json
import subprocess
import sys

# name: type (i integer, t text, r real), as docs/export.md lists them
COLUMNS = {
    "runs": "run_id:i run_key:t host_id:t host_name:t pipeline:t pipeline_run_id:t run_name:t engine:t "
            "detected_by:t state:t command_json:t start_ns:i end_ns:i last_update_ns:i exit_code:i signal:i "
            "root_pid:i uid:i processes:i steps:i signals:i jobs:i cpu_ns:i read_bytes:i write_bytes:i "
            "rchar_bytes:i wchar_bytes:i net_tx_bytes:i net_rx_bytes:i slurm_job_id:t aws_batch_job_id:t "
            "host_cloud:t host_instance_type:t host_instance_id:t host_region:t host_cpus:i host_memory_bytes:i "
            "host_price_per_hour_usd:r",
    "steps": "run_id:i step_id:t step_idx:i name:t state:t engine:t rule:t workdir:t tools_json:t start_ns:i "
             "end_ns:i last_update_ns:i exit_code:i signal:i failed:i processes:i running:i failed_processes:i "
             "nonzero_exits:i oom_killed:i cpu_ns:i peak_rss_bytes:i peak_rss_partial:i rss_sum_of_peaks_bytes:i "
             "memcg_peak_bytes:i read_bytes:i write_bytes:i rchar_bytes:i wchar_bytes:i net_tx_bytes:i "
             "net_rx_bytes:i cpu_limit_millicores:i memory_limit_bytes:i job_id:t job_host:t job_submitted_ns:i "
             "job_queue_wait_ns:i",
    "processes": "run_id:i step_id:t host_id:t boot_id:t pid:i start_mono_ns:i ppid:i start_ns:i end_ns:i exe:t "
                 "cwd:t tool:t argv_json:t exit_code:i signal:i core_dumped:i oom_killed:i cpu_user_ns:i "
                 "cpu_sys_ns:i peak_rss_bytes:i peak_rss_source:t read_bytes:i write_bytes:i rchar_bytes:i "
                 "wchar_bytes:i net_tx_bytes:i net_rx_bytes:i cgroup:t",
    "signals": "run_id:i signal_id:i kind:t source:t host_id:t boot_id:t pid:i start_mono_ns:i step_id:t tool:t "
               "detail_json:t",
    "samples": "run_id:i host_id:t boot_id:t pid:i start_mono_ns:i ts_ns:i cpu_ns:i utime_ns:i stime_ns:i "
               "rss_bytes:i hiwater_rss_bytes:i read_bytes:i write_bytes:i rchar_bytes:i wchar_bytes:i "
               "net_tx_bytes:i net_rx_bytes:i iowait_ns:i blocked_ns:i run_delay_ns:i threads:i",
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def export(tracer, db, table, fmt, since=None):
    cmd = [tracer, "export", "table", "--db", db, table, "--format", fmt] + (["--since", since] if since else [])
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    if p.returncode != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
    return p.stdout.decode("utf-8")  # strictly UTF-8: a byte that is not is a failure here


def columns(table):
    return [c.split(":") for c in COLUMNS[table].split()]


def typed(table, value, name, kind, where):
    """A CSV field as the value it stands for: None for an empty field, int, float or str by its column."""
    if value == "" and kind != "t":
        return None
    if kind == "i":
        try:
            return int(value)
        except ValueError:
            fail("%s: %s %r is not an integer" % (where, name, value))
            return value
    if kind == "r":
        return float(value)
    return value


def load(tracer, db, table, since=None):
    """The table's rows from both formats, checked against the columns; the NDJSON rows (dicts)."""
    cols = columns(table)
    names = [c[0] for c in cols]
    text = export(tracer, db, table, "csv", since)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or rows[0] != names:
        fail("%s: CSV header %s, not %s" % (table, rows[0] if rows else None, names))
        return []
    if not text.endswith("\r\n"):
        fail("%s: CSV does not end with CRLF" % table)
    lines = export(tracer, db, table, "ndjson", since).split("\n")
    if lines[-1] != "":
        fail("%s: NDJSON does not end with a newline" % table)
    objs = []
    for n, line in enumerate(lines[:-1], 1):
        o = json.loads(line)
        if not isinstance(o, dict) or list(o) != names:
            fail("%s: NDJSON line %d: keys %s, not %s" % (table, n, list(o), names))
            continue
        for name, kind in cols:
            v = o[name]
            ok = v is None or (kind == "i" and type(v) is int) or (kind == "t" and isinstance(v, str)) or \
                (kind == "r" and isinstance(v, (int, float)))
            if not ok:
                fail("%s: NDJSON line %d: %s = %r is not of type %s" % (table, n, name, v, kind))
        objs.append(o)
    # The lake is live (the daemons run on): the NDJSON, exported after the CSV, may hold rows that arrived in
    # between (samples of the host's other processes), never fewer. Every CSV row must be in it, field for field.
    later = collections.Counter()
    for o in objs:
        later[tuple("" if (kind == "t" and o[name] is None) else o[name] for name, kind in cols)] += 1
    for n, row in enumerate(rows[1:], 1):
        if len(row) != len(names):
            fail("%s: CSV row %d has %d fields, not %d" % (table, n, len(row), len(names)))
            continue
        v = tuple(typed(table, field, name, kind, "%s row %d" % (table, n)) for (name, kind), field in zip(cols, row))
        if later[v] == 0:
            fail("%s: CSV row %d is not among the NDJSON lines: %r" % (table, n, dict(zip(names, v))))
        later[v] -= 1
    if len(rows) - 1 > len(objs):
        fail("%s: %d CSV rows, only %d NDJSON lines (exported after it)" % (table, len(rows) - 1, len(objs)))
    if len(objs) > len(rows) - 1 and table != "samples":  # only samples arrive on: the run has ended
        fail("%s: %d CSV rows, %d NDJSON lines" % (table, len(rows) - 1, len(objs)))
    elif len(objs) > len(rows) - 1:
        print("%s: %d row(s) arrived between the CSV and the NDJSON export" % (table, len(objs) - (len(rows) - 1)))
    print("%s: %d rows, %d columns, CSV and NDJSON the same" % (table, len(objs), len(names)))
    return objs


def check_run(tracer, db, tables, key_part):
    runs = [r for r in tables["runs"] if key_part in (r["run_key"] or "")]
    if len(runs) != 1:
        fail("%d runs whose key holds %s" % (len(runs), key_part))
        return
    run = runs[0]
    rid = run["run_id"]
    p = subprocess.run([tracer, "report", "--db", db, str(rid), "--json"], capture_output=True, timeout=120)
    if p.returncode != 0:
        fail("tracer report %d --json: %s" % (rid, p.stderr.decode(errors="replace")))
        return
    rep = json.loads(p.stdout)
    for k in ("start_ns", "end_ns", "exit_code", "state"):
        if run[k] != rep.get(k):
            fail("run %d: %s %r, the report says %r" % (rid, k, run[k], rep.get(k)))
    if json.loads(run["command_json"]) != rep["command"]:
        fail("run %d: command %s, the report says %s" % (rid, run["command_json"], rep["command"]))

    steps = [s for s in tables["steps"] if s["run_id"] == rid]
    want = {s["id"]: s for s in rep["steps"]}
    got = {s["step_id"]: s for s in steps}
    if set(got) != set(want) or len(steps) != len(rep["steps"]):
        fail("run %d: steps %s, the report's %s" % (rid, sorted(got), sorted(want)))
    same = {"name": "name", "state": "state", "engine": "engine", "rule": "rule", "workdir": "workdir",
            "start_ns": "start_ns", "end_ns": "end_ns", "exit_code": "exit_code", "signal": "signal",
            "processes": "processes", "running": "running", "failed_processes": "failed_processes",
            "nonzero_exits": "nonzero_exits", "oom_killed": "oom_killed", "cpu_ns": "cpu_ns",
            "peak_rss_bytes": "peak_rss_bytes", "rss_sum_of_peaks_bytes": "rss_sum_of_peaks_bytes",
            "memcg_peak_bytes": "memcg_peak_bytes", "read_bytes": "read_bytes", "write_bytes": "write_bytes",
            "rchar_bytes": "rchar", "wchar_bytes": "wchar", "net_tx_bytes": "net_tx_bytes",
            "net_rx_bytes": "net_rx_bytes", "memory_limit_bytes": "memory_limit_bytes",
            "last_update_ns": "last_update_ns"}
    for sid in set(got) & set(want):
        e, r = got[sid], want[sid]
        for ek, rk in same.items():
            if e[ek] != r[rk]:
                fail("step %s: %s %r, the report says %r" % (sid, ek, e[ek], r[rk]))
        if json.loads(e["tools_json"]) != r["tools"]:
            fail("step %s: tools %s, the report says %s" % (sid, e["tools_json"], r["tools"]))
        if (e["failed"] is None) != (r["failed"] is None) or (e["failed"] is not None and
                                                             bool(e["failed"]) != r["failed"]):
            fail("step %s: failed %r, the report says %r" % (sid, e["failed"], r["failed"]))

    procs = [x for x in tables["processes"] if x["run_id"] == rid]
    got = {(x["pid"], x["start_ns"]): x for x in procs}
    want = {(x["pid"], x["start_ns"]): x for x in rep["processes"]}
    if set(got) != set(want) or len(procs) != len(rep["processes"]):
        fail("run %d: %d processes exported, the report has %d (%d in common)" %
             (rid, len(procs), len(rep["processes"]), len(set(got) & set(want))))
    same = {"ppid": "ppid", "end_ns": "end_ns", "exe": "exe", "cwd": "cwd", "tool": "tool", "step_id": "step",
            "exit_code": "exit_code", "signal": "signal", "cpu_user_ns": "cpu_user_ns", "cpu_sys_ns": "cpu_sys_ns",
            "peak_rss_bytes": "peak_rss_bytes", "peak_rss_source": "peak_rss_source", "read_bytes": "read_bytes",
            "write_bytes": "write_bytes", "rchar_bytes": "rchar", "wchar_bytes": "wchar",
            "net_tx_bytes": "net_tx_bytes", "net_rx_bytes": "net_rx_bytes", "cgroup": "cgroup"}
    for k in set(got) & set(want):
        e, r = got[k], want[k]
        for ek, rk in same.items():
            if e[ek] != r[rk]:
                fail("process %d: %s %r, the report says %r" % (k[0], ek, e[ek], r[rk]))
        if (json.loads(e["argv_json"]) if e["argv_json"] is not None else None) != r["argv"]:
            fail("process %d: argv %s, the report says %s" % (k[0], e["argv_json"], r["argv"]))
        if bool(e["oom_killed"]) != r["oom_killed"]:
            fail("process %d: oom_killed %r, the report says %r" % (k[0], e["oom_killed"], r["oom_killed"]))
        if (None if e["core_dumped"] is None else bool(e["core_dumped"])) != r["core_dumped"]:
            fail("process %d: core_dumped %r, the report says %r" % (k[0], e["core_dumped"], r["core_dumped"]))
    step_ids = {s["step_id"] for s in steps}
    for x in procs:
        if x["step_id"] is not None and x["step_id"] not in step_ids:
            fail("process %d: step %s is no step of run %d" % (x["pid"], x["step_id"], rid))

    sigs = [s for s in tables["signals"] if s["run_id"] == rid]
    mine = sorted((s["kind"], s["pid"], s["step_id"], s["tool"]) for s in sigs)
    theirs = sorted((s.get("kind"), s.get("pid"), s.get("step"), s.get("tool")) for s in rep["signals"]
                    if s.get("kind") != "slower_than_usual")  # the analysis', not the lake's
    if mine != theirs:
        fail("run %d: signals %s, the report's %s" % (rid, mine, theirs))

    # samples join their process (host, boot, pid, start) and fall within its life
    keys = {(x["host_id"], x["boot_id"], x["pid"], x["start_mono_ns"]): x for x in procs}
    joined = 0
    for s in tables["samples"]:
        x = keys.get((s["host_id"], s["boot_id"], s["pid"], s["start_mono_ns"]))
        if x is None:
            continue
        joined += 1
        if s["run_id"] != rid:
            fail("a sample of process %d says run %r, not %d" % (s["pid"], s["run_id"], rid))
        end = x["end_ns"] if x["end_ns"] is not None else s["ts_ns"]
        if s["ts_ns"] is None or not (x["start_ns"] - 10**6 <= s["ts_ns"] <= end + 10**9):
            fail("a sample of process %d at %r, outside its life %r..%r" % (s["pid"], s["ts_ns"], x["start_ns"],
                                                                          x["end_ns"]))
    if joined == 0:
        fail("no sample joins a process of run %d (host_id, boot_id, pid, start_mono_ns)" % rid)
    print("run %d: %d steps, %d processes, %d signals, %d samples: as tracer report --json says" %
          (rid, len(steps), len(procs), len(sigs), joined))

    # --since 1d: the run (it started minutes ago) and its rows
    recent = load(tracer, db, "runs", "1d")
    if rid not in [r["run_id"] for r in recent]:
        fail("--since 1d: run %d is not there" % rid)
    if len([x for x in load(tracer, db, "processes", "1d") if x["run_id"] == rid]) != len(procs):
        fail("--since 1d: not every process of run %d" % rid)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracer", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--run-key-part", required=True)
    a = ap.parse_args()
    tables = {t: load(a.tracer, a.db, t) for t in COLUMNS}
    check_run(a.tracer, a.db, tables, a.run_key_part)
    if failures:
        sys.exit("%d check(s) failed" % len(failures))
    print("export table: all checks passed")


if __name__ == "__main__":
    main()
