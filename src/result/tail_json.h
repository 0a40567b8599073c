/* A tail fit (result/tail.h) as JSON, apart so that the fit needs no jansson. */
#ifndef LATSCOPE_RESULT_TAIL_JSON_H
#define LATSCOPE_RESULT_TAIL_JSON_H

#include <jansson.h>

#include "result/tail.h"

/* A new object (a NaN is null), or NULL when out of memory. */
json_t *tail_to_json(const struct tail_fit *f);

#endif
