/*
 * compare's regression gates (--fail-if): each expression (core/expr.h)
 * against each row of a table of runs, a relative gate on the mean or a
 * percentile failing only when the verdict calls the change real.
 */
#ifndef LATSCOPE_RESULT_GATE_H
#define LATSCOPE_RESULT_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/expr.h"
#include "result/rows.h"

struct gate_outcome {
	size_t row, gate; /* the row judged, and the gate's index */
	bool failed;
	char cls[240]; /* the row's name (with its probe when there are several) */
	char message[1024];
};

/* What the gates judge: one probe's rows, and how its times read in a message. */
struct gate_table {
	const struct cmp_runs *in;
	const struct cmp_rows *rows;
	double unit_ns;	   /* 1000 (us) or 1 (ns) */
	const char *unit;  /* "us" or "ns" */
	const char *probe; /* named in each outcome's class (one of several probes), or NULL */
};

/* Parse n --fail-if texts into ret[0..n-1].  0, or -EINVAL with err naming the text. */
int gate_parse(const char *const *texts, size_t n, struct expr *ret, struct lat_error *err);

/*
 * Every gate against every row (a relative gate skips the baseline row), gate
 * by gate: out holds ngates * rows->n outcomes at least.  0 with their number
 * in *ret_n, or -ENOMEM, -EINVAL from the verdict (cmp_judge).
 */
int gate_run(const struct gate_table *t, const struct expr *gates, size_t ngates,
	     struct gate_outcome *out, size_t *ret_n);

#endif
