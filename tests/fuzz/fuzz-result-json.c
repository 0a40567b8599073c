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

#include "negative.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_message(const struct lat_error *err)
{
	if (err->msg[0] == '\0' || !memchr(err->msg, '\0', sizeof(err->msg)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result res, again;
	struct lat_error err;

	memset(err.msg, 0, sizeof(err.msg));
	if (result_from_text((const char *)data, size, &res, &err) < 0) {
		expect_message(&err);
		return 0;
	}

	json_t *doc = result_to_json(&res);
	if (!doc)
		abort();                        /* imported, yet cannot be exported */
	if (result_has_negative(doc))
		abort();                        /* a sum past INT64_MAX, written as a negative number */
	char *text = result_json_dump(doc);
	if (!text)
		abort();
	json_decref(doc);
	result_free(&res);

	if (result_from_text(text, strlen(text), &again, &err) < 0)
		abort();                        /* our own output refused: err.msg says why */
	result_free(&again);
	free(text);
	return 0;
}
