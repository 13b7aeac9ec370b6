/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the collector's rules file parser (rules_parse, the
 * half of rules_read after the file is read and checked; format in
 * docs/security.md, "Collector rules"), with abort() on a broken
 * invariant.
 *
 * Input: the file's text. Text read_file refuses before parsing (a NUL
 * byte, more than READ_MAX_RULES bytes) is skipped.
 *
 * Invariants:
 *   - rules_parse returns 0 or -1, and the same again on the same text
 *     (with the same rules: cgroup rules stat real directories, which do
 *     not change during a run);
 *   - a failure logs exactly one line, "<3>fuzz:LINE: ...", and LINE is
 *     the first line an independent reading of the documented format
 *     (below, model_*) refuses; a success logs nothing and the model
 *     refuses no line;
 *   - whatever the verdict, the rules are within their bounds: at most
 *     TR_RULES_PER_KIND per verb and kind, TR_RULES_ENV_MAX keys, and
 *     every slot past a count zero; every exe a NUL-terminated name
 *     without '/' or separator; every environment key "KEY=" in
 *     little-endian words under a mask of exactly its bytes, the built-in
 *     keys first, none twice; every cgroup rule's level below
 *     CGROUP_LEVEL_MAX;
 *   - on success the rules are exactly the model's: the built-in keys
 *     then each new env key in order, each exe, uid and cgroup (id =
 *     st_ino of the directory, its hierarchy, its depth there counted on
 *     the real path) in order, per verb.
 *
 * Cgroup rules name directories of this host's hierarchies (the seeds
 * use /sys/fs/cgroup/unified and /sys/fs/cgroup/memory, and their
 * children where they exist); any other path must be refused.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../collector/load.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rules_file f;
static struct tr_kernel_rules builtin; /* rules_parse(f, NULL): the built-in allowlist alone */

/* ---- the model: the documented format, read independently ------------------ */

struct word {
	const char *p;
	size_t n;
};

static bool word_is(const struct word *w, const char *s)
{
	return w->n == strlen(s) && !memcmp(w->p, s, w->n);
}

/* Words separated by spaces or tabs (and the '\r' of CRLF files). At most max; *count says how many there were. */
static size_t split(const char *line, size_t len, struct word *w, size_t max, size_t *count)
{
	size_t n = 0, i = 0;

	*count = 0;
	while (i < len) {
		size_t start;

		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			i++;
		if (n < max)
			w[n++] = (struct word){ line + start, i - start };
		(*count)++;
	}
	return n;
}

/* "KEY=" as the programs compare it (include/kernel_rules.h). */
static struct tr_env_key encode_key(const struct word *k)
{
	struct tr_env_key e;
	uint8_t bytes[TR_RULES_ENV_WORDS * 8] = { 0 }, mask[TR_RULES_ENV_WORDS * 8] = { 0 };

	memset(&e, 0, sizeof(e));
	memcpy(bytes, k->p, k->n);
	bytes[k->n] = '=';
	memset(mask, 0xff, k->n + 1);
	for (size_t i = 0; i < TR_RULES_ENV_WORDS; i++)
		for (size_t b = 0; b < 8; b++) {
			e.word[i] |= (uint64_t)bytes[i * 8 + b] << (8 * b);
			e.mask[i] |= (uint64_t)mask[i * 8 + b] << (8 * b);
		}
	e.nwords = (uint32_t)(k->n + 1 + 7) / 8;
	return e;
}

