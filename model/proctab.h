/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process table: one entry per process lifetime, keyed by (tgid,
 * start_ns) so that a reused pid is a new entry. Entries are created lazily
 * by whichever record names a process first (fork, exec, exit), so records
 * may arrive in any order and some may be lost.
 *
 * Bounded: at most `max` entries, preallocated; images (path, argv, tool)
 * are allocated per exec and shared by reference with children that fork
 * without exec. What the bound turns away is counted (table_full). Entries
 * that can no longer matter are evicted by proctab_sweep(): in run mode,
 * processes outside the root's tree once idle for the grace period; without
 * a root, processes that exited that long ago.
 *
 * The tree: a process's parent is the one its fork record names (the
 * original parent, kept when it is re-parented to init or a subreaper).
 * Without a fork record, the ppid of its exec record (or, failing that, its
 * exit record) is resolved to the newest process with that pid that had
 * started before it. The run's tree is the root pid's process and every
 * descendant.
 */
#ifndef TRACER_MODEL_PROCTAB_H
#define TRACER_MODEL_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "intern.h"
#include "records.h"
#include "redact.h"
#include "series.h"
#include "tool.h"
#include "toolrules.h"

#define PROCTAB_MAX_LIMIT (1u << 22)  /* the most entries a table takes (tracer.conf's max_processes bound) */
#define PROC_MAX_EARLIER_EXECS 3      /* earlier images kept per process (first ones) */
#define PROC_PENDING_OOMS 16          /* OOM victims not yet matched to a process */
#define PROC_TGID_WALK_MAX 256        /* entries looked at when resolving a pid to a process */
#define PROCTAB_IMAGE_BUDGET (64u << 20) /* bytes of exec images (path, argv, tool) held at most */
#define PROCTAB_SERIES_BUDGET (64u << 20) /* bytes of sample series held at most */
#define PROCTAB_STRING_BUDGET (32u << 20) /* bytes of interned file and cgroup paths held at most */
#define PROC_MAX_FILES 1024u             /* files kept per process (the kernel's default bound too) */

/* Flag of struct proc_image, beside the TR_EXEC_* flags: the argument area was not kept (budget). */
#define PROC_IMAGE_ARGV_DROPPED 0x100

/* One executable image: what an exec record said. Shared by reference. */
struct proc_image {
	uint32_t refs;
	uint32_t flags;         /* TR_EXEC_* */
	uint32_t argv_true_len; /* size of the whole argument area in the process */
	uint32_t argc;          /* strings kept in the argument area */
	uint32_t path_len;      /* strlen(path) */
	uint32_t argv_len;      /* bytes of the argument area kept */
	uint32_t tool_len;
	uint32_t cwd_len;       /* strlen(cwd); 0: unknown */
	uint32_t env_len;       /* bytes of allowlisted KEY=VALUE strings, each NUL-terminated */
	uint32_t bytes;         /* allocated size, counted in the table's image budget */
	uint64_t ts_ns;         /* exec time, CLOCK_MONOTONIC */
	char data[];            /* path NUL, argument area NUL, tool NUL, cwd NUL, env strings */
};

static inline const char *proc_image_path(const struct proc_image *im)
{
	return im->data;
}

/* The argument strings, one after another, argc of them. */
static inline const char *proc_image_args(const struct proc_image *im)
{
	return im->data + im->path_len + 1;
}

static inline const char *proc_image_tool(const struct proc_image *im)
{
	return im->data + im->path_len + 1 + im->argv_len + 1;
}

/* The working directory at exec ("" when unknown). */
static inline const char *proc_image_cwd(const struct proc_image *im)
{
	return proc_image_tool(im) + im->tool_len + 1;
}

/* The allowlisted environment strings ("KEY=VALUE", each NUL-terminated), env_len bytes. */
static inline const char *proc_image_envs(const struct proc_image *im)
{
	return proc_image_cwd(im) + im->cwd_len + 1;
}

