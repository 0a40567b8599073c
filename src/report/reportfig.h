/* What the figures of the HTML report share: the runs, each with its colour. */
#ifndef LATSCOPE_REPORT_REPORTFIG_H
#define LATSCOPE_REPORT_REPORTFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/svg.h"
#include "result/result.h"

#define FIG_W 620.0
#define FIG_H 300.0

struct report_run {
	int64_t id;
	const struct result *res;
	size_t colour;                  /* palette index: the run's colour in every figure */
	char name[192];                 /* "run 4 timer config=a (stopped early ...)" */
};

/* The runs of one probe, drawn together (they share their leading metric). */
struct report_group {
	const char *probe;
	const char *metric;
	struct report_run *runs;
	size_t n;
	struct svg_unit unit;           /* for the leading metric, from the largest value */
};

/* <figure> with its caption, then the caller's svg, then fig_end with the legend of the group's runs. */
void fig_begin(FILE *out, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fig_legend_runs(FILE *out, const struct report_group *g, const bool *shown);
void fig_end(FILE *out);

/* Tables read in the probe's own unit (ns for noise, us for the rest), as the terminal's do. */
struct svg_unit fig_table_unit(const char *probe);

/* A value of a window of a run. */
typedef double (*fig_window_value)(const struct result *res, const struct result_window *w);
/* A line through value() of each window with samples of the run's merged block, at the window's middle;
 * markers puts a point on each.  -ENOMEM. */
int fig_window_series(struct svg_plot *p, const struct report_run *rr, fig_window_value value, const char *dash,
		      double width, bool markers);
/* The axis of the group's leading metric over [lo, hi]: from 0, or log when hi / lo is above log_above
 * (so that both the body and the tail read); hi, the largest value, is always inside. */
void fig_value_axis(struct svg_axis *a, double lo, double hi, double log_above, const struct report_group *g);

/* Histograms, merged and per CPU, and the percentile ladder.  -ENOMEM. */
int fig_distributions(FILE *out, const struct report_group *g);
/* Per-window max and p99 over time, with the explanations of --trace. */
int fig_windows(FILE *out, const struct report_group *g);
/* Noise events over time and their sizes (probes whose values tile time). */
int fig_noise(FILE *out, const struct report_group *g);
/* The maximum of every 5 minutes, for runs of two bands or more; nothing for shorter ones. */
int fig_bands(FILE *out, const struct report_group *g);
/* The tail: measured share above each value against the fit and its band (doc/tail-method.md). */
int fig_tail(FILE *out, const struct report_group *g);
/* Throughput per window and the CPU time per operation by category (io). */
int fig_io(FILE *out, const struct report_group *g);

#endif
