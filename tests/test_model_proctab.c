/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process table: one entry per process lifetime, whatever order its
 * records come in and whichever of them are lost; the tree of the run's
 * root with orphans kept under their original parent; the bound, what it
 * turns away, and what the sweep evicts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode.h"
#include "encode.h"
#include "proctab.h"

#define ROOT 100
#define ROOT_START 1000
#define SEC 1000000000ULL

static const char *const ARGS_SH[] = { "sh", "-c", "x", NULL };
static const char *const ARGS_SORT[] = { "samtools", "sort", "in.bam", NULL };

static struct decoded dec;

static struct proctab *table(uint32_t max, uint32_t root)
{
	struct proctab *t = malloc(sizeof(*t));

	assert_non_null(t);
	assert_int_equal(proctab_init(t, max, root, 12345), 0);
	return t;
}

static void table_free(struct proctab *t)
{
	proctab_free(t);
	free(t);
}

static int do_exec(struct proctab *t, uint64_t ts, uint32_t tgid, uint32_t ppid, uint64_t start, const char *path,
		   const char *const *args)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = encode_exec(buf, sizeof(buf), ts, tgid, ppid, start, path, args);

	assert_int_equal(decode_record(&dec, TR_EXEC, buf, (uint32_t)n), 0);
	return proctab_exec(t, &dec.u.exec, ts, NULL);
}

static int do_fork(struct proctab *t, uint64_t ts, uint32_t parent, uint64_t pstart, uint32_t child, uint64_t cstart)
{
	struct tr_fork f = encode_fork(ts, parent, pstart, child, cstart);

	return proctab_fork(t, &f, ts);
}

static int do_exit(struct proctab *t, uint64_t ts, uint32_t tgid, uint64_t start, uint32_t ppid, uint32_t raw)
{
	struct tr_exit x = encode_exit(ts, tgid, start, ppid, raw);

	return proctab_exit(t, &x, ts, NULL);
}

static struct proc *get(struct proctab *t, uint32_t tgid, uint64_t start)
{
	struct proc *p = proctab_lookup(t, tgid, start);

	assert_non_null(p);
	return p;
}

static bool member(struct proctab *t, uint32_t tgid, uint64_t start)
{
	proctab_mark_tree(t);
	return get(t, tgid, start)->in_tree;
}

/* The root exec'd sh; its start time is known only from this record. */
static void start_root(struct proctab *t)
{
	assert_int_equal(do_exec(t, 1100, ROOT, 1, ROOT_START, "/bin/sh", ARGS_SH), 0);
}

/* ---- identity ------------------------------------------------------ */

static void reused_pid_gives_two_entries(void **state)
{
	struct proctab *t = table(16, 0);

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/bin/a", NULL), 0);
	assert_int_equal(do_exit(t, 20, 7, 5, 1, 0), 0);
	assert_int_equal(do_exec(t, 30, 7, 1, 25, "/bin/b", NULL), 0);
	assert_int_equal(t->used, 2);
	assert_string_equal(proc_image_path(get(t, 7, 5)->image), "/bin/a");
	assert_string_equal(proc_image_path(get(t, 7, 25)->image), "/bin/b");
	assert_true(get(t, 7, 5)->flags & PROC_F_EXIT);
	assert_false(get(t, 7, 25)->flags & PROC_F_EXIT);
	table_free(t);
}

static void records_of_one_lifetime_fill_one_entry(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *p;

	(void)state;
	assert_int_equal(do_fork(t, 10, 1, 1, 7, 9), 0);
	assert_int_equal(do_exec(t, 11, 7, 1, 9, "/bin/a", NULL), 0);
	assert_int_equal(do_exit(t, 12, 7, 9, 1, 0), 0);
	assert_int_equal(t->used, 1);
	p = get(t, 7, 9);
	assert_int_equal(p->flags & (PROC_F_FORK | PROC_F_EXEC | PROC_F_EXIT), PROC_F_FORK | PROC_F_EXEC | PROC_F_EXIT);
	assert_int_equal(p->fork_ts_ns, 10);
	assert_int_equal(p->exit.hdr.ts_ns, 12);
	table_free(t);
}