/* The value of allowlisted environment key `key` in the image, or NULL. */
const char *proc_image_env(const struct proc_image *im, const char *key);

enum proc_parent_src {
	PARENT_UNKNOWN = 0,
	PARENT_FROM_SAMPLE, /* ppid of a sample: the parent now, maybe after re-parenting */
	PARENT_FROM_EXIT, /* ppid of the exit record: may already be a re-parenting */
	PARENT_FROM_EXEC, /* ppid of the exec record */
	PARENT_FROM_FORK, /* the fork record: the original parent, exactly */
};

#define PROC_F_USED 0x01
#define PROC_F_FORK 0x02      /* its fork record was seen */
#define PROC_F_EXEC 0x04      /* one of its exec records was seen */
#define PROC_F_EXIT 0x08      /* its exit record was seen */
#define PROC_F_OOM 0x10       /* chosen by the OOM killer */
#define PROC_F_INHERITED 0x20 /* image is its parent's, copied at fork (no exec of its own) */
#define PROC_F_UID 0x40       /* uid/gid known */
#define PROC_F_PREEXISTING 0x80 /* running before tracing started (no fork or exec of it seen) */
#define PROC_F_EXCLUDED 0x100 /* its image matched an exclude rule in the kernel: nothing more comes */
#define PROC_F_STALL_WARNED 0x200 /* its stall was logged while it lasted */
/* Daemon mode's runs (attrib/runs.h). */
#define PROC_F_RUN_ROOT 0x400    /* the first process of a run */
#define PROC_F_RUN_DECIDED 0x800 /* its run was decided for its current image (cleared by an exec) */
#define PROC_F_HELD 0x1000       /* exited, but its run still needs it: not evicted */
#define PROC_F_LIVE_END 0x2000   /* its end's signals went out in a live record */
#define PROC_F_TOOL_SENT 0x4000  /* its tool went out (TL_RUN or TL_TOOLS) for its current image */

/* What a process may use (records v4, docs/schema.md): 0 where none is set or it is not known. */
struct proc_alloc {
	uint64_t memory_bytes;          /* its memory cgroups' tightest limit */
	uint32_t cpu_quota_millicores;  /* its CPU cgroups' tightest bandwidth limit */
	uint32_t cpus_allowed;          /* the CPUs its affinity allows */
};

struct proc_oom {
	uint64_t ts_ns;
	uint64_t total_vm_kb, anon_rss_kb, file_rss_kb, shmem_rss_kb, pgtables_kb;
	int32_t oom_score_adj;
	uint32_t memcg_v1;
	uint64_t memcg_id;
	uint64_t memcg_limit_bytes;
	uint64_t memcg_usage_bytes;
};

/* A file a process opened: interned path, modes TR_FILE_READ | TR_FILE_WRITE. */
struct proc_file {
	const char *path;
	uint32_t mode;
};

struct proc_series; /* series.h */

