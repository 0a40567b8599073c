/*
 * Fuzz target for expr_parse (src/core/expr.c): no input may crash it, read
 * past the text or leave err without a message; whatever it accepts,
 * expr_format must write back as text it reads back unchanged.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly sized, so reading past the terminator is caught by ASan. */
	char *text = malloc(size + 1u);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct expr e, back;
	struct lat_error err;
	char buf[128];
	memset(err.msg, 0, sizeof(err.msg));
	if (expr_parse(text, &e, &err) < 0) {
		if (err.msg[0] == '\0' || !memchr(err.msg, '\0', sizeof(err.msg)))
			abort();                /* every refusal says why */
		free(text);
		return 0;
	}

	expr_format(&e, buf, sizeof(buf));
	if (expr_parse(buf, &back, &err) < 0 || back.stat != e.stat || back.op != e.op ||
	    back.kind != e.kind || back.raw != e.raw || back.value != e.value || signbit(back.value) != signbit(e.value))
		abort();                        /* format and parse disagree */

	/* Every path of the comparison, including the zero baseline and NaN. */
	static const double values[] = { 0.0, 1.0, 100.0, 1e9, 1e300, -1.0 };
	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		for (size_t k = 0; k < ARRAY_SIZE(values); k++)
			(void)expr_fails(&e, values[i], values[k]);
	(void)expr_fails(&e, nan(""), 1.0);
	free(text);
	return 0;
}
