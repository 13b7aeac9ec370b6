/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a whole small file, bounded: the one place every program opens, checks and reads the files it is
 * given (configs, rules, keys, tokens, price tables, DMI fields, checkpoints), and the one place their size
 * limits are defined.
 *
 * A file is opened read-only, close-on-exec, without becoming a controlling terminal and with O_NONBLOCK (a
 * FIFO put in its place must not hang a daemon), then refused unless it is a regular file; it is read in a
 * loop (EINTR retried, short reads continued) up to one byte past its limit, so that a file that grew since
 * fstat is caught as well as one that was too large already.
 */
#ifndef TRACER_READFILE_H
#define TRACER_READFILE_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* How every file is opened (and oflags added): a seccomp filter that rereads a file allows openat with these. */
#define READ_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* The largest file of each kind, in bytes: defined here and nowhere else. */
#define READ_MAX_CONFIG (1u << 20)       /* tracer.conf (a few KiB in practice) */
#define READ_MAX_RULES (64u << 10)       /* the tool rules file, for the collector and the processor alike */
#define READ_MAX_BATCH_KEY 1024u         /* a signing key file: one line */
#define READ_MAX_ID_FILE 63u             /* /etc/machine-id, boot_id: 32 hex digits, dashes, a newline */
#define READ_MAX_INGEST_KEYS (16u << 20) /* tracer-ingest's keys file: one line per host */
#define READ_MAX_TOKEN 259u              /* tracer-web's token file: a token of 256 bytes, CR LF, and one more */
#define READ_MAX_PRICES (16u << 20)      /* tracer cost's price table */
#define READ_MAX_DMI 256u                /* one DMI field (/sys/class/dmi/id/...): a longer file is unknown */
#define READ_MAX_MEMINFO (16u << 10)     /* /proc/meminfo (about 1.5 KiB); a larger one: sysinfo(2) instead */
#define READ_MAX_PEM (1u << 20)          /* one PEM file (a CA bundle is a few hundred KiB) */
#define READ_MAX_STATUS (64u << 10)      /* the processor's status file, as written and as read */
#define READ_MAX_EXPORT_STATE (1u << 30) /* tracer export otlp's --state file: a line per run exported */

/*
 * Reads all of an open file into buf, at most max bytes: buf holds max + 1 bytes, and a NUL is written after
 * what was read. Returns the byte count, -EFBIG when the file holds more than max bytes, or -errno.
 */
ssize_t read_fd_bounded(int fd, char *buf, size_t max);

/* Reads an open file from where it stands until its end or cap bytes, whichever comes first (EINTR retried,
 * short reads continued; no NUL written): the byte count, or -errno. A file cut at cap is the caller's to judge. */
ssize_t read_fd_upto(int fd, char *buf, size_t cap);

/* Opens name as read_file_bounded does and checks it: a regular file of at most max bytes (-EINVAL, -EFBIG;
 * -errno), its fstat in *st. Returns the fd. */
int read_open_checked(int dirfd, const char *name, int oflags, size_t max, struct stat *st);

/*
 * Opens name (relative to dirfd, or AT_FDCWD; oflags adds e.g. O_NOFOLLOW), refuses anything but a regular
 * file (-EINVAL) or one holding more than max bytes (-EFBIG: judged by reading one byte past max, not by
 * st_size, which sysfs gives as 4096 for every file), and reads it into buf as read_fd_bounded does. st, when
 * not NULL, receives the file's fstat (for owner and mode checks), also on -EFBIG and -EINVAL.
 */
ssize_t read_file_bounded(int dirfd, const char *name, int oflags, char *buf, size_t max, struct stat *st);

/* As read_file_bounded into a buffer it allocates (readfile_alloc.c) (as large as the file, plus the NUL): *out, freed by the
 * caller, NULL on error. */
ssize_t read_file_alloc(int dirfd, const char *name, int oflags, size_t max, char **out, struct stat *st);

#endif
