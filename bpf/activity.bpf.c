// SPDX-License-Identifier: GPL-2.0
/*
 * What traced processes do, accumulated in their state (tracer.bpf.h) and
 * sent with their samples and exit:
 *  - bytes sent and received on AF_INET/AF_INET6 sockets (sock tracepoints,
 *    Linux 6.3+; on older kernels these programs are not loaded);
 *  - time spent inside blocking network calls (syscall tracepoints);
 *  - regular files opened (TR_FILE records), once per (process, file, mode),
 *    at most max_files_per_proc per process. Paths and modes, never contents.
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

/* The current process's state if it is traced. */
static __always_inline struct tr_pstate *traced_current(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tr_pstate *st = pstate_current(current_task(), tgid);

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
	st = traced_current();
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

	if (!traced_current())
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

/* ---- files ------------------------------------------------------------------ */

/* A file already reported for a process, in a mode. */
struct file_key {
	__u64 start_ns; /* of the process: a reused pid starts afresh */
	__u64 ino;
	__u32 dev;
	__u32 tgid;
	__u32 mode;
	__u32 pad;
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

static __always_inline struct file *fd_file(struct task_struct *t, long fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

static __always_inline int file_opened(long fd)
{
	struct task_struct *task = current_task();
	__u32 zero = 0, pos;
	struct file_key k = {};
	struct path_scratch *ps;
	struct path f_path, root;
	struct inode *inode;
	struct tr_pstate *st;
	struct tr_file h;
	struct file *f;
	__u8 one = 1;
	int r;

	if (fd < 0 || !(st = traced_current()) || !(f = fd_file(task, fd)))
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT_MASK) != S_IFREG_MODE)
		return 0;
	k.mode = BPF_CORE_READ(f, f_mode) & FMODE_RW;
	if (!k.mode) /* O_PATH */
		return 0;
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.start_ns = st->start_ns;
	k.ino = BPF_CORE_READ(inode, i_ino);
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	if (bpf_map_lookup_elem(&files_sent, &k))
		return 0;
	if (st->files >= max_files_per_proc) {
		__sync_fetch_and_add(&st->files_dropped, 1);
		return 0;
	}
	f_path = BPF_CORE_READ(f, f_path);
	root = BPF_CORE_READ(task, fs, root);
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
	h.mode = k.mode | (r & PATH_TRUNCATED ? TR_FILE_TRUNCATED : 0);
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

#define FILE_OPEN_CALL(call)                                                 \
	SEC("tracepoint/syscalls/sys_exit_" #call)                           \
	int handle_##call(struct sys_exit_args *ctx) { return file_opened(ctx->ret); }

FILE_OPEN_CALL(openat)
FILE_OPEN_CALL(openat2)
FILE_OPEN_CALL(open)
FILE_OPEN_CALL(creat)
