/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The benchmarks' BPF loader (bench/kernel.sh): loads a BPF object, attaches
 * every program that has a section libbpf can attach (tracepoints, raw
 * tracepoints), prints "ready N" (N programs attached) on stdout and holds
 * them until SIGTERM or SIGINT.
 *
 * Its use: bench/calib.bpf.c, empty programs on the hooks tracer's programs
 * use. With kernel.bpf_stats_enabled=1 the kernel charges every program run
 * the time between two clock reads around it; an empty program's
 * run_time_ns / run_cnt is that charge with nothing inside, the statistics'
 * own cost per call on this hook, which bench/kernel.sh subtracts.
 *
 * Not part of tracer: never installed, never linked into the collector.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int quiet_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	int attached = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: calib OBJECT.bpf.o  (attaches its programs until SIGTERM or SIGINT)\n");
		return 2;
	}
	libbpf_set_print(quiet_log);
	/* Blocked until sigsuspend(): a signal that comes early is not lost. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "<3>calib: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "<3>calib: cannot load %s: %s (root and BTF needed)\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		/* The link stays attached until the process exits: it is never destroyed here. */
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "<4>calib: %s (%s) not attached: %s\n", bpf_program__name(p),
				bpf_program__section_name(p), strerror(errno));
			continue;
		}
		attached++;
	}
	if (!attached) {
		fprintf(stderr, "<3>calib: no program of %s could be attached\n", argv[1]);
		return 1;
	}
	printf("ready %d\n", attached);
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	bpf_object__close(obj);
	return 0;
}
