// SPDX-License-Identifier: GPL-2.0
/*
 * Empty programs on the hooks tracer's programs use, loaded by the kernel
 * benchmark only (bench/calib.c, bench/kernel.sh), never by tracer.
 *
 * With kernel.bpf_stats_enabled=1 the kernel reads its clock before and
 * after every program run and charges the difference to run_time_ns. Part
 * of that is the clock reads' own cost, not the program's: on this
 * Firecracker guest some 100-400 ns per run, more than some of tracer's
 * programs take. An empty program on the same hook, attached at the same
 * time, is charged exactly that part: its run_time_ns / run_cnt is
 * subtracted from each of tracer's programs on the hook ("net").
 *
 * One program per kind of hook tracer uses (a syscall exit, a syscall
 * entry, a sched tracepoint, a raw tracepoint, a sock tracepoint), on the
 * very hooks of the exec storm. Names start with cal_ so that the benchmark
 * tells them from tracer's (handle_*, nwe_*, nwx_*). No includes: nothing
 * but a section name and a return value is needed.
 */
#define SEC(name) __attribute__((section(name), used))

char LICENSE[] SEC("license") = "GPL";

SEC("tracepoint/syscalls/sys_exit_openat")
int cal_openat(void *ctx) { return 0; }

SEC("tracepoint/syscalls/sys_enter_sendto")
int cal_sys_enter(void *ctx) { return 0; }

SEC("tracepoint/syscalls/sys_exit_sendto")
int cal_sys_exit(void *ctx) { return 0; }

SEC("tracepoint/sched/sched_process_exec")
int cal_exec(void *ctx) { return 0; }

SEC("tracepoint/sched/sched_process_exit")
int cal_exit(void *ctx) { return 0; }

SEC("raw_tp/sched_process_fork")
int cal_fork(void *ctx) { return 0; }

SEC("raw_tp/sched_switch")
int cal_switch(void *ctx) { return 0; }

SEC("raw_tp/sched_wakeup")
int cal_wakeup(void *ctx) { return 0; }

SEC("tracepoint/sock/sock_send_length")
int cal_sock(void *ctx) { return 0; }