static void second_exit_record_of_a_lifetime_replaces_the_first(void **state)
{
	struct proctab *t = table(16, 0);

	(void)state;
	/* Two threads racing out can both send an exit (kernels before 6.16): one exit is kept. */
	assert_int_equal(do_exit(t, 20, 7, 5, 1, 0), 0);
	assert_int_equal(do_exit(t, 21, 7, 5, 1, 0), 0);
	assert_int_equal(t->used, 1);
	assert_int_equal(get(t, 7, 5)->exit.hdr.ts_ns, 21);
	table_free(t);
}

/* ---- ordering and losses ------------------------------------------- */

static void exit_before_fork_gives_one_entry_with_the_fork_parent(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *p;

	(void)state;
	assert_int_equal(do_exit(t, 20, 8, 15, 1, 0), 0);   /* re-parented to init by then */
	assert_int_equal(do_fork(t, 10, 5, 2, 8, 15), 0);   /* arrives late */
	assert_int_equal(t->used, 1);
	p = get(t, 8, 15);
	assert_int_equal(p->ppid, 5);
	assert_int_equal(p->parent_src, PARENT_FROM_FORK);
	assert_int_equal(p->parent_start_ns, 2);
	assert_true(p->flags & PROC_F_EXIT);
	table_free(t);
}

static void lost_fork_record_falls_back_to_the_exec_ppid(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *p;

	(void)state;
	assert_int_equal(do_exec(t, 5, 50, 1, 3, "/bin/parent", NULL), 0);
	assert_int_equal(do_exec(t, 10, 51, 50, 8, "/bin/child", NULL), 0); /* its fork record was lost */
	p = get(t, 51, 8);
	assert_int_equal(p->ppid, 50);
	assert_int_equal(p->parent_src, PARENT_FROM_EXEC);
	assert_true(p->parent_start_known);
	assert_ptr_equal(proctab_parent(t, p), get(t, 50, 3));
	table_free(t);
}

static void lost_fork_and_exec_records_fall_back_to_the_exit_ppid(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *p;

	(void)state;
	assert_int_equal(do_exit(t, 10, 51, 8, 50, 0), 0);
	p = get(t, 51, 8);
	assert_int_equal(p->ppid, 50);
	assert_int_equal(p->parent_src, PARENT_FROM_EXIT);
	/* The parent's records come later: the link is resolved then. */
	assert_null(proctab_parent(t, p));
	assert_int_equal(do_exec(t, 11, 50, 1, 3, "/bin/parent", NULL), 0);
	assert_ptr_equal(proctab_parent(t, p), get(t, 50, 3));
	table_free(t);
}

static void exec_ppid_does_not_override_the_fork_parent(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *p;

	(void)state;
	assert_int_equal(do_fork(t, 10, 5, 2, 8, 15), 0);
	assert_int_equal(do_exec(t, 11, 8, 1, 15, "/bin/x", NULL), 0); /* parent died: re-parented before exec */
	assert_int_equal(do_exit(t, 12, 8, 15, 1, 0), 0);
	p = get(t, 8, 15);
	assert_int_equal(p->ppid, 5);
	assert_int_equal(p->parent_src, PARENT_FROM_FORK);
	table_free(t);
}

static void fork_parent_replaces_an_earlier_exec_ppid(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *p;

	(void)state;
	assert_int_equal(do_exec(t, 11, 8, 1, 15, "/bin/x", NULL), 0);
	assert_int_equal(do_fork(t, 10, 5, 2, 8, 15), 0);
	p = get(t, 8, 15);
	assert_int_equal(p->ppid, 5);
	assert_int_equal(p->parent_src, PARENT_FROM_FORK);
	table_free(t);
}

