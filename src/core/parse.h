/*
 * Strict parsers for command-line values.  Each returns 0 and fills ret_*, or a
 * negative errno and leaves ret_* untouched:
 *   -EINVAL  not of the expected form (junk, empty, sign, unknown unit)
 *   -ERANGE  of the form but too large to represent
 */
#ifndef LATSCOPE_CORE_PARSE_H
#define LATSCOPE_CORE_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A duration: digits with an optional fraction and an optional unit among
 * ns us ms s m h d ("250us", "1.5ms", "10").  A bare number is in default_unit ns.
 * The result must be a whole number of nanoseconds ("0.5ns" is -EINVAL).
 */
int parse_duration(const char *text, uint64_t default_unit, uint64_t *ret_ns);

/*
 * A size in bytes: digits with an optional unit among k K m M g G t T (powers
 * of 1024, as fio and dd read them), optionally followed by "iB" or "B"
 * ("4k", "64KiB", "1G", "512").  A bare number is bytes.
 */
int parse_size(const char *text, uint64_t *ret_bytes);

/* A non-negative decimal integer, digits only. */
int parse_u64(const char *text, uint64_t *ret);

/* A decimal integer with an optional leading '-'. */
int parse_i64(const char *text, int64_t *ret);

/* Values of a repeatable option, pointing into argv. */
#define STRLIST_MAX 32

struct strlist {
	unsigned n;
	const char *items[STRLIST_MAX];
};

#define LABEL_KEY_MAX   64     /* including the terminating NUL */
#define LABEL_VALUE_MAX 256
#define LABELS_MAX      32

struct label {
	char key[LABEL_KEY_MAX];
	char value[LABEL_VALUE_MAX];
};

struct labels {
	unsigned n;
	struct label items[LABELS_MAX];
};

/*
 * KEY=VALUE.  KEY: a letter, then letters, digits, '_', '-' or '.'; VALUE:
 * non-empty UTF-8, no control characters, may itself contain '='.
 * -E2BIG when either part is too long.
 */
int parse_label(const char *text, struct label *ret);

/* "k=v k2=v2" into buf (cut to fit, "" for none); the length written. */
size_t labels_format(const struct labels *ls, char *buf, size_t size);

#endif
