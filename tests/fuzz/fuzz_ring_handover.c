/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the processor's end of the ring handover
 * (ring_handover_recv, then ring_consumer_attach) facing whatever a
 * producer sends on the socket: message bytes, any number of descriptors
 * of any kind, the real ring's or forged memfds with any size, seals and
 * header, in one piece or two, with or without end-of-file. With abort()
 * on a broken invariant:
 *   - the result is 0 or one of the errors the interface can give, and an
 *     untouched, correct handover (the real producer's message and fds,
 *     in one piece) is always accepted;
 *   - anything but exactly two descriptors and exactly one whole message
 *     is refused; a peer that is not the wanted uid gets -EPERM;
 *   - an accepted ring is the one the message and header describe (size,
 *     generation), and its records can be read (the producer's, written
 *     before the handover, come out intact);
 *   - nothing leaks: after the consumer detaches and the harness closes
 *     its own, the process holds the descriptors it held before and no
 *     mapping of any memfd.
 *
 * Input:
 *   [0]      flags: FL_*
 *   [1]      where to split the message (FL_SPLIT)
 *   [2]      descriptors: count (bits 0-2, 0..7)
 *   [3..9]   each descriptor's kind (KIND_*, low 3 bits of each byte): the
 *            real ring or consumer page, a forged ring memfd, a pipe,
 *            /dev/null, a socket, a directory, the real ring opened O_PATH
 *   [10..41] XORed into the real handover message (all zeros: unchanged)
 *   [42..43] offset (within the header page) of the bytes XORed into the
 *            real ring's header (FL_HEADER) or a forged ring's copy of it
 *   [44..51] those bytes
 *   [52]     forged memfd: size selector (bits 0-2) and seals to leave out
 *            (bits 3-7: SHRINK, GROW, FUTURE_WRITE, SEAL, and bit 7 adds
 *            F_SEAL_WRITE instead of FUTURE_WRITE)
 *   [53..60] the consumer page's consumer_pos, when FL_CONS_POS
 *   [61..]   payloads the producer writes before the handover, each
 *            [len][len bytes]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handover.h"
#include "ring.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FL_SPLIT 0x01u      /* the message in two sends, split at [1] */
#define FL_EOF 0x02u        /* the producer's end closed after sending */
#define FL_OTHER_UID 0x04u  /* the consumer wants another uid than the peer's */
#define FL_HEADER 0x08u     /* XOR [44..51] into the real ring's header at [42..43] */
#define FL_CONS_POS 0x10u   /* write [53..60] into the consumer page's consumer_pos */
#define FL_NO_MSG 0x20u     /* descriptors with a 1-byte message only */

enum { KIND_RING, KIND_CONS, KIND_FORGED, KIND_PIPE, KIND_DEVNULL, KIND_SOCKET, KIND_DIR, KIND_RING_PATH };

#define MAX_FDS 7
#define ORDER RING_MIN_ORDER
#define TYPE_TEST RING_REC_FIRST_USER
#define MAX_PAYLOADS 16

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t byte_at(const struct input *in, size_t at)
{
	return at < in->n ? in->p[at] : 0;
}

static uint64_t u64_at(const struct input *in, size_t at)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)byte_at(in, at + i) << (8 * i);
	return v;
}

/* Mappings of memfds left in this process (the ring's, the consumer page's, forged ones). */
static int memfd_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/memfd:") != NULL;
	fclose(f);
	return n;
}

