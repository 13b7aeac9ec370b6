/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the tool rules parser and naming with rules, with
 * abort() on a broken invariant.
 *
 * Input: the rules text, then (after the first NUL byte, if any) an image to
 * name: NUL-separated strings, the first the executable's path, the rest
 * its argv. Without a NUL, a few fixed images are named.
 *
 * Invariants: a load returns 0 or a negative errno; a failed load leaves
 * the rules in force (same count, same names) and writes a message
 * "fuzz:LINE:COL: ..." (or "fuzz: ...") of printable ASCII, truncated to the
 * buffer given; names are NUL-terminated, their length is what was
 * returned and fits the buffer, whatever its size; a glob made of the
 * input terminates (the time limit catches a blow-up).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "toolrules.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

static const char base_rules[] = "rename bwa-mem2 bwa\nsubcommand mytool value -c\n";

static void check_name(const struct toolrules *tr, const char *exe, const char *const *argv, size_t argc)
{
	static const size_t sizes[] = { 0, 1, 2, 7, TOOL_NAME_MAX };
	char out[TOOL_NAME_MAX + 8];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n;

		memset(out, 0x5a, sizeof(out));
		n = toolrules_name(tr, exe, argv, argc, out, sizes[i]);
		if (sizes[i] == 0) {
			CHECK(n == 0 && (unsigned char)out[0] == 0x5a);
			continue;
		}
		CHECK(n < sizes[i]);
		CHECK(strlen(out) == n);
		CHECK((unsigned char)out[sizes[i]] == 0x5a); /* nothing written past the buffer */
	}
}

static void check_error(const char *err, size_t errsize)
{
	size_t n = strnlen(err, errsize);

	CHECK(n < errsize);
	CHECK(n > 0);
	CHECK(!strncmp(err, "fuzz", n < 4 ? n : 4));
	for (size_t i = 0; i < n; i++)
		CHECK(err[i] >= 0x20 && err[i] < 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fixed[][6] = {
		{ "/usr/bin/samtools", "samtools", "sort", "-o", "x", NULL },
		{ "/usr/bin/python3", "python3", "-m", "snakemake", "--cores", NULL },
		{ "/opt/mytool", "mytool", "-c", "x", "run", NULL },
		{ "/usr/bin/bwa-mem2", "bwa-mem2", "mem", NULL },
	};
	const char *text = (const char *)data;
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	struct toolrules tr;
	char before[TOOL_NAME_MAX], after[TOOL_NAME_MAX], err[160];
	const char *argv[MAX_ARGS + 1];
	char *image = NULL;
	size_t argc = 0;
	uint64_t loads;
	uint32_t rules;
	int rc;

	toolrules_init(&tr);
	CHECK(toolrules_load_as(&tr, "fuzz", base_rules, sizeof(base_rules) - 1, err, sizeof(err)) == 0);
	toolrules_name(&tr, fixed[3][0], fixed[3] + 1, 2, before, sizeof(before));
	loads = tr.loads;
	rules = tr.rules;

	/* The whole text with a roomy buffer, then again with a tiny one: same verdict. */
	rc = toolrules_load_as(&tr, "fuzz", text, tlen, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
	if (rc) {
		char tiny[6];
		int rc2;

		check_error(err, sizeof(err));
		CHECK(tr.loads == loads && tr.rules == rules);
		toolrules_name(&tr, fixed[3][0], fixed[3] + 1, 2, after, sizeof(after));
		CHECK(!strcmp(before, after));
		memset(tiny, 'X', sizeof(tiny));
		rc2 = toolrules_load_as(&tr, "fuzz", text, tlen, tiny, 4);
		CHECK(rc2 == rc);
		CHECK(tiny[3] == 0 && tiny[4] == 'X');
	} else {
		CHECK(tr.loads == loads + 1);
		CHECK(tr.n_tools + tr.n_renames + tr.extra.n_interps + tr.extra.n_subcmds == tr.rules);
	}

	/* Name the input's image, or the fixed ones. */
	if (nul) {
		size_t ilen = size - tlen - 1;
		size_t i = 0;

		image = malloc(ilen + 1);
		CHECK(image != NULL);
		memcpy(image, nul + 1, ilen);
		image[ilen] = 0;
		while (i <= ilen && argc < MAX_ARGS) {
			argv[argc++] = image + i;
			i += strlen(image + i) + 1;
		}
		argv[argc] = NULL;
		check_name(&tr, argv[0], argv + 1, argc - 1);
		check_name(&tr, NULL, argv + 1, argc - 1);
		/* a glob made of the input, on the input */
		if (argc >= 2 && strlen(argv[0]) <= TOOLRULES_GLOB_MAX)
			(void)tool_glob(argv[0], argv[1]);
	} else {
		for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
			size_t n = 0;

			while (fixed[k][n + 1])
				n++;
			check_name(&tr, fixed[k][0], fixed[k] + 1, n);
		}
	}
	free(image);
	toolrules_free(&tr);
	return 0;
}
