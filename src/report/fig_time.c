/* Over the run's time: each window's max and p99, and noise events. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "report/html.h"
#include "report/reportfig.h"
#include "report/tracetext.h"

#define SPIKES_MARKED 3                 /* per CPU, as the text summary shows */

static double end_of_runs(const struct report_group *g)
{
	double end = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = &g->runs[i].res->all;
		end = fmax(end, (double)g->runs[i].res->elapsed_ns);
		if (cr->nwin)
			end = fmax(end, (double)cr->win[cr->nwin - 1u].w.end_ns);
	}
	return end;
}

static void time_axis(struct svg_axis *x, const struct report_group *g)
{
	double end = end_of_runs(g);
	struct svg_unit u = svg_unit_for(end);
	char title[64];
	/* Seconds read best for a run of seconds; shorter runs get their own unit. */
	if (end >= 1e9)
		u = (struct svg_unit){ 1e9, "s" };
	snprintf(title, sizeof(title), "time since the start (%s)", u.name);
	svg_axis_linear(x, 0, end, 8, u.ns, title);
}

/* A figure of the metric's values (lo..hi, log when they span 100 times) over the run's time. */
static void value_plot_begin(FILE *out, struct svg_plot *p, struct svg_axis *x, struct svg_axis *y,
			     const struct report_group *g, const char *kind, const char *id, const char *title, double lo,
			     double hi)
{
	time_axis(x, g);
	fig_value_axis(y, lo, hi, 100.0, g);
	fig_begin(out, kind, "%s", title);
	svg_plot_begin(p, out, id, title, FIG_W, FIG_H, x, y);
}

/* "run 5 stopped early at 1.2 s (signal SIGINT)": on the plot, not only in the legend. */
static void stopped_notes(struct svg_plot *p, const struct report_group *g)
{
	unsigned line = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct result *r = g->runs[i].res;
		if (!r->interrupted)
			continue;
		char text[160];
		snprintf(text, sizeof(text), "run %lld stopped early at %.2f s (%s)", (long long)g->runs[i].id,
			 (double)r->elapsed_ns / 1e9, r->stop_reason);
		svg_note(p, line++, svg_colour(g->runs[i].colour), text);
		double xs[2] = { (double)r->elapsed_ns, (double)r->elapsed_ns }, ys[2] = { p->y.lo, p->y.hi };
		svg_line(p, xs, ys, 2, svg_colour(g->runs[i].colour), "3 3", 1.0);
	}
}

static void write_spike(FILE *f, const json_t *sp, bool timer)
{
	text_trace_spike(f, sp, timer, "");
}

static void write_causes(FILE *f, const json_t *cpu, bool unused)
{
	(void)unused;
	text_trace_causes(f, cpu, "");
}

/* The trace's explanations as text, from the same code as the terminal's. */
static char *trace_text(void (*write)(FILE *, const json_t *, bool), const json_t *o, bool flag)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	write(f, o, flag);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	while (len && buf[len - 1u] == '\n')
		buf[--len] = '\0';
	return buf;
}

/* What took the most time over all of a run's gaps, per traced CPU: one item each. */
static void causes_items(FILE *out, long long id, const struct result *res)
{
	const json_t *c;
	size_t j;

	if (!res->trace || !probe_traced_as(res->probe, PROBE_TRACE_GAPS))
		return;
	json_array_foreach(json_object_get(res->trace, "cpus"), j, c) {
		char *text = trace_text(write_causes, c, false);
		if (text && *text)
			html_elem(out, "li", NULL, "run %lld cpu %lld, most time over all events (--trace): %s", id,
				  (long long)json_integer_value(json_object_get(c, "cpu")), text);
		free(text);
	}
}

