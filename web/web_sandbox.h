/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's confinement (docs/web.md, "The sandbox"), applied after the
 * privilege drop, once the lake is open and before libmicrohttpd's threads
 * exist, so that they inherit it:
 *   Landlock  every file: read only, and only beneath the lake's directory
 *             and the price table's; no TCP bind or connect (ABI 4+) but
 *             to a PostgreSQL lake's port
 *   seccomp   serving's syscalls, thread creation (a thread per connection)
 *             and read-only opens only; kill on anything else
 * The lake's connection was opened read-only (SQLITE_OPEN_READONLY) before;
 * its -shm file, the readers' lock table, stays mapped as SQLite opened it.
 */
#ifndef TRACER_WEB_SANDBOX_H
#define TRACER_WEB_SANDBOX_H

#include <stdint.h>

/*
 * 0, or -errno (logged). lake: the lake's path; prices: the price table's (NULL: none). A PostgreSQL lake
 * (lake_family AF_UNIX, AF_INET or AF_INET6: store_remote()): no file beneath the lake, but its connection
 * may be made again: a socket of that family, connect, and TCP to lake_port only.
 */
int web_sandbox(const char *lake, const char *prices, int lake_family, uint16_t lake_port);

/*
 * SQLite opens a read-only connection's -wal file read-write when the file
 * modes allow it (it only falls back to read-only when that is refused).
 * Once the lake is open, every writable descriptor of this process on the
 * lake's database, its -wal or its -journal file is replaced by a read-only
 * one on the same file, under the same number (dup3); the -shm file (the
 * readers' lock table, shared memory SQLite must write) stays as it is, and
 * so does any other file of that directory (a log the caller put there). The -wal file carries no lock of
 * SQLite's (those are on the database and the -shm file), so closing the
 * old descriptor releases none. 0, or -errno (logged).
 */
int web_lake_fds_readonly(const char *lake);

#endif /* TRACER_WEB_SANDBOX_H */
