/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File system and TCP confinement with Landlock (Linux 5.13+), shared by
 * tracer-collector, tracer-processor, tracer-web, tracer-ingest (TCP only). seccomp decides which system calls
 * a daemon may make but cannot see paths; Landlock decides which files it
 * may open and which TCP ports it may connect to, whatever the file modes
 * say. Applied after the privilege drop, just before seccomp, to the
 * calling thread and every thread it starts later.
 *
 * Rules name directories, not files: a file replaced by rename (an editor,
 * certificate renewal) is a new inode, which a rule on the old one would
 * not cover.
 */
#ifndef TRACER_COMMON_LANDLOCK_H
#define TRACER_COMMON_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define LANDLOCK_MAX_PATHS 24
#define LANDLOCK_MAX_PORTS 16 /* the processor: upload_url's 8 URLs, the environment's 6 proxy variables */

struct landlock_spec {
	const char *rw_dirs[LANDLOCK_MAX_PATHS];   /* read, create, write, rename, remove beneath */
	unsigned nrw;
	const char *ro_paths[LANDLOCK_MAX_PATHS];  /* read beneath (a directory) or read (a file) */
	unsigned nro;
	uint16_t connect_ports[LANDLOCK_MAX_PORTS]; /* the only TCP ports connect() may reach; no bind() */
	unsigned nports;
	bool net_only; /* TCP (and scopes) only: the file system left to the caller's other confinement */
};

/* Add a path; the directory of a file path when dir_of is true. false when full. */
bool landlock_add_ro(struct landlock_spec *s, const char *path, bool dir_of);
bool landlock_add_rw(struct landlock_spec *s, const char *dir);
bool landlock_add_port(struct landlock_spec *s, uint16_t port);

/*
 * Enforce the spec: every file system access Landlock knows of is denied
 * outside the listed paths, every TCP bind and every TCP connect but to the
 * listed ports (ABI 4+), signals and abstract unix sockets outside this
 * process (ABI 6+). Paths that do not exist are skipped.
 * Returns the Landlock ABI version enforced (>= 1), 0 when the kernel has no
 * Landlock (logged once, <4>: ProtectSystem= alone confines files) or, for
 * net_only, none of ABI 4 (not logged), or -errno (logged) when it failed.
 */
int landlock_apply(const struct landlock_spec *s, const char *who);

#endif /* TRACER_COMMON_LANDLOCK_H */