/* A forged ring memfd: the real header page (changed as the input says), sized and sealed as it says. */
static int forged_ring(const struct ring_producer *p, const struct input *in)
{
	static const size_t sizes[8] = { RING_PAGE_SIZE + (1u << ORDER), RING_PAGE_SIZE + (1u << (ORDER + 1)),
					 RING_PAGE_SIZE, RING_PAGE_SIZE - 1, 0, RING_PAGE_SIZE + (1u << ORDER) + 1,
					 RING_PAGE_SIZE + (1u << (ORDER - 1)), 2 * RING_PAGE_SIZE + (1u << ORDER) };
	uint8_t sel = byte_at(in, 52), page[RING_PAGE_SIZE];
	size_t len = sizes[sel & 7];
	unsigned off = (unsigned)(byte_at(in, 42) | byte_at(in, 43) << 8) % (RING_PAGE_SIZE - 8);
	int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;
	int fd = (int)syscall(SYS_memfd_create, "fuzz-forged-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	CHECK(fd >= 0);
	CHECK(ftruncate(fd, (off_t)len) == 0);
	memcpy(page, p->hdr, sizeof(page));
	for (unsigned i = 0; i < 8; i++)
		page[off + i] ^= byte_at(in, 44 + i);
	if (len)
		CHECK(pwrite(fd, page, len < sizeof(page) ? len : sizeof(page), 0) >= 0);
	if (sel & 0x08)
		seals &= ~F_SEAL_SHRINK;
	if (sel & 0x10)
		seals &= ~F_SEAL_GROW;
	if (sel & 0x20)
		seals &= ~F_SEAL_FUTURE_WRITE;
	if (sel & 0x80)
		seals = (seals & ~F_SEAL_FUTURE_WRITE) | F_SEAL_WRITE;
	if (sel & 0x40)
		seals &= ~F_SEAL_SEAL;
	CHECK(fcntl(fd, F_ADD_SEALS, seals) == 0);
	return fd;
}

/* The descriptor of one kind; *own says whether the harness must close it after sending. */
static int fd_of_kind(unsigned kind, const struct ring_producer *p, const struct input *in, bool *own)
{
	int fds[2], fd = -1;

	*own = true;
	switch (kind) {
	case KIND_RING:
		*own = false;
		return p->ring_fd;
	case KIND_CONS:
		*own = false;
		return p->cons_fd;
	case KIND_FORGED:
		return forged_ring(p, in);
	case KIND_PIPE:
		CHECK(pipe2(fds, O_CLOEXEC) == 0);
		close(fds[1]);
		return fds[0];
	case KIND_DEVNULL:
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		break;
	case KIND_SOCKET:
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		break;
	case KIND_DIR:
		fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		break;
	default: { /* the real ring, opened O_PATH: no seals to read, nothing to map */
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", p->ring_fd);
		fd = open(path, O_PATH | O_CLOEXEC);
		break;
	}
	}
	CHECK(fd >= 0);
	return fd;
}

static void send_part(int sock, const void *msg, size_t len, const int *fds, unsigned nfds)
{
	union {
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)msg, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	memset(&u, 0, sizeof(u));
	if (nfds) {
		struct cmsghdr *cm;

		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	CHECK(sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t)len);
}

/* Records the producer writes before the handover: what an accepted consumer must read back. */
static unsigned write_payloads(struct ring_producer *p, const struct input *in, uint8_t lens[MAX_PAYLOADS],
			       size_t offs[MAX_PAYLOADS])
{
	unsigned n = 0;

	for (size_t at = 61; at < in->n && n < MAX_PAYLOADS;) {
		uint8_t len = in->p[at++];

		if (len > in->n - at)
			len = (uint8_t)(in->n - at);
		if (ring_write(p, TYPE_TEST, in->p + at, len) == 0) {
			lens[n] = len;
			offs[n++] = at;
		}
		at += len;
	}
	return n;
}

static void read_back(struct ring_consumer *c, const struct input *in, const uint8_t *lens, const size_t *offs,
		      unsigned n, bool intact)
{
	struct ring_view v;
	unsigned got = 0;
	int rc;

	for (int i = 0; i < 4 * MAX_PAYLOADS && (rc = ring_next(c, &v)) != 0; i++) {
		if (rc < 0)
			continue; /* a forged position: a counted reset */
		CHECK((const uint8_t *)v.payload >= c->data && (const uint8_t *)v.payload + v.len <= c->data + c->size);
		if (intact && v.type == TYPE_TEST) {
			CHECK(got < n && v.len == lens[got] && !memcmp(v.payload, in->p + offs[got], v.len));
			got++;
		}
		ring_release(c);
	}
	if (intact)
		CHECK(got == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	static int fds_before;
	const struct input in = { data, size };
	unsigned flags = byte_at(&in, 0), nfds = byte_at(&in, 2) & 7, npayloads;
	uint64_t generation = 0x1000 + byte_at(&in, 1);
	struct ring_handover_msg msg;
	uint8_t raw[sizeof(msg)], lens[MAX_PAYLOADS];
	size_t offs[MAX_PAYLOADS];
	int fds[MAX_FDS], sv[2], rc;
	bool own[MAX_FDS], changed = false, right_fds;
	struct ring_producer p;
	struct ring_consumer c;

	if (!init) {
		fds_before = fuzz_count_fds();
		CHECK(memfd_mappings() == 0);
		init = true;
	}
	CHECK(ring_producer_create(&p, ORDER, generation) == 0);
	npayloads = write_payloads(&p, &in, lens, offs);
	if (flags & FL_HEADER) {
		unsigned off = (unsigned)(byte_at(&in, 42) | byte_at(&in, 43) << 8) % (RING_PAGE_SIZE - 8);

		for (unsigned i = 0; i < 8; i++) {
			((uint8_t *)p.hdr)[off + i] ^= byte_at(&in, 44 + i);
			changed |= byte_at(&in, 44 + i) != 0;
		}
	}
	if (flags & FL_CONS_POS) {
		/* A hostile producer writes the consumer page too: its own mapping of it is writable. */
		__atomic_store_n(&((struct ring_cons_page *)(uintptr_t)p.cons)->consumer_pos, u64_at(&in, 53),
				 __ATOMIC_RELAXED);
		changed = true;
	}
	msg = (struct ring_handover_msg){ .magic = RING_HANDOVER_MAGIC, .version = RING_VERSION,
					  .page_size = RING_PAGE_SIZE, .data_size = p.size,
					  .generation = p.hdr->generation };
	memcpy(raw, &msg, sizeof(raw));
	for (size_t i = 0; i < sizeof(raw); i++) {
		raw[i] ^= byte_at(&in, 10 + i);
		changed |= byte_at(&in, 10 + i) != 0;
	}
	for (unsigned i = 0; i < nfds; i++)
		fds[i] = fd_of_kind(byte_at(&in, 3 + i) & 7, &p, &in, &own[i]);
	right_fds = nfds == 2 && (byte_at(&in, 3) & 7) == KIND_RING && (byte_at(&in, 4) & 7) == KIND_CONS;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	if (flags & FL_NO_MSG) {
		send_part(sv[0], raw, 1, fds, nfds);
	} else if (flags & FL_SPLIT) {
		size_t split = 1 + byte_at(&in, 1) % (sizeof(raw) - 1);

		send_part(sv[0], raw, split, fds, nfds);
		send_part(sv[0], raw + split, sizeof(raw) - split, NULL, 0);
	} else {
		send_part(sv[0], raw, sizeof(raw), fds, nfds);
	}
	for (unsigned i = 0; i < nfds; i++)
		if (own[i])
			close(fds[i]);
	if (flags & FL_EOF)
		close(sv[0]);

	rc = ring_handover_recv(sv[1], &c, (flags & FL_OTHER_UID) ? getuid() + 1 : getuid(), 1ULL << TYPE_TEST, 0);
	CHECK(rc == 0 || rc == -EPROTO || rc == -EPERM || rc == -EINVAL || rc == -ECONNRESET || rc == -EBADF ||
	      rc == -EACCES || rc == -ENODEV);
	if (flags & FL_OTHER_UID)
		CHECK(rc == -EPERM);
	if (nfds != 2 || (flags & (FL_NO_MSG | FL_SPLIT)))
		CHECK(rc != 0); /* a read stops after the part that brought descriptors */
	if (!(flags & (FL_OTHER_UID | FL_NO_MSG | FL_SPLIT)) && !changed && right_fds)
		CHECK(rc == 0);
	if (rc == 0) {
		struct ring_handover_msg sent;

		memcpy(&sent, raw, sizeof(sent));
		CHECK(c.size == sent.data_size && c.generation == sent.generation); /* the ring the message describes */
		CHECK(c.size >= (1u << RING_MIN_ORDER) && c.size <= (1u << RING_MAX_ORDER) && !(c.size & (c.size - 1)));
		CHECK(c.generation == c.hdr->generation && c.size == c.hdr->data_size);
		read_back(&c, &in, lens, offs, npayloads, !changed && right_fds);
		ring_consumer_detach(&c);
	}
	if (!(flags & FL_EOF))
		close(sv[0]);
	close(sv[1]);
	ring_producer_destroy(&p);
	CHECK(fuzz_count_fds() == fds_before);
	CHECK(memfd_mappings() == 0);
	return 0;
}
