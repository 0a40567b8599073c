/* The distributions: histograms (merged and per CPU) and the percentile ladder. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/reportfig.h"
#include "result/rows.h"

/* Drawn bins: a tenth of a decade each, coarser than the stored buckets (1/64
 * of an octave) so that lines read, and equal in width on the log axis. */
#define BINS_PER_DECADE 10
#define NBINS (20 * BINS_PER_DECADE)    /* 1 ns to 100 s and more */

static size_t bin_of(uint64_t v)
{
	if (v < 1)
		return 0;           /* a 0 ns value is drawn with the first bin: a log axis has no 0 */
	size_t b = (size_t)floor(log10((double)v) * BINS_PER_DECADE);
	return b < NBINS ? b : NBINS - 1u;
}

static double bin_edge(size_t b)
{
	return pow(10.0, (double)b / BINS_PER_DECADE);
}

static void rebin(const struct hist *h, uint64_t *bins)
{
	memset(bins, 0, NBINS * sizeof(*bins));
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u))
		bins[bin_of(hist_bucket_value(i))] += h->counts[i];
}

/* The outline of the non-empty bins: a step line per stretch of them, and a
 * point on a lone bin, where a single spike sits far from the rest. */
static int draw_bins(struct svg_plot *p, const uint64_t *bins, size_t colour, const char *name)
{
	double *xs = malloc(2 * NBINS * sizeof(*xs)), *ys = malloc(2 * NBINS * sizeof(*ys));
	if (!xs || !ys) {
		free(xs);
		free(ys);
		return -ENOMEM;
	}
	for (size_t b = 0; b < NBINS;) {
		if (!bins[b]) {
			b++;
			continue;
		}
		size_t n = 0, first = b;
		for (; b < NBINS && bins[b]; b++) {
			xs[n] = bin_edge(b), ys[n++] = (double)bins[b];
			xs[n] = bin_edge(b + 1u), ys[n++] = (double)bins[b];
		}
		svg_line(p, xs, ys, n, svg_colour(colour), svg_dash(colour), 1.6);
		if (b - first == 1u) {
			char title[512];
			snprintf(title, sizeof(title), "%s: %llu value(s) in %.4g..%.4g %s", name,
				 (unsigned long long)bins[first], bin_edge(first) / p->x.unit, bin_edge(first + 1u) / p->x.unit,
				 p->x.title);
			svg_marker(p, sqrt(bin_edge(first) * bin_edge(first + 1u)), (double)bins[first], svg_colour(colour),
				   title, NULL);
		}
	}
	free(xs);
	free(ys);
	return 0;
}

static int histogram(FILE *out, const struct report_group *g, int cpu, uint64_t *bins)
{
	const char *metric = g->metric;
	bool *shown = calloc(g->n, sizeof(*shown));
	double lo = HUGE_VAL, hi = 0, top = 1;
	char id[64], title[160], xt[64];
	int r = 0;

	if (!shown)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = result_block(g->runs[i].res, cpu);
		if (!cr || !cr->sum[0].count)
			continue;
		shown[i] = true;
		rebin(&cr->hist[0], bins);
		for (size_t b = 0; b < NBINS; b++)
			if (bins[b] && (double)bins[b] > top)
				top = (double)bins[b];
		lo = fmin(lo, bin_edge(bin_of(cr->sum[0].min)));
		hi = fmax(hi, bin_edge(bin_of(cr->sum[0].max) + 1u));   /* the max's bin, whole */
	}
	if (hi == 0) {
		free(shown);
		return 0;
	}
	snprintf(id, sizeof(id), cpu < 0 ? "hist-%s-all" : "hist-%s-cpu%d", g->probe, cpu);
	if (cpu < 0)
		snprintf(title, sizeof(title), "%s histogram, every CPU merged", metric);
	else
		snprintf(title, sizeof(title), "%s histogram, cpu %d", metric, cpu);
	snprintf(xt, sizeof(xt), "%s (%s, log scale)", metric, g->unit.name);
	struct svg_axis x, y;
	struct svg_plot p;
	svg_axis_log(&x, lo, hi, g->unit.ns, xt);
	svg_axis_log(&y, 1.0, top, 1.0, "count per bin (log scale)");
	fig_begin(out, "hist", "%s", title);
	svg_plot_begin(&p, out, id, title, FIG_W, FIG_H, &x, &y);
	for (size_t i = 0; i < g->n && r == 0; i++)
		if (shown[i]) {
			rebin(&result_block(g->runs[i].res, cpu)->hist[0], bins);
			r = draw_bins(&p, bins, g->runs[i].colour, g->runs[i].name);
		}
	svg_plot_end(&p);
	fig_legend_runs(out, g, shown);
	html_elem(out, "p", "muted", "Bins of a tenth of a decade; empty bins are not drawn; a lone bin is a point.");
	fig_end(out);
	free(shown);
	return r;
}

