/* The result as JSON (schema in doc/result-schema.md), and writing it safely. */
#ifndef LATSCOPE_RESULT_JSON_H
#define LATSCOPE_RESULT_JSON_H

#include <jansson.h>

#include "result/result.h"
#include "sys/atomicfile.h"

/* A new JSON object for the finalized result, or NULL when out of memory. */
json_t *result_to_json(const struct result *res);

/*
 * Rebuild a result from its JSON.  Everything is checked; the "all" block is
 * derived again from the CPUs.  -EINVAL with err naming the first problem by
 * its path, -EPROTO for a newer schema version, -ENOMEM.  ret is empty on failure.
 */
int result_from_json(const json_t *doc, struct result *ret, char *err, size_t errlen);
int result_from_text(const char *text, size_t len, struct result *ret, char *err, size_t errlen);

/* The one way a result is written as text (file, store, show --json): malloc'ed. */
char *result_json_dump(const json_t *doc);

/* Write text and a newline to f and put it in place. */
int json_file_commit(struct atomic_file *f, const char *text);

#endif
