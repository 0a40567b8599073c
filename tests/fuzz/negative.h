/* For the fuzz targets: does a result's JSON hold a negative integer where it must not? */
#ifndef LATSCOPE_FUZZ_NEGATIVE_H
#define LATSCOPE_FUZZ_NEGATIVE_H

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "core/array.h"

static inline bool has_negative(const json_t *v)
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

/* Every integer of the schema is a count, a time or an index, never negative: a negative one
 * is a sum past INT64_MAX.  The opaque parts (params, fingerprint, findings, trace) are kept
 * as the file gave them. */
static inline bool result_has_negative(const json_t *doc)
{
	static const char *const opaque[] = { "params", "fingerprint", "findings", "trace" };
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)doc, key, v) {
		bool skip = false;
		for (size_t i = 0; i < ARRAY_SIZE(opaque); i++)
			skip |= strcmp(key, opaque[i]) == 0;
		if (!skip && has_negative(v))
			return true;
	}
	return false;
}

#endif
