/*
 * The long-run view of a monitor: the runs `latscope monitor` stored, one per
 * period, labelled monitor=<its start time>.  Each period is kept as a few
 * figures taken from its result, so a page of months of periods holds no
 * result longer than it takes to read one.
 */
#ifndef LATSCOPE_REPORT_PERIODS_H
#define LATSCOPE_REPORT_PERIODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "result/result.h"

/* One period: metric 0 of the merged block. */
struct report_period {
	int64_t id;
	uint64_t start_ns;              /* CLOCK_REALTIME */
	uint64_t elapsed_ns;
	uint64_t count, p99, p999, max, missed;
	bool spikes_counted;
	uint64_t spikes;
	uint64_t threshold_ns;          /* 0: none */
	bool partial, interrupted;
	char probe[RESULT_NAME_LEN];
};

/* The periods of one monitor, oldest first, and what its first run says of it. */
struct report_monitor {
	const char *id;                 /* the label's value */
	char probe[RESULT_NAME_LEN];
	char metric[RESULT_NAME_LEN];
	char host[256];
	char labels[512];               /* the first run's labels, monitor=... left out */
	const struct report_period *periods;
	size_t n;
};

/* The figures of run id (its result res) as a period. */
void report_period_take(const struct result *res, int64_t id, struct report_period *ret);
/* What the monitor's first run says of it: probe, metric, host, labels. */
void report_monitor_describe(struct report_monitor *m, const struct result *first, const char *label_key);

/* The page: the periods' max and p99.9 over clock time, then their table.  -ENOMEM, -EIO. */
int html_monitor_write(FILE *out, const struct report_monitor *m);
/* The figure alone (m->n > 0).  -ENOMEM. */
int fig_periods(FILE *out, const struct report_monitor *m);

#endif
