/* SPDX-License-Identifier: Apache-2.0 */
#include "redact.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * How it works. Every string is walked once, left to right, with a small
 * shell-like tracker (quotes, backslashes, command separators). At each
 * place a name or a token can start, rules look ahead and either register
 * one span [a, b) - the secret, at or after the current place - or leave
 * the bytes alone. The walk copies up to a, writes the marker and goes on
 * at b with the tracker as it was at a; no other rule runs before a, so
 * spans never overlap.
 *
 * Redacting twice is redacting once (the fuzz target checks it), because:
 *   - look-behind (is this a word start, a token boundary?) reads the
 *     output written so far, which a second pass reads as its input;
 *   - a rule that redacted a value redacts its marker again, with the same
 *     span ('*' is neither a separator nor a token character, so a marker
 *     never starts or extends anything else);
 *   - a rule that read bytes and decided to keep them freezes them: no
 *     later rule may redact inside, or a second pass would read other
 *     bytes and decide otherwise (see freeze()).
 *
 * State carried from one word to the next: an option that takes the next
 * word as its secret (pending), the program of the current command (for
 * program-specific short options: mysql -p), and whether the next argument
 * is a shell script (after -c).
 */

#define NAME_MAX_LEN 128 /* longer runs of name characters are data, not names */
#define PARTS_MAX 64

/* ------------------------------------------------------------------ */
/* Tables                                                             */
/* ------------------------------------------------------------------ */

/* A name part ending with one of these names a secret: dbpassword, authtoken, client-secret. */
static const char *const strong_endings[] = {
	"password", "passwords", "passwd", "passphrase", "secret", "secrets", "token", "credential", "credentials",
	"creds", "apikey", "accesskey", "secretkey", "authkey", "signingkey", "masterkey", "bearer", "cookie",
	"cookies", "signature", "authorization", "auth", NULL,
};

/* Whole parts that name a secret. */
static const char *const strong_parts[] = {
	"sig", "storepass", "keypass", "srcstorepass", "deststorepass", "srckeypass", "destkeypass", NULL,
};

/* A first part that makes a flag, a count or a switch of it: --no-password, --max-tokens, --ask-pass. */
static const char *const flag_prefixes[] = {
	"no", "ask", "prompt", "skip", "disable", "enable", "with", "without", "max", "min", "num", "n", "show",
	"print", "generate", "gen", "require", "requires", "allow", "keep", "use", "has", "is", "save", "store",
	"remember", "reset", "forget", "clear", "check", "insecure", NULL,
};

/* A last part that makes it a reference to the secret, or a property of it: --password-file, --token-url. */
static const char *const ref_parts[] = {
	"file", "files", "path", "paths", "dir", "dirs", "directory", "folder", "fd", "env", "envvar", "var", "vars",
	"variable", "cmd", "command", "helper", "program", "prog", "prompt", "stdin", "stdout", "type", "types",
	"length", "len", "size", "bits", "mode", "policy", "algorithm", "alg", "algo", "format", "fmt", "ttl",
	"expiry", "expires", "expiration", "lifetime", "duration", "timeout", "url", "uri", "endpoint", "server",
	"host", "hostname", "port", "jar", "source", "manager", "provider", "backend", "method", "methods", "scope",
	"scopes", "audience", "issuer", "version", "kind", "prefix", "suffix", "sock", "socket", "cache", "store",
	"template", "user", "username", "owner", "group", "role", "interval", "retries", "count", "limit", "only",
	"enabled", "disabled", "required", "optional", "field", "fields", "location", NULL,
};

/*
 * The same for options only (--secret-id names a secret in a store); a
 * variable or configuration key with them still holds one (vault's
 * secret_id=...).
 */
static const char *const option_ref_parts[] = { "id", "ids", "name", "names", "ref", "arn", "label", "hint", NULL };

/* Trailing parts that say how the secret is written, not what it is: --token-value, --secret-string. */
static const char *const continuation_parts[] = {
	"value", "values", "string", "str", "data", "text", "literal", "b64", "base64", "hex", "raw", "plain",
	"plaintext", "content", "contents", NULL,
};

/* KEY qualifiers: api-key, access-key, account-key are secrets ... */
static const char *const strong_key_quals[] = {
	"api", "access", "secret", "signing", "sign", "encryption", "encrypt", "enc", "master", "auth", "session",
	"account", "shared", "storage", "hmac", "app", "admin", "service", "subscription", "consumer", "webhook",
	"deploy", "jwt", "mac", "sas", "recovery", "crypt", "crypto", "cipher", "aes", "license", "licence",
	"decryption", "wallet", "root", "write", "instrumentation", "customer", NULL,
};

/* ... private-key, ssh-key, tls-key usually name a file: redacted unless the value looks like a path. */
static const char *const weak_key_quals[] = {
	"private", "priv", "ssh", "gpg", "pgp", "tls", "ssl", "client", "host", "cert", "ca", "server", NULL,
};

/* "Name: value" with these names is redacted with or without a blank after the colon. */
static const char *const auth_headers[] = {
	"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token",
	"private-token", "x-vault-token", "x-amz-security-token", "x-goog-api-key", NULL,
};

/* The value of a secret option, or the part of it that is secret. */
enum vkind {
	V_NONE,
	V_STRONG,         /* all of it */
	V_WEAK,           /* all of it, unless it looks like a path or a number (a key file, sort -k 2,2n) */
	V_USER_COLON,     /* user:SECRET (curl -u) */
	V_USER_COMMA,     /* user,SECRET (lftp -u) */
	V_USER_PERCENT,   /* user%SECRET (smbclient -U) */
	V_AFTER_EQ,       /* name=SECRET (kubectl create secret --from-literal) */
	V_COOKIE,         /* all of it if it holds a '=' (curl -b: otherwise a file name) */
};

enum prog {
	PROG_NONE,
	PROG_MYSQL,
	PROG_SSHPASS,
	PROG_CURL,
	PROG_REDIS,
	PROG_OPENSSL,
	PROG_SMB,
	PROG_LFTP,
	PROG_HTTPIE,
	PROG_LOGIN, /* docker/podman/helm/az/cf login */
	PROG_SSHKEYGEN,
	PROG_ZIP,
	PROG_7Z,
	PROG_RAR,
	PROG_SQLCMD,
	PROG_LDAP,
	PROG_MONGO,
};

/* Programs with secret short options, by the basename of a word of the command. */
static const struct {
	const char *name;
	uint8_t prefix; /* any basename starting with name: mysqldump, mariadb-dump, ldapsearch */
	uint8_t prog;
} progs[] = {
	{ "mysql", 1, PROG_MYSQL },     { "mariadb", 1, PROG_MYSQL },    { "sshpass", 0, PROG_SSHPASS },
	{ "curl", 0, PROG_CURL },       { "redis-cli", 0, PROG_REDIS },  { "openssl", 0, PROG_OPENSSL },
	{ "smbclient", 0, PROG_SMB },   { "rpcclient", 0, PROG_SMB },    { "lftp", 0, PROG_LFTP },
	{ "http", 0, PROG_HTTPIE },     { "https", 0, PROG_HTTPIE },     { "httpie", 0, PROG_HTTPIE },
	{ "ssh-keygen", 0, PROG_SSHKEYGEN }, { "zip", 0, PROG_ZIP },     { "unzip", 0, PROG_ZIP },
	{ "7z", 0, PROG_7Z },           { "7za", 0, PROG_7Z },           { "7zr", 0, PROG_7Z },
	{ "rar", 0, PROG_RAR },         { "unrar", 0, PROG_RAR },        { "sqlcmd", 0, PROG_SQLCMD },
	{ "bcp", 0, PROG_SQLCMD },      { "ldap", 1, PROG_LDAP },        { "mongo", 1, PROG_MONGO },
};