/* Mark the explained spikes of every run traced as kind says and list them under the plot. */
static int mark_spikes(struct svg_plot *p, const struct report_group *g, enum probe_trace_kind kind,
		       const char *value_key, char ***ret_list, size_t **ret_run, size_t *ret_n)
{
	char **list = NULL;
	size_t *run = NULL, n = 0;

	for (size_t i = 0; i < g->n; i++) {
		const json_t *tr = g->runs[i].res->trace, *c, *sp;
		size_t k, j;
		if (!tr || !probe_traced_as(g->runs[i].res->probe, kind))
			continue;
		json_array_foreach(json_object_get(tr, "cpus"), k, c) {
			json_array_foreach(json_object_get(c, "spikes"), j, sp) {
				if (j == SPIKES_MARKED)
					break;
				char *text = trace_text(write_spike, sp, kind == PROBE_TRACE_PARTS), label[24];
				char **l = realloc(list, (n + 1u) * sizeof(*l));
				size_t *r = realloc(run, (n + 1u) * sizeof(*r));
				if (l)
					list = l;
				if (r)
					run = r;
				if (!text || !l || !r) {
					free(text);
					for (size_t q = 0; q < n; q++)
						free(list[q]);
					free(list);
					free(run);
					return -ENOMEM;
				}
				list[n] = text;
				run[n++] = i;
				snprintf(label, sizeof(label), "%zu", n);
				svg_marker(p, (double)json_integer_value(json_object_get(sp, "at_ns")),
					   (double)json_integer_value(json_object_get(sp, value_key)),
					   svg_colour(g->runs[i].colour), text, label);
			}
		}
	}
	*ret_list = list;
	*ret_run = run;
	*ret_n = n;
	return 0;
}

static void spike_list(FILE *out, const struct report_group *g, char **list, const size_t *run, size_t n)
{
	if (!n)
		return;
	fputs("<ol class=\"spikes\">\n", out);
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "<li><span style=\"color:%s\">", svg_colour(g->runs[run[k]].colour));
		html_text(out, "run %lld", (long long)g->runs[run[k]].id);
		fputs("</span>: ", out);
		html_text(out, "%s", list[k]);
		fputs("</li>\n", out);
		free(list[k]);
	}
	fputs("</ol>\n", out);
	free(list);
}

static double win_max(const struct result *res, const struct result_window *w)
{
	(void)res;
	return (double)w->w.m[0].st.max;
}

static double win_p99(const struct result *res, const struct result_window *w)
{
	(void)res;
	return (double)w->p99[0];
}

/* A folded window (result.h) holds span windows' events: their mean per window. */
static double win_above(const struct result *res, const struct result_window *w)
{
	(void)res;
	return (double)w->w.m[0].above / (double)w->span;
}

/* Each window that counted an SMI, at its max: firmware stopped every CPU in it. */
static void smi_marks(struct svg_plot *p, const struct report_group *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct result *res = g->runs[i].res;
		const struct cpu_result *cr = &res->all;
		uint64_t n;
		if (!result_smis(res, cr, &n) || n == 0)
			continue;
		for (size_t k = 0; k < cr->nwin; k++) {
			const struct result_window *w = &cr->win[k];
			char title[96];
			if (!w->ctx.smis || !w->w.m[0].st.n)
				continue;
			snprintf(title, sizeof(title), "run %lld: SMI: %llu in this window (every CPU)", (long long)g->runs[i].id,
				 (unsigned long long)w->ctx.smis);
			svg_marker(p, (double)(w->w.start_ns + w->w.end_ns) / 2.0, (double)w->w.m[0].st.max,
				   svg_colour(g->runs[i].colour), title, "SMI");
		}
	}
}

/* Under the plot: each run's SMIs over its windows, or that they were not available. */
static void smi_lines(FILE *out, const struct report_group *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct result *res = g->runs[i].res;
		uint64_t n, windows = 0;
		if (!res->smi_asked)
			continue;
		if (!result_smis(res, &res->all, &n)) {
			html_elem(out, "p", NULL, "run %lld: SMIs not available here (the notes say why)",
				  (long long)g->runs[i].id);
			continue;
		}
		for (size_t k = 0; k < res->all.nwin; k++)
			windows += res->all.win[k].ctx.smis != 0;
		html_elem(out, "p", NULL, "run %lld: %llu SMIs counted (%s), in %llu of %zu windows%s", (long long)g->runs[i].id,
			  (unsigned long long)n, smi_source_name(res->smi_source), (unsigned long long)windows, res->all.nwin,
			  windows ? " (marked SMI on the plot)" : "");
	}
}