/* The ladder's x: log10(1 / (1 - p)), so p90, p99, p99.9 ... are equally spaced. */
static double ladder_x(double pct)
{
	return log10(1.0 / (1.0 - pct / 100.0));
}

#define LADDER_POINTS 96

static int ladder(FILE *out, const struct report_group *g)
{
	static const double at_pct[] = { 50, 90, 99, 99.9, 99.99, 99.999 };
	static const char *const names[] = { "p50", "p90", "p99", "p99.9", "p99.99", "p99.999" };
	double at[6], lo = HUGE_VAL, hi = 0, xs[LADDER_POINTS + 1], ys[LADDER_POINTS + 1];
	char id[64], title[128];

	for (size_t k = 0; k < 6; k++)
		at[k] = ladder_x(at_pct[k]);
	for (size_t i = 0; i < g->n; i++) {
		const struct summary *s = &g->runs[i].res->all.sum[0];
		if (!s->count)
			continue;
		lo = fmin(lo, (double)s->p50);
		hi = fmax(hi, (double)s->max);
	}
	if (hi == 0)
		return 0;
	snprintf(id, sizeof(id), "ladder-%s", g->probe);
	snprintf(title, sizeof(title), "%s percentiles, p50 to p99.999 (every CPU merged)", g->metric);
	struct svg_axis x, y;
	struct svg_plot p;
	svg_axis_custom(&x, at[0], at[5], 6, at, names, "percentile");
	fig_value_axis(&y, lo, hi, 30.0, g);
	fig_begin(out, "ladder", "%s", title);
	svg_plot_begin(&p, out, id, title, FIG_W, FIG_H, &x, &y);
	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = &g->runs[i].res->all;
		const struct summary *s = &cr->sum[0];
		if (!s->count)
			continue;
		/* Past p = 1 - 1/count every percentile is the max: the line stops there, at a point. */
		double end = fmin(at[5], log10((double)s->count));
		size_t n = 0;
		for (size_t k = 0; k <= LADDER_POINTS; k++) {
			double xv = at[0] + (end - at[0]) * (double)k / LADDER_POINTS;
			double pct = 100.0 * (1.0 - pow(10.0, -xv));
			double v = (double)hist_percentile(&cr->hist[0], pct);
			xs[n] = xv;
			ys[n++] = fmin(fmax(v, (double)s->min), (double)s->max);
			if (end <= at[0])
				break;
		}
		svg_line(&p, xs, ys, n, svg_colour(g->runs[i].colour), svg_dash(g->runs[i].colour), 1.8);
		char tip[256];
		snprintf(tip, sizeof(tip), "%s: max %.4g %s of %llu samples", g->runs[i].name, (double)s->max / g->unit.ns,
			 g->unit.name, (unsigned long long)s->count);
		svg_marker(&p, end, (double)s->max, svg_colour(g->runs[i].colour), tip, "max");
	}
	svg_plot_end(&p);
	fig_legend_runs(out, g, NULL);
	html_elem(out, "p", "muted", "Percentiles from the histogram (within 0.78%%); a line ends where the run has no "
		  "more samples to tell percentiles apart, at its max.");
	fig_end(out);
	return 0;
}

int fig_distributions(FILE *out, const struct report_group *g)
{
	uint64_t *bins = malloc(NBINS * sizeof(*bins));
	bool *seen = calloc(CPUSET_MAX, sizeof(*seen));
	size_t ncpus = 0;
	int r = -ENOMEM;

	if (!bins || !seen)
		goto out;
	r = histogram(out, g, -1, bins);
	if (r == 0)
		r = ladder(out, g);
	for (size_t i = 0; i < g->n; i++)
		for (size_t k = 0; k < g->runs[i].res->ncpus; k++) {
			int cpu = g->runs[i].res->cpus[k].cpu;
			if (cpu >= 0 && (unsigned)cpu < CPUSET_MAX && !seen[cpu]) {
				seen[cpu] = true;
				ncpus++;
			}
		}
	/* One CPU in all: its histogram is the merged one. */
	for (unsigned cpu = 0; cpu < CPUSET_MAX && r == 0 && ncpus > 1; cpu++)
		if (seen[cpu])
			r = histogram(out, g, (int)cpu, bins);
out:
	free(bins);
	free(seen);
	return r;
}