#define GLUED 0x1    /* -pSECRET */
#define SEPARATE 0x2 /* -p SECRET */

static const struct {
	uint8_t prog;
	char letter;
	uint8_t kind;
	uint8_t how;
} short_opts[] = {
	{ PROG_MYSQL, 'p', V_STRONG, GLUED }, /* -p alone prompts; the next word is the database */
	{ PROG_SSHPASS, 'p', V_STRONG, GLUED | SEPARATE },
	{ PROG_CURL, 'u', V_USER_COLON, GLUED | SEPARATE },
	{ PROG_CURL, 'U', V_USER_COLON, GLUED | SEPARATE },
	{ PROG_CURL, 'b', V_COOKIE, GLUED | SEPARATE },
	{ PROG_REDIS, 'a', V_STRONG, GLUED | SEPARATE },
	{ PROG_OPENSSL, 'k', V_STRONG, SEPARATE },
	{ PROG_OPENSSL, 'K', V_STRONG, SEPARATE },
	{ PROG_SMB, 'U', V_USER_PERCENT, GLUED | SEPARATE },
	{ PROG_LFTP, 'u', V_USER_COMMA, GLUED | SEPARATE },
	{ PROG_HTTPIE, 'a', V_USER_COLON, GLUED | SEPARATE },
	{ PROG_LOGIN, 'p', V_STRONG, GLUED | SEPARATE },
	{ PROG_SSHKEYGEN, 'N', V_STRONG, GLUED | SEPARATE },
	{ PROG_SSHKEYGEN, 'P', V_STRONG, GLUED | SEPARATE },
	{ PROG_ZIP, 'P', V_STRONG, SEPARATE },
	{ PROG_7Z, 'p', V_STRONG, GLUED },
	{ PROG_RAR, 'p', V_STRONG, GLUED },
	{ PROG_SQLCMD, 'P', V_STRONG, GLUED | SEPARATE },
	{ PROG_LDAP, 'w', V_STRONG, GLUED | SEPARATE },
	{ PROG_MONGO, 'p', V_STRONG, GLUED | SEPARATE },
};

static const struct {
	uint8_t prog;
	const char *name;
	uint8_t kind;
} long_opts[] = {
	{ PROG_CURL, "user", V_USER_COLON },
	{ PROG_CURL, "proxy-user", V_USER_COLON },
	{ PROG_SMB, "user", V_USER_PERCENT },
	{ PROG_HTTPIE, "auth", V_USER_COLON },
};

/* Token shapes: the prefix is kept, what follows it is the secret. */
enum tclass { T_ALNUM, T_ALNUM_UNDER, T_ALNUM_DASH, T_B64URL, T_UPPER_DIGIT, T_USER };

static const struct {
	const char *prefix;
	uint8_t cls;
	uint8_t min;   /* characters of the class after the prefix, at least */
	uint8_t exact; /* exactly min, then no word character (AWS key ids) */
} token_shapes[] = {
	{ "AKIA", T_UPPER_DIGIT, 16, 1 },   { "ASIA", T_UPPER_DIGIT, 16, 1 },   { "AGPA", T_UPPER_DIGIT, 16, 1 },
	{ "AIDA", T_UPPER_DIGIT, 16, 1 },   { "AROA", T_UPPER_DIGIT, 16, 1 },   { "AIPA", T_UPPER_DIGIT, 16, 1 },
	{ "ANPA", T_UPPER_DIGIT, 16, 1 },   { "ANVA", T_UPPER_DIGIT, 16, 1 },   { "ABIA", T_UPPER_DIGIT, 16, 1 },
	{ "ACCA", T_UPPER_DIGIT, 16, 1 },   { "ghp_", T_ALNUM, 20, 0 },         { "gho_", T_ALNUM, 20, 0 },
	{ "ghu_", T_ALNUM, 20, 0 },         { "ghs_", T_ALNUM, 20, 0 },         { "ghr_", T_ALNUM, 20, 0 },
	{ "github_pat_", T_ALNUM_UNDER, 20, 0 }, { "glpat-", T_B64URL, 20, 0 }, { "xoxa-", T_ALNUM_DASH, 10, 0 },
	{ "xoxb-", T_ALNUM_DASH, 10, 0 },   { "xoxp-", T_ALNUM_DASH, 10, 0 },   { "xoxr-", T_ALNUM_DASH, 10, 0 },
	{ "xoxs-", T_ALNUM_DASH, 10, 0 },   { "xoxe-", T_ALNUM_DASH, 10, 0 },   { "xapp-", T_ALNUM_DASH, 10, 0 },
	{ "sk_live_", T_ALNUM, 10, 0 },     { "sk_test_", T_ALNUM, 10, 0 },     { "rk_live_", T_ALNUM, 10, 0 },
	{ "rk_test_", T_ALNUM, 10, 0 },     { "whsec_", T_ALNUM, 10, 0 },       { "AIza", T_B64URL, 30, 0 },
	{ "npm_", T_ALNUM, 30, 0 },         { "hf_", T_ALNUM, 30, 0 },          { "pypi-", T_B64URL, 30, 0 },
	{ "hvs.", T_B64URL, 20, 0 },        { "hvb.", T_B64URL, 20, 0 },        { "dop_v1_", T_ALNUM, 20, 0 },
	{ "doo_v1_", T_ALNUM, 20, 0 },      { "sk-", T_B64URL, 20, 0 },
};

/* ------------------------------------------------------------------ */
/* Characters                                                         */
/* ------------------------------------------------------------------ */

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return is_lower(c) || is_upper(c);
}

static bool is_alnum(char c)
{
	return is_alpha(c) || is_digit(c);
}

static char to_lower(char c)
{
	return is_upper(c) ? (char)(c - 'A' + 'a') : c;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* NUL too: it separates words in redact_string()'s text as in an argument area. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0;
}

static bool is_quote(char c)
{
	return c == '\'' || c == '"';
}