static void ppid_resolves_to_the_lifetime_alive_when_the_child_started(void **state)
{
	struct proctab *t = table(16, 0);

	(void)state;
	assert_int_equal(do_exec(t, 5, 50, 1, 3, "/bin/old", NULL), 0);
	assert_int_equal(do_exit(t, 6, 50, 3, 1, 0), 0);
	assert_int_equal(do_exec(t, 7, 50, 1, 7, "/bin/new", NULL), 0); /* pid 50 reused */
	assert_int_equal(do_exec(t, 9, 60, 50, 8, "/bin/child", NULL), 0);
	assert_ptr_equal(proctab_parent(t, get(t, 60, 8)), get(t, 50, 7));
	table_free(t);
}

/* ---- images ---------------------------------------------------------- */

static void forked_child_without_exec_inherits_its_parents_image(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc *c;

	(void)state;
	assert_int_equal(do_exec(t, 5, 50, 1, 3, "/usr/bin/samtools", ARGS_SORT), 0);
	assert_int_equal(do_fork(t, 6, 50, 3, 51, 6), 0);
	c = get(t, 51, 6);
	assert_true(c->flags & PROC_F_INHERITED);
	assert_ptr_equal(c->image, get(t, 50, 3)->image);
	assert_int_equal(c->image->refs, 2);
	assert_string_equal(proc_image_tool(c->image), "samtools sort");
	/* Its own exec replaces the copy, which is not one of its images. */
	assert_int_equal(do_exec(t, 7, 51, 50, 6, "/bin/sh", ARGS_SH), 0);
	assert_false(c->flags & PROC_F_INHERITED);
	assert_int_equal(c->n_earlier, 0);
	assert_int_equal(get(t, 50, 3)->image->refs, 1);
	table_free(t);
}

static void exec_keeps_the_first_earlier_images_and_counts_the_rest(void **state)
{
	struct proctab *t = table(16, 0);
	const char *paths[] = { "/bin/a", "/bin/b", "/bin/c", "/bin/d", "/bin/e", "/bin/f" };
	struct proc *p;

	(void)state;
	for (int i = 0; i < 6; i++)
		assert_int_equal(do_exec(t, 10 + (uint64_t)i, 7, 1, 5, paths[i], NULL), 0);
	p = get(t, 7, 5);
	assert_string_equal(proc_image_path(p->image), "/bin/f");
	assert_int_equal(p->n_earlier, PROC_MAX_EARLIER_EXECS);
	assert_string_equal(proc_image_path(p->earlier[0]), "/bin/a");
	assert_string_equal(proc_image_path(p->earlier[2]), "/bin/c");
	assert_int_equal(p->execs_dropped, 2);
	assert_int_equal(t->st.execs_dropped, 2);
	table_free(t);
}

static void over_the_image_budget_argv_is_dropped_but_path_and_tool_kept(void **state)
{
	struct proctab *t = table(16, 0);
	struct proc_image *im;

	(void)state;
	t->image_budget = 150; /* one samtools image is 94 bytes */
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/usr/bin/samtools", ARGS_SORT), 0);
	assert_false(get(t, 7, 5)->image->flags & PROC_IMAGE_ARGV_DROPPED);
	assert_int_equal(do_exec(t, 11, 8, 1, 6, "/usr/bin/samtools", ARGS_SORT), 0);
	im = get(t, 8, 6)->image;
	assert_true(im->flags & PROC_IMAGE_ARGV_DROPPED);
	assert_int_equal(im->argc, 0);
	assert_string_equal(proc_image_path(im), "/usr/bin/samtools");
	assert_string_equal(proc_image_tool(im), "samtools sort"); /* named before the argv went */
	assert_int_equal(t->st.argv_dropped, 1);
	/* Over the budget, earlier images are not kept either. */
	assert_int_equal(do_exec(t, 12, 8, 1, 6, "/bin/sh", ARGS_SH), 0);
	assert_int_equal(get(t, 8, 6)->n_earlier, 0);
	assert_int_equal(get(t, 8, 6)->execs_dropped, 1);
	table_free(t);
}

