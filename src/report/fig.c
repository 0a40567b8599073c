/* What every figure of the HTML report does around its plot. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "probe/probe.h"
#include "report/html.h"
#include "report/reportfig.h"

void fig_begin(FILE *out, const char *kind, const char *fmt, ...)
{
	char caption[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(caption, sizeof(caption), fmt, ap);
	va_end(ap);
	fprintf(out, "<figure class=\"fig %s\">\n", kind);
	html_elem(out, "figcaption", NULL, "%s", caption);
}

void fig_legend_runs(FILE *out, const struct report_group *g, const bool *shown)
{
	fputs("<div class=\"legend\">\n", out);
	for (size_t i = 0; i < g->n; i++)
		if (!shown || shown[i])
			html_legend_item(out, svg_colour(g->runs[i].colour), svg_dash(g->runs[i].colour), g->runs[i].name);
	fputs("</div>\n", out);
}

void fig_end(FILE *out)
{
	fputs("</figure>\n", out);
}

int fig_window_series(struct svg_plot *p, const struct report_run *rr, fig_window_value value, const char *dash,
		      double width, bool markers)
{
	const struct cpu_result *cr = &rr->res->all;
	double *xs = malloc((cr->nwin + 1u) * sizeof(*xs)), *ys = malloc((cr->nwin + 1u) * sizeof(*ys));
	size_t n = 0;

	if (!xs || !ys) {
		free(xs);
		free(ys);
		return -ENOMEM;
	}
	for (size_t k = 0; k < cr->nwin; k++) {
		const struct result_window *w = &cr->win[k];
		if (!w->w.m[0].st.n)
			continue;
		xs[n] = ((double)w->w.start_ns + (double)w->w.end_ns) / 2.0;
		ys[n++] = value(rr->res, w);
	}
	svg_line(p, xs, ys, n, svg_colour(rr->colour), dash, width);
	for (size_t k = 0; markers && k < n; k++)
		svg_marker(p, xs[k], ys[k], svg_colour(rr->colour), rr->name, NULL);
	free(xs);
	free(ys);
	return 0;
}

void fig_value_axis(struct svg_axis *a, double lo, double hi, double log_above, const struct report_group *g)
{
	char title[96];
	bool log = lo > 0 && hi / lo > log_above;
	snprintf(title, sizeof(title), "%s (%s%s)", g->metric, g->unit.name, log ? ", log scale" : "");
	if (log)
		svg_axis_log(a, lo, hi, g->unit.ns, title);
	else
		svg_axis_linear(a, 0, hi, 6, g->unit.ns, title);
}

struct svg_unit fig_table_unit(const char *probe)
{
	const struct probe_ops *ops = probe_find(probe);
	return ops && ops->unit_ns == 1 ? (struct svg_unit){ 1.0, "ns" } : (struct svg_unit){ 1e3, "us" };
}
