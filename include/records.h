/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records shared by the kernel programs (bpf/), the collector and the
 * processor: the one definition of their bytes. The BPF programs write
 * them into the kernel ring buffer; the collector copies each one verbatim
 * into the shared-memory ring under its type (include/ring_layout.h); the
 * processor decodes them as untrusted bytes.
 *
 * Every record starts with struct tr_hdr. Sizes and offsets are pinned by
 * _Static_assert below; a change is a RECORDS_VERSION bump.
 *
 * Times: *_ns fields named ts_ns are CLOCK_MONOTONIC (bpf_ktime_get_ns);
 * start_ns is the kernel's task start time (CLOCK_MONOTONIC at fork of the
 * thread-group leader), which together with tgid names one process
 * lifetime even when PIDs are reused. Pids are in the initial pid
 * namespace.
 */
#ifndef TRACER_RECORDS_H
#define TRACER_RECORDS_H

#include "record_header.h" /* the header, the types, the collector's own records */

#define TR_COMM_LEN 16
#define TR_PATH_MAX 512  /* bytes of the executable path kept (NUL included) */
#define TR_ARGV_MAX 4096 /* bytes of the argument area kept */
#define TR_CWD_MAX 1024  /* bytes of the working directory kept (NUL included) */
#define TR_ENV_MAX 1024  /* bytes of allowlisted KEY=VALUE strings kept */
#define TR_CGROUP_PATH_MAX 1024 /* bytes of a cgroup path kept (NUL included) */
#define TR_FILE_PATH_MAX 1024   /* bytes of an opened file's path kept (NUL included) */

/* Flags of struct tr_exec. */
#define TR_EXEC_ARGV_TRUNCATED 0x1 /* argv_len < argv_true_len */
#define TR_EXEC_PATH_TRUNCATED 0x2
#define TR_EXEC_ARGV_FAULT 0x4     /* the argument area could not be read */
#define TR_EXEC_CWD_TRUNCATED 0x8  /* cwd deeper or longer than kept: its leading part is missing */
#define TR_EXEC_ENV_TRUNCATED 0x10 /* more allowlisted values than TR_ENV_MAX, or the scan stopped early */
#define TR_EXEC_EXCLUDED 0x20      /* the new image matched an exclude rule: nothing more about this process */

/*
 * sched_process_exec: the process replaced its image. Followed by, in
 * this order: path_len bytes of path (NUL-terminated), argv_len bytes of
 * the argument area (NUL-separated strings), cwd_len bytes of the working
 * directory (absolute, NUL-terminated; cwd_len 0 if unknown) and env_len
 * bytes of allowlisted environment strings ("KEY=VALUE", each
 * NUL-terminated; only keys on the collector's allowlist, nothing else of
 * the environment ever leaves the kernel).
 */
struct tr_exec {
	struct tr_hdr hdr;
	__u32 pid;           /* thread that called execve (becomes tgid) */
	__u32 tgid;
	__u32 ppid;          /* tgid of the real parent at exec time */
	__u32 uid;
	__u32 gid;
	__u32 flags;         /* TR_EXEC_* */
	__u64 start_ns;      /* task start time of the process */
	__u64 cgroup_id;     /* cgroup v2 id (0 where v2 is not mounted) */
	__u64 cgroup_v1_id;  /* id of its cgroup in the v1 memory hierarchy (0 if none) */
	__u32 mnt_ns;        /* mount namespace inode number */
	__u32 pid_ns;        /* pid namespace inode number */
	__u32 path_len;      /* bytes of path that follow, NUL included */
	__u32 argv_len;      /* bytes of argv that follow */
	__u32 argv_true_len; /* size of the whole argument area */
	__u32 cwd_len;       /* bytes of cwd that follow, NUL included (0: unknown) */
	__u32 env_len;       /* bytes of allowlisted environment strings that follow */
	__u32 pad;
	char comm[TR_COMM_LEN];
	/* char path[path_len]; char argv[argv_len]; char cwd[cwd_len]; char env[env_len]; */
};

