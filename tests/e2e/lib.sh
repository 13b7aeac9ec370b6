# shellcheck shell=bash
# Shared helpers of the end-to-end tests. Sourced by run.sh and by every
# tests/e2e/test_*.sh, which start with:
#
#   . "$(dirname "$0")/lib.sh"
#   e2e_init "$1"          # build dir; sets B TRACER W CHECK TMP
#   e2e_require_bpf        # skip (77) when tracer run cannot work here
#
# A test exits 0 (pass), 1 (fail) or 77 (skip, reason on the last line of
# stderr); e2e_fail and e2e_skip do that. With TRACER_E2E_REQUIRE=1 (CI)
# there is no skip: e2e_skip fails instead. Every tracer run goes through
# tracer_run, which bounds it with a timeout and keeps its output.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_TIMEOUT=${TRACER_E2E_TIMEOUT:-300} # seconds per tracer run: generous, only catches hangs
E2E_CLEANUPS=()

e2e_skip() {
	[ "${TRACER_E2E_REQUIRE:-}" = 1 ] && e2e_fail "TRACER_E2E_REQUIRE=1 allows no skip, but: $*"
	echo "$*" >&2
	exit 77
}

e2e_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Run a command at exit, even after a failure (last registered, first run).
e2e_on_exit() {
	E2E_CLEANUPS=("$1" "${E2E_CLEANUPS[@]}")
}

e2e_cleanup() {
	local rc=$? c
	for c in "${E2E_CLEANUPS[@]}"; do
		eval "$c" || true
	done
	exit "$rc"
}