static void image_bytes_return_to_zero_when_every_process_is_gone(void **state)
{
	struct proctab *t = table(16, 0);

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/usr/bin/samtools", ARGS_SORT), 0);
	assert_int_equal(do_fork(t, 11, 7, 5, 8, 11), 0); /* shares the image */
	assert_int_equal(do_exec(t, 12, 7, 1, 5, "/bin/sh", ARGS_SH), 0);
	assert_true(t->image_bytes > 0);
	assert_int_equal(do_exit(t, 13, 7, 5, 1, 0), 0);
	assert_int_equal(do_exit(t, 14, 8, 11, 1, 0), 0);
	assert_int_equal(do_exec(t, 10 * SEC, 9, 1, 10 * SEC, "/bin/x", NULL), 0);
	assert_int_equal(proctab_sweep(t), 2);
	assert_int_equal(do_exit(t, 10 * SEC, 9, 10 * SEC, 1, 0), 0);
	assert_int_equal(do_exec(t, 30 * SEC, 10, 1, 30 * SEC, "/bin/x", NULL), 0);
	assert_int_equal(do_exit(t, 30 * SEC, 10, 30 * SEC, 1, 0), 0);
	t->newest_ts = 60 * SEC;
	assert_int_equal(proctab_sweep(t), 2);
	assert_int_equal(t->used, 0);
	assert_int_equal(t->image_bytes, 0);
	table_free(t);
}

static void image_of_an_exec_without_argv_is_named_after_the_path(void **state)
{
	struct proctab *t = table(16, 0);

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/opt/bin/bwa", NULL), 0);
	assert_int_equal(get(t, 7, 5)->image->argc, 0);
	assert_string_equal(proc_image_tool(get(t, 7, 5)->image), "bwa");
	table_free(t);
}

/* ---- the run's tree ---------------------------------------------------- */

static void tree_holds_the_root_and_its_descendants_only(void **state)
{
	struct proctab *t = table(64, ROOT);

	(void)state;
	start_root(t);
	assert_int_equal(do_fork(t, 1200, ROOT, ROOT_START, 101, 1200), 0);
	assert_int_equal(do_fork(t, 1300, 101, 1200, 102, 1300), 0);
	assert_int_equal(do_exec(t, 1250, 300, 1, 1250, "/usr/sbin/cron", NULL), 0); /* the rest of the host */
	assert_int_equal(do_fork(t, 1260, 300, 1250, 301, 1260), 0);
	assert_true(member(t, ROOT, ROOT_START));
	assert_true(member(t, 101, 1200));
	assert_true(member(t, 102, 1300));
	assert_false(member(t, 300, 1250));
	assert_false(member(t, 301, 1260));
	assert_ptr_equal(proctab_root(t), get(t, ROOT, ROOT_START));
	table_free(t);
}

static void orphan_stays_in_the_tree_under_its_original_parent(void **state)
{
	struct proctab *t = table(64, ROOT);
	struct proc *o;

	(void)state;
	start_root(t);
	assert_int_equal(do_fork(t, 1200, ROOT, ROOT_START, 101, 1200), 0);
	assert_int_equal(do_fork(t, 1300, 101, 1200, 102, 1300), 0);
	assert_int_equal(do_exit(t, 1400, 101, 1200, ROOT, 0), 0);
	/* 102 is re-parented to a subreaper (pid 99) and exits later. */
	assert_int_equal(do_exit(t, 1500, 102, 1300, 99, 0), 0);
	o = get(t, 102, 1300);
	assert_int_equal(o->ppid, 101);
	assert_true(member(t, 102, 1300));
	table_free(t);
}

