/* The monitor's GET / page: the figures of /metrics for a person, no script. */
#ifndef LATSCOPE_MONITOR_PAGE_H
#define LATSCOPE_MONITOR_PAGE_H

#include <stdint.h>

#include "monitor/metrics.h"

struct mon_page_info {
	const char *host;
	const char *monitor_id;         /* the label value monitor=ID of its runs */
	const char *store;              /* where they are kept; NULL: not kept */
	unsigned periods;               /* stored so far */
	int64_t last_run;               /* the id of the last one; 0: none yet */
	uint64_t rotate_ns;
	bool report;                    /* /report serves this monitor's report */
};

/* The page as of now_mono_ns, malloc'ed; NULL when out of memory. */
char *mon_page_render(const struct mon_metrics *m, const struct mon_page_info *info, uint64_t now_mono_ns);

#endif