/* Ends a shell command (or starts a subshell): the program changes after it. */
static bool is_cmdsep(char c)
{
	return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>' || c == '`' ||
	       c == '\n';
}

/* Ends a shell word. */
static bool is_word_end(char c)
{
	return is_space(c) || is_quote(c) || is_cmdsep(c);
}

/* A name may start after these: shell words, key=value lists, URL queries, "name: value", JSON. */
static bool is_sub_sep(char c)
{
	return is_word_end(c) || c == '=' || c == ',' || c == '?' || c == ':' || c == '{' || c == '[';
}

static bool is_name_start(char c)
{
	return is_alpha(c) || c == '_';
}

static bool is_name_char(char c)
{
	return is_alnum(c) || c == '_' || c == '-' || c == '.';
}

/* Inside a word, for token boundaries; '*' too, so that a marker never starts a token. */
static bool is_token_word(char c)
{
	return is_alnum(c) || c == '_' || c == '*';
}

static bool in_class(char c, enum tclass cls)
{
	switch (cls) {
	case T_ALNUM: return is_alnum(c);
	case T_ALNUM_UNDER: return is_alnum(c) || c == '_';
	case T_ALNUM_DASH: return is_alnum(c) || c == '-';
	case T_B64URL: return is_alnum(c) || c == '_' || c == '-';
	case T_UPPER_DIGIT: return is_upper(c) || is_digit(c);
	case T_USER:
		return is_alnum(c) || c == '_' || c == '-' || c == '.' || c == '+' || c == '/' || c == '=' || c == '~';
	}
	return false;
}

static bool eq_nocase(const char *a, size_t n, const char *word)
{
	size_t i;

	for (i = 0; i < n && word[i]; i++)
		if (to_lower(a[i]) != word[i])
			return false;
	return i == n && !word[i];
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

/* ------------------------------------------------------------------ */
/* Names                                                              */
/* ------------------------------------------------------------------ */

enum cls { CLS_NONE, CLS_WEAK, CLS_STRONG };

enum form {
	FORM_OPTION, /* --name VALUE, --name=VALUE: the last part decides */
	FORM_ASSIGN, /* NAME=VALUE, "name": "value", Name: value - any part may decide */
};

struct part {
	const char *p;
	size_t n;
};

static bool part_is(struct part p, const char *word)
{
	return eq_nocase(p.p, p.n, word);
}

static bool part_in(struct part p, const char *const *list)
{
	for (; *list; list++)
		if (part_is(p, *list))
			return true;
	return false;
}

static bool part_ends_with(struct part p, const char *word)
{
	size_t k = strlen(word);

	return p.n >= k && eq_nocase(p.p + p.n - k, k, word);
}

/* Split at '-', '_', '.' and camelCase (keyStorePassword, APIKey, OAuth): lower-case comparisons follow. */
static size_t split_parts(const char *name, size_t n, struct part *parts)
{
	size_t np = 0, start = 0;

	for (size_t i = 0; i <= n; i++) {
		bool cut = i == n || name[i] == '-' || name[i] == '_' || name[i] == '.';
		bool camel = !cut && i > start && is_upper(name[i]) &&
			     (is_lower(name[i - 1]) || is_digit(name[i - 1]) ||
			      (is_upper(name[i - 1]) && i + 1 < n && is_lower(name[i + 1])));

		if (!cut && !camel)
			continue;
		if (i > start && np < PARTS_MAX)
			parts[np++] = (struct part){ name + start, i - start };
		start = cut ? i + 1 : i;
	}
	return np;
}

static bool is_strong_part(struct part p)
{
	/* noauth, nopassword: a switch */
	if (p.n > 2 && eq_nocase(p.p, 2, "no")) {
		struct part rest = { p.p + 2, p.n - 2 };

		if (part_in(rest, strong_endings) || part_is(rest, "pass"))
			return false;
	}
	for (const char *const *w = strong_endings; *w; w++)
		if (part_ends_with(p, *w))
			return true;
	return part_in(p, strong_parts);
}

static bool all_digits(struct part p)
{
	for (size_t i = 0; i < p.n; i++)
		if (!is_digit(p.p[i]))
			return false;
	return p.n > 0;
}

/* The key rules: api-key is a secret, private-key usually a file, sort-key neither. */
static enum cls classify_key(const struct part *parts, size_t head)
{
	struct part h = parts[head];

	if (part_is(h, "key") || part_is(h, "keys")) {
		if (head == 0)
			return CLS_WEAK; /* --key: sort -k, a file, or a secret */
		if (part_in(parts[head - 1], strong_key_quals) || is_strong_part(parts[head - 1]))
			return CLS_STRONG;
		return part_in(parts[head - 1], weak_key_quals) ? CLS_WEAK : CLS_NONE;
	}
	if (h.n > 3 && part_ends_with(h, "key")) { /* apikey, privatekey, sshkey */
		struct part q = { h.p, h.n - 3 };

		if (part_in(q, strong_key_quals))
			return CLS_STRONG;
		if (part_in(q, weak_key_quals))
			return CLS_WEAK;
	}
	return CLS_NONE;
}

static enum cls classify_parts(const struct part *parts, size_t np, enum form form)
{
	size_t head = np - 1;
	enum cls c;

	if (np > 1 && part_in(parts[0], flag_prefixes))
		return CLS_NONE;
	/* access-key-id: the id half of a credential pair */
	if (np >= 3 && part_is(parts[np - 1], "id") && part_is(parts[np - 2], "key") &&
	    part_in(parts[np - 3], strong_key_quals))
		return CLS_STRONG;
	if (part_in(parts[np - 1], ref_parts) || (form == FORM_OPTION && part_in(parts[np - 1], option_ref_parts)))
		return CLS_NONE;
	while (head > 0 && (part_in(parts[head], continuation_parts) || all_digits(parts[head])))
		head--;
	if (is_strong_part(parts[head]))
		return CLS_STRONG;
	if (part_is(parts[head], "pass"))
		return CLS_WEAK; /* ffmpeg -pass 1 */
	if (part_is(parts[head], "pwd") && head > 0)
		return CLS_STRONG; /* DB_PWD, not PWD */
	c = classify_key(parts, head);
	if (c != CLS_NONE || form == FORM_OPTION)
		return c;
	for (size_t i = 0; i < np; i++) /* SECRET_KEY_BASE, PASSWORD_PROD */
		if (is_strong_part(parts[i]))
			return CLS_STRONG;
	return CLS_NONE;
}

/* Compare a name with a rule's normalised text: case-insensitive, '_' as '-'. */
static bool rule_name_is(const struct redact_rule *rule, const char *name, size_t n)
{
	if (n != rule->len)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i] == '_' ? '-' : to_lower(name[i]);

		if (c != rule->text[i])
			return false;
	}
	return true;
}

/* The rules file's verdict on a name: REDACT_RULE_KEEP, REDACT_RULE_OPTION or 0. keep wins. */
static int user_verdict(const struct redact_rules *r, const char *name, size_t n)
{
	int verdict = 0;

	for (unsigned i = 0; r && i < r->n; i++) {
		const struct redact_rule *rule = &r->rule[i];

		if (rule->kind == REDACT_RULE_PATTERN || !rule_name_is(rule, name, n))
			continue;
		if (rule->kind == REDACT_RULE_KEEP)
			return REDACT_RULE_KEEP;
		verdict = REDACT_RULE_OPTION;
	}
	return verdict;
}

static enum cls classify(const struct redact_rules *r, const char *name, size_t n, enum form form)
{
	struct part parts[PARTS_MAX];
	size_t np;

	switch (user_verdict(r, name, n)) {
	case REDACT_RULE_KEEP: return CLS_NONE;
	case REDACT_RULE_OPTION: return CLS_STRONG;
	default: break;
	}
	np = split_parts(name, n, parts);
	return np ? classify_parts(parts, np, form) : CLS_NONE;
}

static enum vkind kind_of(enum cls c)
{
	return c == CLS_STRONG ? V_STRONG : c == CLS_WEAK ? V_WEAK : V_NONE;
}

static bool name_in(const char *name, size_t n, const char *const *list)
{
	for (; *list; list++) {
		size_t k = strlen(*list), i;

		if (k != n)
			continue;
		for (i = 0; i < n; i++)
			if ((name[i] == '_' ? '-' : to_lower(name[i])) != (*list)[i])
				break;
		if (i == n)
			return true;
	}
	return false;
}

/* A value that a key-like (weak) name may hold without it being a secret. */
static bool weak_value_is_harmless(const char *v, size_t n)
{
	static const char *const exts[] = { ".pem", ".key", ".pub", ".ppk", ".p12", ".pfx", ".der", ".crt", ".cer",
					     ".asc", ".gpg", ".jks", ".json", ".txt", ".kdbx", ".keystore", ".jwk",
					     ".sig", NULL };
	bool keydef = n > 0 && n <= 12 && is_digit(v[0]);

	if (n > 0 && is_quote(v[0])) { /* a quoted value in a script */
		v++;
		n--;
		if (n > 0 && is_quote(v[n - 1]))
			n--;
	}
	if (n == 0 || v[0] == '/' || v[0] == '~' || v[0] == '@' || v[0] == '$' || starts_with(v, n, "./") ||
	    starts_with(v, n, "../") || starts_with(v, n, "file:") || starts_with(v, n, "env:") ||
	    starts_with(v, n, "fd:"))
		return true;
	for (const char *const *e = exts; *e; e++) {
		size_t k = strlen(*e);

		if (n > k && eq_nocase(v + n - k, k, *e))
			return true;
	}
	/* a number or a sort key definition: ffmpeg -pass 2, sort --key=2,2n */
	for (size_t i = 0; keydef && i < n; i++)
		keydef = is_digit(v[i]) || strchr(",.bdfghiMnRrV", v[i]);
	return keydef;
}

/* ------------------------------------------------------------------ */
/* The walk                                                           */
/* ------------------------------------------------------------------ */

/* What the current command said so far. */
struct cmd {
	uint8_t prog;    /* enum prog */
	bool set_verb;   /* "set", "config", "configure": a bare secret name takes the next word */
	bool secret_cmd; /* a "secret" word: --from-literal, --body, -b hold secrets */
};

struct scan {
	const struct redact_rules *rules;
	unsigned flags;
	char *out;
	size_t pos;
	size_t out_start; /* where the current string starts in out */
	unsigned redacted;
	/* across strings */
	struct cmd cmd;
	uint8_t pending; /* enum vkind: the next word is this option's value */
	bool script_next; /* the next argument is a shell script (-c) */
	/* the current string */
	const char *s;
	size_t n;
	bool argmode; /* one argument, not a script: a value at its very start runs to its end */
	bool tail;    /* this string was cut short */
	char q;       /* the quote we are in: 0, '\'' or '"' */
	bool esc;     /* the next byte is escaped by a backslash */
	bool text;    /* an unquoted blank or shell operator was seen */
	bool has_span;
	size_t span_a, span_b;
	size_t keep_until; /* no rule runs before this: a decision read these bytes (see freeze()) */
	size_t jwt_from;   /* no JWT starts before this: an earlier scan covered those */
};

static void out_bytes(struct scan *st, const char *p, size_t n)
{
	memcpy(st->out + st->pos, p, n);
	st->pos += n;
}

/* Never longer than the secret: one '*' per byte up to three. */
static void out_marker(struct scan *st, size_t secret_len)
{
	out_bytes(st, REDACT_MARKER, secret_len < 3 ? secret_len : 3);
	st->redacted++;
}

/*
 * A marker this module wrote: a rule that redacted a value must redact its
 * marker again on a second pass (a cookie without '=', a URL user that no
 * longer looks like a token), or that pass would decide otherwise.
 */
static bool is_marker(const char *p, size_t n)
{
	return n >= 1 && n <= 3 && !memcmp(p, REDACT_MARKER, n);
}

/*
 * A rule read the bytes up to e - e included, where it stopped - and
 * decided they stay as they are (a value without its separator, a path, a
 * URL without user info, the word naming the program or an option): no
 * other rule may change them, or a second pass would read different bytes
 * and decide differently.
 */
static bool freeze(struct scan *st, size_t e)
{
	if (e + 1 > st->keep_until)
		st->keep_until = e + 1;
	return false;
}

static bool span(struct scan *st, size_t a, size_t b)
{
	if (b <= a)
		return false;
	st->has_span = true;
	st->span_a = a;
	st->span_b = b;
	return true;
}

/*
 * The byte k places before the current one, as written to the output (a
 * marker, not the secret it replaced): a second pass sees the same. 0 at
 * the start of the string.
 */
static char back(const struct scan *st, size_t k)
{
	return st->pos - st->out_start >= k ? st->out[st->pos - k] : 0;
}

static bool at_start(const struct scan *st)
{
	return st->pos == st->out_start;
}

/* End of a shell word's value from v: quotes inside it are part of it, an enclosing quote ends it. */
static size_t value_end(const struct scan *st, size_t v)
{
	const char *s = st->s;
	char nested = 0;
	size_t j;

	for (j = v; j < st->n; j++) {
		char c = s[j];

		if (nested) {
			if (c == nested)
				nested = 0;
			else if (c == '\\' && nested == '"')
				j++;
			continue;
		}
		if (st->q && c == st->q)
			break;
		if (c == '\\' && st->q != '\'') {
			j++;
			continue;
		}
		if (is_quote(c)) {
			nested = c;
			continue;
		}
		if (is_space(c) || is_cmdsep(c))
			break;
	}
	return j < st->n ? j : st->n;
}

/*
 * Where the value of a name that starts at `key` ends, the value starting
 * at v: to the end of the argument when the name starts the argument
 * (--password=a b, PASSWORD=a b given to env), else the shell word.
 */
static size_t extent(const struct scan *st, size_t key, size_t v)
{
	return st->argmode && key == 0 ? st->n : value_end(st, v);
}

/*
 * The first sep in the value [v, e) outside quotes and backslashes, as
 * value_end() walks it: a span after it then ends where value_end() would
 * stop on a second pass too. A value that runs to the end of the string
 * has nothing after it to disagree on.
 */
static const char *first_sep(const struct scan *st, size_t v, size_t e, char sep)
{
	const char *s = st->s;
	char nested = 0;

	if (e == st->n)
		return memchr(s + v, sep, e - v);
	for (size_t j = v; j < e; j++) {
		char c = s[j];

		if (nested) {
			if (c == nested)
				nested = 0;
			else if (c == '\\' && nested == '"')
				j++;
		} else if (c == '\\' && st->q != '\'') {
			j++;
		} else if (is_quote(c)) {
			nested = c;
		} else if (c == sep) {
			return s + j;
		}
	}
	return NULL;
}

static bool value_span(struct scan *st, enum vkind kind, size_t v, size_t e)
{
	const char *s = st->s, *sep;

	if (e <= v)
		return false;
	switch (kind) {
	case V_STRONG: return span(st, v, e);
	case V_WEAK: return weak_value_is_harmless(s + v, e - v) ? freeze(st, e) : span(st, v, e);
	case V_COOKIE: return memchr(s + v, '=', e - v) || is_marker(s + v, e - v) ? span(st, v, e) : freeze(st, e);
	case V_USER_COLON: sep = first_sep(st, v, e, ':'); break;
	case V_USER_COMMA: sep = first_sep(st, v, e, ','); break;
	case V_USER_PERCENT: sep = first_sep(st, v, e, '%'); break;
	case V_AFTER_EQ: sep = first_sep(st, v, e, '='); break;
	default: return false;
	}
	return sep && (size_t)(sep - s) + 1 < e ? span(st, (size_t)(sep - s) + 1, e) : freeze(st, e);
}

/* A shell word starts at i (a quote opening it counts). */
static bool word_begin(const struct scan *st, size_t i)
{
	char p1 = back(st, 1), p2 = back(st, 2);

	if (is_space(st->s[i]) || is_cmdsep(st->s[i]))
		return false;
	if (at_start(st) || is_space(p1) || is_cmdsep(p1))
		return true;
	return is_quote(p1) && (st->pos - st->out_start == 1 || is_space(p2) || is_cmdsep(p2));
}

static size_t name_end(const struct scan *st, size_t a)
{
	size_t e = a;

	while (e < st->n && e - a <= NAME_MAX_LEN && is_name_char(st->s[e]))
		e++;
	return e;
}

/* The word at i is the value of the option before it. */
static bool take_pending(struct scan *st, size_t i)
{
	enum vkind kind = st->pending;
	const char *s = st->s;

	st->pending = V_NONE;
	if (s[i] == '-') {
		size_t w = i;

		while (w < st->n && !is_word_end(s[w]))
			w++;
		/*
		 * The next option, and the last one was a flag: "-", "-x",
		 * "--long". getopt gives a value-taking option the next word
		 * whatever it starts with, so after a password, token or
		 * secret option "-S3cr3t" is its value.
		 */
		if (kind != V_STRONG || w - i <= 2 || s[i + 1] == '-')
			return false;
	}
	return value_span(st, kind, i, extent(st, i, i));
}

static bool short_option(struct scan *st, size_t i)
{
	const char *s = st->s;
	char c = s[i + 1];
	int kind = -1, how = 0;

	for (size_t k = 0; k < sizeof(short_opts) / sizeof(short_opts[0]); k++)
		if (short_opts[k].prog == st->cmd.prog && short_opts[k].letter == c) {
			kind = short_opts[k].kind;
			how = short_opts[k].how;
		}
	if (kind < 0 && st->cmd.secret_cmd && c == 'b') { /* gh secret set NAME -b VALUE */
		kind = V_STRONG;
		how = SEPARATE;
	}
	if (kind < 0)
		return false;
	if (i + 2 >= st->n || is_word_end(s[i + 2])) {
		if (!(how & SEPARATE))
			return false;
		st->pending = (uint8_t)kind;
		return true;
	}
	return (how & GLUED) && value_span(st, (enum vkind)kind, i + 2, extent(st, i, i + 2));
}

/* An option's value kind: program-specific first, then by its name. */
static enum vkind option_kind(const struct scan *st, const char *name, size_t n)
{
	for (size_t k = 0; k < sizeof(long_opts) / sizeof(long_opts[0]); k++)
		if (long_opts[k].prog == st->cmd.prog && eq_nocase(name, n, long_opts[k].name))
			return long_opts[k].kind;
	if (st->cmd.secret_cmd && eq_nocase(name, n, "from-literal"))
		return V_AFTER_EQ;
	if (st->cmd.secret_cmd && eq_nocase(name, n, "body"))
		return V_STRONG;
	return kind_of(classify(st->rules, name, n, FORM_OPTION));
}

/* "Name: value" - an HTTP header, a YAML line. */
static bool colon_value(struct scan *st, size_t i, size_t a, size_t e)
{
	const char *s = st->s;
	bool header;
	enum cls c;
	size_t j = e + 1, raw, end;

	if (user_verdict(st->rules, s + a, e - a) == REDACT_RULE_KEEP)
		return false;
	header = name_in(s + a, e - a, auth_headers);
	c = header ? CLS_STRONG : classify(st->rules, s + a, e - a, FORM_ASSIGN);
	if (c == CLS_NONE)
		return false;
	if (j < st->n && is_blank(s[j])) {
		while (j < st->n && is_blank(s[j]))
			j++;
	} else if (!header) {
		return false; /* secrets:/run/secrets is a volume, not a header */
	}
	if (st->argmode && i == 0) {
		raw = st->n;
	} else {
		/* to the end of the quoted string it is in, or of the line */
		for (raw = j; raw < st->n; raw++) {
			if (st->q ? s[raw] == st->q : s[raw] == '\n')
				break;
			if (st->q == '"' && s[raw] == '\\')
				raw++;
		}
		if (raw > st->n)
			raw = st->n;
	}
	for (end = raw; end > j && is_space(s[end - 1]);)
		end--;
	return end > j ? value_span(st, kind_of(c), j, end) : freeze(st, raw);
}

/* At a place where a name may start: --name VALUE, --name=VALUE, NAME=VALUE, Name: value, -pVALUE. */
static bool names(struct scan *st, size_t i, bool begin)
{
	const char *s = st->s;
	size_t n = st->n, d = 0, a, e;
	enum vkind kind;

	while (d < 2 && i + d < n && s[i + d] == '-')
		d++;
	if (i + d < n && s[i + d] == '-')
		return false;
	if (d == 1 && begin && i + 1 < n && is_alpha(s[i + 1]) && short_option(st, i))
		return true;
	a = i + d;
	if (d == 1 && a + 1 < n && s[a] == 'D' && is_name_start(s[a + 1])) { /* java -Dname=value */
		size_t e2 = name_end(st, a + 1);

		if (e2 < n && s[e2] == '=')
			a++;
	}
	if (a >= n || !is_name_start(s[a]))
		return false;
	e = name_end(st, a);
	if (e - a > NAME_MAX_LEN)
		return false;
	if (e < n && s[e] == '=') {
		kind = d ? option_kind(st, s + a, e - a) : kind_of(classify(st->rules, s + a, e - a, FORM_ASSIGN));
		return kind != V_NONE && value_span(st, kind, e + 1, extent(st, i, e + 1));
	}
	if (e < n && s[e] == ':' && d == 0)
		return colon_value(st, i, a, e);
	if (e < n && !is_word_end(s[e]))
		return false;
	if (d)
		kind = option_kind(st, s + a, e - a);
	else if (st->cmd.set_verb) /* aws configure set aws_secret_access_key VALUE */
		kind = kind_of(classify(st->rules, s + a, e - a, FORM_OPTION));
	else
		return false;
	if (kind == V_NONE)
		return false;
	st->pending = kind;
	freeze(st, e);
	return true;
}

/* "Bearer TOKEN" anywhere. */
static bool bearer(struct scan *st, size_t i)
{
	const char *s = st->s;
	size_t j = i + 6;

	if (st->n - i < 8 || !eq_nocase(s + i, 6, "bearer") || !is_blank(s[j]))
		return false;
	while (j < st->n && is_blank(s[j]))
		j++;
	if (j >= st->n || is_space(s[j]) || is_cmdsep(s[j]))
		return false;
	return value_span(st, V_STRONG, j, value_end(st, j));
}

/* openssl's pass:SECRET (-passin, -passout, -pass). */
static bool pass_source(struct scan *st, size_t i)
{
	if (!starts_with(st->s + i, st->n - i, "pass:"))
		return false;
	return value_span(st, V_STRONG, i + 5, extent(st, i, i + 5));
}

/* What a shell word says about its command: the program, a set verb, a script to follow. */
static void word_flags(struct scan *st, size_t i)
{
	const char *s = st->s, *w = s + i, *base;
	size_t e = i, len, blen;

	while (e < st->n && !is_word_end(s[e]))
		e++;
	len = e - i;
	if (len == 0)
		return;
	/* bash -c SCRIPT, sh -ec SCRIPT: the next argument is shell text */
	if (st->argmode && i == 0 && e == st->n && len >= 2 && w[0] == '-' && w[len - 1] == 'c') {
		size_t k = 1;

		while (k < len && is_alpha(w[k]))
			k++;
		if (k == len) {
			st->script_next = true;
			freeze(st, e);
		}
	}
	if (memmem(w, len, "://", 3))
		return; /* a URL ending in /curl names no program */
	base = memrchr(w, '/', len);
	base = base ? base + 1 : w;
	blen = (size_t)(w + len - base);
	for (size_t k = 0; k < sizeof(progs) / sizeof(progs[0]); k++) {
		size_t pl = strlen(progs[k].name);

		if (progs[k].prefix ? blen >= pl && !memcmp(base, progs[k].name, pl) :
				      blen == pl && !memcmp(base, progs[k].name, pl)) {
			st->cmd.prog = progs[k].prog;
			freeze(st, e);
		}
	}
	if (len == 5 && !memcmp(w, "login", 5))
		st->cmd.prog = PROG_LOGIN;
	if ((len == 3 && !memcmp(w, "set", 3)) || (len == 6 && !memcmp(w, "config", 6)) ||
	    (len == 9 && !memcmp(w, "configure", 9)))
		st->cmd.set_verb = true;
	if ((len == 6 && !memcmp(w, "secret", 6)) || (len == 7 && !memcmp(w, "secrets", 7)))
		st->cmd.secret_cmd = true;
}

/* {"password": "VALUE"}, also with the quotes escaped for a shell: {\"password\":\"VALUE\"}. */
static bool json_key(struct scan *st, size_t i)
{
	const char *s = st->s;
	size_t n = st->n, qlen = s[i] == '\\' ? 2 : 1, a = i + qlen, e, v, end;
	enum cls c;

	if (a >= n || !is_name_start(s[a]))
		return false;
	e = name_end(st, a);
	if (e - a > NAME_MAX_LEN || e + qlen > n || memcmp(s + e, s + i, qlen))
		return false;
	v = e + qlen;
	while (v < n && is_blank(s[v]))
		v++;
	if (v >= n || s[v] != ':')
		return false;
	v++;
	while (v < n && is_blank(s[v]))
		v++;
	if (v + qlen > n || memcmp(s + v, s + i, qlen))
		return false;
	v += qlen;
	c = name_in(s + a, e - a, auth_headers) && user_verdict(st->rules, s + a, e - a) != REDACT_RULE_KEEP ?
		    CLS_STRONG :
		    classify(st->rules, s + a, e - a, FORM_ASSIGN);
	if (c == CLS_NONE)
		return false;
	for (end = v; end < n; end++) {
		if (qlen == 1 && s[end] == '\\') {
			end++;
			continue;
		}
		if (qlen == 1 ? s[end] == '"' : end + 1 < n && s[end] == '\\' && s[end + 1] == '"')
			break;
	}
	return value_span(st, kind_of(c), v, end < n ? end : n);
}

/* -----BEGIN ... PRIVATE KEY----- body -----END ...: the body. */
static bool private_key(struct scan *st, size_t i)
{
	static const char begin[] = "-----BEGIN ";
	const char *s = st->s, *label_end, *end_mark;
	size_t n = st->n, label = i + sizeof(begin) - 1, b, end, lim;

	if (!starts_with(s + i, n - i, begin))
		return false;
	lim = n - label < 64 ? n - label : 64;
	label_end = memmem(s + label, lim, "-----", 5);
	if (!label_end)
		return freeze(st, label + lim);
	if (!memmem(s + label, (size_t)(label_end - (s + label)), "PRIVATE KEY", 11))
		return freeze(st, (size_t)(label_end - s) + 5);
	b = (size_t)(label_end - s) + 5;
	end_mark = memmem(s + b, n - b, "-----END", 8);
	end = end_mark ? (size_t)(end_mark - s) : n;
	while (b < end && is_space(s[b]))
		b++;
	while (end > b && is_space(s[end - 1]))
		end--;
	return b < end ? span(st, b, end) : freeze(st, end);
}

static bool token_at(const struct scan *st, size_t i, size_t *a, size_t *b);

/* scheme://user:SECRET@host, and scheme://TOKEN@host (the last '@' of the authority ends the user info). */
static bool url(struct scan *st, size_t i)
{
	const char *s = st->s, *at, *colon;
	size_t n = st->n, a = i + 3, e, ta, tb;
	char scheme = back(st, 1);

	if (at_start(st) || n - i < 3 || s[i + 1] != '/' || s[i + 2] != '/')
		return false;
	if (!is_alnum(scheme) && scheme != '+' && scheme != '-' && scheme != '.')
		return false;
	for (e = a; e < n; e++) {
		char c = s[e];

		if (c == '/' || c == '?' || c == '#' || is_space(c) || is_quote(c) || c == '<' || c == '>' || c == '`')
			break;
	}
	at = memrchr(s + a, '@', e - a);
	if (!at) {
		/* cut short inside the authority: host:port or the start of user:password */
		colon = st->tail && e == n ? memchr(s + a, ':', e - a) : NULL;
		return colon ? span(st, (size_t)(colon - s) + 1, n) : freeze(st, e);
	}
	if ((token_at(st, a, &ta, &tb) && tb <= (size_t)(at - s)) || is_marker(s + a, (size_t)(at - (s + a))))
		return span(st, a, (size_t)(at - s)); /* the token is the user: all of the user info */
	colon = memchr(s + a, ':', (size_t)(at - (s + a)));
	return colon && colon + 1 < at ? span(st, (size_t)(colon - s) + 1, (size_t)(at - s)) : freeze(st, e);
}

