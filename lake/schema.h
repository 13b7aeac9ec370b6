/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's tables and columns, defined once (schema.c's table), with the
 * schema version that added each: the DDL of a new lake and every upgrade
 * from an older one are built from it, so that a column added once is in
 * both or in neither. docs/lake.md describes every table and column.
 * Private to lake/.
 */
#ifndef TRACER_LAKE_SCHEMA_H
#define TRACER_LAKE_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

/* The lake's schema version: what schema.c's table describes (docs/lake.md, "Versions"). */
#define LAKE_SCHEMA_VERSION 8

enum lake_type {
	LK_INT,  /* a 64-bit integer */
	LK_TEXT, /* UTF-8 text (a host's, so any bytes: SQLite keeps them) */
	LK_REAL, /* a double */
	LK_BLOB, /* bytes */
	LK_ID,   /* the table's own row id: an integer the lake assigns, its primary key */
};

enum {
	LK_NOT_NULL = 1u << 0,
	LK_KEY = 1u << 1,    /* the primary key on its own (a text key: hosts, keys) */
	LK_UNIQUE = 1u << 2, /* unique on its own */
};

struct lake_column {
	const char *name;
	uint8_t type;      /* enum lake_type */
	uint8_t flags;     /* LK_NOT_NULL, LK_KEY, LK_UNIQUE */
	uint8_t since;     /* the schema version that added it */
	uint8_t until;     /* the version that removed it; 0: none did */
	const char *dflt;  /* its DEFAULT, as SQL; NULL: none */
	const char *check; /* a CHECK on it, as SQL; NULL: none */
};

struct lake_index {
	const char *name;
	const char *columns; /* "a, b" */
	bool unique;
	uint8_t since;
	uint8_t until; /* the version that removed it; 0: none did */
};

struct lake_table {
	const char *name;
	uint8_t since;
	const struct lake_column *cols;
	unsigned ncols;
	const char *key;    /* PRIMARY KEY (...) of several columns; NULL: none, or a column's own */
	const char *unique; /* a UNIQUE (...) of several columns; NULL: none */
	bool without_rowid; /* SQLite: a table clustered on its key */
	uint8_t rebuilt;    /* the last version that changed its key: its upgrade copies the table into a new one */
	const char *was;    /* its key (or unique) before that version */
	const struct lake_index *idx;
	unsigned nidx;
};

extern const struct lake_table lake_tables[];
extern const unsigned lake_ntables;

/* The table of that name, or NULL. */
const struct lake_table *lake_table(const char *name);

/*
 * Into o, the SQL that brings a lake of schema version `from` (0: an empty database) to version `to`
 * (LAKE_SCHEMA_VERSION; an older one only for tests, which make old lakes with it), for SQLite: tables,
 * columns, the upgrades' own updates of old rows, indexes, the version's row. Run in one transaction. 0, or
 * -EINVAL for versions this build cannot upgrade (from below 0, to below from or above LAKE_SCHEMA_VERSION).
 */
int lake_schema_sqlite(int from, int to, struct obuf *o);

#endif /* TRACER_LAKE_SCHEMA_H */
