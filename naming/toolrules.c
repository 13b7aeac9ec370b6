/* SPDX-License-Identifier: Apache-2.0 */
#include "toolrules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The text is parsed twice with the same code: the first pass validates it
 * and counts what it holds, the second fills one allocation of exactly that
 * size. The second pass cannot fail, so a load either replaces every rule
 * or none.
 */

#define MAX_WORDS 80u /* words on one line: tool NAME when + 8 conditions, or 2 option lists of 32 */

struct tok {
	const char *s; /* raw bytes (between the quotes when quoted) */
	size_t len;
	unsigned col;  /* 1-based byte column of its first byte (of the opening quote) */
	bool quoted;
};

struct counts {
	uint32_t tools, conds, renames, interps, subcmds, opts; /* opts: option pointers, NULL terminators included */
	size_t bytes;                                           /* string bytes, NULs included */
};

struct parser {
	const char *source;
	char *err;
	size_t errsize;
	unsigned line;
	uint32_t rules;
	bool fill;      /* second pass: the arrays below are allocated */
	struct counts n;
	struct toolrule_tool *tools;
	struct toolrule_cond *conds;
	struct toolrule_rename *renames;
	struct tool_interp_rule *interps;
	struct tool_subcmd_rule *subcmds;
	const char **opts;
	char *str;
};

__attribute__((format(printf, 4, 5))) static int fail(struct parser *ps, unsigned col, int rc, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!ps->err || ps->errsize == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->line)
		snprintf(ps->err, ps->errsize, "%s:%u:%u: %s", ps->source, ps->line, col, msg);
	else /* about the whole text */
		snprintf(ps->err, ps->errsize, "%s: %s", ps->source, msg);
	return rc;
}

/* A token's text for a message: printable ASCII, at most 40 bytes, "..." after. */
static const char *shown(const struct tok *t, char buf[48])
{
	size_t n = t->len < 40 ? t->len : 40, i;

	for (i = 0; i < n; i++)
		buf[i] = t->s[i] >= 0x20 && t->s[i] < 0x7f ? t->s[i] : '?';
	strcpy(buf + i, t->len > 40 ? "..." : "");
	return buf;
}

static bool word_is(const struct tok *t, const char *w)
{
	return !t->quoted && t->len == strlen(w) && !memcmp(t->s, w, t->len);
}

/* ------------------------------------------------------------------ */
/* Words                                                              */
/* ------------------------------------------------------------------ */

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Split one line (no newline in it) into words. Returns 0 or a negative errno (reported). */
static int split(struct parser *ps, const char *s, size_t len, struct tok *w, size_t *nw)
{
	size_t i = 0;

	*nw = 0;
	while (i < len) {
		struct tok t = { .col = (unsigned)i + 1 };

		if (s[i] == ' ' || s[i] == '\t') {
			i++;
			continue;
		}
		if (s[i] == '#')
			break;
		if (*nw == MAX_WORDS)
			return fail(ps, t.col, -EINVAL, "too many words on one line (at most %u)", MAX_WORDS);
		if (s[i] == '"') {
			t.quoted = true;
			t.s = s + ++i;
			while (i < len && s[i] != '"') {
				if (s[i] == '\\') {
					if (i + 1 >= len || (s[i + 1] != '"' && s[i + 1] != '\\'))
						return fail(ps, (unsigned)i + 1, -EINVAL,
							    "only \\\" and \\\\ may follow a backslash in quotes");
					i++;
				} else if (is_control((unsigned char)s[i])) {
					return fail(ps, (unsigned)i + 1, -EINVAL, "control character 0x%02x",
						    (unsigned char)s[i]);
				}
				i++;
			}
			if (i >= len)
				return fail(ps, t.col, -EINVAL, "quote not closed on this line");
			t.len = (size_t)(s + i - t.s);
			i++;
			if (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
				return fail(ps, (unsigned)i + 1, -EINVAL, "a space must follow a closing quote");
		} else {
			t.s = s + i;
			while (i < len && s[i] != ' ' && s[i] != '\t') {
				if (s[i] == '"')
					return fail(ps, (unsigned)i + 1, -EINVAL,
						    "a quote inside a word (quote the whole word: \"a b\")");
				if (is_control((unsigned char)s[i]))
					return fail(ps, (unsigned)i + 1, -EINVAL, "control character 0x%02x",
						    (unsigned char)s[i]);
				i++;
			}
			t.len = (size_t)(s + i - t.s);
		}
		w[(*nw)++] = t;
	}
	return 0;
}

/* The decoded bytes of t (escapes resolved) into the string area; counted only in the first pass. */
static const char *keep(struct parser *ps, const char *s, size_t len, bool quoted)
{
	char *d;

	if (!ps->fill) {
		ps->n.bytes += len + 1;
		return NULL;
	}
	d = ps->str;
	for (size_t i = 0; i < len; i++) {
		if (quoted && s[i] == '\\')
			i++;
		*ps->str++ = s[i];
	}
	*ps->str++ = 0;
	return d;
}

/* Decoded length of a token. */
static size_t decoded_len(const struct tok *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->len; i++, n++)
		if (t->quoted && t->s[i] == '\\')
			i++;
	return n;
}