static size_t class_run(const struct scan *st, size_t j, enum tclass cls, size_t max)
{
	size_t k = j;

	while (k < st->n && k - j < max && in_class(st->s[k], cls))
		k++;
	return k;
}

/* A JWT: eyJ header, '.', payload [, '.', signature] in base64url (the header is JSON: {" is eyJ). */
static bool jwt_at(struct scan *st, size_t i, size_t *a, size_t *b)
{
	size_t n = st->n, j, k;

	if (i < st->jwt_from || !starts_with(st->s + i, n - i, "eyJ"))
		return false;
	j = class_run(st, i, T_B64URL, SIZE_MAX);
	if (j - i >= 8 && j < n && st->s[j] == '.') {
		k = class_run(st, j + 1, T_B64URL, SIZE_MAX);
		if (k - (j + 1) >= 4) {
			if (k < n && st->s[k] == '.')
				k = class_run(st, k + 1, T_B64URL, SIZE_MAX);
			*a = i + 3;
			*b = k;
			return true;
		}
		j = k;
	}
	if (st->tail && j == n) {
		*a = i + 3;
		*b = n;
		return *b > *a;
	}
	st->jwt_from = j; /* any eyJ inside [i, j) fails the same way */
	return false;
}

/*
 * A token at i (a token boundary): the secret part in [*a, *b). A rules
 * file prefix that matches claims the place even without a secret after
 * it, so that "PREFIX***" never becomes a built-in match on a second pass.
 */