int fig_windows(FILE *out, const struct report_group *g)
{
	double lo = HUGE_VAL, hi = 0;
	char id[64], title[160], **list = NULL;
	size_t *run = NULL, nlist = 0;
	int r = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = &g->runs[i].res->all;
		for (size_t k = 0; k < cr->nwin; k++)
			if (cr->win[k].w.m[0].st.n) {
				hi = fmax(hi, (double)cr->win[k].w.m[0].st.max);
				if (cr->win[k].p99[0] > 0)
					lo = fmin(lo, (double)cr->win[k].p99[0]);
			}
	}
	if (hi == 0)
		return 0;
	snprintf(id, sizeof(id), "windows-%s", g->probe);
	snprintf(title, sizeof(title), "%s per window over time: max (solid) and p99 (dotted), every CPU merged", g->metric);
	struct svg_axis x, y;
	struct svg_plot p;
	value_plot_begin(out, &p, &x, &y, g, "windows", id, title, lo, hi);
	/* A run of few windows is few points: show them. */
	for (size_t i = 0; i < g->n && r == 0; i++)
		if ((r = fig_window_series(&p, &g->runs[i], win_p99, "1 3", 1.4, false)) == 0)
			r = fig_window_series(&p, &g->runs[i], win_max, svg_dash(g->runs[i].colour), 1.8,
					      g->runs[i].res->all.nwin <= 3);
	if (r == 0)
		r = mark_spikes(&p, g, PROBE_TRACE_PARTS, "latency_ns", &list, &run, &nlist);
	smi_marks(&p, g);
	stopped_notes(&p, g);
	svg_plot_end(&p);
	fig_legend_runs(out, g, NULL);
	smi_lines(out, g);
	if (nlist)
		html_elem(out, "p", NULL, "Spikes explained by --trace (numbered on the plot; hover a point for its text):");
	spike_list(out, g, list, run, nlist);
	fig_end(out);
	free(run);
	return r;
}

static int events_per_window(FILE *out, const struct report_group *g)
{
	double top = 0;
	char id[64], yt[96], thr[32];
	int r = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = &g->runs[i].res->all;
		for (size_t k = 0; k < cr->nwin; k++)
			top = fmax(top, win_above(g->runs[i].res, &cr->win[k]));
	}
	snprintf(id, sizeof(id), "noise-count-%s", g->probe);
	snprintf(thr, sizeof(thr), "%.4g %s", (double)g->runs[0].res->threshold_ns / g->unit.ns, g->unit.name);
	snprintf(yt, sizeof(yt), "events above the threshold");
	struct svg_axis x, y;
	struct svg_plot p;
	time_axis(&x, g);
	svg_axis_linear(&y, 0, top, 5, 1.0, yt);
	fig_begin(out, "events", "noise events per window (values above each run's threshold, first run's: %s), every "
		  "CPU; older windows of a long run folded, at their mean per window", thr);
	svg_plot_begin(&p, out, id, "noise events per window", FIG_W, FIG_H, &x, &y);
	for (size_t i = 0; i < g->n && r == 0; i++)
		r = fig_window_series(&p, &g->runs[i], win_above, svg_dash(g->runs[i].colour), 1.6, true);
	stopped_notes(&p, g);
	svg_plot_end(&p);
	fig_legend_runs(out, g, NULL);
	fig_end(out);
	return r;
}

/* The OSADL long-term view: the maximum of every 5 minutes, as steps over the run. */
int fig_bands(FILE *out, const struct report_group *g)
{
	double lo = HUGE_VAL, hi = 0;
	uint64_t band_ns = 0;
	char id[64], title[160], band[32];
	int r = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct band_max *b = &g->runs[i].res->all.bands;
		if (b->n < 2)
			continue;
		band_ns = b->band_ns > band_ns ? b->band_ns : band_ns;
		for (size_t k = 0; k < b->n; k++)
			if (b->max[k] != RESULT_NO_BAND_MAX && b->max[k] > 0) {
				lo = fmin(lo, (double)b->max[k]);
				hi = fmax(hi, (double)b->max[k]);
			}
	}
	if (hi == 0)
		return 0;               /* shorter than two bands: the windows figure shows it all */
	snprintf(band, sizeof(band), "%.0f minutes", (double)band_ns / 60e9);
	snprintf(id, sizeof(id), "bands-%s", g->probe);
	snprintf(title, sizeof(title), "%s: the maximum of every %s over the run (the long-term view), every CPU",
		 g->metric, band);
	struct svg_axis x, y;
	struct svg_plot p;
	value_plot_begin(out, &p, &x, &y, g, "bands", id, title, lo, hi);
	for (size_t i = 0; i < g->n && r == 0; i++) {
		const struct band_max *b = &g->runs[i].res->all.bands;
		size_t m = b->n ? b->n : 1u;
		double *x0 = malloc(m * sizeof(*x0)), *x1 = malloc(m * sizeof(*x1)), *ys = malloc(m * sizeof(*ys));
		if (!x0 || !x1 || !ys)
			r = -ENOMEM;
		for (size_t k = 0; r == 0 && k < b->n; k++) {
			x0[k] = (double)k * (double)b->band_ns;
			x1[k] = (double)(k + 1u) * (double)b->band_ns;
			/* a band without a sample breaks the line */
			ys[k] = b->max[k] == RESULT_NO_BAND_MAX ? (double)NAN : (double)b->max[k];
		}
		if (r == 0)
			svg_steps(&p, x0, x1, ys, b->n, 0.0, svg_colour(g->runs[i].colour), NULL, 1.6);
		free(x0);
		free(x1);
		free(ys);
	}
	stopped_notes(&p, g);
	svg_plot_end(&p);
	fig_legend_runs(out, g, NULL);
	fig_end(out);
	return r;
}