static bool model_env(struct tr_kernel_rules *m, const struct word *k)
{
	struct tr_env_key e;

	if (k->n == 0 || k->n > 63 || (k->p[0] >= '0' && k->p[0] <= '9'))
		return false;
	for (size_t i = 0; i < k->n; i++) {
		char c = k->p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	e = encode_key(k);
	for (uint32_t i = 0; i < m->n_env; i++)
		if (!memcmp(&m->env[i], &e, sizeof(e)))
			return true; /* already there: nothing added */
	if (m->n_env == TR_RULES_ENV_MAX)
		return false;
	m->env[m->n_env++] = e;
	return true;
}

/* A number: decimal digits only, at most 0xfffffffe (uid -1 means "none" to the kernel). */
static bool model_uid(struct tr_rule_set *s, const struct word *v)
{
	uint64_t uid = 0;

	if (v->n == 0)
		return false;
	for (size_t i = 0; i < v->n; i++) {
		if (v->p[i] < '0' || v->p[i] > '9')
			return false;
		uid = uid * 10 + (uint64_t)(v->p[i] - '0');
		if (uid > 0xfffffffeULL)
			return false;
	}
	s->uid[s->n_uid++] = (uint32_t)uid;
	return true;
}

static bool model_exe(struct tr_rule_set *s, const struct word *v)
{
	if (v->n >= TR_RULES_EXE_LEN || memchr(v->p, '/', v->n))
		return false;
	memcpy(s->exe[s->n_exe++], v->p, v->n);
	return true;
}

/* The depth of a directory in its hierarchy: its real path's ancestors on the same filesystem. */
static int depth_on(const char *path, dev_t dev)
{
	char real[PATH_MAX];
	struct stat st;
	int level = 0;

	if (!realpath(path, real))
		return -1;
	for (;;) {
		char *slash = strrchr(real, '/');

		if (!slash || slash == real)
			return level; /* "/" itself would be a hierarchy mounted on the root */
		*slash = 0;
		if (stat(real, &st) || st.st_dev != dev)
			return level;
		level++;
	}
}

static bool model_cgroup(struct tr_rule_set *s, const struct word *v)
{
	char path[PATH_MAX];
	struct stat st;
	int level;

	if (v->n >= sizeof(path))
		return false;
	memcpy(path, v->p, v->n);
	path[v->n] = 0;
	if (stat(path, &st) || !S_ISDIR(st.st_mode) || !st.st_dev ||
	    (st.st_dev != f.v2_dev && st.st_dev != f.v1_memory_dev))
		return false;
	level = depth_on(path, st.st_dev);
	if (level < 0 || level >= CGROUP_LEVEL_MAX)
		return false;
	s->cgroup[s->n_cgroup++] = (struct tr_cgroup_rule){ .id = st.st_ino, .v1 = st.st_dev == f.v1_memory_dev,
							    .level = (uint32_t)level };
	return true;
}

static bool model_line(struct tr_kernel_rules *m, const char *line, size_t len)
{
	struct word w[3];
	size_t count, n = split(line, len, w, 3, &count);
	struct tr_rule_set *s;
	uint32_t have;

	if (count == 0 || w[0].p[0] == '#')
		return true;
	if (word_is(&w[0], "env") && count == 2)
		return model_env(m, &w[1]);
	if (count != 3 || n != 3 || !(word_is(&w[0], "include") || word_is(&w[0], "exclude")))
		return false;
	s = word_is(&w[0], "exclude") ? &m->exclude : &m->include;
	have = word_is(&w[1], "exe") ? s->n_exe : word_is(&w[1], "uid") ? s->n_uid :
	       word_is(&w[1], "cgroup") ? s->n_cgroup : TR_RULES_PER_KIND;
	if (have >= TR_RULES_PER_KIND)
		return false; /* an unknown kind, or one too many */
	if (word_is(&w[1], "exe"))
		return model_exe(s, &w[2]);
	if (word_is(&w[1], "uid"))
		return model_uid(s, &w[2]);
	return model_cgroup(s, &w[2]);
}

/* The model's rules for text; the first line it refuses, or 0. */
static unsigned model(const char *text, size_t len, struct tr_kernel_rules *m)
{
	unsigned line = 0;

	*m = builtin;
	for (size_t off = 0; off <= len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;

		line++;
		if (!model_line(m, text + off, n))
			return line;
		if (!nl)
			break;
		off += n + 1;
	}
	return 0;
}

/* ---- invariants of any result --------------------------------------------------- */

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void check_set(const struct tr_rule_set *s)
{
	CHECK(s->n_exe <= TR_RULES_PER_KIND && s->n_uid <= TR_RULES_PER_KIND && s->n_cgroup <= TR_RULES_PER_KIND);
	CHECK(s->pad == 0);
	for (uint32_t i = 0; i < TR_RULES_PER_KIND; i++) {
		const char *e = s->exe[i];
		size_t n = strnlen(e, TR_RULES_EXE_LEN);

		CHECK(n < TR_RULES_EXE_LEN);
		CHECK(all_zero(e + n, TR_RULES_EXE_LEN - n));
		if (i >= s->n_exe) {
			CHECK(n == 0);
		} else {
			CHECK(n > 0);
			CHECK(!memchr(e, '/', n) && !memchr(e, ' ', n) && !memchr(e, '\t', n) && !memchr(e, '\r', n) &&
			      !memchr(e, '\n', n));
		}
		if (i >= s->n_uid)
			CHECK(s->uid[i] == 0);
		else
			CHECK(s->uid[i] != 0xffffffffu);
		if (i >= s->n_cgroup)
			CHECK(all_zero(&s->cgroup[i], sizeof(s->cgroup[i])));
		else
			CHECK(s->cgroup[i].id != 0 && s->cgroup[i].v1 <= 1 && s->cgroup[i].level < CGROUP_LEVEL_MAX);
	}
}

static void check_key(const struct tr_env_key *e)
{
	const uint8_t *w = (const uint8_t *)e->word, *m = (const uint8_t *)e->mask;
	size_t n = 0;

	while (n < sizeof(e->word) && w[n] && w[n] != '=')
		n++;
	CHECK(n > 0 && n < sizeof(e->word) && w[n] == '=');
	CHECK(!(w[0] >= '0' && w[0] <= '9'));
	for (size_t i = 0; i < n; i++)
		CHECK((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= 'A' && w[i] <= 'Z') || (w[i] >= '0' && w[i] <= '9') ||
		      w[i] == '_');
	for (size_t i = 0; i < sizeof(e->word); i++) {
		CHECK(m[i] == (i <= n ? 0xff : 0));
		if (i > n)
			CHECK(w[i] == 0);
	}
	CHECK(e->nwords == (n + 1 + 7) / 8);
	CHECK(e->pad == 0);
}

static void check_rules(const struct tr_kernel_rules *r)
{
	check_set(&r->exclude);
	check_set(&r->include);
	CHECK(r->pad == 0);
	CHECK(r->n_env >= builtin.n_env && r->n_env <= TR_RULES_ENV_MAX);
	CHECK(!memcmp(r->env, builtin.env, builtin.n_env * sizeof(r->env[0])));
	for (uint32_t i = 0; i < TR_RULES_ENV_MAX; i++) {
		if (i >= r->n_env) {
			CHECK(all_zero(&r->env[i], sizeof(r->env[i])));
			continue;
		}
		check_key(&r->env[i]);
		for (uint32_t j = 0; j < i; j++)
			CHECK(memcmp(&r->env[j], &r->env[i], sizeof(r->env[i])));
	}
}

/* ---- the target ---------------------------------------------------------------------- */

/* What rules_parse wrote on stderr while parsing text (a copy, changed in place). */
static int parse(const uint8_t *data, size_t size, char **log, size_t *log_len)
{
	FILE *real = stderr;
	char *text = malloc(size + 1);
	int rc;

	CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = 0;
	stderr = open_memstream(log, log_len);
	CHECK(stderr != NULL);
	rc = rules_parse(&f, text);
	CHECK(fclose(stderr) == 0);
	stderr = real;
	free(text);
	return rc;
}

static void init_once(void)
{
	static bool done;
	char *log = NULL;
	size_t len = 0;

	if (done)
		return;
	/* No file: finds the cgroup hierarchies, as the collector does at start, and reads nothing. */
	CHECK(rules_init(&f, NULL) == 0);
	builtin = f.next;
	CHECK(builtin.n_env > 0);
	f.path = "fuzz";
	CHECK(parse((const uint8_t *)"", 0, &log, &len) == 0 && len == 0);
	free(log);
	CHECK(!memcmp(&f.next, &builtin, sizeof(builtin)));
	check_rules(&builtin);
	done = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tr_kernel_rules want, first;
	char *log = NULL, *log2 = NULL, prefix[32];
	size_t log_len = 0, log2_len = 0;
	unsigned bad;
	int rc, rc2;

	init_once();
	if (size > READ_MAX_RULES || memchr(data, 0, size))
		return 0; /* read_file refuses it: never parsed */
	bad = model((const char *)data, size, &want);
	rc = parse(data, size, &log, &log_len);
	CHECK(rc == 0 || rc == -1);
	check_rules(&f.next);
	first = f.next;
	if (rc == 0) {
		if (bad) {
			dprintf(2, "invariant failed: accepted, but line %u is not in the documented format\n", bad);
			abort();
		}
		CHECK(log_len == 0);
		CHECK(!memcmp(&f.next, &want, sizeof(want)));
	} else {
		int n = snprintf(prefix, sizeof(prefix), "<3>fuzz:%u: ", bad);

		if (!bad || log_len < (size_t)n || memcmp(log, prefix, (size_t)n)) {
			dprintf(2, "invariant failed: refused with '%.*s'; the model refuses line %u first\n",
				(int)log_len, log, bad);
			abort();
		}
		CHECK(log[log_len - 1] == '\n' && memchr(log, '\n', log_len) == log + log_len - 1);
	}
	/* The same text again: the same verdict, message and rules. */
	rc2 = parse(data, size, &log2, &log2_len);
	CHECK(rc2 == rc);
	CHECK(log2_len == log_len && !memcmp(log, log2, log_len));
	CHECK(!memcmp(&f.next, &first, sizeof(first)));
	free(log);
	free(log2);
	return 0;
}