static bool token_at(const struct scan *st, size_t i, size_t *a, size_t *b)
{
	const char *s = st->s;
	size_t n = st->n;

	for (unsigned k = 0; st->rules && k < st->rules->n; k++) {
		const struct redact_rule *rule = &st->rules->rule[k];

		if (rule->kind != REDACT_RULE_PATTERN || n - i < rule->len || memcmp(s + i, rule->text, rule->len))
			continue;
		*a = i + rule->len;
		*b = class_run(st, *a, T_USER, SIZE_MAX);
		return *b > *a;
	}
	for (size_t k = 0; k < sizeof(token_shapes) / sizeof(token_shapes[0]); k++) {
		size_t pl = strlen(token_shapes[k].prefix), min = token_shapes[k].min, j;

		if (n - i < pl || memcmp(s + i, token_shapes[k].prefix, pl))
			continue;
		j = class_run(st, i + pl, token_shapes[k].cls, token_shapes[k].exact ? min + 1 : SIZE_MAX);
		*a = i + pl;
		*b = j;
		if (st->tail && j == n && j > i + pl && j - (i + pl) <= (token_shapes[k].exact ? min : SIZE_MAX))
			return true; /* cut short: what is left of it */
		if (token_shapes[k].exact)
			return j - (i + pl) == min && (j == n || !is_token_word(s[j]));
		return j - (i + pl) >= min;
	}
	return false;
}