/* ------------------------------------------------------------------ */
/* Rules                                                              */
/* ------------------------------------------------------------------ */

static unsigned end_col(const struct tok *w, size_t nw)
{
	const struct tok *last = &w[nw - 1];

	return last->col + (unsigned)last->len + (last->quoted ? 2 : 0); /* just past it */
}

static int check_name(struct parser *ps, const struct tok *t, const char *what, bool basename)
{
	size_t n = decoded_len(t);
	char b[48];

	if (n == 0)
		return fail(ps, t->col, -EINVAL, "empty %s", what);
	if (n >= TOOL_NAME_MAX)
		return fail(ps, t->col, -EINVAL, "%s longer than %u bytes: %s", what, TOOL_NAME_MAX - 1, shown(t, b));
	if (basename && memchr(t->s, '/', t->len))
		return fail(ps, t->col, -EINVAL, "%s is a basename, without '/': %s", what, shown(t, b));
	return 0;
}

static int check_glob(struct parser *ps, size_t n, unsigned col)
{
	if (n == 0)
		return fail(ps, col, -EINVAL, "empty pattern");
	if (n > TOOLRULES_GLOB_MAX)
		return fail(ps, col, -EINVAL, "pattern longer than %u bytes", TOOLRULES_GLOB_MAX);
	return 0;
}

static const struct {
	const char *name;
	enum toolrule_field field;
} fields[] = {
	{ "exe", TOOLRULE_EXE }, { "name", TOOLRULE_NAME }, { "arg0", TOOLRULE_ARG0 },
	{ "arg", TOOLRULE_ARG }, { "tool", TOOLRULE_TOOL },
};

/* tool NAME when FIELD=GLOB... (or run NAME when ...: is_run) */
static int rule_tool(struct parser *ps, const struct tok *w, size_t nw, bool is_run)
{
	struct toolrule_tool *r = ps->fill ? &ps->tools[ps->n.tools] : NULL;
	const char *kw = is_run ? "run" : "tool";
	char b[48];
	int rc;

	if (nw < 2)
		return fail(ps, end_col(w, nw), -EINVAL, "%s: the NAME to give is missing", kw);
	if ((rc = check_name(ps, &w[1], is_run ? "run name" : "tool name", false)))
		return rc;
	if (nw < 3 || !word_is(&w[2], "when"))
		return fail(ps, nw < 3 ? end_col(w, nw) : w[2].col, -EINVAL,
			    "%s: expected 'when' after the name%s%s", kw, nw < 3 ? "" : ", not ",
			    nw < 3 ? "" : shown(&w[2], b));
	if (nw < 4)
		return fail(ps, end_col(w, nw), -EINVAL, "%s: at least one condition FIELD=GLOB after 'when'", kw);
	if (nw - 3 > TOOLRULES_MAX_CONDS)
		return fail(ps, w[3 + TOOLRULES_MAX_CONDS].col, -EINVAL, "%s: more than %u conditions",
			    kw, TOOLRULES_MAX_CONDS);
	if (r)
		*r = (struct toolrule_tool){ .name = keep(ps, w[1].s, w[1].len, w[1].quoted),
					     .conds = &ps->conds[ps->n.conds], .n_conds = (uint32_t)(nw - 3),
					     .line = ps->line, .run = is_run };
	else
		keep(ps, w[1].s, w[1].len, w[1].quoted);
	for (size_t i = 3; i < nw; i++) {
		const struct tok *t = &w[i];
		const char *eq = memchr(t->s, '=', t->len);
		size_t flen = eq ? (size_t)(eq - t->s) : 0, f;
		struct tok glob;

		if (!eq)
			return fail(ps, t->col, -EINVAL, "expected FIELD=GLOB (exe, name, arg0, arg or tool), not %s",
				    shown(t, b));
		for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (strlen(fields[f].name) == flen && !memcmp(fields[f].name, t->s, flen))
				break;
		if (f == sizeof(fields) / sizeof(fields[0])) {
			struct tok name = { .s = t->s, .len = flen };

			return fail(ps, t->col + (t->quoted ? 1 : 0), -EINVAL,
				    "unknown field '%s' (expected exe, name, arg0, arg or tool)", shown(&name, b));
		}
		glob = (struct tok){ .s = eq + 1, .len = t->len - flen - 1, .quoted = t->quoted };
		if ((rc = check_glob(ps, decoded_len(&glob), t->col + (unsigned)flen + 1 + (t->quoted ? 1 : 0))))
			return rc;
		if (ps->fill)
			ps->conds[ps->n.conds] = (struct toolrule_cond){ .field = fields[f].field,
									 .glob = keep(ps, glob.s, glob.len, glob.quoted) };
		else
			keep(ps, glob.s, glob.len, glob.quoted);
		ps->n.conds++;
	}
	ps->n.tools++;
	return 0;
}

