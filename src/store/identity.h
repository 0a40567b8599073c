/*
 * What makes two stored results the same run.  A measured run is its host,
 * probe and start time; a merged run is the set of runs it was merged from,
 * whatever its own host, probe and start say (two merges that share their
 * earliest run are different runs).  Either is a digest, so the identity of a
 * merge of merges stays short.
 */
#ifndef LATSCOPE_STORE_IDENTITY_H
#define LATSCOPE_STORE_IDENTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* "run:" or "merge:", 64 hex digits, NUL */
#define STORE_IDENTITY_SIZE 72

/*
 * The identity of a result with these fields; members is the merged result's
 * params.merged_members (NULL for a measured run): an array of its members'
 * identities, order not counting.  -EINVAL with err filled when members is
 * not such an array.
 */
int identity_compute(const char *host, const char *probe, uint64_t start_ns, const json_t *members,
		     char out[STORE_IDENTITY_SIZE], struct lat_error *err);

/* The same, read from a result's JSON. */
int identity_of_result(const json_t *doc, char out[STORE_IDENTITY_SIZE], struct lat_error *err);

/* Whether s has the form identity_compute writes. */
bool identity_valid(const char *s);

#endif