static bool jwt_or_token(struct scan *st, size_t i)
{
	size_t a, b;

	if (token_at(st, i, &a, &b) || jwt_at(st, i, &a, &b))
		return span(st, a, b);
	return false;
}

/* A rule at i registered a span or froze i: the others do not run there. */
static bool decided(const struct scan *st, size_t i)
{
	return st->has_span || st->keep_until > i;
}

/* Every rule that may start at i, in order, until one decides. */
static void rules_at(struct scan *st, size_t i)
{
	const char *s = st->s;
	bool sub = at_start(st) || is_sub_sep(back(st, 1));
	bool begin = word_begin(st, i);

	if (begin && st->pending && (take_pending(st, i) || decided(st, i)))
		return;
	if (sub && (bearer(st, i) || pass_source(st, i) || names(st, i, begin) || decided(st, i)))
		return;
	if (begin) {
		word_flags(st, i);
		if (decided(st, i))
			return;
	}
	if ((s[i] == '"' || (s[i] == '\\' && i + 1 < st->n && s[i + 1] == '"')) && json_key(st, i))
		return;
	if (s[i] == '-' && (private_key(st, i) || decided(st, i)))
		return;
	if (s[i] == ':' && (url(st, i) || decided(st, i)))
		return;
	if (at_start(st) || !is_token_word(back(st, 1)))
		jwt_or_token(st, i);
}