/* Option lists after the name: KEYWORD OPT... where KEYWORD is "value" or (interpreters) "code". */
static int rule_options(struct parser *ps, const struct tok *w, size_t nw, bool with_code,
			const char *const **value, const char *const **code)
{
	const char **list[2] = { NULL, NULL }; /* value, code: where the next option goes (second pass) */
	size_t count[2] = { 0, 0 };
	int mode = -1;
	char b[48];

	/* Each list is laid out whole in ps->opts, so count first, then place. */
	for (size_t i = 2; i < nw; i++) {
		if (word_is(&w[i], "value") || (with_code && word_is(&w[i], "code"))) {
			mode = word_is(&w[i], "value") ? 0 : 1;
			continue;
		}
		if (mode < 0)
			return fail(ps, w[i].col, -EINVAL, "expected %s before %s", with_code ? "'value' or 'code'" : "'value'",
				    shown(&w[i], b));
		if (w[i].len < 2 || w[i].s[0] != '-' || memchr(w[i].s, '=', w[i].len) || w[i].quoted)
			return fail(ps, w[i].col, -EINVAL, "not an option (-x, -word or --long, without '='): %s",
				    shown(&w[i], b));
		if (w[i].len > TOOLRULES_OPT_MAX)
			return fail(ps, w[i].col, -EINVAL, "option longer than %u bytes", TOOLRULES_OPT_MAX);
		if (++count[mode] > TOOLRULES_MAX_OPTS)
			return fail(ps, w[i].col, -EINVAL, "more than %u options in one list", TOOLRULES_MAX_OPTS);
	}
	for (int m = 0; m < 2; m++) {
		if (!count[m])
			continue;
		if (ps->fill)
			list[m] = &ps->opts[ps->n.opts];
		ps->n.opts += (uint32_t)count[m] + 1;
	}
	mode = -1;
	for (size_t i = 2; i < nw; i++) {
		if (word_is(&w[i], "value") || (with_code && word_is(&w[i], "code"))) {
			mode = word_is(&w[i], "value") ? 0 : 1;
			continue;
		}
		if (mode >= 0 && list[mode])
			*list[mode]++ = keep(ps, w[i].s, w[i].len, false);
		else
			keep(ps, w[i].s, w[i].len, false);
	}
	for (int m = 0; m < 2 && ps->fill; m++)
		if (list[m])
			*list[m] = NULL;
	if (ps->fill) {
		*value = count[0] ? list[0] - count[0] : NULL;
		*code = count[1] ? list[1] - count[1] : NULL;
	}
	return 0;
}

static int rule_table(struct parser *ps, const struct tok *w, size_t nw, bool interp)
{
	const char *const *value = NULL, *const *code = NULL;
	const char *name;
	int rc;

	if (nw < 2)
		return fail(ps, end_col(w, nw), -EINVAL, "%s: the NAME is missing", interp ? "interpreter" : "subcommand");
	if ((rc = check_name(ps, &w[1], interp ? "interpreter name" : "tool name", true)))
		return rc;
	name = keep(ps, w[1].s, w[1].len, w[1].quoted);
	if ((rc = rule_options(ps, w, nw, interp, &value, &code)))
		return rc;
	if (interp) {
		if (ps->fill)
			ps->interps[ps->n.interps] =
				(struct tool_interp_rule){ .name = name, .value_opts = value, .code_opts = code };
		ps->n.interps++;
	} else {
		if (ps->fill)
			ps->subcmds[ps->n.subcmds] = (struct tool_subcmd_rule){ .name = name, .value_opts = value };
		ps->n.subcmds++;
	}
	return 0;
}