# e2e_limit_cgroup NAME MILLICORES BYTES: a cgroup that limits CPU bandwidth to MILLICORES thousandths of
# a CPU and memory to BYTES (0: that limit not set), on the v1 cpu and memory hierarchies or on a v2
# hierarchy with both controllers (then enabled below its root). Sets CG_PROCS to the cgroup.procs files a
# pid is written to (one per hierarchy); removed at exit. Skips the test where neither layout is writable.
e2e_limit_cgroup() {
	local name=$1 mc=$2 bytes=$3 cpu mem
	CG_PROCS=()
	if [ -w /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && [ -w /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		cpu=/sys/fs/cgroup/cpu/$name mem=/sys/fs/cgroup/memory/$name
		mkdir "$cpu" "$mem" || e2e_fail "setup: mkdir $cpu $mem"
		e2e_on_exit "rmdir '$cpu' '$mem' 2>/dev/null"
		if [ "$mc" != 0 ]; then
			echo 100000 >"$cpu/cpu.cfs_period_us" && echo $((mc * 100)) >"$cpu/cpu.cfs_quota_us" ||
				e2e_fail "setup: the CPU limit of $cpu"
		fi
		if [ "$bytes" != 0 ]; then
			echo "$bytes" >"$mem/memory.limit_in_bytes" || e2e_fail "setup: the memory limit of $mem"
		fi
		CG_PROCS=("$cpu/cgroup.procs" "$mem/cgroup.procs")
	elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
		grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
		echo "+cpu +memory" >/sys/fs/cgroup/cgroup.subtree_control || e2e_fail "setup: enable cpu and memory"
		cpu=/sys/fs/cgroup/$name
		mkdir "$cpu" || e2e_fail "setup: mkdir $cpu"
		e2e_on_exit "rmdir '$cpu' 2>/dev/null"
		if [ "$mc" != 0 ]; then
			echo "$((mc * 100)) 100000" >"$cpu/cpu.max" || e2e_fail "setup: the CPU limit of $cpu"
		fi
		if [ "$bytes" != 0 ]; then
			echo "$bytes" >"$cpu/memory.max" || e2e_fail "setup: the memory limit of $cpu"
		fi
		CG_PROCS=("$cpu/cgroup.procs")
	else
		e2e_skip "no writable cgroup hierarchy with the cpu and memory controllers (v1 or v2)"
	fi
}

# e2e_write_limit_cgroup NAME PATH BPS: a cgroup whose writes to the disk holding PATH are limited to BPS
# bytes a second, as a cloud volume's throughput limit does (v1 blkio.throttle.write_bps_device, or io.max
# on a v2 hierarchy with the io controller). Sets CG_PROCS as e2e_limit_cgroup does; removed at exit. Skips
# the test where PATH is on no block device or neither layout is writable.
e2e_write_limit_cgroup() {
	local name=$1 path=$2 bps=$3 dev cg
	dev=$(mountpoint -d "$(stat -c %m "$path")") || e2e_fail "setup: the device of $path"
	[ -e "/sys/dev/block/$dev" ] || e2e_skip "$path is on no block device ($dev)"
	[ -e "/sys/dev/block/$dev/partition" ] && dev=$(cat "/sys/dev/block/$dev/../dev")
	CG_PROCS=()
	if [ -w /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device ]; then
		cg=/sys/fs/cgroup/blkio/$name
		mkdir "$cg" || e2e_fail "setup: mkdir $cg"
		e2e_on_exit "rmdir '$cg' 2>/dev/null"
		echo "$dev $bps" >"$cg/blkio.throttle.write_bps_device" || e2e_fail "setup: the write limit of $cg"
	elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		echo "+io" >/sys/fs/cgroup/cgroup.subtree_control || e2e_fail "setup: enable io"
		cg=/sys/fs/cgroup/$name
		mkdir "$cg" || e2e_fail "setup: mkdir $cg"
		e2e_on_exit "rmdir '$cg' 2>/dev/null"
		echo "$dev wbps=$bps" >"$cg/io.max" || e2e_fail "setup: the write limit of $cg"
	else
		e2e_skip "no writable cgroup hierarchy with the blkio (v1) or io (v2) controller"
	fi
	CG_PROCS=("$cg/cgroup.procs")
}

# e2e_into_cgroup PID FILE...: moves PID into a cgroup e2e_limit_cgroup made (FILE...: its CG_PROCS).
e2e_into_cgroup() {
	local pid=$1 f
	shift
	for f in "$@"; do
		echo "$pid" >"$f" || e2e_fail "setup: moving $pid into $f"
	done
}

# Where things are, for the tests. B is absolute so it stays valid after a cd.
# shellcheck disable=SC2034
e2e_paths() {
	[ -d "${1:-}" ] || { echo "usage: $0 BUILD_DIR (e.g. build)" >&2; exit 2; }
	B=$(cd "$1" && pwd)
	TRACER=$B/tracer
	W=$B/tests/e2e/workload
	CHECK=$E2E_DIR/check.py
}

# Missing binaries are a failure, not a skip: `make e2e` builds them first.
e2e_missing_binaries() {
	local f missing=
	for f in "$B/tracer" "$B/tracer-collector" "$B/tracer-processor" "$B/tests/e2e/workload"; do
		[ -x "$f" ] || missing="$missing $f"
	done
	echo "$missing"
}

e2e_init() {
	local missing
	e2e_paths "${1:-}"
	missing=$(e2e_missing_binaries)
	[ -z "$missing" ] || e2e_fail "not built:$missing (run 'make all')"
	command -v python3 >/dev/null || e2e_fail "python3 is needed for the report checks (make deps)"
	# Disk-backed by default (the I/O test needs storage I/O); TMPDIR overrides.
	TMP=$(mktemp -d "${TMPDIR:-/var/tmp}/tracer-e2e.XXXXXX") || e2e_fail "cannot create a temporary directory"
	chmod 755 "$TMP"
	trap e2e_cleanup EXIT
	trap 'exit 1' INT TERM
	if [ "${TRACER_E2E_KEEP:-}" = 1 ]; then
		e2e_on_exit "echo 'kept $TMP' >&2"
	else
		e2e_on_exit "rm -rf '$TMP'"
	fi
}

# Why BPF cannot work on this host, or nothing when it can (or when we cannot tell).
e2e_bpf_unavailable() {
	[ -r /sys/kernel/btf/vmlinux ] || { echo "the kernel has no BTF (/sys/kernel/btf/vmlinux)"; return; }
	command -v bpftool >/dev/null || return 0
	bpftool -j feature probe kernel 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
need = [("syscall_config", "have_bpf_syscall", "the bpf() system call is not available"),
        ("map_types", "have_ringbuf_map_type", "no BPF ring buffer maps (kernel < 5.8?)"),
        ("program_types", "have_tracepoint_prog_type", "no tracepoint BPF programs"),
        ("program_types", "have_raw_tracepoint_prog_type", "no raw tracepoint BPF programs")]
for sect, key, why in need:
    if d.get(sect, {}).get(key) is False:
        print(why)
        break
'
}

# Decide once whether the BPF tests can run: prints a skip reason, or nothing.
# A failing probe on a host that can load BPF is not a reason to skip: the
# tests then run and fail with the details.
e2e_probe() {
	local out rc why
	if [ "$(id -u)" != 0 ]; then
		echo "needs root: tracer run loads BPF programs"
		return
	fi
	[ -z "$(e2e_missing_binaries)" ] || return 0
	out=$(env -u SUDO_UID -u SUDO_GID -u SUDO_USER timeout -k 10 120 "$TRACER" run -- true 2>&1)
	rc=$?
	[ "$rc" = 0 ] && return
	why=$(e2e_bpf_unavailable)
	if [ -n "$why" ]; then
		echo "cannot load BPF programs here: $why (probe 'tracer run -- true' exited $rc: $(echo "$out" | tail -n 1))"
		return
	fi
	{
		echo "probe: 'tracer run -- true' exited $rc although this host can load BPF; the tests run and will say more:"
		printf '%s\n' "$out" | sed 's/^/    /'
	} >&2
}

# Why tracer run cannot work here, or nothing. run.sh probes once and passes
# the answer down in TRACER_E2E_SKIP; a test run alone probes itself.
e2e_bpf_reason() {
	if [ "${TRACER_E2E_PROBED:-}" = 1 ]; then
		echo "${TRACER_E2E_SKIP:-}"
	else
		TRACER_E2E_SKIP=$(e2e_probe)
		TRACER_E2E_PROBED=1
		echo "$TRACER_E2E_SKIP"
	fi
}

# Skip when tracer run cannot work here (fail instead with TRACER_E2E_REQUIRE=1).
e2e_require_bpf() {
	local reason
	reason=$(e2e_bpf_reason)
	[ -z "$reason" ] && return
	[ "${TRACER_E2E_REQUIRE:-}" = 1 ] && e2e_fail "TRACER_E2E_REQUIRE=1 but: $reason"
	e2e_skip "$reason"
}

# tracer_run NAME [OPTIONS] -- CMD...: `tracer run` with the given arguments.
# stdout goes to $TMP/NAME.out, stderr (the summary) to $TMP/NAME.err, the
# exit status to $TRACER_RC. CMD runs as root: tracer would run it as the
# sudo user, so the SUDO_* variables of a `sudo make check` are dropped.
tracer_run() {
	local name=$1
	shift
	env -u SUDO_UID -u SUDO_GID -u SUDO_USER timeout -k 10 "$E2E_TIMEOUT" "$TRACER" run "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	TRACER_RC=$?
	if [ "$TRACER_RC" = 124 ]; then
		tracer_show "$name"
		e2e_fail "'tracer run $*' did not finish within ${E2E_TIMEOUT}s"
	fi
	# 125 is tracer's own failure (no workload here exits 125): nothing else to check.
	if [ "$TRACER_RC" = 125 ]; then
		tracer_show "$name"
		e2e_fail "'tracer run $*' failed itself (exit 125; its messages are above)"
	fi
	tracer_complete "$name"
}

# tracer exits with the command's status even when its own helpers failed
# (a collector that crashed, a processor that gave up); it says so on stderr.
tracer_complete() {
	grep -q "trace is incomplete" "$TMP/$1.err" || return 0
	tracer_show "$1"
	e2e_fail "tracer run ($1) says the trace is incomplete (above)"
}

# Show what a tracer run printed (for a failure message).
tracer_show() {
	echo "--- tracer run ($1): stderr (last 30 lines)"
	tail -n 30 "$TMP/$1.err"
	echo "--- stdout (last 10 lines)"
	tail -n 10 "$TMP/$1.out"
} >&2

# expect_rc WHY CODE NAME: fail unless the last tracer run (NAME) exited with CODE.
expect_rc() {
	[ "$TRACER_RC" = "$2" ] && return
	tracer_show "$3"
	e2e_fail "tracer run exit status: expected $2 ($1), got $TRACER_RC"
}

# check_report SUBCOMMAND REPORT ARGS...: fail unless REPORT exists and check.py passes.
check_report() {
	local sub=$1 report=$2
	shift 2
	[ -s "$report" ] || { tracer_show "$(basename "$report" .json)"; e2e_fail "no report written to $report"; }
	python3 "$CHECK" "$sub" "$report" "$@" ||
		e2e_fail "report check '$sub' failed (TRACER_E2E_KEEP=1 keeps $report)"
}

# e2e_memory_cgroup NAME LIMIT: a new memory cgroup limited to LIMIT bytes without swap, for a hog to be
# OOM-killed in (cgroup v2 memory.max where a v2 hierarchy has the memory controller, else v1's
# memory.limit_in_bytes); its path in E2E_CG, its version in E2E_CG_V. Removed on exit, its processes killed.
# Skips the test when no memory controller is to be had.
e2e_memory_cgroup() {
	local name=$1 limit=$2 r root=''
	E2E_CG_V=''
	for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if [ -f "$r/cgroup.controllers" ] && grep -qw memory "$r/cgroup.controllers"; then
			root=$r E2E_CG_V=2
			break
		fi
	done
	if [ -z "$root" ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		root=/sys/fs/cgroup/memory E2E_CG_V=1
	fi
	[ -n "$root" ] || e2e_skip "no memory cgroup controller (v2 memory.max or v1 memory.limit_in_bytes) to confine a hog"
	if [ "$E2E_CG_V" = 2 ] && ! grep -qw memory "$root/cgroup.subtree_control"; then
		echo +memory >"$root/cgroup.subtree_control" ||
			e2e_skip "cannot enable the memory controller in $root/cgroup.subtree_control"
	fi
	E2E_CG=$root/tracer-e2e-$name.$$
	mkdir "$E2E_CG" || e2e_fail "cannot create the cgroup $E2E_CG"
	e2e_on_exit e2e_memory_cgroup_remove
	if [ "$E2E_CG_V" = 2 ]; then
		echo "$limit" >"$E2E_CG/memory.max" || e2e_fail "cannot set $E2E_CG/memory.max"
		[ ! -f "$E2E_CG/memory.swap.max" ] || echo 0 >"$E2E_CG/memory.swap.max" ||
			e2e_fail "cannot set $E2E_CG/memory.swap.max"
	else
		echo "$limit" >"$E2E_CG/memory.limit_in_bytes" || e2e_fail "cannot set $E2E_CG/memory.limit_in_bytes"
		[ ! -f "$E2E_CG/memory.memsw.limit_in_bytes" ] || echo "$limit" >"$E2E_CG/memory.memsw.limit_in_bytes" ||
			e2e_fail "cannot set $E2E_CG/memory.memsw.limit_in_bytes"
	fi
}

e2e_memory_cgroup_remove() {
	local pid
	for _ in $(seq 50); do
		[ -d "$E2E_CG" ] || return 0
		while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$E2E_CG/cgroup.procs"
		rmdir "$E2E_CG" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "could not remove the cgroup $E2E_CG" >&2
}

# e2e_oom_kills: the kernel's count of OOM kills in E2E_CG.
e2e_oom_kills() {
	local f=$E2E_CG/memory.events
	[ "$E2E_CG_V" = 1 ] && f=$E2E_CG/memory.oom_control
	awk '$1 == "oom_kill" { print $2 }' "$f"
}
