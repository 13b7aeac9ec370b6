/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer keygen: a new Ed25519 signing key for this host's processor.
 * The secret key goes to a new file (0600, never over an existing one);
 * the public key line, which the ingest's keys file takes as it is, goes
 * to stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "batch.h"
#include "cmd_keygen.h"
#include "config.h"


static void usage(FILE *f)
{
	/* The default is where the processor reads it: tracer.conf's signing_key default. */
	fprintf(f, "usage: tracer keygen [--out FILE] [--host-id HEX32 | --any-host]\n"
		   "Writes a new signing key to FILE (default %s, mode 0600; an existing\n"
		   "file is never replaced) and prints its public key line for the ingest's keys file:\n"
		   "  tracer-public-key-v1 KEYID PUBLIC_KEY HOST_ID\n"
		   "The key is bound to this host (" BATCH_MACHINE_ID_PATH ") unless --host-id or --any-host says "
		   "otherwise.\n",
		   config_default_text("signing_key"));
}

static int parse_host_id(const char *s, uint8_t id[16])
{
	size_t n;

	return strlen(s) == 32 && !sodium_hex2bin(id, 16, s, 32, NULL, &n, NULL) && n == 16 ? 0 : -1;
}

int cmd_keygen(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "host-id", required_argument, NULL, 'H' },
		{ "any-host", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = config_default_text("signing_key");
	uint8_t host[16];
	bool have_host = false, any_host = false;
	struct batch_secret_key k;
	char line[256];
	int c, err;

	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'H':
			if (parse_host_id(optarg, host)) {
				fprintf(stderr, "tracer keygen: --host-id wants 32 hex digits (like %s)\n", BATCH_MACHINE_ID_PATH);
				return 2;
			}
			have_host = true;
			break;
		case 'a': any_host = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (have_host && any_host)) {
		usage(stderr);
		return 2;
	}
	if (!have_host && !any_host) {
		err = batch_read_id_file(BATCH_MACHINE_ID_PATH, host);
		if (err) {
			fprintf(stderr, "tracer keygen: cannot read this host's id from %s (%s): pass --host-id "
					"or --any-host\n", BATCH_MACHINE_ID_PATH, strerror(-err));
			return 1;
		}
	}
	if (batch_crypto_init()) {
		fprintf(stderr, "tracer keygen: libsodium failed to initialise\n");
		return 1;
	}
	batch_key_generate(&k);
	err = batch_key_write(out, &k);
	if (err) {
		fprintf(stderr, "tracer keygen: cannot write %s: %s%s\n", out, strerror(-err),
			err == -EEXIST ? " (an existing key is never replaced: move it away first, or use --out)" :
			err == -ENOENT ? " (create its directory first)" : "");
		batch_key_wipe(&k);
		return 1;
	}
	if (batch_public_line(&k, any_host ? NULL : host, line, sizeof(line)) == 0)
		printf("%s\n", line);
	fprintf(stderr, "tracer keygen: secret key written to %s (mode 0600); add the line above to the "
			"ingest's keys file to enrol it\n", out);
	batch_key_wipe(&k);
	return 0;
}
