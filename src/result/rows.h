/*
 * compare's rows: the runs of one probe, one row per run or per group of runs
 * with the same values of some labels, each summed up in a struct cmp_row.
 * The caller loads the runs; this only groups and names them.
 */
#ifndef LATSCOPE_RESULT_ROWS_H
#define LATSCOPE_RESULT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/parse.h"
#include "result/compare.h"
#include "result/result.h"

#define CMP_BY_MAX 8

/* The runs and how they are grouped: a view, owning nothing. */
struct cmp_runs {
	const struct result *res; /* must outlive the rows */
	const int64_t *ids;	  /* their store ids: what a row without by keys is named by */
	size_t n;
	const char (*by)[LABEL_KEY_MAX]; /* label keys whose values group the runs, in sort order */
	size_t nby;			 /* 0: one row per run */
	int cpu;			 /* -1: all CPUs merged */
	unsigned metric;		 /* the metric compared, by index (cmp_runs_check) */
};

struct cmp_group {
	struct labels key; /* the by values, "-" for a run without the label */
	size_t *runs;	   /* indexes into cmp_runs.res, in the runs' order */
	size_t nruns;
	struct cmp_row fig; /* its figures, and every window of every run of the row */
};

struct cmp_rows {
	struct cmp_group *row;
	size_t n;
	size_t ref; /* the baseline row */
};

/* The value of r's label key, or NULL. */
const char *result_label(const struct result *r, const char *key);
/* The spikes of w's runs counted by the host's cause (each run's host.causes,
 * --host), summed by cause name: a new object, or NULL when no run asked a
 * host (or out of memory). */
json_t *cmp_group_host_causes(const struct cmp_runs *in, const struct cmp_group *w);

/* r's figures of cpu (-1: all merged), or NULL when r did not measure it. */
const struct cpu_result *result_block(const struct result *r, int cpu);

/*
 * Can in's runs share a table?  One probe, the metric named (NULL: the
 * leading one) in every run, and in->cpu measured by each.  0 with the
 * metric's index in *ret_metric, or -EINVAL with err naming the run.
 */
int cmp_runs_check(const struct cmp_runs *in, const char *metric, unsigned *ret_metric,
		   struct lat_error *err);

/*
 * The rows, in the natural order of their key values ("2" before "10"; runs
 * with equal values keep the order they came in), or one per run in order
 * without by keys; ref is row 0.  0, -ENOMEM, -EOVERFLOW (the runs add up past
 * what a count holds) or -EINVAL (a run without the cpu: see cmp_runs_check).
 * On failure ret holds what was built: free it.
 */
int cmp_rows_build(const struct cmp_runs *in, struct cmp_rows *ret);
void cmp_rows_free(struct cmp_rows *rows);

/* Make the row holding the run with this id the baseline (0, or none: row 0). */
void cmp_rows_set_baseline(struct cmp_rows *rows, const struct cmp_runs *in, int64_t id);

/* The row's name: "run 7", or its key "config=a sched=fifo". */
void cmp_group_name(const struct cmp_runs *in, const struct cmp_group *w, char *buf, size_t size);

#endif
