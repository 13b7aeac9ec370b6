#!/usr/bin/env bash
# `tracer run -- CMD` starts CMD in exactly the process state it would have
# had without tracer (docs/architecture.md, "Transparency"). probe_state
# prints that state (signal dispositions, mask, umask, rlimits, environment,
# cwd, nice, oom_score_adj, prctl bits, credentials and capabilities,
# terminal and job control, open descriptors: see tests/e2e/probe_state.c)
# and runs once directly and once under tracer run, from the same
# non-default state, as a foreground job of the same pseudo-terminal
# session, like an interactive shell would run it; any key that differs
# fails the test. The same again as the sudo user (SUDO_UID=65534), against
# `setpriv` making the same switch without tracer. Then behaviour:
# `yes | head -1` and `sort BIG | head -1` under pipefail give the same
# statuses (141 from the writer: SIGPIPE) with and without tracer run, and
# ^Z stops the whole job, after which `fg` lets the command read a line
# typed on the terminal.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

[ -x "$B/tests/e2e/probe_state" ] || e2e_fail "not built: $B/tests/e2e/probe_state (run 'make all')"
PROBE=$TMP/probe_state # a copy the sudo user (nobody) can run wherever the build is
cp "$B/tests/e2e/probe_state" "$PROBE" || e2e_fail "cannot copy probe_state into $TMP"
command -v setpriv >/dev/null || e2e_fail "setpriv is needed for the sudo-user case (util-linux: make deps)"

mkdir -m 755 "$TMP/work" || e2e_fail "cannot create $TMP/work"
mkdir -m 777 "$TMP/out" || e2e_fail "cannot create $TMP/out"
echo "an inherited descriptor" >"$TMP/fd7.txt"
seq 1 300000 >"$TMP/big.txt" # ~2 MB of output from sort: far more than a pipe holds

# The session: a pseudo-terminal whose session leader runs each job in turn
# as a foreground job (own process group, given the terminal, taken back
# after), like a job-control shell. Every job starts from the same
# non-default state (what an interactive shell would hand down after `trap
# '' ...`, `umask`, `ulimit`, `nice`, a redirection...), with the same
# terminal, the same open file on fd 7 and the same pipe on fd 8.
cat >"$TMP/session.py" <<'PY'
import json, os, resource, signal, sys, termios, fcntl, time, select

spec = json.load(open(sys.argv[1]))
IGNORED = [signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1]
BLOCKED = {signal.SIGTERM, signal.SIGUSR2}
TYPED = b"typed on the terminal\n"