/* sched_process_fork of a new process (threads are not reported). */
struct tr_fork {
	struct tr_hdr hdr;
	__u32 parent_tgid;
	__u32 child_tgid;
	__u64 parent_start_ns;
	__u64 child_start_ns;
	__u32 uid;
	__u32 pad;
};

/*
 * sched_process_exit of the last thread of a process: the kernel's own
 * totals for the whole process (all its threads), its own only (children
 * excluded). exit_code is the raw wait status word.
 */
struct tr_exit {
	struct tr_hdr hdr;
	__u32 pid;             /* the last thread */
	__u32 tgid;
	__u32 ppid;            /* tgid of the real parent at exit (after any re-parenting) */
	__u32 exit_code;       /* raw: (status << 8) | core 0x80 | signal */
	__u64 start_ns;
	__u64 cgroup_id;
	__u64 utime_ns;        /* tick-sampled user time (like /proc) */
	__u64 stime_ns;        /* tick-sampled system time */
	__u64 runtime_ns;      /* precise CPU time (sum_exec_runtime), what wait4 scales to */
	__u64 maxrss_bytes;    /* rusage's peak resident set: every image of the process, the
	                        * pre-exec copy of its parent included (what wait4 reports) */
	__u64 read_bytes;      /* storage I/O (task_io_accounting) */
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
	__u64 rchar;
	__u64 wchar;
	__u64 syscr;
	__u64 syscw;
	__u64 nvcsw;
	__u64 nivcsw;
	__u64 min_flt;
	__u64 maj_flt;
	__u64 run_delay_ns;    /* time its threads spent runnable but waiting for a CPU: every thread's
	                        * (those that exited before, and the last one's own) */
	__u32 nr_threads;      /* threads still listed in the group at exit, this one included */
	__u32 flags;           /* TR_EXIT_* */
	char comm[TR_COMM_LEN]; /* the process's (its leader's) name, not the thread's */
	/* From the per-process state the programs keep (zero if the process was not traced). */
	__u64 net_tx_bytes;    /* bytes sent on AF_INET/AF_INET6 sockets */
	__u64 net_rx_bytes;    /* bytes received on AF_INET/AF_INET6 sockets */
	__u64 iowait_ns;       /* time its threads slept uninterruptibly waiting for I/O (in_iowait) */
	__u64 blocked_ns;      /* time its threads slept uninterruptibly for any other reason */
	__u64 net_wait_ns;     /* time its threads spent inside blocking network calls */
	__u64 cgroup_v1_id;    /* v1 memory cgroup id at exit (0 if none) */
	__u32 files_dropped;   /* files not reported: per-process bound reached */
	__u32 state_flags;     /* TR_PSTATE_* */
	/* Version 3. */
	__u64 image_peak_rss_bytes; /* peak resident set of the final image alone: its VmHWM at
	                             * exit; 0 with TR_EXIT_NO_IMAGE_PEAK */
	__u64 memcg_peak_bytes;     /* high-water mark of its memory cgroup's usage (memory.peak,
	                             * memory.max_usage_in_bytes on v1) at exit; 0 if unknown */
	/* Version 4: the allocation it ran under at its end (docs/schema.md). */
	__u64 memcg_limit_bytes;    /* the tightest memory limit of its memory cgroup and their
	                             * ancestors (memory.max; memory.limit_in_bytes on v1); 0 if none */
	__u32 cpu_quota_millicores; /* the tightest CPU bandwidth limit of its CPU cgroup and their
	                             * ancestors (cpu.max; cfs_quota_us / cfs_period_us on v1), in
	                             * thousandths of a CPU; 0 if none or not built into the kernel */
	__u32 cpus_allowed;         /* CPUs its last thread could run on (affinity, cpuset); 0 unknown */
	/* Version 5. */
	__u64 reclaim_ns;           /* time its threads spent in direct memory reclaim (global and memory
	                             * cgroup limit reclaim); 0 with TR_EXIT_NO_RECLAIM */
};

