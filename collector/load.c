/* SPDX-License-Identifier: Apache-2.0 */
#include "load.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "ring_common.h"

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fputs(level == LIBBPF_WARN ? "<4>libbpf: " : "<6>libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* libbpf attaches tracepoints through tracefs: mount it where it belongs if nobody has. */
static const char *tracefs_events(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0)
		return "/sys/kernel/tracing/events";
	if (stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return "/sys/kernel/debug/tracing/events";
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		fprintf(stderr, "<3>tracefs is not mounted and mounting it failed (%s): "
				"run 'mount -t tracefs tracefs /sys/kernel/tracing' as root\n", strerror(errno));
		return NULL;
	}
	fprintf(stderr, "<5>mounted tracefs at /sys/kernel/tracing\n");
	return "/sys/kernel/tracing/events";
}

/*
 * A tracepoint this kernel lacks (sock_*_length before 6.3, ...): its program is not loaded. Without any
 * of the vmscan programs, reclaim times would be partial: the records say they are not measured.
 */
static void skip_missing_tracepoints(struct tracer_bpf *s, const char *events)
{
	struct bpf_program *p;
	char path[512];

	bpf_object__for_each_program(p, s->obj) {
		const char *sec = bpf_program__section_name(p);

		if (strncmp(sec, "tracepoint/", 11))
			continue;
		snprintf(path, sizeof(path), "%s/%s", events, sec + 11);
		if (access(path, F_OK) == 0)
			continue;
		bpf_program__set_autoload(p, false);
		s->rodata->reclaim_measured &= strncmp(sec, "tracepoint/vmscan/", 18) != 0;
		fprintf(stderr, "<4>this kernel has no tracepoint %s: %s is left out, the figures it feeds stay 0 "
				"(docs/schema.md, \"Kernel floor\")\n", sec + 11, bpf_program__name(p));
	}
}

/* With at_switch, exits wait for the dying thread's last switch (and switches sample and time sleeps). */
static struct tracer_bpf *open_and_load(const struct load_options *o, const char *events, bool at_switch, int *err)
{
	struct tracer_bpf *s = tracer_bpf__open();

	if (!s) {
		*err = -errno;
		return NULL;
	}
	s->rodata->page_size = (__u64)sysconf(_SC_PAGESIZE);
	s->rodata->exit_at_switch = at_switch;
	s->rodata->trace_subtree = o->trace_pid > 0;
	s->rodata->sample_interval_ns = o->sample_interval_ms * 1000000ULL;
	if (!at_switch)
		bpf_program__set_autoload(s->progs.handle_switch, false);
	skip_missing_tracepoints(s, events);
	*err = bpf_map__set_max_entries(s->maps.events, o->kernel_buffer_mib << 20);
	if (!*err)
		*err = tracer_bpf__load(s);
	if (*err) {
		tracer_bpf__destroy(s);
		s = NULL;
	}
	return s;
}

/* --trace-pid: its state exists before it runs again; the programs claim it at its first event. */
static int seed_traced(struct tracer_bpf *s, pid_t pid)
{
	/* last_sample_ns: now (bpf_ktime_get_ns()'s clock), so its first sample comes an interval later. */
	struct tr_pstate st = { .flags = TR_PSTATE_TRACED, .last_sample_ns = ring_now_ns() };
	__u32 key = (__u32)pid;

	if ((kill(pid, 0) && errno == ESRCH) ||
	    bpf_map__update_elem(s->maps.pstates, &key, sizeof(key), &st, sizeof(st), BPF_ANY)) {
		fprintf(stderr, "<3>--trace-pid %d: %s\n", (int)pid, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The sample timer: a software clock per CPU, one period per interval, for
 * threads that hold a CPU without ever switching out. Its links live as
 * long as the process.
 */
static void start_timers(struct bpf_state *b, unsigned interval_ms)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = interval_ms * 1000000ULL };
	int ncpu = libbpf_num_possible_cpus();

	for (int cpu = 0; cpu < ncpu && cpu < LOAD_MAX_CPUS; cpu++) {
		int fd = (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 && errno == ENODEV) /* offline */
			continue;
		if (fd >= 0)
			b->timers[b->n_timers] = bpf_program__attach_perf_event(b->skel->progs.handle_timer, fd);
		if (fd < 0 || !b->timers[b->n_timers]) {
			fprintf(stderr, "<4>no per-CPU sample timer (%s): a thread that never leaves its CPU is "
					"sampled only when it does\n", strerror(errno));
			if (fd >= 0)
				close(fd);
			return;
		}
		b->n_timers++;
	}
}

int bpf_start(struct bpf_state *b, const struct load_options *o, struct rules_file *r)
{
	const char *events = tracefs_events();
	struct tracer_bpf *s;
	int err;

	b->n_timers = 0;
	if (!events)
		return -1;
	libbpf_set_print(libbpf_log);
	s = open_and_load(o, events, true, &err);
	if (err == -EACCES || err == -EINVAL) {
		/* sched_switch has its prev_state argument from 5.18: without it, exits go out at once. */
		fprintf(stderr, "<4>the sched_switch hook did not load: exit CPU times can be up to one scheduler "
				"tick short; no sleep times; samples only from the timer\n");
		s = open_and_load(o, events, false, &err);
	}
	if (!s) {
		fprintf(stderr, "<3>cannot load the BPF programs (%s): see libbpf's messages above. tracer needs "
				"root, BTF (/sys/kernel/btf/vmlinux) and BPF ring buffers (Linux 5.8+)\n", strerror(-err));
		return -1;
	}
	b->skel = s;
	rules_publish(r, s->bss->rules, &s->bss->rules_active);
	if (o->trace_pid > 0 && seed_traced(s, o->trace_pid))
		goto fail;
	err = tracer_bpf__attach(s);
	if (err) {
		fprintf(stderr, "<3>cannot attach the BPF programs to their tracepoints: %s\n", strerror(-err));
		goto fail;
	}
	start_timers(b, o->sample_interval_ms);
	return 0;
fail:
	tracer_bpf__destroy(s);
	b->skel = NULL;
	return -1;
}
