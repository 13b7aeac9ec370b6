#!/usr/bin/env bash
# Signals a user can act on (docs/processor.md, "Signals"): shell idioms
# that end non-zero are not failures, a step that fails is one.
#
#   tasks   a Nextflow-shaped run whose launcher ignores a failed task (as
#           errorStrategy 'ignore' does): the good task runs `grep -q` with no
#           match, `seq 1000000 | head -1`, `yes | head -1`, `test -f missing
#           || true` and `false` in an `if`; the bad task's `ls` fails. Exactly
#           one `failed` signal, naming the bad task's step (its pid and tool);
#           no `killed`; the idioms keep their status in processes[] and the
#           good step counts them in `nonzero_exits`. The summary says FAILED
#           only of the bad task.
#   script  the same idioms in a plain script that succeeds: no `failed`, and
#           a `sleep` killed by SIGTERM is the one `killed` (SIGPIPE is not).
#   broken  a `set -e` script stopped by a failing `ls`: `failed` for the
#           ls step and for the run (pid of the command, step null), none for
#           the `grep -q` it tolerated before.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

# The idioms, as one shell script. /usr/bin/test and /bin/false: the
# builtins run no process, and the point is a process that exits non-zero.
idioms='seq 1 1000 > numbers.txt
if grep -q NO-SUCH-LINE numbers.txt; then echo found; fi
seq 1000000 | head -1 > first.txt
yes | head -1 > yes.txt
/usr/bin/test -f missing.txt || true
if /bin/false; then echo never; fi'

mkdir -p "$TMP/nf/work/a1/b2c3d4e5f6" "$TMP/nf/work/f6/e5d4c3b2a1" || e2e_fail "setup: mkdir"
good=$TMP/nf/work/a1/b2c3d4e5f6 bad=$TMP/nf/work/f6/e5d4c3b2a1
printf '#!/bin/bash -ue\n%s\n' "$idioms" >"$good/.command.sh"
printf '#!/bin/bash -ue\nls /nonexistent-input-dir > listing.txt\n' >"$bad/.command.sh"
for d in "$good" "$bad"; do
	printf '#!/bin/bash\nset -e\nbash .command.sh > .command.out 2> .command.err\n' >"$d/.command.run"
done
cat >"$TMP/nf/nextflow" <<'SH'
#!/bin/bash
# The launcher, errorStrategy 'ignore': a failed task is reported and skipped.
for d in work/*/*/; do
	(cd "$d" && bash .command.run) || echo "task $d failed: ignored"
done
grep -q NO-SUCH-TASK work/*/*/.command.sh || echo "the launcher's own grep found nothing"
SH
chmod +x "$TMP/nf/nextflow"
cd "$TMP/nf" || e2e_fail "setup: cd"
tracer_run tasks --json "$TMP/tasks.json" -- ./nextflow run main.nf
expect_rc "the launcher ignores the failed task" 0 tasks

mkdir "$TMP/script" || e2e_fail "setup: mkdir"
cd "$TMP/script" || e2e_fail "setup: cd"
tracer_run script --json "$TMP/script.json" -- bash -c "$idioms
sleep 30 & sleep 0.5; kill -TERM \$!; wait \$! || true"
expect_rc "the script handles every status" 0 script

tracer_run broken --json "$TMP/broken.json" -- \
	sh -c 'set -e; grep -q NO-SUCH-LINE /etc/hostname || true; ls /nonexistent-input-dir; echo unreachable'
expect_rc "ls stops the script" 2 broken

python3 - "$E2E_DIR" "$TMP" "$good" "$bad" <<'PY' || e2e_fail "signals check failed (TRACER_E2E_KEEP=1 keeps $TMP)"
import json, os, sys
sys.path.insert(0, sys.argv[1])
import check  # noqa: E402

tmp, good_dir, bad_dir = sys.argv[2], sys.argv[3], sys.argv[4]
fl = check.Failures()
IDIOMS = {"grep": "exit", "seq": "pipe", "yes": "pipe", "test": "exit", "false": "exit"}


def load(name):
    with open(os.path.join(tmp, name + ".json"), encoding="utf-8") as f:
        rep = json.load(f)
    return rep, check.check_common(rep, fl)


def name(p):
    return os.path.basename((p.get("argv") or ["?"])[0])


def kinds(rep, kind):
    return [s for s in rep["signals"] if s.get("kind") == kind]


def nonzero(p):
    return p["signal"] != 0 or p["exit_code"] != 0


def check_idioms(procs, where):
    """Each idiom ran and ended as the idiom does: non-zero, or a writer stopped by the closed pipe."""
    seen = {}
    for p in procs:
        if name(p) in IDIOMS and (name(p) != "seq" or "1000000" in p["argv"]):
            seen.setdefault(name(p), []).append(p)
    for tool, how in IDIOMS.items():
        ps = seen.get(tool, [])
        if not fl.check(len(ps) == 1, f"{where}: expected one `{tool}` idiom process, found {len(ps)}"):
            continue
        p = ps[0]
        if how == "exit":
            fl.check(p["exit_code"] == 1 and p["signal"] == 0, f"{where}: {check.describe(p)} should exit 1: "
                     f"exit_code {p['exit_code']}, signal {p['signal']}")
        else:  # SIGPIPE, or EPIPE where SIGPIPE is ignored: either way not 0
            fl.check(p["signal"] == 13 or (p["exit_code"] or 0) != 0,
                     f"{where}: {check.describe(p)} should have been stopped by the closed pipe: "
                     f"exit_code {p['exit_code']}, signal {p['signal']}")
    return [ps[0] for ps in seen.values() if len(ps) == 1]


