/* Stored runs made in memory for compare's rows and gates: two CPUs, two metrics. */
#ifndef LATSCOPE_TEST_CMPRUNS_H
#define LATSCOPE_TEST_CMPRUNS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuset.h"
#include "core/hist.h"
#include "core/stats.h"
#include "result/result.h"

#define CMP_WIN UINT64_C(1000000000) /* 1 s windows */

static const char *const cmpruns_metrics[] = { "latency", "wakeup" };

static inline void run_init(struct result *res, const char *probe)
{
	struct cpuset set;

	assert_int_equal(cpuset_parse("0-1", &set), 0);
	assert_int_equal(result_init(res, probe, 2, cmpruns_metrics, &set), 0);
}

/* Window index of CPU row i: n samples of metric 0, all of value v. */
static inline void run_window(struct result *res, size_t i, uint64_t index, unsigned n, uint64_t v)
{
	struct rec_window w;
	struct hist *h = calloc(2, sizeof(*h));

	assert_non_null(h);
	memset(&w, 0, sizeof(w));
	w.index = index;
	w.start_ns = index * CMP_WIN;
	w.end_ns = (index + 1u) * CMP_WIN;
	stats_reset(&w.overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		stats_reset(&w.m[m].st);
	hist_reset(&h[0]);
	hist_reset(&h[1]);
	for (unsigned k = 0; k < n; k++) {
		stats_add(&w.m[0].st, v);
		hist_record(&h[0], v);
	}
	assert_int_equal(result_add_window(res, &res->cpus[i], &w, h), 0);
	free(h);
}

static inline void run_label(struct result *res, const char *key, const char *value)
{
	struct label *l = &res->labels.items[res->labels.n++];

	snprintf(l->key, sizeof(l->key), "%s", key);
	snprintf(l->value, sizeof(l->value), "%s", value);
}

/* A finished run of CPU 0 whose window k holds 100 samples of values[k] ns. */
static inline void run_of(struct result *res, const char *probe, const uint64_t *values, size_t n)
{
	run_init(res, probe);
	for (size_t k = 0; k < n; k++)
		run_window(res, 0, k, 100, values[k]);
	assert_int_equal(result_finalize(res), 0);
}

static inline void runs_free(struct result *res, size_t n)
{
	for (size_t i = 0; i < n; i++)
		result_free(&res[i]);
}

#endif
