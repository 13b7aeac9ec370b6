/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Redaction: command lines that carry secrets come out with every secret
 * replaced and their option names readable; ordinary command lines come
 * out byte for byte; redacting twice is redacting once; buffers are never
 * overrun; the rules file is parsed strictly, with line numbers.
 *
 * Every secret in the corpus contains "S3cr3t" (or "S3CR3T"), so the check
 * that no secret survives is one search over the raw output bytes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "redact.h"

#define MAX_ARGS 16
#define OUT_MAX 16384

struct line {
	const char *argv[MAX_ARGS]; /* NULL-terminated */
	const char *want;           /* the output, arguments joined by '|'; NULL: the input unchanged */
};

static size_t count_args(const char *const *argv)
{
	size_t n = 0;

	while (n < MAX_ARGS && argv[n])
		n++;
	return n;
}

static size_t input_size(const char *const *argv, size_t argc)
{
	size_t n = 0;

	for (size_t i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	return n;
}

/* Join NUL-separated strings with '|'. */
static void join(const char *buf, size_t len, char *joined, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < size; i++)
		joined[o++] = buf[i] ? buf[i] : '|';
	if (o > 0 && len > 0 && buf[len - 1] == 0)
		o--; /* the last NUL */
	joined[o] = 0;
}

static bool contains_nocase(const char *buf, size_t len, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= len; i++) {
		size_t j = 0;

		while (j < k && (buf[i + j] | 0x20) == (needle[j] | 0x20))
			j++;
		if (j == k)
			return true;
	}
	return false;
}

/* Redact once and twice; the second pass must change nothing. Returns the first output's length. */
static size_t redact_checked(const struct redact_rules *r, const char *const *argv, size_t argc, unsigned flags,
			     char *out, unsigned *nredacted)
{
	static char again[OUT_MAX];
	const char *argv2[MAX_ARGS] = { NULL };
	size_t len, len2, argc2 = 0, in = input_size(argv, argc);
	unsigned n2;

	assert_int_equal(redact_argv(r, argv, argc, flags, out, OUT_MAX, &len, nredacted), 0);
	assert_true(len <= in);
	for (size_t off = 0; off < len; off += strlen(out + off) + 1)
		if (argc2 < MAX_ARGS)
			argv2[argc2++] = out + off;
	assert_int_equal(argc2, argc);
	for (size_t i = 0; i < argc; i++)
		assert_true(strlen(argv2[i]) <= strlen(argv[i]));
	assert_int_equal(redact_argv(r, argv2, argc2, flags, again, OUT_MAX, &len2, &n2), 0);
	if (len2 != len || memcmp(out, again, len))
		fail_msg("redacting twice changed %s", argv[0]);
	return len;
}

/* redact_checked(), the output joined by '|' (a static buffer). */
static const char *redacted(const struct redact_rules *r, const char *const *argv, size_t argc, unsigned flags,
			    unsigned *nredacted)
{
	static char out[OUT_MAX], joined[OUT_MAX];
	size_t len = redact_checked(r, argv, argc, flags, out, nredacted);

	join(out, len, joined, sizeof(joined));
	return joined;
}

/* Each line: the secrets are gone and the output is exactly `want`. */
static void check_lines(const struct redact_rules *r, const struct line *lines, size_t n, unsigned flags)
{
	for (size_t i = 0; i < n; i++) {
		static char out[OUT_MAX], joined[OUT_MAX], input[OUT_MAX];
		size_t argc = count_args(lines[i].argv), len, in = input_size(lines[i].argv, argc), off = 0;
		unsigned nred;

		for (size_t k = 0; k < argc; k++) {
			memcpy(input + off, lines[i].argv[k], strlen(lines[i].argv[k]) + 1);
			off += strlen(lines[i].argv[k]) + 1;
		}
		len = redact_checked(r, lines[i].argv, argc, flags, out, &nred);
		join(out, len, joined, sizeof(joined));
		if (!lines[i].want) {
			if (len != in || memcmp(out, input, in) || nred != 0)
				fail_msg("line %zu (%s) changed: %s", i, lines[i].argv[0], joined);
			continue;
		}
		if (!contains_nocase(input, in, "s3cr3t"))
			fail_msg("line %zu: the corpus line has no S3cr3t value", i);
		if (contains_nocase(out, len, "s3cr3t"))
			fail_msg("line %zu (%s): a secret survived: %s", i, lines[i].argv[0], joined);
		if (strcmp(joined, lines[i].want))
			fail_msg("line %zu (%s):\n  got  %s\n  want %s", i, lines[i].argv[0], joined, lines[i].want);
		if (nred == 0)
			fail_msg("line %zu: nothing counted as redacted", i);
	}
}

#define CHECK_LINES(r, lines, flags) check_lines(r, lines, sizeof(lines) / sizeof(lines[0]), flags)

/* ---- the corpora ------------------------------------------------------- */