/* rename FROM TO */
static int rule_rename(struct parser *ps, const struct tok *w, size_t nw)
{
	char b[48];
	int rc;

	if (nw < 3)
		return fail(ps, end_col(w, nw), -EINVAL, "rename: expected FROM and TO");
	if (nw > 3)
		return fail(ps, w[3].col, -EINVAL, "rename: unexpected %s after FROM TO", shown(&w[3], b));
	if ((rc = check_glob(ps, decoded_len(&w[1]), w[1].col)) || (rc = check_name(ps, &w[2], "new name", false)))
		return rc;
	if (ps->fill) {
		struct toolrule_rename *r = &ps->renames[ps->n.renames];

		r->from = keep(ps, w[1].s, w[1].len, w[1].quoted);
		r->to = keep(ps, w[2].s, w[2].len, w[2].quoted);
	} else {
		keep(ps, w[1].s, w[1].len, w[1].quoted);
		keep(ps, w[2].s, w[2].len, w[2].quoted);
	}
	ps->n.renames++;
	return 0;
}

static int parse_line(struct parser *ps, const char *s, size_t len)
{
	struct tok w[MAX_WORDS];
	size_t nw;
	char b[48];
	int rc;

	if ((rc = split(ps, s, len, w, &nw)) || nw == 0)
		return rc;
	if (w[0].quoted)
		return fail(ps, w[0].col, -EINVAL, "a rule starts with tool, run, interpreter, subcommand or rename");
	if (++ps->rules > TOOLRULES_MAX_RULES)
		return fail(ps, w[0].col, -E2BIG, "more than %u rules", TOOLRULES_MAX_RULES);
	if (word_is(&w[0], "tool"))
		return rule_tool(ps, w, nw, false);
	if (word_is(&w[0], "run"))
		return rule_tool(ps, w, nw, true);
	if (word_is(&w[0], "interpreter"))
		return rule_table(ps, w, nw, true);
	if (word_is(&w[0], "subcommand"))
		return rule_table(ps, w, nw, false);
	if (word_is(&w[0], "rename"))
		return rule_rename(ps, w, nw);
	return fail(ps, w[0].col, -EINVAL, "unknown rule '%s' (expected tool, run, interpreter, subcommand or rename)",
		    shown(&w[0], b));
}

