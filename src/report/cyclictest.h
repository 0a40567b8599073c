/*
 * What cyclictest prints, from a latscope result with cyclictest's histogram
 * kept (result_keep_lin): its T: lines, its -h histogram with the summary
 * lines under it, and its --json layout, so that tools written for cyclictest
 * read latscope unchanged.  Formats follow rt-tests 2.x.
 */
#ifndef LATSCOPE_REPORT_CYCLICTEST_H
#define LATSCOPE_REPORT_CYCLICTEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "result/result.h"

/* cyclictest's view of the run: what its T: lines and JSON show. */
struct cyc_view {
	bool nsecs;                     /* -N: values in ns instead of us */
	bool histofall;                 /* -H: a column of all threads summed */
	uint64_t interval_us;           /* I: of thread 0 */
	uint64_t distance_us;           /* added to I: for each thread after the first */
	unsigned priority;              /* P: */
	const char *policy;             /* "fifo", "rr" or "other" */
	bool smi;                       /* --smi: each thread's SMIs, counted beside the windows so far */
};

/* One thread's T: line: thread is its index, cr its CPU's result. */
void cyc_print_stat(FILE *out, const struct cyc_view *v, unsigned thread, const struct cpu_result *cr);

/* Every thread's T: line. */
void cyc_print_stats(FILE *out, const struct cyc_view *v, const struct result *res);

/*
 * The live block cyclictest redraws: the policy and load line, a blank line
 * and the T: lines; again says the block is drawn over the previous one
 * (cursor up), as cyclictest does with \033[nA.
 */
void cyc_print_live(FILE *out, const struct cyc_view *v, const struct result *res, const char *loadavg, bool again);

/* The -h histogram and its summary lines.  -EINVAL when res kept no histogram. */
int cyc_print_hist(FILE *out, const struct cyc_view *v, const struct result *res);

/*
 * What cyclictest prints last with -b: every thread's id, and when a value
 * went above the limit, the thread that saw it first (its kernel id) and
 * that value (truncated to us, ns with -N).  broke_cpu < 0: no break.
 */
void cyc_print_break(FILE *out, const struct cyc_view *v, const struct result *res, int broke_cpu,
		     uint64_t broke_ns);

/* The times and command line the --json file states. */
struct cyc_run {
	const char *cmdline;
	const char *version;            /* what rt_test_version says */
	uint64_t start_realtime_ns, end_realtime_ns;
	int return_code;
	int64_t stored_id;              /* latscope's run id; 0: not stored */
	const int *node;                /* each thread's NUMA node, or NULL (all 0) */
};

/* The --json document, or NULL (out of memory). */
json_t *cyc_json(const struct result *res, const struct cyc_run *run);

#endif