static void root_is_known_by_its_pid_until_its_first_record(void **state)
{
	struct proctab *t = table(64, ROOT);

	(void)state;
	assert_null(proctab_root(t));
	/* The first record naming the root is a child's fork: the root gets an entry from it. */
	assert_int_equal(do_fork(t, 1200, ROOT, ROOT_START, 101, 1200), 0);
	assert_true(t->root_known);
	assert_int_equal(t->root_start_ns, ROOT_START);
	assert_true(member(t, 101, 1200));
	assert_true(member(t, ROOT, ROOT_START));
	start_root(t);
	assert_int_equal(t->used, 2);
	table_free(t);
}

static void later_process_reusing_the_roots_pid_is_not_in_the_tree(void **state)
{
	struct proctab *t = table(64, ROOT);

	(void)state;
	start_root(t);
	assert_int_equal(do_exit(t, 1500, ROOT, ROOT_START, 1, 0), 0);
	assert_int_equal(do_exec(t, 2000, ROOT, 1, 1900, "/bin/other", NULL), 0);
	assert_true(member(t, ROOT, ROOT_START));
	assert_false(member(t, ROOT, 1900));
	table_free(t);
}

static void child_of_the_roots_pid_without_root_records_is_in_the_tree(void **state)
{
	struct proctab *t = table(64, ROOT);

	(void)state;
	/* Only an exit naming ppid ROOT: the root's own records were all lost. */
	assert_int_equal(do_exit(t, 1500, 101, 1200, ROOT, 0), 0);
	assert_true(member(t, 101, 1200));
	table_free(t);
}

static void cyclic_parent_links_end_outside_the_tree(void **state)
{
	struct proctab *t = table(64, ROOT);

	(void)state;
	start_root(t);
	/* Hostile records: 201 and 202 name each other as parent. */
	assert_int_equal(do_fork(t, 1200, 202, 1202, 201, 1201), 0);
	assert_int_equal(do_fork(t, 1201, 201, 1201, 202, 1202), 0);
	assert_int_equal(do_fork(t, 1203, 203, 1203, 203, 1203), 0); /* its own parent */
	assert_false(member(t, 201, 1201));
	assert_false(member(t, 202, 1202));
	assert_false(member(t, 203, 1203));
	assert_true(member(t, ROOT, ROOT_START));
	table_free(t);
}

static void deep_chain_is_resolved_without_recursion(void **state)
{
	const uint32_t depth = 20000;
	struct proctab *t = table(depth + 8, ROOT);

	(void)state;
	start_root(t);
	for (uint32_t i = 0; i < depth; i++)
		assert_int_equal(do_fork(t, 2000 + i, i ? 1000 + i - 1 : ROOT, i ? 2000 + i - 1 : ROOT_START, 1000 + i,
					 2000 + i), 0);
	assert_true(member(t, 1000 + depth - 1, 2000 + depth - 1));
	table_free(t);
}

/* ---- OOM --------------------------------------------------------------- */

static void oom_victim_known_at_the_kill_is_marked(void **state)
{
	struct proctab *t = table(16, 0);
	struct tr_oom o = encode_oom(20, 7, 4096, 8192);
	struct proc *p;

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/bin/hog", NULL), 0);
	assert_int_equal(proctab_oom(t, &o, 20), 0);
	assert_int_equal(do_exit(t, 30, 7, 5, 1, 9), 0);
	p = get(t, 7, 5);
	assert_true(p->flags & PROC_F_OOM);
	assert_int_equal(p->oom.anon_rss_kb, 4096);
	assert_int_equal(p->oom.total_vm_kb, 8192);
	table_free(t);
}

static void oom_victim_unknown_at_the_kill_is_matched_at_its_exit(void **state)
{
	struct proctab *t = table(16, 0);
	struct tr_oom o = encode_oom(20, 7, 4096, 8192);

	(void)state;
	assert_int_equal(proctab_oom(t, &o, 20), 0);
	assert_int_equal(do_exit(t, 30, 8, 6, 1, 0), 0); /* someone else */
	assert_int_equal(do_exit(t, 31, 7, 5, 1, 9), 0);
	assert_false(get(t, 8, 6)->flags & PROC_F_OOM);
	assert_true(get(t, 7, 5)->flags & PROC_F_OOM);
	table_free(t);
}

