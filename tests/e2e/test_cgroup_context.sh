#!/usr/bin/env bash
# Context from cgroups, captured in the kernel: a process in a cgroup named
# like a Docker container (systemd driver on the v2 hierarchy, cgroupfs
# driver on the v1 memory hierarchy where there is one) gets its container
# id; one in a SLURM-shaped cgroup gets its job and step. Each process moves
# itself into its cgroup and then execs, and lives a fraction of a second:
# the path must come from the kernel, not from /proc afterwards.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

# The v2 hierarchy: pure v2 at /sys/fs/cgroup, a hybrid's at /sys/fs/cgroup/unified.
v2=''
for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[ -f "$r/cgroup.procs" ] && [ -f "$r/cgroup.controllers" ] && { v2=$r; break; }
done
v1=''
[ -f /sys/fs/cgroup/memory/cgroup.procs ] && v1=/sys/fs/cgroup/memory
[ -n "$v2$v1" ] || e2e_skip "no cgroup v2 hierarchy and no v1 memory hierarchy to make test cgroups in"

id_a=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
id_b=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
job=$((100000 + $$ % 100000))
made=()
cg_remove() {
	local d pid i
	for ((i = ${#made[@]} - 1; i >= 0; i--)); do
		d=${made[$i]}
		[ -d "$d" ] || continue
		while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$d/cgroup.procs"
		for _ in $(seq 20); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
	done
}
e2e_on_exit cg_remove
mk() { # mk DIR: create DIR and its missing parents, remembering them for removal
	local d=$1 parts=() p
	while [ ! -d "$d" ]; do parts=("$d" "${parts[@]}"); d=$(dirname "$d"); done
	for p in "${parts[@]}"; do mkdir "$p" || e2e_fail "setup: cannot create the cgroup $p"; made+=("$p"); done
}

script="set -e"
facts=$TMP/context.facts
: >"$facts"
# run_in NAME CGROUP EXPECT...: a child that joins CGROUP, then execs a short sleep; its pid goes to the facts.
run_in() {
	local name=$1 dir=$2
	shift 2
	mk "$dir"
	script="$script
sh -c 'echo \$\$ >\"$dir/cgroup.procs\"; echo ${name}_pid \$\$ >>\"$facts\"; exec sleep 0.2'"
	for e in "$@"; do echo "expect ${name}_pid $e" >>"$facts"; done
}
if [ -n "$v2" ]; then
	run_in docker_v2 "$v2/tracer-e2e.slice/docker-$id_a.scope" "container_id=$id_a" container_runtime=docker
	run_in slurm_v2 "$v2/tracer-e2e.slice/slurmstepd.scope/job_$job/step_batch/user/task_0" \
		"slurm_job=$job" slurm_step=batch
fi
if [ -n "$v1" ]; then
	run_in docker_v1 "$v1/docker/$id_b" "container_id=$id_b" container_runtime=docker
	run_in slurm_v1 "$v1/slurm/uid_0/job_$((job + 1))/step_0/task_0" "slurm_job=$((job + 1))" slurm_step=0
fi
tracer_run context --json "$TMP/context.json" -- sh -c "$script"
expect_rc "every child ran" 0 context
python3 "$E2E_DIR/check_context.py" context "$TMP/context.json" "$facts" ||
	e2e_fail "report check 'context' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