struct proc {
	uint32_t tgid;
	uint32_t flags;             /* PROC_F_* */
	uint64_t start_ns;          /* kernel start time (CLOCK_MONOTONIC) */
	uint32_t ppid;              /* parent's tgid, 0 if unknown */
	uint8_t parent_src;         /* enum proc_parent_src */
	bool parent_start_known;
	bool in_tree;               /* set by proctab_mark_tree() */
	uint8_t memo;               /* tree walk state, valid for memo_gen */
	uint64_t parent_start_ns;
	uint32_t uid, gid;
	uint64_t cgroup_id;         /* v2 */
	uint64_t cgroup_v1_id;      /* v1 memory hierarchy, 0 if none */
	uint32_t mnt_ns, pid_ns;
	uint32_t step;              /* its step: index + 1 in the step table, 0 for none (steps.h) */
	uint32_t run;               /* daemon mode: its run, slot + 1 in the run table (runs.h), 0 for none */
	uint32_t live_attr;         /* daemon mode: hash of the run, step and tool last sent for it, 0: none */
	uint32_t n_files;
	uint32_t files_cap;
	uint32_t files_dropped;     /* files the kernel or the file budget did not report */
	struct proc_file *files;    /* files it opened, deduplicated by path (modes merged) */
	struct proc_series *series; /* samples over time, NULL until its first sample */
	uint64_t progress_ts_ns;    /* last time it was seen making progress (fork, exec, sample, exit) */
	uint64_t stall_start_ns;    /* its longest time without progress of at least stall_after_ns */
	uint64_t stall_ns;
	uint32_t stalls;            /* times it went stall_after_ns or longer without progress */
	uint32_t state_flags;       /* TR_PSTATE_* from its newest sample or exit */
	uint64_t fork_ts_ns;
	uint64_t last_ts_ns;        /* newest record about it */
	struct proc_image *image;   /* the current image, NULL if none known */
	struct proc_image *earlier[PROC_MAX_EARLIER_EXECS];
	uint32_t n_earlier;
	uint32_t execs_dropped;     /* earlier images beyond PROC_MAX_EARLIER_EXECS */
	struct tr_exit exit;        /* valid with PROC_F_EXIT */
	struct proc_oom oom;        /* valid with PROC_F_OOM */
	uint64_t image_ts_ns;       /* when its current image began: its exec, else its fork or start */
	uint64_t sampled_hwm_bytes; /* the largest VmHWM its samples showed for the current image */
	struct proc_alloc alloc;    /* the allocation it runs (ran) under: its exit's, else its newest sample's */
	char comm[TR_COMM_LEN + 1];
	uint32_t memo_gen;
	/* Hash chains: entry index + 1, 0 for none. Free entries chain through key_next. */
	uint32_t key_next, key_prev, tgid_next, tgid_prev;
};

struct pending_oom {
	uint32_t pid; /* 0: slot empty */
	struct proc_oom info;
};

struct proctab_stats {
	uint64_t created;
	uint64_t evicted;
	uint64_t table_full;     /* records turned away: no free entry for their process */
	uint64_t no_memory;      /* images that could not be allocated */
	uint64_t execs_dropped;  /* earlier images not kept (per-process limit or image budget) */
	uint64_t argv_dropped;   /* images kept without their argument area (image budget) */
	uint64_t oom_unmatched;  /* OOM records whose victim never showed up (pending slots reused) */
	uint64_t samples;        /* sample records applied */
	uint64_t series_dropped; /* samples whose point was not kept (series budget) */
	uint64_t files;          /* file records applied */
	uint64_t files_dropped;  /* files not kept (per-process bound, string budget, unknown process) */
	uint64_t excluded;       /* processes the kernel's exclude rules stopped reporting */
};

struct proctab {
	struct proc *procs;
	uint32_t max, used;
	uint32_t high_water;        /* entries [0, high_water) have been used at least once */
	uint32_t free_head;         /* evicted entries, chained through key_next */
	uint32_t *key_heads, *tgid_heads;
	uint32_t mask;
	uint64_t seed;
	uint32_t root_pid;          /* 0: no root (daemon mode) */
	bool root_known;
	uint64_t root_start_ns;
	uint64_t newest_ts;         /* newest record time seen */
	uint64_t grace_ns;          /* sweep: idle time before an entry can be evicted */
	uint64_t full_sweep_ts;     /* newest_ts of the last sweep forced by a full table */
	uint64_t image_bytes;       /* bytes of images allocated now */
	uint64_t image_budget;      /* PROCTAB_IMAGE_BUDGET unless changed before use */
	uint64_t series_bytes;      /* bytes of sample series allocated now */
	uint64_t series_budget;     /* PROCTAB_SERIES_BUDGET unless changed before use */
	uint64_t files_bytes;       /* bytes of per-process file arrays allocated now */
	uint64_t stall_after_ns;    /* no progress for this long is a stall (0: never) */
	uint64_t changes;           /* entries created or evicted, forks, execs, exits, OOM kills: not samples */
	/* Called for every entry just before it is evicted (daemon mode's runs fold its figures). */
	void (*on_evict)(void *ctx, const struct proc *p);
	void *evict_ctx;
	struct intern strings;      /* file and cgroup paths */
	const struct toolrules *tool_rules; /* naming rules from the rules file, NULL for the built-ins only */
	struct redact_rules redact; /* built-ins plus a rules file's: applied to every argument area as it arrives */
	uint64_t args_redacted;     /* secrets replaced in argument areas */
	char redact_scratch[TR_ARGV_MAX + 1];
	uint32_t memo_gen;
	unsigned pending_next;
	struct pending_oom pending[PROC_PENDING_OOMS];
	struct proctab_stats st;
	const char *argv_scratch[TR_ARGV_MAX + 1]; /* argv pointers while naming a tool */
};

