// SPDX-License-Identifier: GPL-2.0
/*
 * What traced processes do, accumulated in their state (tracer.bpf.h) and
 * sent with their samples and exit:
 *  - bytes sent and received on AF_INET/AF_INET6 sockets (sock tracepoints,
 *    Linux 6.3+; on older kernels these programs are not loaded);
 *  - time spent inside blocking network calls (syscall tracepoints);
 *  - time spent in direct memory reclaim (vmscan tracepoints);
 *  - regular files opened (TR_FILE records), once per (process, file, mode),
 *    at most max_files_per_proc per process, except the dynamic loader's
 *    (below). Paths and modes, never contents.
 * Untraced processes cost one hash lookup per event.
 */
#include "tracer.bpf.h"
#include "paths.bpf.h"

#define AF_INET_FAMILY 2
#define AF_INET6_FAMILY 10
#define MSG_PEEK_FLAG 2
#define S_IFMT_MASK 0170000
#define S_IFREG_MODE 0100000
#define FMODE_RW 0x3 /* FMODE_READ | FMODE_WRITE: the same bits as TR_FILE_READ | TR_FILE_WRITE */

_Static_assert(TR_FILE_READ == 0x1 && TR_FILE_WRITE == 0x2, "file modes are the kernel's FMODE bits");

/* The current process's state if it is traced; t: current_task(). */
static __always_inline struct tr_pstate *traced_current(struct task_struct *t)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tr_pstate *st = pstate_current(t, tgid);

	return st && (st->flags & TR_PSTATE_TRACED) ? st : NULL;
}

/* ---- network bytes -------------------------------------------------------- */

/* sock/sock_send_length and sock/sock_recv_length, as tracefs describes them (stable since 6.3). */
struct sock_length_args {
	__u64 common;
	void *sk;
	__u16 family;
	__u16 protocol;
	int ret;   /* bytes, or -errno */
	int flags; /* the call's msg flags (receive) */
};

static __always_inline int count_net(struct sock_length_args *ctx, bool rx)
{
	struct tr_pstate *st;

	if (ctx->ret <= 0 || (ctx->family != AF_INET_FAMILY && ctx->family != AF_INET6_FAMILY))
		return 0;
	if (rx && (ctx->flags & MSG_PEEK_FLAG)) /* peeked data is received again later */
		return 0;
	st = traced_current(current_task());
	if (st)
		__sync_fetch_and_add(rx ? &st->net_rx : &st->net_tx, ctx->ret);
	return 0;
}

SEC("tracepoint/sock/sock_send_length")
int handle_net_tx(struct sock_length_args *ctx)
{
	return count_net(ctx, false);
}

SEC("tracepoint/sock/sock_recv_length")
int handle_net_rx(struct sock_length_args *ctx)
{
	return count_net(ctx, true);
}

/* ---- time inside blocking network calls ----------------------------------- */

/* Entry time of the network call each thread of a traced process is in. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} net_calls SEC(".maps");

static __always_inline int net_call_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now;

	if (!traced_current(current_task()))
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&net_calls, &tid, &now, BPF_ANY);
	return 0;
}

static __always_inline int net_call_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u64 *since = bpf_map_lookup_elem(&net_calls, &tid), d;
	struct tr_pstate *st;

	if (!since)
		return 0;
	d = bpf_ktime_get_ns() - *since;
	bpf_map_delete_elem(&net_calls, &tid);
	st = bpf_map_lookup_elem(&pstates, &tgid);
	if (st)
		__sync_fetch_and_add(&st->net_wait_ns, d);
	return 0;
}

/*
 * One entry and one exit program per call (syscall tracepoints fire only
 * for their own call, unlike raw_syscalls). Names: nwe_/nwx_ (network wait
 * entry/exit), kept under the kernel's 15 bytes so that bpftool tells
 * them apart.
 */
