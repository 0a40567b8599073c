/* The long-run view of a monitor: each period's max and p99.9 over clock time, and the threshold. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/units.h"
#include "report/html.h"
#include "report/periods.h"
#include "report/reportfig.h"

enum { MAX_COLOUR = 0, P999_COLOUR = 1, THRESHOLD_COLOUR = 10 };

/* y of each period: its max, p99.9 or threshold (NAN where it has none). */
static double period_value(const struct report_period *p, int which)
{
	if (which == THRESHOLD_COLOUR)
		return p->threshold_ns ? (double)p->threshold_ns : (double)NAN;
	if (!p->count)
		return (double)NAN;
	return (double)(which == MAX_COLOUR ? p->max : p->p999);
}

int fig_periods(FILE *out, const struct report_monitor *m)
{
	const int series[] = { THRESHOLD_COLOUR, P999_COLOUR, MAX_COLOUR };
	double lo = HUGE_VAL, hi = 0, join = HUGE_VAL;
	uint64_t start = m->periods[0].start_ns, end = start;
	char title[160], xt[96], day[32];
	double *x0 = malloc(m->n * sizeof(*x0)), *x1 = malloc(m->n * sizeof(*x1)), *ys = malloc(m->n * sizeof(*ys));

	if (!x0 || !x1 || !ys) {
		free(x0);
		free(x1);
		free(ys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct report_period *p = &m->periods[i];
		for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
			double v = period_value(p, series[k]);
			if (v > 0) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
		}
		x0[i] = (double)p->start_ns;
		x1[i] = (double)p->start_ns + (double)p->elapsed_ns;
		end = p->start_ns + p->elapsed_ns > end ? p->start_ns + p->elapsed_ns : end;
		start = p->start_ns < start ? p->start_ns : start;
		if (p->elapsed_ns)
			join = fmin(join, (double)p->elapsed_ns / 10.0);
	}
	/* A gap of less than a tenth of the shortest period (the time a rotation
	 * takes) is not a stop of the monitor; a longer one breaks the lines. */
	join = fmax(isfinite(join) ? join : 0.0, 1e9);
	struct report_group g = { .probe = m->probe, .metric = m->metric, .unit = svg_unit_for(hi) };
	struct svg_axis x, y;
	struct svg_plot p;
	fmt_utc(start, day, sizeof(day));
	day[10] = '\0';
	snprintf(xt, sizeof(xt), "start of the period (UTC, from %s)", day);
	svg_axis_utc(&x, start, end, 8, xt);
	fig_value_axis(&y, lo, hi, 100.0, &g);
	snprintf(title, sizeof(title), "%s per period of the monitor: max (solid, a point at each) and p99.9 (dotted), "
		 "every CPU merged", m->metric);
	fig_begin(out, "periods", "%s", title);
	svg_plot_begin(&p, out, "monitor-periods", title, FIG_W, FIG_H, &x, &y);
	for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
		for (size_t i = 0; i < m->n; i++)
			ys[i] = period_value(&m->periods[i], series[k]);
		svg_steps(&p, x0, x1, ys, m->n, join, svg_colour((size_t)series[k]),
			  series[k] == MAX_COLOUR ? NULL : series[k] == P999_COLOUR ? "1 3" : "8 4",
			  series[k] == THRESHOLD_COLOUR ? 0.8 : series[k] == MAX_COLOUR ? 1.8 : 1.4);
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct report_period *q = &m->periods[i];
		char tip[256], when[32];
		if (!q->count)
			continue;
		fmt_utc(q->start_ns, when, sizeof(when));
		snprintf(tip, sizeof(tip), "run %lld from %s: max %.4g %s, p99.9 %.4g %s%s", (long long)q->id, when,
			 (double)q->max / g.unit.ns, g.unit.name, (double)q->p999 / g.unit.ns, g.unit.name,
			 q->partial ? " (partial: still measuring)" : "");
		svg_marker(&p, x0[i], (double)q->max, svg_colour(MAX_COLOUR), tip, NULL);
	}
	svg_plot_end(&p);
	fputs("<div class=\"legend\">\n", out);
	html_legend_item(out, svg_colour(MAX_COLOUR), NULL, "max of the period");
	html_legend_item(out, svg_colour(P999_COLOUR), "1 3", "p99.9 of the period");
	html_legend_item(out, svg_colour(THRESHOLD_COLOUR), "8 4", "threshold");
	fputs("</div>\n", out);
	fig_end(out);
	free(x0);
	free(x1);
	free(ys);
	return 0;
}
