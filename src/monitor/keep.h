/*
 * --keep: which of the stored monitor runs to remove after a period is
 * stored.  Only runs with a "monitor" label count, and never a partial one
 * (a checkpoint of a period still measuring, maybe another monitor's).
 */
#ifndef LATSCOPE_MONITOR_KEEP_H
#define LATSCOPE_MONITOR_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "store/store.h"

struct keep_rule {
	bool by_count;                  /* keep the newest count runs ... */
	uint64_t count;
	uint64_t age_ns;                /* ... or those that started less than age_ns ago */
};

/* "N" (1 to 1000000: runs) or a duration with its unit ("7d", "12h", "90m").
 * -EINVAL with "option '--keep': ..." in err. */
int keep_parse(const char *text, struct keep_rule *ret, struct lat_error *err);

/* The ids of runs (oldest first, as store_list gives them) that k removes at
 * now_realtime_ns, into ret_ids (room for n): how many.  By count, the newest
 * N of each probe are kept (a monitor's noise runs do not count as periods). */
size_t keep_select(const struct run_info *runs, size_t n, const struct keep_rule *k, uint64_t now_realtime_ns,
		   int64_t *ret_ids);

/* Apply k to the store at store_path (trust: as --db-trust, store/trust.h):
 * the runs removed in *ret_removed, or -errno with "option '--keep': ..." in err. */
int keep_prune(const char *store_path, bool trust, const struct keep_rule *k, uint64_t now_realtime_ns, size_t *ret_removed,
	       struct lat_error *err);

#endif
