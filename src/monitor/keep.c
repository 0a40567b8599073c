#include "monitor/keep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/nstime.h"
#include "core/parse.h"
#include "monitor/label.h"

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
		if (strcmp(r->labels.items[i].key, MONITOR_LABEL) == 0)
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

int keep_prune(const char *store_path, bool trust, const struct keep_rule *k, uint64_t now_realtime_ns, size_t *ret_removed,
	       struct lat_error *err)
{
	struct store *st = NULL;
	struct run_filter f = { 0 };
	struct run_info *runs = NULL;
	size_t n = 0, drop = 0;
	int r;

	*ret_removed = 0;
	if ((r = store_open(store_path, trust ? STORE_TRUST : 0u, &st, err)) < 0 || (r = store_list(st, &f, &runs, &n, err)) < 0) {
		store_close(st);
		return err_prefix(err, r, "option '--keep': cannot read the store: ");
	}
	int64_t *ids = calloc(n ? n : 1u, sizeof(*ids));
	if (ids)
		drop = keep_select(runs, n, k, now_realtime_ns, ids);
	if (drop && (r = store_rm(st, ids, drop, err)) < 0)
		err_prefix(err, r, "option '--keep': cannot remove old runs: ");
	else
		*ret_removed = drop;
	free(ids);
	free(runs);
	store_close(st);
	return r < 0 ? r : 0;
}
