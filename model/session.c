/* SPDX-License-Identifier: Apache-2.0 */
#include "session.h"

#include <string.h>

int session_init(struct session *s, uint32_t max_procs, uint32_t root_pid, uint64_t seed)
{
	int err;

	memset(&s->st, 0, sizeof(s->st));
	err = proctab_init(&s->tab, max_procs, root_pid, seed);
	if (err)
		return err;
	err = cgtab_init(&s->cgroups, CGTAB_DEFAULT_MAX, &s->tab.strings);
	if (err)
		proctab_free(&s->tab);
	return err;
}

void session_free(struct session *s)
{
	cgtab_free(&s->cgroups);
	proctab_free(&s->tab);
}

/* Untrusted counters: add without wrapping around. */
static uint64_t sum_saturated(const __u64 *v, unsigned n)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum = v[i] > UINT64_MAX - sum ? UINT64_MAX : sum + v[i];
	return sum;
}

static void take_counters(struct session *s, const struct tr_counters *c)
{
	/* Running totals: the latest record has them all. */
	s->st.kernel_drops = sum_saturated(c->kernel_drops, TR_KERNEL_TYPES_END);
	s->st.ring_drops = sum_saturated(c->ring_drops, 64);
	s->st.records_copied = c->records_copied;
	s->st.counters_seen++;
}

int session_record(struct session *s, unsigned type, const void *payload, uint32_t len, struct proc **exited)
{
	struct decoded *d = &s->dec;
	int err;

	if (exited)
		*exited = NULL;
	s->st.records++;
	err = decode_record(d, type, payload, len);
	if (err) {
		s->st.decode_errors++;
		s->st.decode_by_error[d->error]++;
		return err;
	}
	switch (d->type) {
	case TR_EXEC: return proctab_exec(&s->tab, &d->u.exec, d->ts_ns, NULL);
	case TR_FORK: return proctab_fork(&s->tab, &d->u.fork, d->ts_ns);
	case TR_EXIT: return proctab_exit(&s->tab, &d->u.exit, d->ts_ns, exited);
	case TR_OOM:
		s->st.oom_records++;
		return proctab_oom(&s->tab, &d->u.oom, d->ts_ns);
	case TR_SAMPLE: return proctab_sample(&s->tab, &d->u.sample, d->ts_ns);
	case TR_FILE: return proctab_file(&s->tab, &d->u.file, d->ts_ns);
	case TR_CGROUP:
		s->st.cgroup_records++;
		return cgtab_add(&s->cgroups, d->u.cgroup.rec.v1, d->u.cgroup.rec.id, d->u.cgroup.path,
				 d->u.cgroup.path_len);
	case TR_COUNTERS:
		take_counters(s, &d->u.counters);
		return 0;
	case TR_END:
		s->st.end_seen = true;
		s->st.end_reason = d->u.end.reason;
		s->st.records_copied = d->u.end.records_copied;
		return 0;
	default:
		return 0; /* decode_record returns only the types above */
	}
}
