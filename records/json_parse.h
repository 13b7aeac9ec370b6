/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A strict, bounded JSON reader (RFC 8259), for text a less trusted
 * process wrote (the processor's status file, read by `tracer status`;
 * the live records the lake stores).
 * The whole text is checked before anything is read from it; the result
 * is a tree of nodes in an array the caller gives. Nothing is allocated,
 * nothing is copied until a value is read.
 *
 * Strict: one value with only whitespace around it; no comments, no
 * trailing commas, no leading zeros, no NaN or Infinity; strings of
 * well-formed UTF-8 without control characters, with only the escapes
 * RFC 8259 lists (a \u surrogate only in a high-low pair); no object with
 * two members of the same name (which one a reader takes differs between
 * readers).
 * Bounded: at most cap nodes (one per value), JSON_PARSE_MAX_DEPTH levels
 * of arrays and objects (the parser recurses once per level), texts
 * shorter than 4 GiB.
 *
 * Reading: json_member() finds an object's member by name; json_get_u64,
 * json_get_bool and json_get_string read a value of their type and refuse
 * any other.
 */
#ifndef TRACER_RECORDS_JSON_PARSE_H
#define TRACER_RECORDS_JSON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_PARSE_MAX_DEPTH 16

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

enum json_parse_error {
	JSON_OK = 0,
	JSON_E_END,       /* the text ends before the value does (truncated) */
	JSON_E_TOKEN,     /* a character that cannot start or continue a value there */
	JSON_E_NUMBER,    /* a number not in JSON's form: "01", "1.", "-", ".5", "1e" */
	JSON_E_CONTROL,   /* a control character inside a string (JSON wants \u00XX) */
	JSON_E_ESCAPE,    /* a backslash escape JSON does not have, or \u without 4 hex digits */
	JSON_E_SURROGATE, /* a \u surrogate that is not half of a high-low pair */
	JSON_E_UTF8,      /* bytes that are not well-formed UTF-8 */
	JSON_E_DUPLICATE, /* an object with two members of the same name */
	JSON_E_TRAILING,  /* text after the value */
	JSON_E_DEPTH,     /* arrays and objects nested deeper than JSON_PARSE_MAX_DEPTH */
	JSON_E_TOO_MANY,  /* more values than the nodes given */
	JSON_E_TOO_LONG,  /* a text of 4 GiB or more */
};

/* What a number is: 0..2^64-1; whole and larger; anything else; whole and -2^63..-0 (json_get_i64). */
enum json_number { JSON_NUM_U64, JSON_NUM_HUGE, JSON_NUM_OTHER, JSON_NUM_NEG };

struct json_node {
	uint8_t type;          /* enum json_type */
	uint8_t number;        /* JSON_NUMBER: enum json_number */
	bool boolean;          /* JSON_BOOL: its value */
	bool escaped;          /* JSON_STRING: its text holds a backslash escape */
	bool key_escaped;      /* a member's name holds one */
	uint32_t start, len;   /* the value's text; a string's between its quotes, as written */
	uint32_t key_start, key_len; /* an object member's name, the same way */
	uint32_t first;        /* array, object: the first child's index (0: none; the root is never a child) */
	uint32_t next;         /* the next sibling's index (0: the last) */
	uint32_t count;        /* array, object: how many children */
	uint64_t u64;          /* JSON_NUMBER of JSON_NUM_U64: its value; of JSON_NUM_NEG: its magnitude */
};

struct json_doc {
	const char *text;
	size_t len;
	const struct json_node *nodes; /* nodes[0] is the root; n of them */
	uint32_t n;
	enum json_parse_error err;     /* after a failed parse: what */
	size_t err_at;                 /* ... and the byte offset where */
};

/* Parse len bytes of text into nodes (cap of them). 0, or -EINVAL with d->err and d->err_at. */
int json_parse(struct json_doc *d, const char *text, size_t len, struct json_node *nodes, uint32_t cap);

const char *json_parse_error_name(enum json_parse_error e);
const char *json_type_name(enum json_type t);

/* The root value of a parsed document. */
const struct json_node *json_root(const struct json_doc *d);

/* The member of obj named name, or NULL (no such member, or obj is not an object). */
const struct json_node *json_member(const struct json_doc *d, const struct json_node *obj, const char *name);

/* Children of an array or object, in order: json_first(d, n), then json_next(d, child); NULL after the last. */
const struct json_node *json_first(const struct json_doc *d, const struct json_node *n);
const struct json_node *json_next(const struct json_doc *d, const struct json_node *child);

/* A whole number 0..2^64-1. 0, -EINVAL (not a number, or negative, fractional, with an exponent), -ERANGE (larger). */
int json_get_u64(const struct json_node *n, uint64_t *v);

/* A whole number -2^63..2^63-1. 0, -EINVAL (not a number, fractional, with an exponent), -ERANGE (outside). */
int json_get_i64(const struct json_node *n, int64_t *v);

/*
 * Any number, as the nearest double. 0, -EINVAL (not a number), -ERANGE (beyond a double's range, or a
 * text longer than JSON_NUMBER_TEXT_MAX characters).
 */
#define JSON_NUMBER_TEXT_MAX 64
int json_get_double(const struct json_doc *d, const struct json_node *n, double *v);

/* true or false. 0 or -EINVAL. */
int json_get_bool(const struct json_node *n, bool *v);

/*
 * A string, decoded (UTF-8) and NUL-terminated into buf (cap bytes); its
 * length in *len (may be NULL). 0, -EINVAL (not a string) or -ENOSPC (it
 * and its NUL do not fit; buf holds nothing usable).
 */
int json_get_string(const struct json_doc *d, const struct json_node *n, char *buf, size_t cap, size_t *len);

/* A member's name, decoded the same way. */
int json_get_key(const struct json_doc *d, const struct json_node *member, char *buf, size_t cap, size_t *len);

#endif /* TRACER_RECORDS_JSON_PARSE_H */
