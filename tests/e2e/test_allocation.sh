#!/usr/bin/env bash
# The allocation a process and a step ran under (docs/schema.md, "cpu_limit_cores"), read by the kernel
# programs at each exit, on whichever cgroup layout the host has (v1 cpu and memory, or v2):
#  - a step in a cgroup limited to 0.5 CPU and 256 MiB: it and each of its processes say so;
#  - a step pinned to one CPU by taskset (where the host has more than one): 1 CPU, no memory limit;
#  - a step with neither: null, its processes allowed every CPU;
#  - the HTML report's steps table has a CPU limit and a memory limit column, with those figures (headless
#    Chromium, tests/e2e/cdp.py).
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf
e2e_limit_cgroup "tracer-e2e-alloc-$$" 500 $((256 << 20))
tracer_run alloc --json "$TMP/alloc.json" --html "$TMP/alloc.html" -- bash -c "
	TRACER_STEP=limited bash -c 'for f in ${CG_PROCS[*]}; do echo \$\$ >\$f; done; $W touch 8 >/dev/null; true'
	TRACER_STEP=pinned taskset -c 0 $W touch 8 >/dev/null
	TRACER_STEP=free $W touch 8 >/dev/null"
expect_rc "the steps exit 0" 0 alloc
python3 - "$TMP/alloc.json" "$(nproc)" <<'PY2' || e2e_fail "report check 'allocation' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
import json, sys
doc = json.load(open(sys.argv[1]))
cpus = int(sys.argv[2])
fails = []
steps = {s["id"]: s for s in doc["steps"]}
procs = {}
for p in doc["processes"]:
    procs.setdefault(p["step"], []).append(p)
def want(what, got, exp):
    if got != exp:
        fails.append(f"{what}: {got!r}, expected {exp!r}")
for sid in ("limited", "pinned", "free"):
    if sid not in steps or not procs.get(sid):
        fails.append(f"no step {sid} with processes: steps {sorted(steps)}")
if not fails:
    want("limited: cpu_limit_cores", steps["limited"]["cpu_limit_cores"], 0.5)
    want("limited: memory_limit_bytes", steps["limited"]["memory_limit_bytes"], 256 << 20)
    for p in procs["limited"]:
        want(f"limited pid {p['pid']} ({p['exe']}): cpu_limit_cores", p["cpu_limit_cores"], 0.5)
        want(f"limited pid {p['pid']} ({p['exe']}): memory_limit_bytes", p["memory_limit_bytes"], 256 << 20)
    pinned = 1.0 if cpus > 1 else None
    want("pinned: cpu_limit_cores", steps["pinned"]["cpu_limit_cores"], pinned)
    want("pinned: memory_limit_bytes", steps["pinned"]["memory_limit_bytes"], None)
    want("pinned: cpus_allowed", [p["cpus_allowed"] for p in procs["pinned"] if p["exe"].endswith("workload")], [1])
    want("free: cpu_limit_cores", steps["free"]["cpu_limit_cores"], None)
    want("free: memory_limit_bytes", steps["free"]["memory_limit_bytes"], None)
    want("free: cpus_allowed", sorted({p["cpus_allowed"] for p in procs["free"]}), [cpus])
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY2
[ -x /usr/lib/chromium/chromium-headless-shell ] || [ -x /usr/bin/chromium-headless-shell ] ||
	[ -n "${TRACER_BROWSER:-}" ] || e2e_skip "no headless Chromium (make deps installs chromium-headless-shell)"
python3 "$E2E_DIR/cdp.py" "$TMP/alloc.html" \
	--eval "heads=Array.from(document.querySelector('tr.step-row').closest('table').querySelectorAll('th')).map(function(e){return e.textContent})" \
	--eval "rows=Array.from(document.querySelectorAll('tr.step-row')).map(function(r){return [r.getAttribute('data-step')].concat(Array.from(r.cells).map(function(c){return c.textContent}))})" \
	>"$TMP/alloc.cdp.json" 2>"$TMP/alloc.cdp.err" || e2e_fail "cdp.py could not read the page: $(tail -5 "$TMP/alloc.cdp.err")"
python3 - "$TMP/alloc.cdp.json" <<'PY2' || e2e_fail "the HTML report does not show the steps' allocation (above)"
import json, sys
got = json.load(open(sys.argv[1]))
v = got["values"]
heads, rows = v.get("heads") or [], {r[0]: r[1:] for r in v.get("rows") or []}
print("  steps table:", heads, rows)
if got["errors"] or "CPU limit" not in heads or "memory limit" not in heads or "limited" not in rows:
    sys.exit(1)
cpu, mem = heads.index("CPU limit"), heads.index("memory limit")
ok = rows["limited"][cpu] == "0.5" and rows["limited"][mem] == "256.0MiB" and rows["free"][cpu] == "-" \
    and rows["free"][mem] == "-"
sys.exit(0 if ok else 1)
PY2
exit 0
