#include "monitor/keep.h"

#include <errno.h>
#include <string.h>

#include "core/nstime.h"
#include "core/parse.h"

#define KEEP_COUNT_MAX 1000000u

int keep_parse(const char *text, struct keep_rule *ret, struct lat_error *err)
{
	uint64_t v;

	memset(ret, 0, sizeof(*ret));
	if (parse_u64(text, &v) == 0) {
		if (v < 1 || v > KEEP_COUNT_MAX)
			return err_set(err, -EINVAL, "option '--keep': %s runs is out of range (1 to %u)", text,
				       KEEP_COUNT_MAX);
		ret->by_count = true;
		ret->count = v;
		return 0;
	}
	/* a duration needs its unit: a bare number is a count */
	if (parse_duration(text, 0, &v) < 0 || v < NS_PER_SEC)
		return err_set(err, -EINVAL, "option '--keep': '%s' is neither a number of runs nor a duration of 1s "
			       "or more such as 7d", text);
	ret->age_ns = v;
	return 0;
}

static bool is_monitor_run(const struct run_info *r)
{
	if (r->partial)
		return false;
	for (unsigned i = 0; i < r->labels.n; i++)
		if (strcmp(r->labels.items[i].key, "monitor") == 0)
			return true;
	return false;
}

/* The probes of the monitor runs seen so far, and how many each has. */
#define KEEP_PROBES 16u

struct probe_count {
	const char *probe;
	size_t total, seen;
};

static struct probe_count *probe_of(struct probe_count *pc, size_t *n, const char *probe)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(pc[i].probe, probe) == 0)
			return &pc[i];
	if (*n == KEEP_PROBES)
		return NULL;
	pc[*n] = (struct probe_count){ .probe = probe };
	return &pc[(*n)++];
}

size_t keep_select(const struct run_info *runs, size_t n, const struct keep_rule *k, uint64_t now_realtime_ns,
		   int64_t *ret_ids)
{
	struct probe_count pc[KEEP_PROBES];
	size_t nprobes = 0, out = 0;

	for (size_t i = 0; i < n; i++) {
		struct probe_count *p = is_monitor_run(&runs[i]) ? probe_of(pc, &nprobes, runs[i].probe) : NULL;
		if (p)
			p->total++;
	}
	for (size_t i = 0; i < n; i++) {
		struct probe_count *p = is_monitor_run(&runs[i]) ? probe_of(pc, &nprobes, runs[i].probe) : NULL;
		if (!p)
			continue;       /* not a monitor's, or past KEEP_PROBES probes: kept */
		p->seen++;
		/* by count, the newest N of each probe: noise runs do not take the periods' places */
		bool drop = k->by_count ? p->total - p->seen >= k->count
					: runs[i].start_realtime_ns + k->age_ns < now_realtime_ns;
		if (drop)
			ret_ids[out++] = runs[i].id;
	}
	return out;
}