int fig_noise(FILE *out, const struct report_group *g)
{
	double lo = HUGE_VAL, hi = 0;
	char id[64], yt[80], **list = NULL;
	size_t *run = NULL, nlist = 0;
	int r;

	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = &g->runs[i].res->all;
		for (unsigned k = 0; k < cr->ntop; k++)
			if (cr->top[k].value > 0) {
				lo = fmin(lo, (double)cr->top[k].value);
				hi = fmax(hi, (double)cr->top[k].value);
			}
		lo = fmin(lo, (double)g->runs[i].res->threshold_ns);
	}
	if (hi == 0)
		return events_per_window(out, g);
	snprintf(id, sizeof(id), "noise-%s", g->probe);
	snprintf(yt, sizeof(yt), "%s size (%s, log scale)", g->metric, g->unit.name);
	struct svg_axis x, y;
	struct svg_plot p;
	time_axis(&x, g);
	svg_axis_log(&y, lo, hi, g->unit.ns, yt);
	fig_begin(out, "events", "the largest noise events: when they came and how long they took (%u per run, every CPU)",
		  (unsigned)REC_TOP);
	svg_plot_begin(&p, out, id, "the largest noise events over time", FIG_W, FIG_H, &x, &y);
	for (size_t i = 0; i < g->n; i++) {
		const struct report_run *rr = &g->runs[i];
		const struct cpu_result *cr = &rr->res->all;
		double tx[2] = { x.lo, x.hi }, ty[2] = { (double)rr->res->threshold_ns, (double)rr->res->threshold_ns };
		svg_line(&p, tx, ty, 2, svg_colour(rr->colour), "8 4", 0.8);   /* the run's threshold */
		for (unsigned k = 0; k < cr->ntop; k++) {
			char tip[256];
			snprintf(tip, sizeof(tip), "%s: %.4g %s at %.3f s on cpu %d", rr->name,
				 (double)cr->top[k].value / g->unit.ns, g->unit.name, (double)cr->top[k].at_ns / 1e9,
				 cr->top_cpu[k]);
			svg_marker(&p, (double)cr->top[k].at_ns, (double)cr->top[k].value, svg_colour(rr->colour), tip, NULL);
		}
	}
	r = mark_spikes(&p, g, PROBE_TRACE_GAPS, "gap_ns", &list, &run, &nlist);
	stopped_notes(&p, g);
	svg_plot_end(&p);
	fig_legend_runs(out, g, NULL);
	html_elem(out, "p", "muted", "Dashed: each run's threshold. Time lost to noise (the values above the threshold, "
		  "over the run's time on its CPUs):");
	fputs("<ul>\n", out);
	for (size_t i = 0; i < g->n; i++) {
		const struct result *res = g->runs[i].res;
		double cpu_time = (double)res->elapsed_ns * (double)(res->ncpus ? res->ncpus : 1u);
		html_elem(out, "li", NULL, "run %lld: %.4f%% (%llu events)", (long long)g->runs[i].id,
			  cpu_time > 0 ? 100.0 * (double)res->all.above_ns[0] / cpu_time : 0.0,
			  (unsigned long long)res->all.above[0]);
		causes_items(out, (long long)g->runs[i].id, res);
	}
	fputs("</ul>\n", out);
	if (nlist)
		html_elem(out, "p", NULL, "Gaps explained by --trace (numbered on the plot):");
	spike_list(out, g, list, run, nlist);
	fig_end(out);
	free(run);
	return r == 0 ? events_per_window(out, g) : r;
}