/* The shell tracker: quotes, backslashes, and command separators (which end the command's state). */
static void track(struct scan *st, char c)
{
	if (st->esc) {
		st->esc = false;
	} else if (st->q == '\'') {
		if (c == '\'')
			st->q = 0;
	} else if (c == '\\') {
		st->esc = true;
	} else if (st->q == '"') {
		if (c == '"')
			st->q = 0;
	} else if (is_quote(c)) {
		st->q = c;
	} else if (is_space(c) || is_cmdsep(c)) {
		st->text = true;
		if (is_cmdsep(c)) {
			st->cmd = (struct cmd){ 0 };
			st->pending = V_NONE;
		}
	}
}

static void scan_string(struct scan *st, const char *s, size_t n, bool tail)
{
	struct cmd outer = st->cmd;
	size_t i = 0;

	st->s = s;
	st->out_start = st->pos;
	st->n = n;
	st->tail = tail;
	st->argmode = !st->script_next && !(st->flags & REDACT_SCRIPT);
	st->script_next = false;
	st->q = 0;
	st->esc = false;
	st->text = false;
	st->has_span = false;
	st->keep_until = 0;
	st->jwt_from = 0;
	if (n == 0)
		st->pending = V_NONE; /* an empty value */
	while (i < n) {
		if (st->has_span && i == st->span_a) {
			/* the tracker stays as it was before the secret: so it is after the marker on a second pass */
			out_marker(st, st->span_b - i);
			i = st->span_b;
			st->has_span = false;
			st->esc = false;
			continue;
		}
		if (!st->has_span && !st->esc && i >= st->keep_until) {
			rules_at(st, i);
			if (st->has_span && st->span_a == i)
				continue;
		}
		track(st, s[i]);
		st->out[st->pos++] = s[i++];
	}
	/* a script's commands end with it: the outer command goes on */
	if (st->text)
		st->cmd = outer;
}

static void scan_init(struct scan *st, const struct redact_rules *r, unsigned flags, char *out)
{
	memset(st, 0, sizeof(*st));
	st->rules = r;
	st->flags = flags;
	st->out = out;
}

/* ------------------------------------------------------------------ */
/* API                                                                */
/* ------------------------------------------------------------------ */

static void finish(const struct scan *st, size_t *outlen, unsigned *nredacted)
{
	if (outlen)
		*outlen = st->pos;
	if (nredacted)
		*nredacted = st->redacted;
}

static int no_space(char *out, size_t outsize, size_t *outlen, unsigned *nredacted)
{
	if (outsize > 0)
		out[0] = 0;
	if (outlen)
		*outlen = 0;
	if (nredacted)
		*nredacted = 0;
	return -ENOSPC;
}

int redact_argv(const struct redact_rules *r, const char *const *argv, size_t argc, unsigned flags, char *out,
		size_t outsize, size_t *outlen, unsigned *nredacted)
{
	struct scan st;
	size_t need = 0;

	for (size_t k = 0; k < argc; k++) {
		size_t len = argv[k] ? strlen(argv[k]) : 0;

		if (len >= SIZE_MAX - need)
			return no_space(out, outsize, outlen, nredacted);
		need += len + 1;
	}
	if (outsize < need)
		return no_space(out, outsize, outlen, nredacted);
	scan_init(&st, r, flags, out);
	for (size_t k = 0; k < argc; k++) {
		const char *a = argv[k] ? argv[k] : "";

		scan_string(&st, a, strlen(a), (flags & REDACT_TRUNCATED) && k + 1 == argc);
		out[st.pos++] = 0;
	}
	finish(&st, outlen, nredacted);
	return 0;
}