def step_by_dir(rep, d):
    steps = [s for s in rep["steps"] if (s.get("workdir") or "").rstrip("/") == d.rstrip("/")]
    fl.check(len(steps) == 1, f"tasks: expected one step for {d}, got {[s.get('id') for s in rep['steps']]}")
    return steps[0] if steps else None


def counted(rep, st, procs):
    """The step's nonzero_exits: its processes that ended non-zero, less its main when the step failed."""
    n = sum(1 for p in procs if p["step"] == st["id"] and nonzero(p) and not (st["failed"] and p["pid"] == st["pid"]))
    fl.check(st.get("nonzero_exits") == n, f"step {st['id']}: nonzero_exits {st.get('nonzero_exits')!r}, "
             f"but {n} of its processes ended non-zero (less a failed step's main)")


# tasks: one failed signal, the bad task's, and nothing for the idioms.
rep, procs = load("tasks")
good, bad = step_by_dir(rep, good_dir), step_by_dir(rep, bad_dir)
idioms = check_idioms([p for p in procs if p["step"] is not None], "tasks")  # not the launcher's grep
if good and bad:
    fl.check(not good["failed"], f"tasks: the good task's step {good['id']} is marked failed")
    fl.check(bad["failed"], f"tasks: the bad task's step {bad['id']} is not marked failed")
    for p in idioms:
        fl.check(p["step"] == good["id"], f"tasks: idiom {check.describe(p)} is in step {p['step']}, not {good['id']}")
    fl.check(good.get("nonzero_exits", 0) >= len(IDIOMS),
             f"tasks: the good step counts {good.get('nonzero_exits')!r} non-zero exits, expected >= {len(IDIOMS)}")
    counted(rep, good, procs)
    counted(rep, bad, procs)
    failed = kinds(rep, "failed")
    if fl.check(len(failed) == 1, f"tasks: expected exactly one 'failed' signal (the bad task), got {failed}"):
        s = failed[0]
        main = [p for p in procs if p["pid"] == bad["pid"]]
        fl.check(s.get("step") == bad["id"], f"tasks: the failed signal names step {s.get('step')!r}, not {bad['id']}")
        fl.check(s.get("pid") == bad["pid"], f"tasks: the failed signal's pid {s.get('pid')} is not the step's "
                 f"main process {bad['pid']}")
        fl.check(main and s.get("tool") == main[0]["tool"], f"tasks: the failed signal's tool {s.get('tool')!r}")
        fl.check(s.get("exit_code") == 2, f"tasks: the failed signal's exit_code {s.get('exit_code')!r}, expected 2")
fl.check(not kinds(rep, "killed"), f"tasks: 'killed' signals for pipe writers: {kinds(rep, 'killed')}")
launcher_grep = [p for p in procs if name(p) == "grep" and p["step"] is None]
fl.check(len(launcher_grep) == 1 and launcher_grep[0]["exit_code"] == 1,
         f"tasks: the launcher's own grep (no step, exit 1): {[check.describe(p) for p in launcher_grep]}")
with open(os.path.join(tmp, "tasks.err"), encoding="utf-8", errors="replace") as f:
    summary = f.read()
for line in summary.splitlines():
    if "FAILED" in line or "KILLED" in line:
        fl.check(not any(f" {t} " in f" {line} " for t in IDIOMS) and "KILLED" not in line,
                 f"tasks: the summary calls an idiom a failure: {line!r}")
fl.check("signals: 1\n" in summary, "tasks: the summary does not list exactly one signal")

# script: the idioms in a script that succeeds; the one kill is the sleep's.
rep, procs = load("script")
check_idioms(procs, "script")
fl.check(not kinds(rep, "failed"), f"script: 'failed' signals in a run that succeeded: {kinds(rep, 'failed')}")
killed = kinds(rep, "killed")
sleeps = [p for p in procs if name(p) == "sleep"]
fl.check(len(killed) == 1 and sleeps and killed[0]["pid"] == sleeps[0]["pid"] and killed[0].get("signal") == 15,
         f"script: expected one 'killed' signal, the sleep's SIGTERM: {killed}")
for st in rep["steps"]:
    fl.check(not st["failed"], f"script: step {st['id']} ({st['name']}) is marked failed in a run that succeeded")
    counted(rep, st, procs)

# broken: the ls step and the run failed; the tolerated grep did not.
rep, procs = load("broken")
ls = [p for p in procs if name(p) == "ls"]
root = [p for p in procs if p["argv"] == rep["command"]]
failed = kinds(rep, "failed")
if fl.check(len(ls) == 1 and len(root) == 1, "broken: expected one ls and one root process"):
    want = {(ls[0]["pid"], ls[0]["step"]), (root[0]["pid"], None)}
    got = {(s.get("pid"), s.get("step")) for s in failed}
    fl.check(ls[0]["step"] is not None and got == want and len(failed) == 2,
             f"broken: expected 'failed' for the ls step and the run ({want}), got {failed}")
for st in rep["steps"]:
    fl.check(st["failed"] == (bool(ls) and st["pid"] == ls[0]["pid"]),
             f"broken: step {st['id']} ({st['name']}) failed is {st['failed']}")
sys.exit(fl.finish("signals: idioms are not failures, a failed step is one"))
PY
