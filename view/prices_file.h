/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The price table a program uses when it is given none: the one installed
 * with tracer ($(PREFIX)/share/tracer/prices.csv), or the source tree's
 * (data/prices.csv), found next to the running binary (docs/cost.md).
 */
#ifndef TRACER_VIEW_PRICES_FILE_H
#define TRACER_VIEW_PRICES_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "cost.h"

/* The table in the file at path: 0, or 1 with a message on stderr (a price table is the user's file). */
int price_table_load(const char *path, struct price_table *t);
/* The default table: 1 loaded (its path in path), 0 none found, -1 found but refused (said on stderr). */
int cost_default_table(struct price_table *t, char *path, size_t pathlen);

/*
 * The table a --prices option names (path_opt), else the default one:
 * 0 with *have saying whether there is one (its path in path), or 1 when
 * the named or found table is refused (said on stderr).
 */
int price_table_choose(const char *path_opt, struct price_table *t, char *path, size_t pathlen, bool *have);

#endif /* TRACER_VIEW_PRICES_FILE_H */
