/*
 * A host's answer (host/explain.h) as JSON, for the wire between the agent
 * and the guest and for the stored run.  Times are host CLOCK_MONOTONIC ns;
 * states and kinds by name, exit reasons by number with the kernel's name
 * beside it (the number is what a reader trusts).
 */
#ifndef LATSCOPE_HOST_EXPLAIN_JSON_H
#define LATSCOPE_HOST_EXPLAIN_JSON_H

#include <jansson.h>

#include "core/error.h"
#include "host/explain.h"

/* A new reference, or NULL when out of memory. */
json_t *host_answer_to_json(const struct host_answer *a);

/* 0, or -EINVAL with the reason (a missing or mistyped member, an unknown
 * state or kind); ret is written only on success. */
int host_answer_from_json(const json_t *j, struct host_answer *ret, struct lat_error *err);

#endif
