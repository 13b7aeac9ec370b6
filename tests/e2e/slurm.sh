# shellcheck shell=bash
# A throwaway one-node SLURM for the end-to-end tests: munged, slurmctld and
# slurmd (Debian's munge, slurmctld, slurmd and slurm-client: make deps),
# each with its files in one directory and its own ports, so that it meets
# no SLURM or munge the host runs. Sourced after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/slurm.sh"
#   e2e_init "$1"
#   slurm_start
#   sbatch --wrap 'hostname'      # SLURM_CONF is exported: every client command finds it
#
# slurm_start makes SLURM_DIR (munge/ with a fresh key and the socket,
# slurm.conf, state/, spool/, log/), starts munged with that key and socket,
# writes a configuration for this host alone (its short hostname, every CPU
# online, its memory less 1 GiB; ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none: jobs are plain process trees, no cgroups of
# SLURM's; select/cons_tres with CR_Core_Memory, so a job gets the CPUs and
# memory it asks for and SLURM_CPUS_ON_NODE / SLURM_MEM_PER_NODE say so),
# starts slurmctld and slurmd as root, and waits until the node is idle.
# Ports: two free ones on this host, SLURM_CTLD_PORT and SLURM_D_PORT.
# slurm_stop (registered with e2e_on_exit) cancels what is left, stops the
# three daemons and removes the directory (SLURM_KEEP=1 keeps it).
# slurm_wait_jobs [SECONDS]: waits until no job is pending or running.

_slurm_fail() {
	local f
	for f in "$SLURM_DIR"/log/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
	done >&2
	e2e_fail "slurm: $*"
}

_slurm_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

slurm_start() {
	local p node cpus mem i
	for p in munged slurmctld slurmd sbatch sinfo squeue scancel; do
		command -v "$p" >/dev/null ||
			e2e_fail "$p is not installed: run 'make deps' (munge, slurmctld, slurmd, slurm-client)"
	done
	[ "$(id -u)" = 0 ] || e2e_skip "a SLURM of its own needs root (slurmd starts jobs as their user)"
	SLURM_DIR=$(mktemp -d /var/tmp/tracer-slurm.XXXXXX) || e2e_fail "setup: mktemp"
	chmod 755 "$SLURM_DIR"
	e2e_on_exit slurm_stop
	mkdir -p "$SLURM_DIR"/{munge,state,spool,log} && chmod 700 "$SLURM_DIR/munge" ||
		e2e_fail "setup: $SLURM_DIR"
	head -c 1024 /dev/urandom >"$SLURM_DIR/munge/key" && chmod 400 "$SLURM_DIR/munge/key" ||
		e2e_fail "setup: the munge key"
	munged --force --key-file="$SLURM_DIR/munge/key" --socket="$SLURM_DIR/munge/sock" \
		--pid-file="$SLURM_DIR/munge/pid" --log-file="$SLURM_DIR/log/munged.log" \
		--seed-file="$SLURM_DIR/munge/seed" || _slurm_fail "munged did not start"
	node=$(hostname -s)
	cpus=$(nproc --all)
	mem=$(($(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo) - 1024))
	SLURM_CTLD_PORT=$(_slurm_free_port)
	SLURM_D_PORT=$(_slurm_free_port)
	while [ "$SLURM_D_PORT" = "$SLURM_CTLD_PORT" ]; do SLURM_D_PORT=$(_slurm_free_port); done
	cat >"$SLURM_DIR/slurm.conf" <<EOF
ClusterName=tracere2e
SlurmctldHost=$node
SlurmctldPort=$SLURM_CTLD_PORT
SlurmdPort=$SLURM_D_PORT
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge/sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=$node CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	slurmctld -f "$SLURM_CONF" -c || _slurm_fail "slurmctld did not start"
	slurmd -f "$SLURM_CONF" || _slurm_fail "slurmd did not start"
	for i in $(seq 1 300); do
		[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
		sleep 0.1
	done
	_slurm_fail "the node is not idle after 30 s: $(sinfo -h -o '%T %E' 2>&1)"
}

# slurm_wait_jobs [SECONDS]: until no job of this SLURM is pending or running (default 120 s).
slurm_wait_jobs() {
	local limit=${1:-120} i
	for i in $(seq 1 $((limit * 5))); do
		[ -z "$(squeue -h -o %i 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	_slurm_fail "jobs still queued or running after $limit s: $(squeue -h -o '%i %j %T %R' 2>&1)"
}

_slurm_kill() {
	local pidfile=$1 pid i
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile" 2>/dev/null)
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
}

slurm_stop() {
	[ -n "${SLURM_DIR:-}" ] && [ -d "$SLURM_DIR" ] || return 0
	scancel --full --quiet --user=root 2>/dev/null
	_slurm_kill "$SLURM_DIR/slurmd.pid"
	_slurm_kill "$SLURM_DIR/slurmctld.pid"
	_slurm_kill "$SLURM_DIR/munge/pid"
	if [ "${SLURM_KEEP:-0}" = 1 ]; then
		echo "slurm.sh: kept $SLURM_DIR" >&2
	else
		rm -rf "$SLURM_DIR"
	fi
	SLURM_DIR=
}