#define PROCTAB_DEFAULT_GRACE_NS 2000000000ULL

/* max entries (1..PROCTAB_MAX_LIMIT); root_pid 0 for none; seed randomises the hash. */
int proctab_init(struct proctab *t, uint32_t max, uint32_t root_pid, uint64_t seed);
void proctab_free(struct proctab *t);

/* Apply one decoded record. 0, or -ENOSPC (table full, counted) or -ENOMEM. */
int proctab_exec(struct proctab *t, const struct decoded_exec *e, uint64_t ts_ns, struct proc **out);
int proctab_fork(struct proctab *t, const struct tr_fork *f, uint64_t ts_ns);
int proctab_exit(struct proctab *t, const struct tr_exit *x, uint64_t ts_ns, struct proc **out);
int proctab_oom(struct proctab *t, const struct tr_oom *o, uint64_t ts_ns);
int proctab_sample(struct proctab *t, const struct tr_sample *s, uint64_t ts_ns);
int proctab_file(struct proctab *t, const struct decoded_file *f, uint64_t ts_ns);

/* Is p alive (no exit record) and without progress since `now - stall_after_ns`? */
bool proctab_stalled_now(const struct proctab *t, const struct proc *p, uint64_t now_ns);

struct proc *proctab_lookup(const struct proctab *t, uint32_t tgid, uint64_t start_ns);

/* Where a process's peak_rss_bytes comes from, best first (docs/schema.md). */
enum proc_peak_source {
	PEAK_NONE,    /* nothing known yet (no exit, no sample) */
	PEAK_EXIT,    /* the final image's VmHWM, read by the kernel programs at exit: exact */
	PEAK_SAMPLED, /* the largest VmHWM of its samples: a lower bound (no image peak at exit) */
	PEAK_RUSAGE,  /* rusage's maxrss: an upper bound, it includes the images before the last exec */
};

/*
 * The peak resident set of p's final image (its VmHWM at exit), or the
 * best bound of it known; *src says which (may be NULL).
 */
uint64_t proc_peak_rss(const struct proc *p, enum proc_peak_source *src);
const char *proc_peak_source_name(enum proc_peak_source src);

/* The parent entry of p, if the table has it. */
struct proc *proctab_parent(const struct proctab *t, const struct proc *p);

/* Evict every entry (without on_evict): the table as it was at start. */
void proctab_clear(struct proctab *t);

/* Set in_tree on every entry: the root and its descendants. */
void proctab_mark_tree(struct proctab *t);

/* Evict entries that can no longer matter (see above). Returns how many. */
unsigned proctab_sweep(struct proctab *t);

/* The root's entry, or NULL. */
struct proc *proctab_root(const struct proctab *t);

/* Iterate: for (p = proctab_next(t, NULL); p; p = proctab_next(t, p)). */
struct proc *proctab_next(const struct proctab *t, const struct proc *prev);

/* Bytes a process entry takes, for the documentation and the agent report. */
static inline size_t proctab_entry_bytes(void)
{
	return sizeof(struct proc) + 2 * 2 * sizeof(uint32_t); /* entry + its share of two bucket arrays */
}

#endif /* TRACER_MODEL_PROCTAB_H */
