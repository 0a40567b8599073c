/*
 * The --json layout rt-tests' programs share (cyclictest, oslat): the same
 * leading keys, in the same order, the same time stamps and sysinfo.  Each
 * front end adds its own keys after them, then latscope's run id.
 */
#ifndef LATSCOPE_REPORT_RTJSON_H
#define LATSCOPE_REPORT_RTJSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result/result.h"

/* file_version, "cmdline:", "rt_test_version:" (the colons are rt-tests' own),
 * start_time, end_time, return_code, sysinfo and num_threads; NULL: out of memory. */
json_t *rtjson_head(const char *cmdline, const char *version, uint64_t start_realtime_ns, uint64_t end_realtime_ns,
		    int return_code, const struct result *res, int num_threads);

/* doc with latscope_run_id last when the run was stored (stored_id > 0); on
 * failure doc is released and NULL returned. */
json_t *rtjson_with_run_id(json_t *doc, int64_t stored_id);

/*
 * doc (rtjson_head's, taken) completed: cyclictest's "resolution_in_ns": 0
 * when asked, "thread" with n members "0", "1", ... made by thread(ctx, i)
 * (NULL: out of memory or no figures), then latscope_run_id.  NULL on failure.
 */
json_t *rtjson_with_threads(json_t *doc, bool resolution, size_t n, json_t *(*thread)(const void *ctx, size_t i),
			    const void *ctx, int64_t stored_id);

/* The text as rt-tests indents it; free() it.  NULL: out of memory. */
char *rtjson_dump(const json_t *doc);

#endif
