/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the ingest's keys file parser (ingest/keys.c), with
 * abort() on a broken invariant.
 *
 * Input: the text of a keys file.
 *
 * Invariants: a parse returns 0, -EINVAL, -E2BIG or -ENOMEM; a failed one
 * leaves the keyring handed in untouched and writes "fuzz:LINE:COL: ..."
 * (or "fuzz: ...") of printable ASCII, cut to the buffer given, with the
 * same verdict whatever the buffer's size; a successful one holds only
 * keys whose id is their own (batch_key_id), sorted, each once, each
 * found by keys_find, bound exactly when a host id was given.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "keys.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const char *err, size_t errsize)
{
	size_t n = strnlen(err, errsize);

	CHECK(n < errsize);
	CHECK(n > 0);
	CHECK(!strncmp(err, "fuzz", n < 4 ? n : 4));
	for (size_t i = 0; i < n; i++)
		CHECK(err[i] >= 0x20 && err[i] < 0x7f);
}

static void check_keyring(const struct keyring *kr)
{
	static const uint8_t zero[BATCH_HOST_ID_LEN];

	for (size_t i = 0; i < kr->n; i++) {
		const struct key_entry *e = &kr->v[i];
		uint8_t id[BATCH_KEY_ID_LEN];

		batch_key_id(e->public_key, id);
		CHECK(!memcmp(id, e->key_id, sizeof(id)));
		CHECK(keys_find(kr, e->key_id) == e);
		CHECK(e->line > 0);
		if (!e->bound)
			CHECK(!memcmp(e->host_id, zero, sizeof(zero)));
		if (i)
			CHECK(memcmp(kr->v[i - 1].key_id, e->key_id, BATCH_KEY_ID_LEN) < 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct keyring kr = { (struct key_entry *)(uintptr_t)0x5a5a, 77 }; /* a sentinel: must survive a failure */
	char err[160], tiny[6];
	int rc, rc2;

	if (!init) {
		CHECK(batch_crypto_init() == 0);
		init = 1;
	}
	rc = keys_parse(&kr, "fuzz", (const char *)data, size, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
	if (rc) {
		CHECK(kr.v == (struct key_entry *)(uintptr_t)0x5a5a && kr.n == 77);
		check_error(err, sizeof(err));
		memset(tiny, 'X', sizeof(tiny));
		rc2 = keys_parse(&kr, "fuzz", (const char *)data, size, tiny, 4);
		CHECK(rc2 == rc);
		CHECK(tiny[3] == 0 && tiny[4] == 'X');
		return 0;
	}
	check_keyring(&kr);
	keys_free(&kr);
	return 0;
}