static int parse(struct parser *ps, const char *text, size_t len)
{
	size_t i = 0;

	ps->line = 0;
	ps->rules = 0;
	memset(&ps->n, 0, sizeof(ps->n));
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - i;
		const char *nul = memchr(text + i, 0, n);
		int rc;

		ps->line++;
		if (nul)
			return fail(ps, (unsigned)(nul - (text + i)) + 1, -EINVAL, "NUL byte in the text");
		if (n > 0 && text[end - 1] == '\r') /* CRLF line ends */
			n--;
		if ((rc = parse_line(ps, text + i, n)))
			return rc;
		i = end + 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Loading                                                            */
/* ------------------------------------------------------------------ */

void toolrules_init(struct toolrules *tr)
{
	memset(tr, 0, sizeof(*tr));
}

void toolrules_free(struct toolrules *tr)
{
	uint64_t loads = tr->loads;

	free(tr->mem);
	toolrules_init(tr);
	tr->loads = loads;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int toolrules_load_as(struct toolrules *tr, const char *source, const char *text, size_t len, char *err,
		      size_t errsize)
{
	struct parser ps = { .source = source ? source : "<rules>", .err = err, .errsize = errsize };
	struct counts n;
	size_t size, off[7];
	char *mem;
	int rc;

	if (err && errsize)
		err[0] = 0;
	if (len > TOOLRULES_MAX_TEXT)
		return fail(&ps, 0, -E2BIG, "rules text of %zu bytes (at most %u)", len, TOOLRULES_MAX_TEXT);
	if (len && !text)
		return -EINVAL;
	if ((rc = parse(&ps, text, len)))
		return rc;
	n = ps.n;
	/* One block: the arrays (8-byte aligned), then the strings. */
	off[0] = 0;
	off[1] = off[0] + align8(n.tools * sizeof(struct toolrule_tool));
	off[2] = off[1] + align8(n.conds * sizeof(struct toolrule_cond));
	off[3] = off[2] + align8(n.renames * sizeof(struct toolrule_rename));
	off[4] = off[3] + align8(n.interps * sizeof(struct tool_interp_rule));
	off[5] = off[4] + align8(n.subcmds * sizeof(struct tool_subcmd_rule));
	off[6] = off[5] + align8(n.opts * sizeof(const char *));
	size = off[6] + n.bytes;
	mem = malloc(size ? size : 1);
	if (!mem)
		return -ENOMEM;
	ps.fill = true;
	ps.tools = (struct toolrule_tool *)(void *)(mem + off[0]);
	ps.conds = (struct toolrule_cond *)(void *)(mem + off[1]);
	ps.renames = (struct toolrule_rename *)(void *)(mem + off[2]);
	ps.interps = (struct tool_interp_rule *)(void *)(mem + off[3]);
	ps.subcmds = (struct tool_subcmd_rule *)(void *)(mem + off[4]);
	ps.opts = (const char **)(void *)(mem + off[5]);
	ps.str = mem + off[6];
	rc = parse(&ps, text, len);
	if (rc || memcmp(&ps.n, &n, sizeof(n) - sizeof(n.bytes)) || ps.str > mem + size) {
		/* Cannot happen: both passes run the same code on the same bytes. */
		free(mem);
		return rc ? rc : -EINVAL;
	}
	free(tr->mem);
	tr->mem = mem;
	tr->tools = ps.tools;
	tr->n_tools = n.tools;
	tr->renames = ps.renames;
	tr->n_renames = n.renames;
	tr->extra = (struct tool_extra){ .interps = ps.interps, .n_interps = n.interps,
					 .subcmds = ps.subcmds, .n_subcmds = n.subcmds };
	tr->rules = ps.rules;
	tr->loads++;
	return 0;
}

int toolrules_load(struct toolrules *tr, const char *text, size_t len, char *err, size_t errsize)
{
	return toolrules_load_as(tr, NULL, text, len, err, errsize);
}

/* ------------------------------------------------------------------ */
/* Naming                                                             */
/* ------------------------------------------------------------------ */

static bool cond_holds(const struct toolrule_cond *c, const char *exe, const char *const *argv, size_t argc,
		       const char *builtin)
{
	switch (c->field) {
	case TOOLRULE_EXE:
		return tool_glob(c->glob, exe ? exe : "");
	case TOOLRULE_NAME:
		return tool_glob(c->glob, exe && *exe ? tool_basename(exe) : argc ? tool_basename(argv[0]) : "");
	case TOOLRULE_ARG0:
		return argc > 0 && tool_glob(c->glob, argv[0]);
	case TOOLRULE_ARG:
		for (size_t i = 1; i < argc; i++)
			if (tool_glob(c->glob, argv[i]))
				return true;
		return false;
	case TOOLRULE_TOOL:
		return tool_glob(c->glob, builtin);
	}
	return false;
}

static size_t copy_out(char *out, size_t size, const char *a, size_t alen, const char *rest)
{
	int n;

	if (size == 0)
		return 0;
	n = snprintf(out, size, "%.*s%s", (int)alen, a, rest);
	if (n < 0) {
		out[0] = 0;
		return 0;
	}
	return (size_t)n < size ? (size_t)n : size - 1;
}

size_t toolrules_name(const struct toolrules *tr, const char *exe, const char *const *argv, size_t argc, char *out,
		      size_t size)
{
	char name[TOOL_NAME_MAX], first[TOOL_NAME_MAX];
	size_t len, wlen;

	if (!tr || !tr->rules)
		return tool_name(exe, argv, argc, out, size);
	len = tool_name_with(&tr->extra, exe, argv, argc, name, sizeof(name));
	for (uint32_t i = 0; i < tr->n_tools; i++) {
		const struct toolrule_tool *r = &tr->tools[i];
		uint32_t c;

		if (r->run)
			continue;
		for (c = 0; c < r->n_conds; c++)
			if (!cond_holds(&r->conds[c], exe, argv, argc, name))
				break;
		if (c == r->n_conds)
			return copy_out(out, size, r->name, strlen(r->name), "");
	}
	wlen = strcspn(name, " ");
	memcpy(first, name, wlen);
	first[wlen] = 0;
	for (uint32_t i = 0; i < tr->n_renames; i++)
		if (tool_glob(tr->renames[i].from, first))
			return copy_out(out, size, tr->renames[i].to, strlen(tr->renames[i].to), name + wlen);
	return copy_out(out, size, name, len, "");
}

const char *toolrules_run(const struct toolrules *tr, const char *exe, const char *const *argv, size_t argc)
{
	char name[TOOL_NAME_MAX];

	if (!tr || !tr->rules)
		return NULL;
	tool_name_with(&tr->extra, exe, argv, argc, name, sizeof(name));
	for (uint32_t i = 0; i < tr->n_tools; i++) {
		const struct toolrule_tool *r = &tr->tools[i];
		uint32_t c;

		if (!r->run)
			continue;
		for (c = 0; c < r->n_conds; c++)
			if (!cond_holds(&r->conds[c], exe, argv, argc, name))
				break;
		if (c == r->n_conds)
			return r->name;
	}
	return NULL;
}
