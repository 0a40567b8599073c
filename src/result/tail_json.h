/* A tail fit (result/tail.h) as JSON, apart so that the fit needs no jansson. */
#ifndef LATSCOPE_RESULT_TAIL_JSON_H
#define LATSCOPE_RESULT_TAIL_JSON_H

#include <jansson.h>

#include "result/tail.h"

/* A new object (a NaN is null), or NULL when out of memory. */
json_t *tail_to_json(const struct tail_fit *f);

/* The tail object's "above_threshold": the rate per hour above threshold_ns
 * (tail_rate_above's, from says which of TAIL_FROM_MODEL and TAIL_FROM_COUNT). */
json_t *tail_above_json(uint64_t threshold_ns, const struct tail_interval *per_hour, int from);

#endif