int redact_area(const struct redact_rules *r, const char *area, size_t len, unsigned flags, char *out, size_t outsize,
		size_t *outlen, unsigned *nredacted)
{
	struct scan st;
	size_t off = 0;

	if (outsize < len)
		return no_space(out, outsize, outlen, nredacted);
	scan_init(&st, r, flags, out);
	while (off < len) {
		const char *nul = memchr(area + off, 0, len - off);
		size_t n = nul ? (size_t)(nul - (area + off)) : len - off;
		bool last = !nul || off + n + 1 == len;

		scan_string(&st, area + off, n, (flags & REDACT_TRUNCATED) && last);
		off += n;
		if (nul) {
			out[st.pos++] = 0;
			off++;
		}
	}
	finish(&st, outlen, nredacted);
	return 0;
}

int redact_string(const struct redact_rules *r, const char *s, size_t len, unsigned flags, char *out,
		  size_t outsize, size_t *outlen, unsigned *nredacted)
{
	struct scan st;

	if (len >= SIZE_MAX || outsize < len + 1)
		return no_space(out, outsize, outlen, nredacted);
	scan_init(&st, r, flags, out);
	scan_string(&st, s, len, flags & REDACT_TRUNCATED);
	out[st.pos] = 0;
	finish(&st, outlen, nredacted);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Rules file                                                         */
/* ------------------------------------------------------------------ */

void redact_rules_init(struct redact_rules *r)
{
	memset(r, 0, sizeof(*r));
}

__attribute__((format(printf, 5, 6))) static int rule_error(char *err, size_t errsize, size_t line, int rc,
								  const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (err && errsize) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		snprintf(err, errsize, "line %zu: %s", line, msg);
	}
	return rc;
}

static size_t skip_blanks(const char *s, size_t i, size_t n)
{
	while (i < n && is_blank(s[i]))
		i++;
	return i;
}

static size_t skip_word(const char *s, size_t i, size_t n)
{
	while (i < n && !is_blank(s[i]))
		i++;
	return i;
}

static int add_name(struct redact_rule *rule, const char *w, size_t n, size_t line, char *err, size_t errsize)
{
	while (n > 0 && w[0] == '-') { /* "option --password" is "option password" */
		w++;
		n--;
	}
	if (n == 0)
		return rule_error(err, errsize, line, -EINVAL, "the name is empty");
	if (n >= REDACT_RULE_MAX)
		return rule_error(err, errsize, line, -EINVAL, "the name is too long (at most 63 bytes)");
	if (!is_name_start(w[0]))
		return rule_error(err, errsize, line, -EINVAL, "a name starts with a letter or '_'");
	for (size_t i = 0; i < n; i++) {
		if (!is_name_char(w[i]))
			return rule_error(err, errsize, line, -EINVAL,
					  "a name has only letters, digits, '_', '-' and '.'");
		rule->text[i] = w[i] == '_' ? '-' : to_lower(w[i]);
	}
	rule->text[n] = 0;
	rule->len = (uint8_t)n;
	return 0;
}

static int add_pattern(struct redact_rule *rule, const char *w, size_t n, size_t line, char *err, size_t errsize)
{
	if (n < 2)
		return rule_error(err, errsize, line, -EINVAL,
				  "the prefix is too short (at least 2 bytes, or it would redact ordinary words)");
	if (n >= REDACT_RULE_MAX)
		return rule_error(err, errsize, line, -EINVAL, "the prefix is too long (at most 63 bytes)");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];

		if (c < 0x21 || c > 0x7e || c == '*' || c == '\'' || c == '"' || c == '\\')
			return rule_error(err, errsize, line, -EINVAL,
					  "a prefix is printable ASCII without '*', quotes or '\\'");
	}
	memcpy(rule->text, w, n);
	rule->text[n] = 0;
	rule->len = (uint8_t)n;
	return 0;
}

static int unknown_rule(const char *w, size_t n, size_t line, char *err, size_t errsize)
{
	char what[40];

	snprintf(what, sizeof(what), "%.*s%s", n > 32 ? 32 : (int)n, w, n > 32 ? "..." : "");
	return rule_error(err, errsize, line, -EINVAL, "unknown rule \"%s\" (expected option, keep or pattern)",
			  what);
}

static int parse_rule_line(struct redact_rules *r, const char *s, size_t n, size_t line, char *err, size_t errsize)
{
	struct redact_rule rule = { 0 };
	size_t d0, d1, a0, a1, rest;
	int rc;

	if (n > 0 && s[n - 1] == '\r')
		n--;
	d0 = skip_blanks(s, 0, n);
	if (d0 == n || s[d0] == '#')
		return 0;
	for (size_t i = d0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t') {
			return rule_error(err, errsize, line, -EINVAL, "control byte 0x%02x in a rule",
					  (unsigned char)s[i]);
		}
	d1 = skip_word(s, d0, n);
	a0 = skip_blanks(s, d1, n);
	a1 = skip_word(s, a0, n);
	rest = skip_blanks(s, a1, n);
	if (d1 - d0 == 6 && !memcmp(s + d0, "option", 6))
		rule.kind = REDACT_RULE_OPTION;
	else if (d1 - d0 == 4 && !memcmp(s + d0, "keep", 4))
		rule.kind = REDACT_RULE_KEEP;
	else if (d1 - d0 == 7 && !memcmp(s + d0, "pattern", 7))
		rule.kind = REDACT_RULE_PATTERN;
	else
		return unknown_rule(s + d0, d1 - d0, line, err, errsize);
	if (a0 == n)
		return rule_error(err, errsize, line, -EINVAL, "%s needs an argument",
				  rule.kind == REDACT_RULE_PATTERN ? "pattern" :
				  rule.kind == REDACT_RULE_KEEP    ? "keep" :
								     "option");
	if (rest != n)
		return rule_error(err, errsize, line, -EINVAL,
				  "unexpected text after the argument (one rule per line, comments alone)");
	if (r->n >= REDACT_RULES_MAX)
		return rule_error(err, errsize, line, -ENOSPC, "too many rules (at most 64)");
	rc = rule.kind == REDACT_RULE_PATTERN ? add_pattern(&rule, s + a0, a1 - a0, line, err, errsize) :
						add_name(&rule, s + a0, a1 - a0, line, err, errsize);
	if (rc)
		return rc;
	r->rule[r->n++] = rule;
	return 0;
}

int redact_rules_load(struct redact_rules *r, const char *text, size_t len, char *err, size_t errsize)
{
	struct redact_rules tmp = *r;
	size_t pos = 0, line = 0;

	if (err && errsize)
		err[0] = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int rc = parse_rule_line(&tmp, text + pos, n, ++line, err, errsize);

		if (rc)
			return rc;
		pos += n + 1;
	}
	*r = tmp;
	return 0;
}