static void oom_does_not_mark_a_process_that_exited_before_it(void **state)
{
	struct proctab *t = table(16, 0);
	struct tr_oom o = encode_oom(50, 7, 1, 1);

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/bin/a", NULL), 0);
	assert_int_equal(do_exit(t, 20, 7, 5, 1, 0), 0);
	assert_int_equal(proctab_oom(t, &o, 50), 0);
	assert_false(get(t, 7, 5)->flags & PROC_F_OOM);
	table_free(t);
}

/* ---- bound and eviction -------------------------------------------- */

static void bound_turns_away_new_processes_and_counts_them(void **state)
{
	struct proctab *t = table(2, 0);

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/bin/a", NULL), 0);
	assert_int_equal(do_exec(t, 11, 8, 1, 6, "/bin/b", NULL), 0);
	assert_int_equal(do_exec(t, 12, 9, 1, 7, "/bin/c", NULL), -ENOSPC);
	assert_int_equal(do_exit(t, 13, 9, 7, 1, 0), -ENOSPC);
	assert_int_equal(do_fork(t, 14, 7, 5, 10, 14), -ENOSPC);
	assert_int_equal(t->st.table_full, 3);
	assert_int_equal(t->used, 2);
	/* Records of known processes still get in. */
	assert_int_equal(do_exit(t, 15, 7, 5, 1, 0), 0);
	table_free(t);
}

static void full_table_in_run_mode_evicts_idle_processes_outside_the_tree(void **state)
{
	struct proctab *t = table(3, ROOT);

	(void)state;
	start_root(t);
	assert_int_equal(do_exec(t, 1200, 300, 1, 1200, "/bin/host", NULL), 0);
	assert_int_equal(do_exec(t, 1201, 301, 1, 1201, "/bin/host", NULL), 0);
	/* Within the grace period nothing can go: the bound turns the record away. */
	assert_int_equal(do_fork(t, 1300, ROOT, ROOT_START, 101, 1300), -ENOSPC);
	/* Later, the host's processes are idle and outside the tree: they make room. */
	assert_int_equal(do_fork(t, 5 * SEC, ROOT, ROOT_START, 102, 5 * SEC), 0);
	assert_int_equal(t->st.evicted, 2);
	assert_null(proctab_lookup(t, 300, 1200));
	assert_true(member(t, 102, 5 * SEC));
	assert_true(member(t, ROOT, ROOT_START));
	table_free(t);
}

static void sweep_keeps_the_tree_and_recent_processes(void **state)
{
	struct proctab *t = table(16, ROOT);

	(void)state;
	start_root(t);
	assert_int_equal(do_fork(t, 1200, ROOT, ROOT_START, 101, 1200), 0);
	assert_int_equal(do_exit(t, 1300, 101, 1200, ROOT, 0), 0);
	assert_int_equal(do_exec(t, 1400, 300, 1, 1400, "/bin/host", NULL), 0);
	assert_int_equal(do_exec(t, 10 * SEC, 301, 1, 10 * SEC, "/bin/host", NULL), 0);
	assert_int_equal(proctab_sweep(t), 1); /* 300: idle, outside; 301: recent */
	assert_null(proctab_lookup(t, 300, 1400));
	assert_non_null(proctab_lookup(t, 301, 10 * SEC));
	assert_non_null(proctab_lookup(t, 101, 1200));
	assert_non_null(proctab_lookup(t, ROOT, ROOT_START));
	table_free(t);
}

