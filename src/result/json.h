/* The result as JSON (schema in doc/result-schema.md), and writing it safely. */
#ifndef LATSCOPE_RESULT_JSON_H
#define LATSCOPE_RESULT_JSON_H

#include <jansson.h>

#include "result/result.h"

/* A new JSON object for the finalized result, or NULL when out of memory. */
json_t *result_to_json(const struct result *res);

/*
 * A JSON file written whole or not at all: the data goes to a temporary file
 * beside the target, which replaces the target only once it is complete and
 * on disk.  Opening early proves the path writable before any measuring.
 */
struct json_sink {
	char *path;
	char *tmp;
	int fd;
};

int json_sink_open(const char *path, struct json_sink *ret);
int json_sink_commit(struct json_sink *sink, const json_t *doc);
/* Remove the temporary file; safe after commit and on a zeroed sink. */
void json_sink_close(struct json_sink *sink);

#endif
