/* Stored runs as one JSON array of their results, each with its run "id". */
#ifndef LATSCOPE_REPORT_JSONEXPORT_H
#define LATSCOPE_REPORT_JSONEXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "result/result.h"

/* The results as latscope writes them (result_to_json), id added.  -ENOMEM,
 * or -EIO for a failed write; err says why. */
int json_export_write(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err);

#endif
