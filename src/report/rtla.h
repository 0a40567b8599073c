/*
 * What rtla timerlat prints, from a latscope timer result: the `hist`
 * histogram with its count/min/avg/max rows, the `top` table, and the
 * auto-analysis block of a sample that hit -T.  Layouts follow rtla 6.x
 * (tools/tracing/rtla); rteval and cnf-tests parse them.
 *
 * The three columns per CPU are latscope's trace stages (result-schema.md,
 * trace.cpus[].stages): IRQ the irq stage, Thr the thread stage, from the
 * trace's linear histograms; Usr every sample's latency, from the kept
 * linear histogram (result_keep_lin).  A CPU without the trace has no IRQ and
 * Thr figures: those columns are left out.
 */
#ifndef LATSCOPE_REPORT_RTLA_H
#define LATSCOPE_REPORT_RTLA_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "result/result.h"

enum rtla_ctx { RTLA_IRQ, RTLA_THR, RTLA_USR, RTLA_CTXS };

/* One column: a stage of one CPU, in the view's units. */
struct rtla_col {
	bool have;                      /* figures exist (the trace, or the kept histogram) */
	uint64_t count, min, max, cur;
	uint64_t sum;                   /* of the values in whole units: rtla's avg is sum / count */
	uint64_t over;                  /* samples at or past the last bucket */
	const uint64_t *bins;           /* entries counters, or NULL (top: none) */
	uint64_t *owned;                /* bins when the view made them (freed with it) */
};

struct rtla_cpu {
	int cpu;
	struct rtla_col col[RTLA_CTXS];
};

struct rtla_view {
	bool nano;                      /* -n: nanoseconds, else microseconds */
	bool no_irq, no_thread, no_summary, with_zeros;
	bool no_header, no_index;       /* hist: no '#' lines and Index line; no index column */
	bool user;                      /* -u: the Usr columns, as rtla shows them */
	uint32_t entries, bucket;       /* -E, -b (hist) */
	uint64_t elapsed_ns;            /* for the Duration line */
	size_t ncpus;
	struct rtla_cpu *cpus;
};

/* The divisor of a nanosecond value for the view's unit. */
static inline uint64_t rtla_unit_ns(const struct rtla_view *v)
{
	return v->nano ? 1u : 1000u;
}

/* Fill v->cpus from a finished result (v's options set): 0, -ENOMEM, or
 * -EINVAL when the result kept a linear histogram of other than v->entries bins. */
int rtla_view_fill(struct rtla_view *v, const struct result *res);
/* The same while measuring: Usr's running figures only (the trace is read at the end). */
int rtla_view_live(struct rtla_view *v, const struct result *res);
void rtla_view_free(struct rtla_view *v);

/* "  0 00:00:10": days, then hours:minutes:seconds (to the nearest second), as rtla's get_duration. */
void rtla_duration(uint64_t elapsed_ns, char *buf, size_t size);

/* timerlat hist's output: header, bucket rows, over:, and the summary rows. */
int rtla_print_hist(FILE *out, const struct rtla_view *v);
/* timerlat top's table; clear puts rtla's clear-screen sequence before it. */
int rtla_print_top(FILE *out, const struct rtla_view *v, bool clear);

/*
 * The auto-analysis block of rtla for the sample of cpu (its CPU number)
 * whose deadline was at_ns from the origin: from that sample's trace spike.
 * -ENOENT when the trace did not explain it.
 */
int rtla_print_analysis(FILE *out, const struct result *res, int cpu, int64_t at_ns);

#endif