#define NET_WAIT_CALL(call)                                                  \
	SEC("tracepoint/syscalls/sys_enter_" #call)                          \
	int nwe_##call(void *ctx) { return net_call_enter(); }               \
	SEC("tracepoint/syscalls/sys_exit_" #call)                           \
	int nwx_##call(void *ctx) { return net_call_exit(); }

NET_WAIT_CALL(connect)
NET_WAIT_CALL(accept)
NET_WAIT_CALL(accept4)
NET_WAIT_CALL(recvfrom)
NET_WAIT_CALL(recvmsg)
NET_WAIT_CALL(sendto)
NET_WAIT_CALL(sendmsg)

/* ---- direct reclaim ----------------------------------------------------------- */

/*
 * A thread of a traced process in direct reclaim: since when, and how
 * deep. Reclaim does not recurse in today's kernels (PF_MEMALLOC), but a
 * begin inside a begin (memory cgroup reclaim inside global reclaim) is
 * timed once, from the outer begin to the outer end.
 */
struct reclaim_entry {
	__u64 since_ns;
	__u32 depth;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* thread id */
	__type(value, struct reclaim_entry);
} reclaiming SEC(".maps");

static __always_inline int reclaim_begin(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct reclaim_entry *e, fresh = { .depth = 1 };

	if (!traced_current(current_task()))
		return 0;
	e = bpf_map_lookup_elem(&reclaiming, &tid);
	if (e) { /* only this thread touches its entry */
		e->depth++;
		return 0;
	}
	fresh.since_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&reclaiming, &tid, &fresh, BPF_ANY);
	return 0;
}

/* An end without an entry: not traced, or its begin came before the programs were attached. */
static __always_inline int reclaim_end(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct reclaim_entry *e = bpf_map_lookup_elem(&reclaiming, &tid);
	struct tr_pstate *st;
	__u64 d;

	if (!e)
		return 0;
	if (e->depth > 1) {
		e->depth--;
		return 0;
	}
	d = bpf_ktime_get_ns() - e->since_ns;
	bpf_map_delete_elem(&reclaiming, &tid);
	st = bpf_map_lookup_elem(&pstates, &tgid);
	if (st)
		__sync_fetch_and_add(&st->reclaim_ns, d);
	return 0;
}

/*
 * Global direct reclaim (try_to_free_pages) and a memory cgroup's limit
 * reclaim (try_to_free_mem_cgroup_pages: a charge over memory.max or
 * memory.high, or a write to memory.reclaim). The ends come first: the
 * skeleton attaches in this order, so no begin is seen without its end.
 * Names under 15 bytes (rcl_: reclaim). The collector clears
 * reclaim_measured when it cannot load all four.
 */
SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_end")
int rcl_direct_end(void *ctx) { return reclaim_end(); }
SEC("tracepoint/vmscan/mm_vmscan_memcg_reclaim_end")
int rcl_memcg_end(void *ctx) { return reclaim_end(); }
SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_begin")
int rcl_direct_beg(void *ctx) { return reclaim_begin(); }
SEC("tracepoint/vmscan/mm_vmscan_memcg_reclaim_begin")
int rcl_memcg_beg(void *ctx) { return reclaim_begin(); }

/* ---- files ------------------------------------------------------------------ */

/*
 * A file already reported for a process, in a mode. The file is named by
 * its struct inode's address and i_generation: the address names the
 * file while the inode is in memory (it is, while the file is open), and
 * once a freed inode's memory serves another file, the generation - a
 * random number per new inode on ext4, xfs and tmpfs - tells them apart. Both are one read from the file (the device number is two more:
 * inode->i_sb->s_dev), and unlike the inode number they are not handed to
 * the next file created after an unlink. An inode evicted from memory and
 * read back gets a new address: its next open is reported again, as after
 * an LRU eviction (harmless: the processor merges by path).
 */
struct file_key {
	__u64 inode;
	__u64 start_ns; /* of the process: a reused pid starts afresh */
	__u32 tgid;
	__u32 gen_mode; /* i_generation << 2 | mode (TR_FILE_READ, TR_FILE_WRITE) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH); /* an evicted entry is reported again: harmless */
	__uint(max_entries, 65536);
	__type(key, struct file_key);
	__type(value, __u8);
} files_sent SEC(".maps");

/* syscalls/sys_exit_*: the syscall's return value. */
struct sys_exit_args {
	__u64 common;
	long nr;
	long ret;
};

/*
 * ---- the dynamic loader's opens ---------------------------------------
 * A dynamically linked program's loader (ld.so, the ELF interpreter) opens
 * ld.so.cache and each shared library before the program runs, and again
 * for each dlopen(): two opens for /bin/true, dozens for a Python tool,
 * each a path walk and a record, in every process. They say what was
 * mapped, not what the program read; they are not reported.
 *
 * The test is where the open was made from, not what was opened: an open
 * for reading (O_RDONLY) whose syscall instruction is in the interpreter's
 * own image. The kernel maps the interpreter first, at the top of the mmap
 * area, before anything else of the new image: it spans [AT_BASE, its
 * end], AT_BASE from the auxiliary vector the kernel built at exec
 * (mm->saved_auxv), its end at or below mm->mmap_base, and later mappings,
 * placed top-down, go below AT_BASE (only one forced with MAP_FIXED into
 * the sliver between its end and mmap_base would be taken for it). So a
 * syscall whose return address (pt_regs->ip) lies in [AT_BASE, mmap_base)
 * was made by the loader's code. What the program itself opens - a
 * library included, through open() - is still reported, and so is
 * everything opened by code in libraries (their constructors too): only
 * ld.so's own opens are left out.
 *
 * Nothing is left out: without an interpreter (static programs, ld.so run
 * as a command: AT_BASE 0), with the legacy bottom-up mmap layout
 * (setarch -L: AT_BASE above mmap_base), for writes, for openat2() and
 * creat(), and before 5.15 (no bpf_task_pt_regs(): every open is reported
 * there).
 * Costs: two helper calls and a few loads, before the file is looked up
 * (docs/schema.md, "tr_file").
 */
#define AT_NULL_TYPE 0
#define AT_BASE_TYPE 7
#define AUXV_SCAN_PAIRS 16
/*
 * Where create_elf_tables() puts AT_BASE on x86_64: after the arch's
 * two entries and six generic ones. Looked at first, alone: each cache
 * line of the vector the scan touches can be a miss.
 */
#define AUXV_AT_BASE_PAIR 8
#define O_ACCMODE_FLAGS 3

static __always_inline bool opened_by_loader(struct task_struct *t, int flags_arg)
{
	unsigned long base = 0, flags;
	struct pt_regs *regs;
	struct mm_struct *mm;

	if (!TASK_BTF || !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs) ||
	    !bpf_core_field_exists(((struct mm_struct *)0)->saved_auxv))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	/* The registers as the syscall left user space: its arguments, and where it returns to. */
	flags = flags_arg == 3 ? PT_REGS_PARM3_SYSCALL(regs) : PT_REGS_PARM2_SYSCALL(regs);
	if (flags & O_ACCMODE_FLAGS)
		return false;
	mm = t->mm;
	if (!mm)
		return false;
	if (mm->saved_auxv[2 * AUXV_AT_BASE_PAIR] == AT_BASE_TYPE)
		base = mm->saved_auxv[2 * AUXV_AT_BASE_PAIR + 1];
	else
		for (int i = 0; i < AUXV_SCAN_PAIRS; i++) {
			unsigned long type = mm->saved_auxv[2 * i];

			if (type == AT_BASE_TYPE) {
				base = mm->saved_auxv[2 * i + 1];
				break;
			}
			if (type == AT_NULL_TYPE)
				break;
		}
	return base && PT_REGS_IP(regs) >= base && PT_REGS_IP(regs) < mm->mmap_base;
}

