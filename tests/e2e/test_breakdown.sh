#!/usr/bin/env bash
# Issue 25: the breakdown means what it says (docs/tune.md, "The breakdown"), under the daemons, every
# step wrapped in `sh -c` as workflow engines wrap them (TRACER_STEP names each one):
#  - burn: a 4-thread burner beside `stress-ng --cpu 4`: class compute, not idle (the shell's wait for it is
#    not idle), and its process's run-queue wait in the lake within 10% of what the kernel's schedstat said
#    of its four threads (each read by the thread itself just before it ended: tests/e2e/workload.c);
#  - fsync: a writer that syncs every block it writes (dd oflag=direct,dsync, 1 MiB blocks) to a disk its
#    cgroup may write 16 MiB/s to, as a cloud volume's throughput limit does: class io. (Unthrottled, this
#    VM's disk took 256 MiB in 0.2 s with the writer 25-40 % on a CPU, and time the hypervisor stole from it
#    then counted as idle: docs/tune.md, "The breakdown");
#  - idle: a step that only sleeps: class idle;
#  - reclaim: a reader of a 256 MiB file in a 32 MiB memory cgroup: its breakdown shows direct reclaim.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
. "$(dirname "$0")/live.sh"
e2e_init "$1"
e2e_require_bpf
command -v stress-ng >/dev/null || e2e_fail "stress-ng is not installed (make deps installs it)"
live_init
live_start

dir=$(live_user_dir bd)
dd if=/dev/urandom of="$dir/big" bs=1M count=256 status=none || e2e_fail "setup: $dir/big"
e2e_write_limit_cgroup "tracer-e2e-bdw-$$" "$dir" $((16 << 20))
write_limited=("${CG_PROCS[@]}")
e2e_limit_cgroup "tracer-e2e-bd-$$" 0 $((32 << 20))
export TRACER_PIPELINE=breakdown
stress-ng --cpu 4 --timeout 120 >/dev/null 2>&1 &
hog=$!
e2e_on_exit "kill $hog 2>/dev/null"
sleep 1
TRACER_STEP=burn sh -c "$W burn 1500 4 >'$TMP/burn.out'" || e2e_fail "the burner failed"
kill "$hog"
wait "$hog" 2>/dev/null
(
	e2e_into_cgroup "$BASHPID" "${write_limited[@]}"
	TRACER_STEP=fsync exec sh -c "dd if=/dev/zero of='$dir/synced' bs=1M count=32 oflag=direct,dsync status=none"
) || e2e_fail "the fsync writer failed"
TRACER_STEP=idle sh -c "sleep 3" || e2e_fail "the sleeper failed"
sync && echo 3 >/proc/sys/vm/drop_caches
(
	e2e_into_cgroup "$BASHPID" "${CG_PROCS[@]}"
	TRACER_STEP=reclaim exec sh -c "cat '$dir/big' >/dev/null; cat '$dir/big' >/dev/null"
) || e2e_fail "the reader failed"
unset TRACER_PIPELINE
cat "$TMP/burn.out"
want=$(awk '/^burn_run_delay_ns/ { print $2 }' "$TMP/burn.out")
sleep 3 # the steps reach the lake within a second or two (docs/live.md)
live_alive
python3 - "$TRACER" "$LAKE" "$want" <<'PY' || e2e_fail "the breakdown is wrong (TRACER_E2E_KEEP=1 keeps $TMP)"
import json, sqlite3, subprocess, sys
tracer, lake, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
errors = []
doc = json.loads(subprocess.run([tracer, "tune", "--db", lake, "--pipeline", "breakdown", "--format", "json"],
                                capture_output=True, text=True, check=True, timeout=60).stdout)
steps = {s["step"]: s for s in doc["steps"]}
for name, cls in (("burn", "compute"), ("fsync", "io"), ("idle", "idle")):
    s = steps.get(name)
    if not s:
        errors.append(f"tune has no step {name}: {sorted(steps)}")
        continue
    print(f"{name}: class {s['class']} ({s['class_evidence']}); {s['wall_breakdown']}")
    if s["class"] != cls:
        errors.append(f"step {name} is classed {s['class']}, not {cls}")
s = steps.get("reclaim")
if not s:
    errors.append(f"tune has no step reclaim: {sorted(steps)}")
else:
    print(f"reclaim: class {s['class']} ({s['class_evidence']}); {s['wall_breakdown']}")
    if not s["wall_breakdown"]["reclaim_s"] > 0:
        errors.append("the reclaim step's breakdown shows no reclaim")
db = sqlite3.connect(f"file:{lake}?mode=ro", uri=True)
rows = db.execute("SELECT p.run_delay_ns, p.nr_threads FROM processes p JOIN runs r ON r.run_id = p.run_id "
                  "WHERE r.pipeline = 'breakdown' AND p.step = 'burn' AND p.tool = 'workload'").fetchall()
if len(rows) != 1:
    errors.append(f"{len(rows)} burner processes in the lake, not 1")
else:
    got = rows[0][0]
    print(f"burner: run-queue wait {got / 1e9:.3f} s in the lake, {want / 1e9:.3f} s by its threads' schedstat")
    if want <= 0 or abs(got - want) > 0.10 * want:
        errors.append(f"the burner's run-queue wait {got} ns is not within 10% of schedstat's {want} ns")
for e in errors:
    print(f"FAIL: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
