/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building kernel records (include/records.h) the way the BPF programs and
 * the collector write them: the inverse of decode.c. For unit tests, the
 * fuzz target's seeds, and end-to-end tests that play the collector.
 * Header-only: nothing of it is linked into tracer-processor.
 */
#ifndef TRACER_RECORDS_ENCODE_H
#define TRACER_RECORDS_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "records.h"

static inline struct tr_hdr encode_hdr(unsigned type, uint64_t ts_ns)
{
	return (struct tr_hdr){ .type = (__u16)type, .version = RECORDS_VERSION, .cpu = 0, .ts_ns = ts_ns };
}

static inline void encode_comm(char comm[TR_COMM_LEN], const char *name)
{
	size_t n = strlen(name);

	memset(comm, 0, TR_COMM_LEN);
	memcpy(comm, name, n < TR_COMM_LEN - 1 ? n : TR_COMM_LEN - 1);
}

/*
 * An exec record into buf (cap bytes): path, then the NULL-terminated args
 * as NUL-separated strings, then cwd (NULL: unknown) and the
 * NULL-terminated "KEY=VALUE" env strings (NULL: none). Returns its
 * length, 0 if it does not fit. comm is the basename of path, as the
 * kernel would have it.
 */
static inline size_t encode_exec_ctx(void *buf, size_t cap, uint64_t ts_ns, uint32_t tgid, uint32_t ppid,
				     uint64_t start_ns, const char *path, const char *const *args, const char *cwd,
				     const char *const *env)
{
	struct tr_exec e;
	size_t plen = strlen(path) + 1, alen = 0, clen = cwd ? strlen(cwd) + 1 : 0, elen = 0, off;
	const char *slash = strrchr(path, '/');
	unsigned char *b = buf;

	for (const char *const *a = args; a && *a; a++)
		alen += strlen(*a) + 1;
	for (const char *const *a = env; a && *a; a++)
		elen += strlen(*a) + 1;
	if (plen > TR_PATH_MAX || alen > TR_ARGV_MAX || clen > TR_CWD_MAX || elen > TR_ENV_MAX ||
	    sizeof(e) + plen + alen + clen + elen > cap)
		return 0;
	memset(&e, 0, sizeof(e));
	e.hdr = encode_hdr(TR_EXEC, ts_ns);
	e.pid = tgid;
	e.tgid = tgid;
	e.ppid = ppid;
	e.uid = 1000;
	e.gid = 1000;
	e.start_ns = start_ns;
	e.cgroup_id = 7;
	e.path_len = (__u32)plen;
	e.argv_len = (__u32)alen;
	e.argv_true_len = (__u32)alen;
	e.cwd_len = (__u32)clen;
	e.env_len = (__u32)elen;
	encode_comm(e.comm, slash ? slash + 1 : path);
	memcpy(b, &e, sizeof(e));
	memcpy(b + sizeof(e), path, plen);
	off = sizeof(e) + plen;
	for (const char *const *a = args; a && *a; a++) {
		size_t n = strlen(*a) + 1;

		memcpy(b + off, *a, n);
		off += n;
	}
	if (cwd) {
		memcpy(b + off, cwd, clen);
		off += clen;
	}
	for (const char *const *a = env; a && *a; a++) {
		size_t n = strlen(*a) + 1;

		memcpy(b + off, *a, n);
		off += n;
	}
	return off;
}

static inline size_t encode_exec(void *buf, size_t cap, uint64_t ts_ns, uint32_t tgid, uint32_t ppid, uint64_t start_ns,
				 const char *path, const char *const *args)
{
	return encode_exec_ctx(buf, cap, ts_ns, tgid, ppid, start_ns, path, args, NULL, NULL);
}

/* A sample of process (tgid, start_ns): the counters given, everything else zero. */
static inline struct tr_sample encode_sample(uint64_t ts_ns, uint32_t tgid, uint64_t start_ns, uint32_t ppid,
					     uint64_t runtime_ns, uint64_t rss_bytes, uint64_t rchar)
{
	struct tr_sample s;

	memset(&s, 0, sizeof(s));
	s.hdr = encode_hdr(TR_SAMPLE, ts_ns);
	s.tgid = tgid;
	s.ppid = ppid;
	s.start_ns = start_ns;
	s.runtime_ns = runtime_ns;
	s.rss_bytes = rss_bytes;
	s.hiwater_rss_bytes = rss_bytes;
	s.rchar = rchar;
	s.uid = 1000;
	s.nr_threads = 1;
	s.state_flags = TR_PSTATE_TRACED;
	return s;
}