static void secrets_never_reach_the_output_and_names_stay_readable(void **state)
{
	static const struct line lines[] = {
		{ { "mysql", "-h", "db", "-u", "root", "-pS3cr3tMy", "prod" },
		  "mysql|-h|db|-u|root|-p***|prod" },
		{ { "mysqldump", "--password=S3cr3tDump", "--single-transaction", "prod" },
		  "mysqldump|--password=***|--single-transaction|prod" },
		{ { "mariadb", "-uroot", "-pS3cr3tMaria" },
		  "mariadb|-uroot|-p***" },
		{ { "sshpass", "-p", "S3cr3tSshpass", "ssh", "user@host", "uptime" },
		  "sshpass|-p|***|ssh|user@host|uptime" },
		{ { "sshpass", "-pS3cr3tSshpass2", "scp", "a.txt", "host:/b/" },
		  "sshpass|-p***|scp|a.txt|host:/b/" },
		{ { "curl", "-u", "alice:S3cr3tCurl", "https://api.example.org/v1" },
		  "curl|-u|alice:***|https://api.example.org/v1" },
		{ { "curl", "--user", "alice:S3cr3tCurl2", "-o", "out.json", "https://api.example.org" },
		  "curl|--user|alice:***|-o|out.json|https://api.example.org" },
		{ { "curl", "-H", "Authorization: Bearer S3cr3tBearer", "https://api.example.org" },
		  "curl|-H|Authorization: ***|https://api.example.org" },
		{ { "curl", "--header", "X-Api-Key: S3cr3tApiKey", "-H", "Accept: application/json", "https://api" },
		  "curl|--header|X-Api-Key: ***|-H|Accept: application/json|https://api" },
		{ { "curl", "-H", "Cookie: session=S3cr3tCookie", "https://app.example.org" },
		  "curl|-H|Cookie: ***|https://app.example.org" },
		{ { "curl", "-d", "{\"username\":\"bob\",\"password\":\"S3cr3tJson\"}", "https://api/login" },
		  "curl|-d|{\"username\":\"bob\",\"password\":\"***\"}|https://api/login" },
		{ { "train", "--password", "S3cr3tPw", "--threads", "8" },
		  "train|--password|***|--threads|8" },
		{ { "app", "--passwd=S3cr3tPasswd", "--pass", "S3cr3tPass" },
		  "app|--passwd=***|--pass|***" },
		{ { "app", "--token", "S3cr3tTok", "--verbose" },
		  "app|--token|***|--verbose" },
		{ { "app", "--api-key", "S3cr3tApi", "--apikey=S3cr3tApikey" },
		  "app|--api-key|***|--apikey=***" },
		{ { "app", "--secret", "S3cr3tSec", "--client-secret=S3cr3tClient" },
		  "app|--secret|***|--client-secret=***" },
		{ { "app", "--access-key", "S3cr3tAccess", "--secret-key", "S3cr3tSecretKey" },
		  "app|--access-key|***|--secret-key|***" },
		{ { "app", "--auth", "S3cr3tAuth", "--credentials", "S3cr3tCreds" },
		  "app|--auth|***|--credentials|***" },
		{ { "aws-tool", "--aws-secret-access-key", "S3cr3tAws", "--private-key", "S3cr3tPrivate" },
		  "aws-tool|--aws-secret-access-key|***|--private-key|***" },
		{ { "env", "AWS_SECRET_ACCESS_KEY=S3cr3tEnv1", "PASSWORD=S3cr3tEnv2", "GITHUB_TOKEN=S3cr3tEnv3",
		  "make", "all" },
		  "env|AWS_SECRET_ACCESS_KEY=***|PASSWORD=***|GITHUB_TOKEN=***|make|all" },
		{ { "bash", "-c", "TOKEN=S3cr3tSh ./deploy.sh --verbose && echo done" },
		  "bash|-c|TOKEN=*** ./deploy.sh --verbose && echo done" },
		{ { "bash", "-c", "mysql -uroot -pS3cr3tSh2 prod < dump.sql" },
		  "bash|-c|mysql -uroot -p*** prod < dump.sql" },
		{ { "sh", "-c", "export DB_PASSWORD=\"S3cr3tSh3 with spaces\"; ./run --threads 4" },
		  "sh|-c|export DB_PASSWORD=***; ./run --threads 4" },
		{ { "git", "clone", "https://bob:S3cr3tGit@git.example.org/team/x.git" },
		  "git|clone|https://bob:***@git.example.org/team/x.git" },
		{ { "psql", "postgresql://app:S3cr3tPg@db:5432/prod" },
		  "psql|postgresql://app:***@db:5432/prod" },
		{ { "git", "clone", "https://x-access-token:S3cr3tGhx@github.com/o/r.git" },
		  "git|clone|https://x-access-token:***@github.com/o/r.git" },
		{ { "git", "clone", "https://ghp_S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3t@github.com/o/r.git" },
		  "git|clone|https://***@github.com/o/r.git" },
		{ { "aws", "s3", "ls", "--access-key-id", "AKIAS3CR3TS3CR3TABCD" },
		  "aws|s3|ls|--access-key-id|***" },
		{ { "aws", "configure", "set", "aws_secret_access_key", "S3cr3tCfg" },
		  "aws|configure|set|aws_secret_access_key|***" },
		{ { "docker", "login", "-u", "bob", "-p", "S3cr3tDocker", "registry.example.org" },
		  "docker|login|-u|bob|-p|***|registry.example.org" },
		{ { "docker", "run", "-e", "DB_PASSWORD=S3cr3tDockerEnv", "-p", "5432:5432", "postgres:16" },
		  "docker|run|-e|DB_PASSWORD=***|-p|5432:5432|postgres:16" },
		{ { "kubectl", "--token=S3cr3tKube", "get", "pods", "-n", "prod" },
		  "kubectl|--token=***|get|pods|-n|prod" },
		{ { "kubectl", "create", "secret", "generic", "db", "--from-literal=password=S3cr3tLiteral" },
		  "kubectl|create|secret|generic|db|--from-literal=password=***" },
		{ { "gh", "secret", "set", "DEPLOY_KEY", "--body", "S3cr3tGh" },
		  "gh|secret|set|DEPLOY_KEY|--body|***" },
		{ { "npm", "config", "set", "//registry.npmjs.org/:_authToken", "S3cr3tNpm" },
		  "npm|config|set|//registry.npmjs.org/:_authToken|***" },
		{ { "redis-cli", "-h", "cache", "-p", "6379", "-a", "S3cr3tRedis", "ping" },
		  "redis-cli|-h|cache|-p|6379|-a|***|ping" },
		{ { "openssl", "enc", "-aes-256-cbc", "-k", "S3cr3tOpenssl", "-in", "a", "-out", "b" },
		  "openssl|enc|-aes-256-cbc|-k|***|-in|a|-out|b" },
		{ { "openssl", "rsa", "-in", "key.pem", "-passin", "pass:S3cr3tPassin", "-out", "plain.pem" },
		  "openssl|rsa|-in|key.pem|-passin|pass:***|-out|plain.pem" },
		{ { "keytool", "-importkeystore", "-srcstorepass", "S3cr3tStore", "-deststorepass", "S3cr3tDest" },
		  "keytool|-importkeystore|-srcstorepass|***|-deststorepass|***" },
		{ { "java", "-Djavax.net.ssl.keyStorePassword=S3cr3tJava", "-jar", "app.jar" },
		  "java|-Djavax.net.ssl.keyStorePassword=***|-jar|app.jar" },
		{ { "smbclient", "//srv/share", "-U", "bob%S3cr3tSmb" },
		  "smbclient|//srv/share|-U|bob%***" },
		{ { "lftp", "-u", "bob,S3cr3tFtp", "ftp://srv" },
		  "lftp|-u|bob,***|ftp://srv" },
		{ { "ssh-keygen", "-t", "ed25519", "-N", "S3cr3tKeygen", "-f", "id" },
		  "ssh-keygen|-t|ed25519|-N|***|-f|id" },
		{ { "ldapsearch", "-x", "-D", "cn=admin,dc=x", "-w", "S3cr3tLdap", "-b", "dc=x" },
		  "ldapsearch|-x|-D|cn=admin,dc=x|-w|***|-b|dc=x" },
		{ { "mount", "-t", "cifs", "-o", "username=bob,password=S3cr3tCifs,uid=1000", "//srv/s", "/mnt" },
		  "mount|-t|cifs|-o|username=bob,password=***|//srv/s|/mnt" },
		{ { "psql", "host=db user=app password=S3cr3tConn dbname=prod" },
		  "psql|host=db user=app password=*** dbname=prod" },
		{ { "az", "storage", "blob", "list", "--account-key", "S3cr3tAz", "--connection-string",
		  "AccountName=x;AccountKey=S3cr3tAzConn;EndpointSuffix=core.windows.net" },
		  "az|storage|blob|list|--account-key|***|--connection-string|"
		  "AccountName=x;AccountKey=***;EndpointSuffix=core.windows.net" },
		{ { "echo", "xoxb-1234567890-S3cr3tS3cr3t", "github_pat_11S3cr3tS3cr3tS3cr3tS3cr3t_S3cr3t" },
		  "echo|xoxb-***|github_pat_***" },
		{ { "app", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTM2NyM3QifQ.S3cr3tSignature" },
		  "app|eyJ***" },
		{ { "ssh-add",
		  "-----BEGIN OPENSSH PRIVATE KEY-----\nS3cr3tKeyBody"
		  "\nS3cr3tKeyBody2\n-----END OPENSSH PRIVATE KEY-----" },
		  "ssh-add|-----BEGIN OPENSSH PRIVATE KEY-----\n***\n-----END OPENSSH PRIVATE KEY-----" },
		{ { "helm", "install", "db", "bitnami/postgresql", "--set", "auth.password=S3cr3tHelm" },
		  "helm|install|db|bitnami/postgresql|--set|auth.password=***" },
		{ { "vault", "login", "-method=userpass", "username=bob", "password=S3cr3tVault" },
		  "vault|login|-method=userpass|username=bob|password=***" },
		{ { "wget", "--http-user=bob", "--http-password=S3cr3tWget", "https://x.example.org/f" },
		  "wget|--http-user=bob|--http-password=***|https://x.example.org/f" },
		{ { "terraform", "apply", "-var", "db_password=S3cr3tTf", "-auto-approve" },
		  "terraform|apply|-var|db_password=***|-auto-approve" },
		{ { "git", "-c", "http.extraHeader=Authorization: Basic S3cr3tBasic", "clone",
		  "https://git.example.org/r.git" },
		  "git|-c|http.extraHeader=Authorization: ***|clone|https://git.example.org/r.git" },
		{ { "rclone", "--s3-secret-access-key", "S3cr3tRclone", "copy", "a", "remote:b" },
		  "rclone|--s3-secret-access-key|***|copy|a|remote:b" },
		{ { "gpg", "--batch", "--passphrase", "S3cr3tGpg", "-d", "f.gpg" },
		  "gpg|--batch|--passphrase|***|-d|f.gpg" },
		{ { "env", "HF_TOKEN=hf_S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3",
		  "OPENAI_API_KEY=sk-proj-S3cr3tS3cr3tS3cr3tS3cr3t", "python3", "app.py" },
		  "env|HF_TOKEN=***|OPENAI_API_KEY=***|python3|app.py" },
		{ { "zip", "-P", "S3cr3tZip", "a.zip", "f.txt" },
		  "zip|-P|***|a.zip|f.txt" },
		{ { "7z", "a", "-pS3cr3t7z", "a.7z", "f.txt" },
		  "7z|a|-p***|a.7z|f.txt" },
		{ { "mongodump", "--uri", "mongodb+srv://admin:S3cr3tMongo@cluster0.example.net/prod" },
		  "mongodump|--uri|mongodb+srv://admin:***@cluster0.example.net/prod" },
		{ { "ansible-playbook", "site.yml", "-e", "ansible_become_pass=S3cr3tAnsible" },
		  "ansible-playbook|site.yml|-e|ansible_become_pass=***" },
		{ { "curl", "https://api.example.org/v1/items?api_key=S3cr3tQuery&format=json" },
		  "curl|https://api.example.org/v1/items?api_key=***&format=json" },
		{ { "sqlcmd", "-S", "srv", "-U", "sa", "-P", "S3cr3tSqlcmd", "-Q", "select 1" },
		  "sqlcmd|-S|srv|-U|sa|-P|***|-Q|select 1" },
		{ { "sudo", "-u", "postgres", "PGPASSWORD=S3cr3tSudo", "psql", "-h", "db" },
		  "sudo|-u|postgres|PGPASSWORD=***|psql|-h|db" },
		{ { "docker", "exec", "-it", "db", "mysql", "-uroot", "-pS3cr3tExec", "prod" },
		  "docker|exec|-it|db|mysql|-uroot|-p***|prod" },
		{ { "ssh", "host", "cd /srv && DB_PASS=S3cr3tRemote ./migrate --env prod" },
		  "ssh|host|cd /srv && DB_PASS=*** ./migrate --env prod" },
		{ { "curl", "-H", "Authorization: token S3cr3tGhToken", "https://api.github.com/user" },
		  "curl|-H|Authorization: ***|https://api.github.com/user" },
		{ { "curl", "-d",
		  "{\"client_id\":\"app\",\"client_secret\":\"S3cr3tClientSecret\","
		  "\"grant_type\":\"client_credentials\"}",
		  "https://auth" },
		  "curl|-d|{\"client_id\":\"app\",\"client_secret\":\"***"
		  "\",\"grant_type\":\"client_credentials\"}|https://auth" },
		{ { "sh", "-c",
		  "curl -s -H \"Authorization: Bearer S3cr3tInScript\" -d"
		  " \"{\\\"token\\\":\\\"S3cr3tEscaped\\\"}\" https://api" },
		  "sh|-c|curl -s -H \"Authorization: ***\" -d \"{\\\"token\\\":\\\"***\\\"}\" https://api" },
		{ { "glab", "auth", "login", "--token", "glpat-S3cr3tS3cr3tS3cr3tAB" },
		  "glab|auth|login|--token|***" },
	};

	(void)state;
	assert_true(sizeof(lines) / sizeof(lines[0]) >= 40);
	CHECK_LINES(NULL, lines, 0);
}

static void ordinary_command_lines_come_out_byte_for_byte(void **state)
{
	static const struct line lines[] = {
		{ { "samtools", "sort", "-@", "8", "-o", "sorted.bam", "input.bam" }, NULL },
		{ { "samtools", "view", "-b", "-q", "30", "-F", "4", "in.bam", "chr1:1000-2000" }, NULL },
		{ { "bwa", "mem", "-t", "16", "-R", "@RG\\tID:s1\\tSM:s1", "ref.fa", "r1.fq.gz", "r2.fq.gz" }, NULL },
		{ { "gatk", "--java-options", "-Xmx8g", "HaplotypeCaller", "-R", "ref.fa", "-I", "in.bam", "-O",
		    "out.vcf.gz" }, NULL },
		{ { "java", "-Xmx4g", "-jar", "picard.jar", "MarkDuplicates", "I=in.bam", "O=out.bam",
		    "M=metrics.txt" }, NULL },
		{ { "snakemake", "--cores", "8", "--use-conda", "--keep-going", "all" }, NULL },
		{ { "nextflow", "run", "nf-core/rnaseq", "-profile", "docker", "--input", "samples.csv", "--outdir",
		    "results", "-resume" }, NULL },
		{ { "bcftools", "mpileup", "-f", "ref.fa", "-a", "AD,DP", "in.bam" }, NULL },
		{ { "fastp", "-i", "r1.fq", "-I", "r2.fq", "-o", "o1.fq", "-O", "o2.fq", "--thread", "4" }, NULL },
		{ { "STAR", "--runThreadN", "8", "--genomeDir", "idx", "--readFilesIn", "r1.fq", "r2.fq",
		    "--outSAMtype", "BAM", "SortedByCoordinate" }, NULL },
		{ { "salmon", "quant", "-i", "idx", "-l", "A", "-1", "r1.fq", "-2", "r2.fq", "-p", "8", "-o",
		    "quant" }, NULL },
		{ { "minimap2", "-ax", "sr", "-t", "8", "ref.fa", "r1.fq", "r2.fq" }, NULL },
		{ { "sort", "-k", "2,2n", "-t", "\\t", "--key=1,1", "--key", "3", "file.tsv" }, NULL },
		{ { "find", ".", "-name", "*.bam", "-mtime", "+7", "-print" }, NULL },
		{ { "tar", "-czf", "backup.tar.gz", "/data/run1", "--exclude", "*.tmp" }, NULL },
		{ { "rsync", "-avz", "-e", "ssh -p 2222", "/data/", "user@host:/backup/" }, NULL },
		{ { "ssh", "-p", "22", "-i", "~/.ssh/id_ed25519", "user@host", "ls /data" }, NULL },
		{ { "docker", "run", "--rm", "-p", "8080:80", "--user", "1000:1000", "-v", "/data:/data:ro", "-v",
		    "secrets:/run/secrets:ro", "nginx:1.25" }, NULL },
		{ { "kubectl", "get", "pods", "-n", "prod", "-o", "wide" }, NULL },
		{ { "git", "log", "--oneline", "-n", "20", "origin/main" }, NULL },
		{ { "git", "clone", "git@github.com:org/repo.git" }, NULL },
		{ { "curl", "-fsSL", "-o", "install.sh", "https://example.org:8443/install.sh" }, NULL },
		{ { "mkdir", "-p", "/data/out/run1" }, NULL },
		{ { "make", "-j8", "all" }, NULL },
		{ { "python3", "train.py", "--max-tokens", "4096", "--tokenizer", "bert-base", "--keep-going", "--lr",
		    "0.001" }, NULL },
		{ { "app", "--key-file", "/etc/app/key.pem", "--password-file", "/run/secrets/db", "--token-file",
		    "token.txt", "--keys-only" }, NULL },
		{ { "ssh-keygen", "-t", "ed25519", "-f", "/root/.ssh/id" }, NULL },
		{ { "openssl", "req", "-new", "-key", "server.key", "-out", "server.csr" }, NULL },
		{ { "ffmpeg", "-i", "in.mp4", "-pass", "1", "-f", "null", "/dev/null" }, NULL },
		{ { "env", "PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8", "SSH_AUTH_SOCK=/tmp/agent.sock", "PWD=/data",
		    "cmd" }, NULL },
		{ { "bash", "-c", "for f in *.bam; do samtools index \"$f\"; done" }, NULL },
		{ { "awk", "-F\\t", "{print $1\":\"$2}", "in.tsv" }, NULL },
		{ { "aws", "s3", "cp", "s3://bucket/key/file.txt", ".", "--profile", "prod", "--region",
		    "eu-west-1" }, NULL },
		{ { "aws", "kms", "encrypt", "--key-id", "alias/app", "--plaintext", "fileb://x" }, NULL },
		{ { "psql", "-h", "db", "-U", "app", "-d", "prod", "-c", "select 1" }, NULL },
		{ { "mysql", "-h", "db", "-u", "root", "-p" }, NULL },
		{ { "gpg", "--passphrase-fd", "0", "--batch", "-d", "f.gpg" }, NULL },
		{ { "conda", "run", "-n", "env", "python", "-m", "pip", "install", "numpy==1.26" }, NULL },
		{ { "seqkit", "stats", "-j", "4", "a.fq.gz", "b.fq.gz" }, NULL },
		{ { "cellranger", "count", "--id=s1", "--transcriptome=/ref", "--fastqs=/fq", "--sample=s1" }, NULL },
		{ { "kubectl", "get", "secret", "db", "-o", "yaml" }, NULL },
		{ { "git", "config", "--global", "credential.helper", "store" }, NULL },
		{ { "aws", "configure", "set", "region", "eu-west-1" }, NULL },
		{ { "curl", "-u", "bob", "http://localhost:8080/api?page=2&limit=50" }, NULL },
		{ { "vault", "kv", "get", "-field=password", "secret/db" }, NULL },
		{ { "app", "--private-key", "./keys/id.pem", "--ssh-key", "~/.ssh/id_rsa", "--key", "/etc/ssl/x.key",
		    "--public-key", "pub.pem" }, NULL },
		{ { "app", "--no-password", "--ask-pass", "--auth-type", "basic", "--token-url",
		    "https://auth.example.org/token", "--secret-name", "db-prod" }, NULL },
		{ { "docker", "login", "--password-stdin", "-u", "bob", "registry.example.org" }, NULL },
		{ { "python3", "-c", "import sys; print(sys.argv)" }, NULL },
		{ { "R", "--vanilla", "-e", "rmarkdown::render(\"report.Rmd\")" }, NULL },
		{ { "echo", "Authorization header missing" }, NULL },
	};

	(void)state;
	assert_true(sizeof(lines) / sizeof(lines[0]) >= 30);
	CHECK_LINES(NULL, lines, 0);
}

/* ---- one behaviour each ------------------------------------------------ */

static void secret_shorter_than_the_marker_keeps_its_length(void **state)
{
	static const struct line lines[] = {
		{ { "app", "--password=s3cr3t" }, "app|--password=***" },
		{ { "app", "--password=S3cr3tS3cr3tS3cr3tS3cr3t" }, "app|--password=***" },
	};
	const char *one[] = { "app", "--password=a", "--token", "ab", "--secret=abc" };
	unsigned n;

	(void)state;
	CHECK_LINES(NULL, lines, 0);
	assert_string_equal(redacted(NULL, one, 5, 0, &n), "app|--password=*|--token|**|--secret=***");
	assert_int_equal(n, 3);
}

static void next_argument_is_the_value_unless_it_is_an_option(void **state)
{
	static const struct line plain[] = {
		{ { "psql", "--password", "--host", "db", "prod" }, NULL }, /* --password was a flag here */
		{ { "psql", "--password", "-h", "db", "prod" }, NULL },
		{ { "app", "--token", "-", "file.txt" }, NULL },            /* "-": read it from stdin */
		{ { "app", "--token", "", "file.txt" }, NULL },             /* an empty value is the value */
		{ { "app", "--api-key", "", "--password" }, NULL },         /* the last word: nothing follows */
	};
	static const struct line lines[] = {
		{ { "app", "--token", "S3cr3tX", "file.txt" }, "app|--token|***|file.txt" },
		{ { "app", "--password", "S3cr3t with spaces", "x" }, "app|--password|***|x" },
		{ { "app", "--password", "-S3cr3tDash", "-v" }, "app|--password|***|-v" }, /* as getopt reads it */
	};

	(void)state;
	CHECK_LINES(NULL, plain, 0);
	CHECK_LINES(NULL, lines, 0);
}

static void key_like_names_keep_paths_numbers_and_sort_keys(void **state)
{
	static const struct line secret_lines[] = {
		{ { "app", "--key", "S3cr3tKey" }, "app|--key|***" },
		{ { "app", "--key=S3cr3tKey" }, "app|--key=***" },
		{ { "cast", "send", "--private-key", "0xS3cr3tbeef" }, "cast|send|--private-key|***" },
		{ { "app", "--ssh-key", "S3cr3tInline" }, "app|--ssh-key|***" },
		{ { "app", "--pass", "S3cr3tPass" }, "app|--pass|***" },
		{ { "app", "--license-key", "/not/a/path/S3cr3t" }, "app|--license-key|***" }, /* strong: always */
		{ { "app", "--api-keys", "S3cr3tA,S3cr3tB" }, "app|--api-keys|***" },
	};
	static const struct line plain[] = {
		{ { "sort", "--key=2,2n", "-k", "1", "--key", "3.1,3.5" }, NULL },
		{ { "app", "--private-key", "./k.pem", "--private-key", "~/.ssh/id", "--key", "/etc/x.key" }, NULL },
		{ { "app", "--ssh-key", "id_rsa.pub", "--key", "cert.pem", "--tls-key", "$TLS_KEY" }, NULL },
		{ { "ffmpeg", "-i", "a.mp4", "-pass", "2", "-f", "null", "/dev/null" }, NULL },
		{ { "app", "--sort-key", "name", "--partition-key", "day", "--primary-key", "id", "--key-id", "x" },
		  NULL },
		{ { "app", "--keep-going", "--keys-only", "--keyring", "k", "--key-size", "4096", "--key-type", "rsa" },
		  NULL },
	};

	(void)state;
	CHECK_LINES(NULL, secret_lines, 0);
	CHECK_LINES(NULL, plain, 0);
}

static void short_options_are_secret_only_for_their_program(void **state)
{
	static const struct line plain[] = {
		{ { "ssh", "-p", "2222", "host" }, NULL },
		{ { "mkdir", "-pv", "/data/x" }, NULL },
		{ { "docker", "run", "-p", "80:80", "-u", "1000", "img" }, NULL },
		{ { "tar", "-u", "a:b", "-f", "x.tar" }, NULL },
		{ { "curl", "-u", "bob", "https://x" }, NULL },              /* no password: curl prompts */
		{ { "mysql", "-p", "prod" }, NULL }, /* -p alone prompts; prod is the database */
		{ { "curl", "https://x/login", "-b", "cookies.txt" }, NULL }, /* a URL path is no program; -b FILE */
		{ { "bash", "-c", "mysql -u root db; mkdir -p x" }, NULL },  /* the program ends with its command */
	};
	static const struct line secret_lines[] = {
		{ { "bash", "-c", "ssh -p 22 h; mysql -pS3cr3t db | mkdir -p out" },
		  "bash|-c|ssh -p 22 h; mysql -p*** db | mkdir -p out" },
		{ { "/usr/bin/mysql", "-pS3cr3t" }, "/usr/bin/mysql|-p***" },
		{ { "curl", "-b", "session=S3cr3t", "https://x" }, "curl|-b|***|https://x" },
		{ { "curl", "-ualice:S3cr3t" }, "curl|-ualice:***" },
	};

	(void)state;
	CHECK_LINES(NULL, plain, 0);
	CHECK_LINES(NULL, secret_lines, 0);
}

static void scripts_are_redacted_inside_and_stay_readable(void **state)
{
	static const struct line lines[] = {
		{ { "bash", "-c", "TOKEN=S3cr3t make && make install" }, "bash|-c|TOKEN=*** make && make install" },
		{ { "sh", "-ec", "API_KEY='S3cr3t x' ./run; echo ok" }, "sh|-ec|API_KEY=*** ./run; echo ok" },
		/* not a script (no -c before it): the value runs to the end of the argument */
		{ { "ssh", "h", "DB_PASS=\"S3cr3t x\" ./migrate" }, "ssh|h|DB_PASS=***" },
		{ { "ssh", "h", "cd /x && DB_PASS=\"S3cr3t x\" ./migrate" }, "ssh|h|cd /x && DB_PASS=*** ./migrate" },
		{ { "env", "TOKEN=S3cr3t with spaces", "cmd" }, "env|TOKEN=***|cmd" },
		{ { "bash", "-c", "echo 'password: S3cr3t'\nrun" }, "bash|-c|echo 'password: ***'\nrun" },
		{ { "sh", "-c", "curl -u a:S3cr3t https://x && curl -u b https://y" },
		  "sh|-c|curl -u a:*** https://x && curl -u b https://y" },
		{ { "bash", "-c", "git clone https://u:S3cr3t@h/r.git && cd r" },
		  "bash|-c|git clone https://u:***@h/r.git && cd r" },
	};

	(void)state;
	CHECK_LINES(NULL, lines, 0);
}

static void tokens_keep_their_prefix_and_lose_the_rest(void **state)
{
	static const struct line lines[] = {
		{ { "echo", "AKIAS3CR3TS3CR3TABCD" }, "echo|AKIA***" },
		{ { "echo", "id=ASIAS3CR3TS3CR3TABCD," }, "echo|id=ASIA***," },
		{ { "echo", "ghp_S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3t" }, "echo|ghp_***" },
		{ { "echo", "glpat-S3cr3tS3cr3tS3cr3tAB" }, "echo|glpat-***" },
		{ { "echo", "AIzaS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3c" }, "echo|AIza***" },
		{ { "echo", "Bearer S3cr3tBearer" }, "echo|Bearer ***" },
		{ { "echo", "x eyJhbGciOiJub25lIn0.eyJS3cr3tInRva2VuIn0. y" }, "echo|x eyJ*** y" },
	};
	static const struct line plain[] = {
		{ { "echo", "AKIAEXAMPLE", "AKIAABCDEFGHIJKLMNOPQ", "xAKIAABCDEFGHIJKLMNOP", "ghp_short" }, NULL },
		{ { "echo", "eyJ", "eyJhbGci", "sk-learn", "hf_hub", "xoxb-1" }, NULL },
	};

	(void)state;
	CHECK_LINES(NULL, lines, 0);
	CHECK_LINES(NULL, plain, 0);
}

static void url_user_info_keeps_the_user_and_the_host(void **state)
{
	static const struct line lines[] = {
		{ { "git", "clone", "https://bob:S3cr3t@h.example.org/x" },
		  "git|clone|https://bob:***@h.example.org/x" },
		{ { "ftp", "ftp://u:p@S3cr3t@h/f" }, "ftp|ftp://u:***@h/f" }, /* the last '@' ends the user info */
		{ { "redis-cli", "-u", "redis://:S3cr3t@cache:6379/0" }, "redis-cli|-u|redis://:***@cache:6379/0" },
		{ { "x", "jdbc:mysql://u:S3cr3t@db/x?ssl=1" }, "x|jdbc:mysql://u:***@db/x?ssl=1" },
	};
	static const struct line plain[] = {
		{ { "curl", "https://bob@h/x", "https://h:8443/x", "http://[::1]:80/", "mailto:a@b" }, NULL },
	};

	(void)state;
	CHECK_LINES(NULL, lines, 0);
	CHECK_LINES(NULL, plain, 0);
}

static void truncated_tail_redacts_what_may_be_a_cut_secret(void **state)
{
	const char *url[] = { "git", "clone", "https://bob:S3cr" };
	const char *tok[] = { "echo", "ghp_S3cr3" };
	const char *akia[] = { "echo", "AKIAS3CR" };
	const char *jwt[] = { "echo", "eyJhbGciOiJIUz" };
	const char *not_last[] = { "echo", "ghp_S3cr3", "x" };
	unsigned n;

	(void)state;
	assert_string_equal(redacted(NULL, url, 3, REDACT_TRUNCATED, &n), "git|clone|https://bob:***");
	/* not cut, it reads as host:port */
	assert_string_equal(redacted(NULL, url, 3, 0, &n), "git|clone|https://bob:S3cr");
	assert_string_equal(redacted(NULL, tok, 2, REDACT_TRUNCATED, &n), "echo|ghp_***");
	assert_string_equal(redacted(NULL, akia, 2, REDACT_TRUNCATED, &n), "echo|AKIA***");
	assert_string_equal(redacted(NULL, jwt, 2, REDACT_TRUNCATED, &n), "echo|eyJ***");
	/* only the last string was cut */
	assert_string_equal(redacted(NULL, not_last, 3, REDACT_TRUNCATED, &n), "echo|ghp_S3cr3|x");
}

static void json_bodies_and_headers_lose_their_secret_values(void **state)
{
	static const struct line lines[] = {
		{ { "curl", "-d", "{\"user\": \"bob\", \"password\" : \"S3cr3t \\\"q\\\"\", \"n\": 1}" },
		  "curl|-d|{\"user\": \"bob\", \"password\" : \"***\", \"n\": 1}" },
		{ { "curl", "-H", "authorization:S3cr3t" }, "curl|-H|authorization:***" },
		{ { "curl", "-H", "Proxy-Authorization: Basic S3cr3t==" }, "curl|-H|Proxy-Authorization: ***" },
		{ { "curl", "-H", "X-Auth-Token: S3cr3t", "-H", "X-Request-Id: 42" },
		  "curl|-H|X-Auth-Token: ***|-H|X-Request-Id: 42" },
		{ { "curl", "--header=X-Vault-Token:S3cr3t" }, "curl|--header=X-Vault-Token:***" },
	};
	static const struct line plain[] = {
		{ { "curl", "-H", "Accept: application/json", "-H", "X-Auth-User: bob", "-d", "{\"user\":\"bob\"}" },
		  NULL },
		{ { "docker", "run", "-v", "tokens:/data", "--label", "secret:true", "img" }, NULL },
	};

	(void)state;
	CHECK_LINES(NULL, lines, 0);
	CHECK_LINES(NULL, plain, 0);
}

/* ---- the rules file ---------------------------------------------------- */

static const char site_rules[] = "# site rules for the cluster\n"
				 "\n"
				 "option vault-pass\n"
				 "   option\t--DB_PW   \r\n"
				 "keep password\n"
				 "keep authorization\n"
				 "pattern zz_\n"
				 "pattern acme-"; /* no final newline */

static void rules_file_adds_options_keeps_and_patterns(void **state)
{
	struct redact_rules r;
	char err[128] = "x";
	static const struct line lines[] = {
		{ { "deploy", "--vault-pass", "S3cr3t" }, "deploy|--vault-pass|***" },
		{ { "deploy", "DB_PW=S3cr3t", "--db-pw=S3cr3t", "--Db_Pw", "S3cr3t" },
		  "deploy|DB_PW=***|--db-pw=***|--Db_Pw|***" },
		{ { "echo", "zz_S3cr3t", "acme-S3cr3t.v1", "x-acme-S3cr3t" }, "echo|zz_***|acme-***|x-acme-***" },
		/* keep governs names only: shapes in a kept value are still redacted */
		{ { "app", "--password", "ghp_S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3t" }, "app|--password|ghp_***" },
		{ { "curl", "-H", "Authorization: Bearer S3cr3t" }, "curl|-H|Authorization: Bearer ***" },
	};
	static const struct line kept[] = {
		{ { "app", "--password", "visible", "PASSWORD=visible", "--pass-word", "x" }, NULL },
		{ { "curl", "-H", "Authorization: visible", "zz_", "azz_x" }, NULL },
	};
	const char *passwd[] = { "app", "--passwd", "S3cr3t" }; /* keep password is not keep passwd */
	unsigned n;

	(void)state;
	redact_rules_init(&r);
	assert_int_equal(redact_rules_load(&r, site_rules, strlen(site_rules), err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(r.n, 6);
	assert_string_equal(r.rule[1].text, "db-pw");
	CHECK_LINES(&r, lines, 0);
	CHECK_LINES(&r, kept, 0);
	assert_string_equal(redacted(&r, passwd, 3, 0, &n), "app|--passwd|***");
	/* without the file, the built-in rules */
	{
		static const struct line builtin[] = { { { "app", "--password", "S3cr3t" }, "app|--password|***" } };

		CHECK_LINES(NULL, builtin, 0);
	}
}

static void rules_file_errors_name_the_line_and_change_nothing(void **state)
{
	static const struct {
		const char *text;
		int rc;
		const char *err;
	} cases[] = {
		{ "option\n", -EINVAL, "line 1: option needs an argument" },
		{ "# comment\n\nfoo bar\n", -EINVAL,
		  "line 3: unknown rule \"foo\" (expected option, keep or pattern)" },
		{ "keep a b\n", -EINVAL, "line 1: unexpected text after the argument" },
		{ "option a # comment\n", -EINVAL, "line 1: unexpected text after the argument" },
		{ "pattern x\n", -EINVAL, "line 1: the prefix is too short" },
		{ "pattern ab*\n", -EINVAL, "line 1: a prefix is printable ASCII without '*'" },
		{ "pattern \"ab\n", -EINVAL, "line 1: a prefix is printable ASCII" },
		{ "option 9abc\n", -EINVAL, "line 1: a name starts with a letter or '_'" },
		{ "option a/b\n", -EINVAL, "line 1: a name has only letters" },
		{ "option ---\n", -EINVAL, "line 1: the name is empty" },
		{ "option "
		  "a123456789b123456789c123456789d123456789e123456789f123456789g123\n",
		  -EINVAL, "line 1: the name is too long (at most 63 bytes)" },
		{ "option ok\r\nkeep x\x01y\n", -EINVAL, "line 2: control byte 0x01" },
		{ "Option x\n", -EINVAL, "line 1: unknown rule \"Option\"" },
		{ "option a\nbogus\n", -EINVAL, "line 2: unknown rule \"bogus\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct redact_rules r;
		char err[256];

		redact_rules_init(&r);
		assert_int_equal(redact_rules_load(&r, cases[i].text, strlen(cases[i].text), err, sizeof(err)),
				 cases[i].rc);
		if (strncmp(err, cases[i].err, strlen(cases[i].err)))
			fail_msg("case %zu: got \"%s\", want \"%s...\"", i, err, cases[i].err);
		assert_int_equal(r.n, 0); /* all or nothing */
	}
}

static void rules_file_error_fits_any_buffer(void **state)
{
	struct redact_rules r;
	char small[8] = "xxxxxxx";

	(void)state;
	redact_rules_init(&r);
	assert_int_equal(redact_rules_load(&r, "bogus\n", 6, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "line 1:");
	assert_int_equal(redact_rules_load(&r, "bogus\n", 6, NULL, 0), -EINVAL);
	assert_int_equal(redact_rules_load(&r, "", 0, NULL, 0), 0);
	assert_int_equal(r.n, 0);
}

static void rules_bound_is_an_error_counted_over_every_file(void **state)
{
	static char text[REDACT_RULES_MAX * 16 + 32];
	struct redact_rules r;
	char err[128];
	size_t len = 0;

	(void)state;
	redact_rules_init(&r);
	for (int i = 0; i < REDACT_RULES_MAX - 1; i++)
		len += (size_t)sprintf(text + len, "option opt%d\n", i);
	assert_int_equal(redact_rules_load(&r, text, len, err, sizeof(err)), 0);
	assert_int_equal(r.n, REDACT_RULES_MAX - 1);
	assert_int_equal(redact_rules_load(&r, "keep one\nkeep two\n", 18, err, sizeof(err)), -ENOSPC);
	assert_string_equal(err, "line 2: too many rules (at most 64)");
	assert_int_equal(r.n, REDACT_RULES_MAX - 1); /* the second file added nothing */
	assert_int_equal(redact_rules_load(&r, "keep one\n", 9, err, sizeof(err)), 0);
	assert_int_equal(r.n, REDACT_RULES_MAX);
}

/* ---- buffers and entry points ------------------------------------------ */

static void output_buffer_must_hold_the_input_and_is_never_overrun(void **state)
{
	const char *argv[] = { "app", "--password=S3cr3t", "x" };
	size_t need = input_size(argv, 3), len = 99;
	char out[64];
	unsigned n = 99;

	(void)state;
	memset(out, '#', sizeof(out));
	assert_int_equal(redact_argv(NULL, argv, 3, 0, out, need - 1, &len, &n), -ENOSPC);
	assert_int_equal(len, 0);
	assert_int_equal(n, 0);
	for (size_t i = 1; i < sizeof(out); i++)
		assert_int_equal(out[i], '#');
	assert_int_equal(redact_argv(NULL, argv, 3, 0, out, 0, &len, &n), -ENOSPC);
	assert_int_equal(redact_argv(NULL, argv, 3, 0, out, need, &len, &n), 0);
	assert_int_equal(len, need - 3); /* S3cr3t (6) became *** (3) */
	for (size_t i = need; i < sizeof(out); i++)
		assert_int_equal(out[i], '#');
	assert_int_equal(redact_argv(NULL, NULL, 0, 0, NULL, 0, &len, &n), 0);
	assert_int_equal(len, 0);

	assert_int_equal(redact_area(NULL, "a\0b", 3, 0, out, 2, &len, &n), -ENOSPC);
	assert_int_equal(redact_area(NULL, "a\0b", 3, 0, out, 3, &len, &n), 0);
	assert_int_equal(redact_string(NULL, "abc", 3, 0, out, 3, &len, &n), -ENOSPC);
	assert_int_equal(redact_string(NULL, "abc", 3, 0, out, 4, &len, &n), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(redact_string(NULL, "", 0, 0, out, 1, &len, NULL), 0);
	assert_string_equal(out, "");
}

static void argument_area_is_redacted_string_by_string(void **state)
{
	static const char area[] = "curl\0-u\0bob:S3cr3t\0--token\0S3cr3tTail"; /* cut: no final NUL */
	static const char want[] = "curl\0-u\0bob:***\0--token\0***";
	char out[sizeof(area)];
	size_t len;
	unsigned n;

	(void)state;
	assert_int_equal(redact_area(NULL, area, sizeof(area) - 1, REDACT_TRUNCATED, out, sizeof(out), &len, &n), 0);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(out, want, len);
	assert_int_equal(n, 2);
	/* with its NUL the same */
	assert_int_equal(redact_area(NULL, "a\0--token\0S3cr3t\0", 17, 0, out, sizeof(out), &len, &n), 0);
	assert_int_equal(len, 14);
	assert_memory_equal(out, "a\0--token\0***\0", 14);
	/* an empty string in the middle is kept, and is the empty value of --token */
	assert_int_equal(redact_area(NULL, "--token\0\0x\0", 11, 0, out, sizeof(out), &len, &n), 0);
	assert_memory_equal(out, "--token\0\0x\0", 11);
}

static void null_and_empty_arguments_are_empty_strings(void **state)
{
	const char *argv[] = { "app", NULL, "", "--password", NULL, "after" };
	char out[64];
	size_t len;
	unsigned n;

	(void)state;
	assert_int_equal(redact_argv(NULL, argv, 6, 0, out, sizeof(out), &len, &n), 0);
	assert_int_equal(len, 24);
	assert_memory_equal(out, "app\0\0\0--password\0\0after\0", 24);
	assert_int_equal(n, 0);
}

static void free_form_string_is_one_argument_or_a_script(void **state)
{
	static const struct {
		const char *in;
		unsigned flags;
		const char *want;
	} cases[] = {
		{ "AWS_SECRET_ACCESS_KEY=S3cr3t value", 0, "AWS_SECRET_ACCESS_KEY=***" },
		{ "HOME=/root", 0, "HOME=/root" },
		{ "GIT_ASKPASS=/usr/libexec/git-askpass", 0, "GIT_ASKPASS=/usr/libexec/git-askpass" },
		{ "PGPASSWORD=S3cr3t psql -h db", REDACT_SCRIPT, "PGPASSWORD=*** psql -h db" },
		{ "PGPASSWORD=S3cr3t psql -h db", 0, "PGPASSWORD=***" },
		{ "mysql --password S3cr3t db; ls", REDACT_SCRIPT, "mysql --password *** db; ls" },
	};
	char out[128];
	size_t len;
	unsigned n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(redact_string(NULL, cases[i].in, strlen(cases[i].in), cases[i].flags, out, sizeof(out),
					       &len, &n), 0);
		if (strcmp(out, cases[i].want) || len != strlen(out))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, out, cases[i].want);
	}
	/* bytes after a NUL are text too */
	assert_int_equal(redact_string(NULL, "a\0TOKEN=S3cr3t", 14, REDACT_SCRIPT, out, sizeof(out), &len, &n), 0);
	assert_int_equal(len, 11);
	assert_memory_equal(out, "a\0TOKEN=***", 12);
}

static void counts_every_secret_replaced(void **state)
{
	const char *argv[] = { "app", "--password", "a", "--token=b", "AKIAS3CR3TS3CR3TABCD", "https://u:p@h" };
	char out[128];
	unsigned n;

	(void)state;
	redact_checked(NULL, argv, 6, 0, out, &n);
	assert_int_equal(n, 4);
}

/* Long and hostile inputs: bounded output, idempotent, no quadratic blow-up worth noticing. */
static void hostile_inputs_stay_bounded_and_idempotent(void **state)
{
	static const char *const units[] = { "eyJa-", "://", "\"", "\\", "a=", "-----BEGIN PRIVATE KEY-----",
					     "--password ", "'", "u:p@", "AKIA", "Bearer ", ":\"", "{\"token\":\"",
					     "-p", "`", "$(", "ghp_aaaa", "\n", " ", "x" };
	static char arg[4097];
	uint32_t seed = 12345;

	(void)state;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t k = strlen(units[u]), o = 0;
		const char *argv[3] = { "bash", "-c", arg };
		static char out[OUT_MAX];
		unsigned n;

		while (o + k <= 4096) {
			memcpy(arg + o, units[u], k);
			o += k;
		}
		arg[o] = 0;
		redact_checked(NULL, argv, 3, 0, out, &n);
		argv[1] = "--x";
		redact_checked(NULL, argv, 3, REDACT_TRUNCATED, out, &n);
	}
	for (int round = 0; round < 2000; round++) {
		static char out[OUT_MAX];
		const char *argv[3] = { "curl", "-u", arg };
		size_t len = 1 + (size_t)(round % 200), o = 0;
		unsigned n;

		while (o < len) {
			seed = seed * 1103515245u + 12345u;
			if ((seed >> 16) % 4 == 0) {
				const char *w = units[(seed >> 8) % (sizeof(units) / sizeof(units[0]))];
				size_t k = strlen(w) < len - o ? strlen(w) : len - o;

				memcpy(arg + o, w, k);
				o += k;
			} else {
				arg[o++] = (char)(1 + (seed >> 16) % 255);
			}
		}
		arg[o] = 0;
		redact_checked(NULL, argv, 3, (unsigned)round & 3, out, &n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(secrets_never_reach_the_output_and_names_stay_readable),
		cmocka_unit_test(ordinary_command_lines_come_out_byte_for_byte),
		cmocka_unit_test(secret_shorter_than_the_marker_keeps_its_length),
		cmocka_unit_test(next_argument_is_the_value_unless_it_is_an_option),
		cmocka_unit_test(key_like_names_keep_paths_numbers_and_sort_keys),
		cmocka_unit_test(short_options_are_secret_only_for_their_program),
		cmocka_unit_test(scripts_are_redacted_inside_and_stay_readable),
		cmocka_unit_test(tokens_keep_their_prefix_and_lose_the_rest),
		cmocka_unit_test(url_user_info_keeps_the_user_and_the_host),
		cmocka_unit_test(truncated_tail_redacts_what_may_be_a_cut_secret),
		cmocka_unit_test(json_bodies_and_headers_lose_their_secret_values),
		cmocka_unit_test(rules_file_adds_options_keeps_and_patterns),
		cmocka_unit_test(rules_file_errors_name_the_line_and_change_nothing),
		cmocka_unit_test(rules_file_error_fits_any_buffer),
		cmocka_unit_test(rules_bound_is_an_error_counted_over_every_file),
		cmocka_unit_test(output_buffer_must_hold_the_input_and_is_never_overrun),
		cmocka_unit_test(argument_area_is_redacted_string_by_string),
		cmocka_unit_test(null_and_empty_arguments_are_empty_strings),
		cmocka_unit_test(free_form_string_is_one_argument_or_a_script),
		cmocka_unit_test(counts_every_secret_replaced),
		cmocka_unit_test(hostile_inputs_stay_bounded_and_idempotent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