/* A version-2 exit record: the same bytes without the version-3 fields (decoded, flagged). */
#define TR_EXIT_V2_SIZE 256
/* A version-3 exit record: without the version-4 fields (decoded, allocation unknown). */
#define TR_EXIT_V3_SIZE 272
/* A version-4 exit record: without reclaim_ns (decoded, TR_EXIT_NO_RECLAIM). */
#define TR_EXIT_V4_SIZE 288

#define TR_EXIT_NO_IO_ACCOUNTING 0x1 /* kernel built without task I/O accounting */
#define TR_EXIT_NO_SCHED_INFO 0x2    /* kernel built without CONFIG_SCHED_INFO */
#define TR_EXIT_THREADS_TRUNCATED 0x4 /* more than 256 threads listed: the rest not summed */
/*
 * The final image's memory was already released when the exit was seen
 * (kernels that run sched_process_exit after exit_mm(), before 6.16), or
 * the record predates version 3: image_peak_rss_bytes is 0.
 */
#define TR_EXIT_NO_IMAGE_PEAK 0x8
/*
 * Direct reclaim was not measured: this kernel lacks the vmscan tracepoints
 * (the collector left their programs out), or the record predates version
 * 5. reclaim_ns is 0 and means unknown. In exit records and samples.
 */
#define TR_EXIT_NO_RECLAIM 0x10

/* oom/mark_victim: the OOM killer chose this process. Memory figures in KiB. */
struct tr_oom {
	struct tr_hdr hdr;
	__u32 pid;             /* the victim, from the tracepoint record */
	__u32 uid;
	__u64 total_vm_kb;
	__u64 anon_rss_kb;
	__u64 file_rss_kb;
	__u64 shmem_rss_kb;
	__u64 pgtables_kb;
	__s32 oom_score_adj;
	__u32 pad;
	__u64 trigger_cgroup_id; /* cgroup v2 id of the task that hit the limit */
	/* The memory cgroup whose limit was hit (the current task's), where known. */
	__u64 memcg_id;          /* its cgroup id in the hierarchy that has the memory controller */
	__u64 memcg_limit_bytes; /* its limit (memory.max / memory.limit_in_bytes); 0 if unknown */
	__u64 memcg_usage_bytes; /* its usage when the victim was chosen */
	__u32 memcg_v1;          /* 1: memcg_id is in the v1 memory hierarchy; 0: in v2 */
	__u32 pad2;
};

/*
 * The path of a cgroup, sent once per (hierarchy, id) the first time a
 * record names it (exec, sample, OOM), so that a container that lived
 * for a millisecond still resolves. Followed by path_len bytes: the path
 * relative to the hierarchy's root ("/system.slice/docker-<id>.scope"),
 * NUL-terminated.
 */
struct tr_cgroup {
	struct tr_hdr hdr;
	__u64 id;
	__u32 v1;        /* 0: the default (v2) hierarchy; 1: the v1 memory hierarchy */
	__u32 path_len;  /* bytes that follow, NUL included */
	__u32 flags;     /* TR_CGROUP_TRUNCATED */
	__u32 pad;
	/* char path[path_len]; */
};

#define TR_CGROUP_TRUNCATED 0x1 /* deeper or longer than kept: its leading part is missing */

/*
 * A live process's cumulative counters, sent from the kernel at most once
 * per sample interval per process, when one of its threads leaves a CPU
 * (and from a per-CPU timer for threads that never do). A process that
 * does not run sends nothing: idle processes cost nothing. The processor
 * turns consecutive samples into rates.
 */