/* A path record (TR_FILE or TR_CGROUP) into buf: fixed part then path. Returns its length, 0 if too big. */
static inline size_t encode_file(void *buf, size_t cap, uint64_t ts_ns, uint32_t tgid, uint64_t start_ns, uint32_t mode,
				 const char *path)
{
	struct tr_file f;
	size_t plen = strlen(path) + 1;

	if (plen > TR_FILE_PATH_MAX || sizeof(f) + plen > cap)
		return 0;
	memset(&f, 0, sizeof(f));
	f.hdr = encode_hdr(TR_FILE, ts_ns);
	f.tgid = tgid;
	f.start_ns = start_ns;
	f.mode = mode;
	f.path_len = (__u32)plen;
	memcpy(buf, &f, sizeof(f));
	memcpy((unsigned char *)buf + sizeof(f), path, plen);
	return sizeof(f) + plen;
}

static inline size_t encode_cgroup(void *buf, size_t cap, uint64_t ts_ns, uint64_t id, uint32_t v1, const char *path)
{
	struct tr_cgroup c;
	size_t plen = strlen(path) + 1;

	if (plen > TR_CGROUP_PATH_MAX || sizeof(c) + plen > cap)
		return 0;
	memset(&c, 0, sizeof(c));
	c.hdr = encode_hdr(TR_CGROUP, ts_ns);
	c.id = id;
	c.v1 = v1;
	c.path_len = (__u32)plen;
	memcpy(buf, &c, sizeof(c));
	memcpy((unsigned char *)buf + sizeof(c), path, plen);
	return sizeof(c) + plen;
}

static inline struct tr_fork encode_fork(uint64_t ts_ns, uint32_t parent, uint64_t parent_start, uint32_t child,
					 uint64_t child_start)
{
	return (struct tr_fork){
		.hdr = encode_hdr(TR_FORK, ts_ns),
		.parent_tgid = parent,
		.child_tgid = child,
		.parent_start_ns = parent_start,
		.child_start_ns = child_start,
		.uid = 1000,
	};
}

/* raw: the wait status word, e.g. 3 << 8 for exit(3), 11 | 0x80 for SIGSEGV with a core. */
static inline struct tr_exit encode_exit(uint64_t ts_ns, uint32_t tgid, uint64_t start_ns, uint32_t ppid, uint32_t raw)
{
	struct tr_exit x;

	memset(&x, 0, sizeof(x));
	x.hdr = encode_hdr(TR_EXIT, ts_ns);
	x.pid = tgid;
	x.tgid = tgid;
	x.ppid = ppid;
	x.exit_code = raw;
	x.start_ns = start_ns;
	x.cgroup_id = 7;
	x.utime_ns = 3000000;
	x.stime_ns = 1000000;
	x.runtime_ns = 4000000;
	x.maxrss_bytes = 1 << 20;
	x.image_peak_rss_bytes = 1 << 20;
	x.read_bytes = 4096;
	x.write_bytes = 8192;
	x.rchar = 100;
	x.wchar = 200;
	x.nr_threads = 1;
	encode_comm(x.comm, "proc");
	return x;
}

static inline struct tr_oom encode_oom(uint64_t ts_ns, uint32_t pid, uint64_t anon_rss_kb, uint64_t total_vm_kb)
{
	struct tr_oom o;

	memset(&o, 0, sizeof(o));
	o.hdr = encode_hdr(TR_OOM, ts_ns);
	o.pid = pid;
	o.anon_rss_kb = anon_rss_kb;
	o.total_vm_kb = total_vm_kb;
	return o;
}

static inline struct tr_counters encode_counters(uint64_t ts_ns, uint64_t exec_drops, uint64_t exit_drops)
{
	struct tr_counters c;

	memset(&c, 0, sizeof(c));
	c.hdr = encode_hdr(TR_COUNTERS, ts_ns);
	c.kernel_drops[TR_EXEC] = exec_drops;
	c.kernel_drops[TR_EXIT] = exit_drops;
	return c;
}

static inline struct tr_end encode_end(uint64_t ts_ns, uint64_t records_copied)
{
	struct tr_end e;

	memset(&e, 0, sizeof(e));
	e.hdr = encode_hdr(TR_END, ts_ns);
	e.records_copied = records_copied;
	return e;
}

#endif /* TRACER_RECORDS_ENCODE_H */
