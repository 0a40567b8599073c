/* The result as JSON (schema in doc/result-schema.md), and writing it safely. */
#ifndef LATSCOPE_RESULT_JSON_H
#define LATSCOPE_RESULT_JSON_H

#include <jansson.h>

#include "core/error.h"
#include "result/result.h"
#include "sys/atomicfile.h"

/* A new JSON object for the finalized result, or NULL when out of memory. */
json_t *result_to_json(const struct result *res);

/*
 * The most a result's text may be, checked before it is read or parsed: the
 * tree a parse builds may cost 16 times the text (json_read.c), so 256 MiB
 * bounds what reading one result may take to about 4-5 GiB, what a small
 * machine can give.  A timer run at 1 kHz writes about 13 KB per 1-second
 * window and CPU (and as much again for the merged row): 256 MiB holds 1.5
 * hours of such windows on 2 CPUs, 10 minutes on 16; longer runs want a
 * longer --window.
 */
#define RESULT_TEXT_MAX (256u << 20)
/* -EFBIG with err saying so when len passes RESULT_TEXT_MAX, else 0. */
int result_text_too_large(size_t len, struct lat_error *err);

/*
 * The JSON of a result's text, parsed in memory in proportion to its size:
 * NULL with err saying why (too large, not an object naming the result schema,
 * a tree that would cost more than 16 times the text, not valid JSON).
 */
json_t *result_json_parse(const char *text, size_t len, struct lat_error *err);

/*
 * Rebuild a result from its JSON text, via result_json_parse.  Everything is
 * checked; the "all" block is derived again from the CPUs.  -EINVAL with err
 * naming the first problem by its path, -EPROTO for a newer schema version,
 * -ENOMEM.  ret is empty on failure.
 */
int result_from_text(const char *text, size_t len, struct result *ret, struct lat_error *err);

/*
 * What the store keeps of a result read from a file from elsewhere: the result
 * as result_from_text checked and finalized it, written again by
 * result_to_json with the file's "tool" kept; never the file's own text.
 * malloc'ed, or NULL when out of memory.
 */
char *result_store_text(const struct result *res);

/* The one way a result is written as text (file, store, show --json): malloc'ed. */
char *result_json_dump(const json_t *doc);

/* Write text and a newline to f and put it in place. */
int json_file_commit(struct atomic_file *f, const char *text);

#endif
