/*
 * Fuzz target for the result importer (result_from_text in
 * src/result/json_read.c): no input may crash it, hang it, leak or read out
 * of bounds, and every refusal must say why.  What it accepts must go all the
 * way back out (result_to_json, result_json_dump) and be accepted again:
 * an imported result that cannot be exported or re-imported, or whose export
 * holds a negative count (a sum that wrapped), is a bug too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "result/json.h"
#include "result/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_message(const char *err, size_t size)
{
	if (err[0] == '\0' || !memchr(err, '\0', size))
		abort();
}

/* Every integer of the schema is a count, a time or an index: never negative. */
static bool has_negative(const json_t *v)
{
	const char *key;
	const json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_INTEGER:
		return json_integer_value(v) < 0;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, x)
			if (has_negative(x))
				return true;
		return false;
	case JSON_ARRAY:
		json_array_foreach(v, i, x)
			if (has_negative(x))
				return true;
		return false;
	case JSON_STRING:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return false;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result res, again;
	char err[256];

	memset(err, 0, sizeof(err));
	if (result_from_text((const char *)data, size, &res, err, sizeof(err)) < 0) {
		expect_message(err, sizeof(err));
		return 0;
	}

	json_t *doc = result_to_json(&res);
	if (!doc)
		abort();                        /* imported, yet cannot be exported */
	const char *key;
	json_t *v;
	json_object_foreach(doc, key, v)
		if (strcmp(key, "params") != 0 && has_negative(v))
			abort();                /* a sum past INT64_MAX, written as a negative number */
	char *text = result_json_dump(doc);
	if (!text)
		abort();
	json_decref(doc);
	result_free(&res);

	if (result_from_text(text, strlen(text), &again, err, sizeof(err)) < 0)
		abort();                        /* our own output refused: err says why */
	result_free(&again);
	free(text);
	return 0;
}
