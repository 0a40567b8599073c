#include "report/rtjson.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/nstime.h"

/* rt-tests' time stamps: local time, as its get_timestamp writes them. */
static json_t *stamp(uint64_t realtime_ns)
{
	const time_t secs = (time_t)(realtime_ns / NS_PER_SEC);
	struct tm local;
	char text[64] = "";

	if (localtime_r(&secs, &local))
		strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S %z", &local);
	return json_string(text);
}

json_t *rtjson_head(const char *cmdline, const char *version, uint64_t start_realtime_ns, uint64_t end_realtime_ns,
		    int return_code, const struct result *res, int num_threads)
{
	json_t *sys = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "sysname", "Linux", "nodename", res->sys.hostname,
				"release", res->sys.kernel_release, "version", res->sys.kernel_version, "machine",
				res->sys.machine, "realtime", strcmp(res->sys.preempt, "PREEMPT_RT") == 0);
	return json_pack("{s:i, s:s, s:s, s:o, s:o, s:i, s:o, s:i}", "file_version", 1, "cmdline:", cmdline,
			 "rt_test_version:", version, "start_time", stamp(start_realtime_ns), "end_time",
			 stamp(end_realtime_ns), "return_code", return_code, "sysinfo", sys, "num_threads", num_threads);
}

json_t *rtjson_with_run_id(json_t *doc, int64_t stored_id)
{
	if (doc && stored_id > 0 && json_object_set_new(doc, "latscope_run_id", json_integer((json_int_t)stored_id)) < 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

json_t *rtjson_with_threads(json_t *doc, bool resolution, size_t n, json_t *(*thread)(const void *ctx, size_t i),
			    const void *ctx, int64_t stored_id)
{
	json_t *threads = json_object();

	for (size_t i = 0; threads && i < n; i++) {
		char key[24];
		json_t *t = thread(ctx, i);
		snprintf(key, sizeof(key), "%zu", i);
		/* json_object_set_new takes t (and below threads), failing or not */
		if (!t || json_object_set_new(threads, key, t) < 0) {
			json_decref(threads);
			threads = NULL;
		}
	}
	if (!doc || !threads || (resolution && json_object_set_new(doc, "resolution_in_ns", json_integer(0)) < 0)) {
		json_decref(threads);
		json_decref(doc);
		return NULL;
	}
	if (json_object_set_new(doc, "thread", threads) < 0) {
		json_decref(doc);
		return NULL;
	}
	return rtjson_with_run_id(doc, stored_id);
}

char *rtjson_dump(const json_t *doc)
{
	return json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
}