struct tr_sample {
	struct tr_hdr hdr;
	__u32 tgid;
	__u32 ppid;
	__u64 start_ns;
	__u64 runtime_ns;      /* precise CPU time so far, all threads */
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 rss_bytes;       /* resident now: anon + file + shmem */
	__u64 hiwater_rss_bytes; /* peak resident so far (this image) */
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 rchar;
	__u64 wchar;
	__u64 net_tx_bytes;
	__u64 net_rx_bytes;
	__u64 iowait_ns;
	__u64 blocked_ns;
	__u64 net_wait_ns;
	__u64 run_delay_ns;    /* summed over its listed threads */
	__u64 cgroup_id;
	__u32 uid;
	__u32 nr_threads;
	__u32 state_flags;     /* TR_PSTATE_* */
	__u32 flags;           /* TR_EXIT_* meaning the same for the sums */
	char comm[TR_COMM_LEN];
	/* Version 4: the allocation it runs under now, as struct tr_exit's (of the sampled thread). */
	__u64 memcg_limit_bytes;
	__u32 cpu_quota_millicores;
	__u32 cpus_allowed;
	/* Version 5. */
	__u64 reclaim_ns;      /* in direct reclaim so far, as struct tr_exit's */
};

/* A sample of versions 2 and 3: without the version-4 fields (decoded, allocation unknown). */
#define TR_SAMPLE_V3_SIZE 192
/* A sample of version 4: without reclaim_ns (decoded, TR_EXIT_NO_RECLAIM). */
#define TR_SAMPLE_V4_SIZE 208

/* Modes of struct tr_file. */
#define TR_FILE_READ 0x1
#define TR_FILE_WRITE 0x2
#define TR_FILE_TRUNCATED 0x100 /* path deeper or longer than kept: its leading part is missing */

/*
 * A regular file a traced process opened, once per (process, file, mode)
 * (deduplicated in the kernel; at most a bounded number per process).
 * Followed by path_len bytes of the absolute path, NUL-terminated. Paths
 * and modes only: never contents.
 */
struct tr_file {
	struct tr_hdr hdr;
	__u32 tgid;
	__u32 mode;     /* TR_FILE_READ | TR_FILE_WRITE, | TR_FILE_TRUNCATED */
	__u64 start_ns;
	__u32 path_len; /* bytes that follow, NUL included */
	__u32 pad;
	/* char path[path_len]; */
};

_Static_assert(sizeof(struct tr_exec) == 112, "tr_exec layout");
_Static_assert(sizeof(struct tr_fork) == 48, "tr_fork layout");
_Static_assert(sizeof(struct tr_exit) == 296, "tr_exit layout");
_Static_assert(__builtin_offsetof(struct tr_exit, reclaim_ns) == TR_EXIT_V4_SIZE, "tr_exit v4 prefix");
_Static_assert(__builtin_offsetof(struct tr_exit, memcg_limit_bytes) == TR_EXIT_V3_SIZE, "tr_exit v3 prefix");
_Static_assert(__builtin_offsetof(struct tr_exit, image_peak_rss_bytes) == TR_EXIT_V2_SIZE, "tr_exit v2 prefix");
_Static_assert(sizeof(struct tr_oom) == 112, "tr_oom layout");
_Static_assert(sizeof(struct tr_cgroup) == 40, "tr_cgroup layout");
_Static_assert(sizeof(struct tr_sample) == 216, "tr_sample layout");
_Static_assert(__builtin_offsetof(struct tr_sample, reclaim_ns) == TR_SAMPLE_V4_SIZE, "tr_sample v4 prefix");
_Static_assert(__builtin_offsetof(struct tr_sample, memcg_limit_bytes) == TR_SAMPLE_V3_SIZE, "tr_sample v3 prefix");
_Static_assert(sizeof(struct tr_file) == 40, "tr_file layout");
_Static_assert(__builtin_offsetof(struct tr_exit, runtime_ns) == 64, "tr_exit offsets");
_Static_assert(__builtin_offsetof(struct tr_exit, net_tx_bytes) == 200, "tr_exit offsets");
_Static_assert(__builtin_offsetof(struct tr_exec, comm) == 96, "tr_exec offsets");
_Static_assert(__builtin_offsetof(struct tr_sample, comm) == 176, "tr_sample offsets");

#endif /* TRACER_RECORDS_H */