def set_state(job, tty, fd7, fd8):
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
    for sig in IGNORED + ([signal.SIGCHLD] if job.get("ignore_chld") else []):
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, BLOCKED)
    os.umask(0o027)
    for res, soft in ((resource.RLIMIT_NOFILE, 256), (resource.RLIMIT_MEMLOCK, 1 << 20),
                      (resource.RLIMIT_STACK, 4 << 20)):
        hard = resource.getrlimit(res)[1]
        resource.setrlimit(res, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    os.setpriority(os.PRIO_PROCESS, 0, 5)
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("100")
    os.chdir(spec["cwd"])
    for fd in (0, 1, 2):
        os.dup2(tty, fd)
    os.dup2(fd7, 7)
    os.dup2(fd8, 8)

def start_job(job, tty, fd7, fd8):
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(go_w)
            os.read(go_r, 1)  # until the session has made our group the foreground one
            os.close(go_r)
            set_state(job, tty, fd7, fd8)
            os.execve(job["argv"][0], job["argv"], job["env"])
        except BaseException as e:
            os.write(2, ("session: %s: %s\n" % (job["argv"][0], e)).encode())
        os._exit(127)
    os.close(go_r)
    os.setpgid(pid, pid)
    os.tcsetpgrp(tty, pid)
    os.write(go_w, b"g")
    os.close(go_w)
    return pid

# The job's wait status once it stopped or ended, None at the deadline.
def wait_job(pid, deadline):
    while time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
        if done:
            return st
        time.sleep(0.02)
    return None

def describe(st):
    if st is None:
        return "still running after %d s" % spec["timeout"]
    if os.WIFSTOPPED(st):
        return "stopped by %s" % signal.Signals(os.WSTOPSIG(st)).name
    return "exit %d" % os.waitstatus_to_exitcode(st)

# ^Z on the terminal once the job says it is about to read it: the job must
# stop (the whole job: tracer, not only its command); then `fg` (SIGCONT)
# and a line typed for the job to read.
def suspend_and_type(job, pid, master, deadline):
    while not os.path.exists(job["suspend_when"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.write(master, b"\x1a")
    st = wait_job(pid, min(deadline, time.monotonic() + 20))
    if st is None or not os.WIFSTOPPED(st):
        return st, "after ^Z: " + (describe(st) if st is not None else "not stopped within 20 s")
    os.killpg(pid, signal.SIGCONT)
    os.write(master, TYPED)
    return None, describe(st) + ", "

def run_job(job, tty, master, fd7, fd8):
    pid = start_job(job, tty, fd7, fd8)
    deadline = time.monotonic() + spec["timeout"]
    st, prefix = None, ""
    if job.get("suspend_when"):
        st, prefix = suspend_and_type(job, pid, master, deadline)
    if st is None:
        st = wait_job(pid, deadline)
    result = prefix + describe(st)
    if st is None or not (os.WIFEXITED(st) or os.WIFSIGNALED(st)):
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.tcsetpgrp(tty, os.getpgrp())  # take the terminal back (SIGTTOU is ignored here, as in a shell)
    return result

def leader(tty, master):
    os.setsid()
    fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    fd7 = os.open(spec["fd7"], os.O_RDONLY)
    fd8, fd8_w = os.pipe()  # a pipe nobody writes: the same one for every job
    results = {job["name"]: run_job(job, tty, master, fd7, fd8) for job in spec["jobs"]}
    with open(spec["results"], "w") as f:
        json.dump(results, f)

master, slave = os.openpty()  # neither is inherited across exec (Python's default)
pid = os.fork()
if pid == 0:
    try:
        leader(slave, master)  # master: to type on the terminal
        os._exit(0)
    except BaseException as e:
        print("session leader:", e, file=sys.stderr)
        os._exit(1)
os.close(slave)
with open(spec["log"], "wb") as log:  # everything the jobs wrote on the terminal
    while True:
        if select.select([master], [], [], 1)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every slave closed
                data = b""
            if not data:
                break
            log.write(data)
        elif os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):  # gone, not yet reaped
            break
_, st = os.waitpid(pid, 0)
sys.exit(1 if st else 0)

PY

# The comparison: every key of A and of B, by name; a difference names the key.
cat >"$TMP/compare.py" <<'PY'
import sys

def load(path):
    d = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(" ")
            d[k] = v
    return d

a_path, b_path = sys.argv[1:3]
a, b = load(a_path), load(b_path)
diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
for k in diff:
    print("  %s: without tracer %r, under tracer run %r" % (k, a.get(k, "(missing)"), b.get(k, "(missing)")))
if not a or not b:
    print("  an empty probe output")
sys.exit(1 if diff or not a or not b else 0)
PY

# Both pipelines, their PIPESTATUS and the writer's complaint (sort: "write failed ... Broken pipe").
# shellcheck disable=SC2016 # expanded by the job's bash
pipes='set -o pipefail
yes | head -n 1 >/dev/null
echo "yes_head ${PIPESTATUS[*]}" >"$2"
sort "$1" 2>"$2.sort_err" | head -n 1 >/dev/null
echo "sort_head ${PIPESTATUS[*]}" >>"$2"
echo "sort_stderr_bytes $(wc -c <"$2.sort_err")" >>"$2"'

O=$TMP/out
python3 - "$TMP/spec.json" "$TMP" "$TRACER" "$PROBE" "$(command -v setpriv)" "$E2E_TIMEOUT" "$pipes" <<'PY' ||
import json, os, sys
spec, tmp, tracer, probe, setpriv, timeout, pipes = sys.argv[1:]
out = tmp + "/out/"
env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
env["PROBE_MARK"] = "a value with spaces,\ta tab and\na newline"
user = dict(env, SUDO_UID="65534", SUDO_GID="65534", SUDO_USER="nobody")
bash = ["/bin/bash", "-c", pipes, "pipes", tmp + "/big.txt"]
tty = ["/bin/bash", "-c", 'echo >"$1"; read -r line; echo "read $line" >"$2"', "tty"]
run = [tracer, "run", "--"]
jobs = [  # name, argv, environment, SIGCHLD ignored too
    ("direct", [probe, "-o", out + "direct"], env, True),
    ("traced", run + [probe, "-o", out + "traced"], env, True),
    ("user_direct", [setpriv, "--reuid=65534", "--regid=65534", "--init-groups", probe, "-o", out + "user_direct"],
     user, True),
    ("user_traced", run + [probe, "-o", out + "user_traced"], user, True),
    ("pipes_direct", bash + [out + "pipes_direct"], env, False),
    ("pipes_traced", run + bash + [out + "pipes_traced"], env, False),
    ("tty_direct", tty + [out + "tty_direct.ready", out + "tty_direct"], env, False),
    ("tty_traced", run + tty + [out + "tty_traced.ready", out + "tty_traced"], env, False),
]
json.dump({"cwd": tmp + "/work", "fd7": tmp + "/fd7.txt", "log": tmp + "/tty.log", "results": tmp + "/results.json",
           "timeout": int(timeout),
           "jobs": [{"name": n, "argv": a, "env": e, "ignore_chld": c,
                     "suspend_when": out + n + ".ready" if n.startswith("tty_") else None} for n, a, e, c in jobs]},
          open(spec, "w"))
PY
	e2e_fail "cannot write the session's job list"

show_tty() {
	echo "--- the terminal (last 40 lines)"
	tail -n 40 "$TMP/tty.log" | tr -d '\r'
} >&2

python3 "$TMP/session.py" "$TMP/spec.json" || { show_tty; e2e_fail "the pseudo-terminal session failed (above)"; }

# Every problem is reported, then the test fails once: a broken run shows all it changed.
failed=''
# Every job exits 0 (the pipelines' statuses are in their output, compared below); ^Z stops the tty jobs.
python3 - "$TMP/results.json" <<'PY' || failed="$failed job-statuses"
import json, sys
want = dict.fromkeys(["direct", "traced", "user_direct", "user_traced", "pipes_direct", "pipes_traced"], "exit 0")
want.update(dict.fromkeys(["tty_direct", "tty_traced"], "stopped by SIGTSTP, exit 0"))
got = json.load(open(sys.argv[1]))
bad = [n for n in want if got.get(n) != want[n]]
for n in bad:
    print("job %s: %s, expected %s" % (n, got.get(n), want[n]))
sys.exit(1 if bad else 0)
PY
if grep -q "trace is incomplete" "$TMP/tty.log"; then
	echo "--- tracer run said, on the terminal:"
	tr -d '\r' <"$TMP/tty.log" | grep -B 3 "trace is incomplete"
	failed="$failed incomplete-trace"
fi
for pair in "direct traced" "user_direct user_traced" "pipes_direct pipes_traced" "tty_direct tty_traced"; do
	read -r a b <<<"$pair"
	if ! python3 "$TMP/compare.py" "$O/$a" "$O/$b" >"$TMP/diff.$a" 2>&1; then
		echo "$b differs from $a:"
		cat "$TMP/diff.$a"
		failed="$failed $b"
	fi
done
# The baseline itself: SIGPIPE stops both writers (141), sort says nothing.
expected=$'yes_head 141 0\nsort_head 141 0\nsort_stderr_bytes 0'
if [ "$(cat "$O/pipes_direct" 2>/dev/null)" != "$expected" ]; then
	echo "without tracer the pipelines gave '$(tr '\n' ';' <"$O/pipes_direct")', expected '${expected//$'\n'/;}':" \
		"the session's state is not what this test sets up"
	failed="$failed baseline"
fi
if [ "$(cat "$O/tty_direct" 2>/dev/null)" != "read typed on the terminal" ]; then
	echo "without tracer the job did not read the line typed after ^Z and fg: '$(cat "$O/tty_direct" 2>&1)'"
	failed="$failed baseline"
fi
[ -z "$failed" ] || e2e_fail "tracer run is not transparent:$failed (details above)"
echo "same state and behaviour with and without tracer run ($(wc -l <"$O/direct") keys compared)"