/* The struct file of descriptor fd of the current task t (a plain pointer, for BPF_CORE_READ). */
static __always_inline struct file *fd_file(struct task_struct *t, long fd)
{
	struct fdtable *fdt = KREAD(t, files, fdt);
	struct file **fds, *f = NULL;

	if (!fdt || fd >= KREAD(fdt, max_fds))
		return NULL;
	fds = KREAD(fdt, fd); /* a pointer to pointers: a plain number to the verifier, indexed below */
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

/*
 * fd: the open's result; flags_arg: which argument of the syscall holds
 * its flags (3 for openat, 2 for open), 0 when the loader's opens are not
 * looked for. Cheapest refusals first: a failed open, not traced (one
 * lookup), the loader's, not opened for reading or writing (O_PATH), not
 * a regular file, already reported; only then the path.
 */
static __always_inline int file_opened(long fd, int flags_arg)
{
	struct task_struct *task = current_task();
	__u32 zero = 0, pos, mode;
	struct file_key k = {};
	struct path_scratch *ps;
	struct path f_path, root;
	struct inode *inode;
	struct tr_pstate *st;
	struct tr_file h;
	struct file *f;
	__u8 one = 1;
	int r;

	if (fd < 0 || !(st = traced_current(task)))
		return 0;
	if (flags_arg && opened_by_loader(task, flags_arg))
		return 0;
	f = fd_file(task, fd);
	if (!f)
		return 0;
	mode = BPF_CORE_READ(f, f_mode) & FMODE_RW;
	if (!mode) /* O_PATH */
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT_MASK) != S_IFREG_MODE)
		return 0;
	k.inode = (__u64)inode;
	k.gen_mode = BPF_CORE_READ(inode, i_generation) << 2 | mode;
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.start_ns = st->start_ns;
	if (bpf_map_lookup_elem(&files_sent, &k))
		return 0;
	if (st->files >= max_files_per_proc) {
		__sync_fetch_and_add(&st->files_dropped, 1);
		return 0;
	}
	f_path = BPF_CORE_READ(f, f_path);
	root = BPF_CORE_READ(task, fs, root); /* once per file reported, beside its path walk */
	r = dentry_path(0, (__u64)f_path.dentry, (__u64)f_path.mnt, (__u64)root.dentry, (__u64)root.mnt);
	pos = PATH_POS(r);
	if (!path_pos_valid(pos))
		return 0;
	ps = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!ps)
		return 0;
	__builtin_memset(&h, 0, sizeof(h));
	fill_hdr(&h.hdr, TR_FILE);
	h.tgid = k.tgid;
	h.mode = mode | (r & PATH_TRUNCATED ? TR_FILE_TRUNCATED : 0);
	h.start_ns = st->start_ns;
	h.path_len = path_len(pos);
	if (output_path_record(ps, pos, &h)) {
		count_drop(TR_FILE);
		return 0;
	}
	bpf_map_update_elem(&files_sent, &k, &one, BPF_ANY);
	__sync_fetch_and_add(&st->files, 1);
	return 0;
}

#define FILE_OPEN_CALL(call, flags_arg)                                      \
	SEC("tracepoint/syscalls/sys_exit_" #call)                           \
	int handle_##call(struct sys_exit_args *ctx) { return file_opened(ctx->ret, flags_arg); }

FILE_OPEN_CALL(openat, 3) /* openat(dirfd, path, flags, mode) */
FILE_OPEN_CALL(open, 2)   /* open(path, flags, mode) */
FILE_OPEN_CALL(openat2, 0) /* flags inside struct open_how, in user memory: never the loader's */
FILE_OPEN_CALL(creat, 0)  /* always for writing */