static void sweep_without_a_root_evicts_processes_that_exited_long_ago(void **state)
{
	struct proctab *t = table(16, 0);

	(void)state;
	assert_int_equal(do_exec(t, 10, 7, 1, 5, "/bin/a", NULL), 0);
	assert_int_equal(do_exit(t, 20, 7, 5, 1, 0), 0);
	assert_int_equal(do_exec(t, 30, 8, 1, 6, "/bin/alive", NULL), 0);
	assert_int_equal(do_exec(t, 10 * SEC, 9, 1, 10 * SEC, "/bin/c", NULL), 0);
	assert_int_equal(proctab_sweep(t), 1);
	assert_null(proctab_lookup(t, 7, 5));
	assert_non_null(proctab_lookup(t, 8, 6));
	/* The freed entry is used again. */
	assert_int_equal(do_exec(t, 10 * SEC + 1, 10, 1, 10 * SEC, "/bin/d", NULL), 0);
	table_free(t);
}

static void invalid_bounds_are_refused(void **state)
{
	struct proctab t;

	(void)state;
	assert_int_equal(proctab_init(&t, 0, 0, 0), -EINVAL);
	assert_int_equal(proctab_init(&t, PROCTAB_MAX_LIMIT + 1, 0, 0), -EINVAL);
}

static void iteration_visits_every_entry_once(void **state)
{
	struct proctab *t = table(64, 0);
	unsigned n = 0;

	(void)state;
	for (uint32_t i = 1; i <= 40; i++)
		assert_int_equal(do_fork(t, i, 1, 1, 1000 + i, i), 0);
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		n++;
	assert_int_equal(n, 40);
	assert_int_equal(t->used, 40);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reused_pid_gives_two_entries),
		cmocka_unit_test(records_of_one_lifetime_fill_one_entry),
		cmocka_unit_test(second_exit_record_of_a_lifetime_replaces_the_first),
		cmocka_unit_test(exit_before_fork_gives_one_entry_with_the_fork_parent),
		cmocka_unit_test(lost_fork_record_falls_back_to_the_exec_ppid),
		cmocka_unit_test(lost_fork_and_exec_records_fall_back_to_the_exit_ppid),
		cmocka_unit_test(exec_ppid_does_not_override_the_fork_parent),
		cmocka_unit_test(fork_parent_replaces_an_earlier_exec_ppid),
		cmocka_unit_test(ppid_resolves_to_the_lifetime_alive_when_the_child_started),
		cmocka_unit_test(forked_child_without_exec_inherits_its_parents_image),
		cmocka_unit_test(exec_keeps_the_first_earlier_images_and_counts_the_rest),
		cmocka_unit_test(over_the_image_budget_argv_is_dropped_but_path_and_tool_kept),
		cmocka_unit_test(image_bytes_return_to_zero_when_every_process_is_gone),
		cmocka_unit_test(image_of_an_exec_without_argv_is_named_after_the_path),
		cmocka_unit_test(tree_holds_the_root_and_its_descendants_only),
		cmocka_unit_test(orphan_stays_in_the_tree_under_its_original_parent),
		cmocka_unit_test(root_is_known_by_its_pid_until_its_first_record),
		cmocka_unit_test(later_process_reusing_the_roots_pid_is_not_in_the_tree),
		cmocka_unit_test(child_of_the_roots_pid_without_root_records_is_in_the_tree),
		cmocka_unit_test(cyclic_parent_links_end_outside_the_tree),
		cmocka_unit_test(deep_chain_is_resolved_without_recursion),
		cmocka_unit_test(oom_victim_known_at_the_kill_is_marked),
		cmocka_unit_test(oom_victim_unknown_at_the_kill_is_matched_at_its_exit),
		cmocka_unit_test(oom_does_not_mark_a_process_that_exited_before_it),
		cmocka_unit_test(bound_turns_away_new_processes_and_counts_them),
		cmocka_unit_test(full_table_in_run_mode_evicts_idle_processes_outside_the_tree),
		cmocka_unit_test(sweep_keeps_the_tree_and_recent_processes),
		cmocka_unit_test(sweep_without_a_root_evicts_processes_that_exited_long_ago),
		cmocka_unit_test(invalid_bounds_are_refused),
		cmocka_unit_test(iteration_visits_every_entry_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
