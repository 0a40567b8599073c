/*
 * The tail: the share of samples above each latency, on log scales, as
 * measured (a point a bucket above the fit's threshold) and as fitted (the
 * generalized Pareto line with its 95 % band out to the once-a-day level):
 * where the points leave the band the fit does not hold, and where the line
 * goes past the points is what the run predicts but has not seen.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "report/html.h"
#include "report/reportfig.h"
#include "result/tailrun.h"

#define CURVE_POINTS 48

/* The share of samples above x predicted by the fit, with its band, from the
 * rate per hour (result/tail.h): rate times hours observed over the samples. */
static int predicted(const struct tail_fit *f, const struct result *res,
		     const struct cpu_result *cr, double x, struct tail_interval *ret)
{
	struct tail_interval r;
	uint64_t t = cpu_result_observed(res, cr);
	if (tail_rate_above(f, &cr->hist[0], t, (uint64_t)llround(x), &r) != TAIL_FROM_MODEL)
		return -1;
	double k = (double)t / 3.6e12 / (double)f->samples;
	*ret = (struct tail_interval){ r.est * k, r.lo * k, r.hi * k };
	return 0;
}

/* The last x the line goes to: the once-a-day level, or the largest sample when that is further. */
static double reach(const struct tail_fit *f, const struct cpu_result *cr)
{
	double day = f->level_ns[TAIL_HOUR + 1u].est;
	double top = (double)cr->sum[0].max;
	return isfinite(day) && day > top ? fmin(day, 100.0 * top) : top;
}

static void draw_run(struct svg_plot *p, const struct report_run *rr, const struct tail_fit *f)
{
	const struct cpu_result *cr = &rr->res->all;
	const char *colour = svg_colour(rr->colour);
	double xs[CURVE_POINTS], est[CURVE_POINTS], lo[CURVE_POINTS], hi[CURVE_POINTS];
	size_t n = 0;
	uint64_t above = f->n_exceed;

	/* measured: the share at or above each bucket's low edge, from the threshold up */
	for (unsigned b = hist_next(&cr->hist[0], hist_index(f->threshold_ns)); b < HIST_BUCKETS;
	     b = hist_next(&cr->hist[0], b + 1u)) {
		if (above == 0)
			break;
		char title[384];
		double share = (double)above / (double)f->samples;
		snprintf(title, sizeof(title), "%s: %llu of %llu samples at or above %.4g %s",
			 rr->name, (unsigned long long)above, (unsigned long long)f->samples,
			 (double)hist_bucket_low(b) / p->x.unit, p->x.title);
		svg_marker(p, (double)hist_bucket_low(b), share, colour, title, NULL);
		above -= cr->hist[0].counts[b] < above ? cr->hist[0].counts[b] : above;
	}
	/* fitted: on a log scale of x from the threshold to its reach */
	double x0 = (double)f->threshold_ns, x1 = reach(f, cr);
	for (size_t i = 0; i < CURVE_POINTS && x1 > x0; i++) {
		double x = x0 * pow(x1 / x0, (double)i / (CURVE_POINTS - 1u));
		struct tail_interval s;
		if (predicted(f, rr->res, cr, x, &s) < 0 || !(s.est > 0.0))
			continue;
		xs[n] = x, est[n] = s.est, lo[n] = s.lo, hi[n] = s.hi;
		n++;
	}
	svg_line(p, xs, est, n, colour, NULL, 1.6);
	svg_line(p, xs, lo, n, colour, "4 3", 0.8);
	svg_line(p, xs, hi, n, colour, "4 3", 0.8);
}

int fig_tail(FILE *out, const struct report_group *g)
{
	struct tail_fit *fits = calloc(g->n, sizeof(*fits));
	bool *shown = calloc(g->n, sizeof(*shown));
	double xlo = HUGE_VAL, xhi = 0.0, ylo = 1.0;
	struct lat_error err;
	int r = 0;

	if (!fits || !shown) {
		free(fits);
		free(shown);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n && r == 0; i++) {
		const struct report_run *rr = &g->runs[i];
		const struct cpu_result *cr = &rr->res->all;
		if (rr->res->ops.per_op || !cr->sum[0].count)
			continue;
		if (cpu_result_tail(rr->res, cr, &fits[i], &err) < 0) {
			r = -ENOMEM;
			break;
		}
		if (fits[i].status != TAIL_OK)
			continue;
		shown[i] = true;
		struct tail_interval s;
		double x1 = reach(&fits[i], cr);
		xlo = fmin(xlo, (double)fits[i].threshold_ns);
		xhi = fmax(xhi, x1);
		ylo = fmin(ylo, 0.5 / (double)fits[i].samples);
		if (predicted(&fits[i], rr->res, cr, x1, &s) == 0 && s.lo > 0.0)
			ylo = fmin(ylo, s.lo);
	}
	if (r == 0 && xhi > 0.0) {
		char id[64], title[160], xt[64];
		struct svg_axis x, y;
		struct svg_plot p;
		snprintf(id, sizeof(id), "tail-%s", g->probe);
		snprintf(title, sizeof(title),
			 "%s tail, every CPU merged: the share of samples above each value",
			 g->metric);
		snprintf(xt, sizeof(xt), "%s (%s, log scale)", g->metric, g->unit.name);
		svg_axis_log(&x, xlo, xhi, g->unit.ns, xt);
		svg_axis_log(&y, ylo, 1.0, 1.0, "share of samples above (log scale)");
		fig_begin(out, "tail", "%s", title);
		svg_plot_begin(&p, out, id, title, FIG_W, FIG_H, &x, &y);
		for (size_t i = 0; i < g->n; i++)
			if (shown[i])
				draw_run(&p, &g->runs[i], &fits[i]);
		svg_plot_end(&p);
		fig_legend_runs(out, g, shown);
		html_elem(out, "p", "muted",
			  "Points: measured, from the fit's threshold up.  Line: the generalized "
			  "Pareto fit out to the "
			  "once-a-day level, dashed its 95 %% band (doc/tail-method.md).  Points "
			  "outside the band: the fit "
			  "does not hold there; see the summary's reliability.");
		fig_end(out);
	}
	free(fits);
	free(shown);
	return r;
}
