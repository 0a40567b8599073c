/* I/O: throughput per window, and what each operation cost the CPU, stacked by category. */
#include <errno.h>
#include <math.h>

#include "report/html.h"
#include "report/reportfig.h"

/* Categories get colours of their own (Tol's light palette), apart from the runs'. */
static const char *const kind_colour[CPU_TIME_KINDS] = {
	[CPU_USER] = "#77AADD", [CPU_NICE] = "#99DDFF", [CPU_SYSTEM] = "#EE8866", [CPU_IDLE] = "#DDDDDD",
	[CPU_IOWAIT] = "#BBCC33", [CPU_IRQ] = "#FFAABB", [CPU_SOFTIRQ] = "#EEDD88", [CPU_STEAL] = "#44BB99",
};

static double rate(const struct result *res, const struct result_window *w, bool mb)
{
	double secs = (double)(w->w.end_ns - w->w.start_ns) / 1e9;
	double ops = secs > 0 ? (double)w->w.m[0].st.n / secs : 0.0;
	return mb ? ops * (double)result_op_bytes(res) / 1e6 : ops;
}

static double rate_mb(const struct result *res, const struct result_window *w)
{
	return rate(res, w, true);
}

static double rate_ops(const struct result *res, const struct result_window *w)
{
	return rate(res, w, false);
}

static int throughput(FILE *out, const struct report_group *g)
{
	bool mb = true;
	double top = 0, end = 0;
	char id[64];
	int r = 0;

	for (size_t i = 0; i < g->n; i++)
		mb = mb && result_op_bytes(g->runs[i].res) > 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct cpu_result *cr = &g->runs[i].res->all;
		for (size_t k = 0; k < cr->nwin; k++) {
			top = fmax(top, rate(g->runs[i].res, &cr->win[k], mb));
			end = fmax(end, (double)cr->win[k].w.end_ns);
		}
		end = fmax(end, (double)g->runs[i].res->elapsed_ns);
	}
	snprintf(id, sizeof(id), "io-throughput-%s", g->probe);
	struct svg_axis x, y;
	struct svg_plot p;
	svg_axis_linear(&x, 0, end, 8, 1e9, "time since the start (s)");
	svg_axis_linear(&y, 0, top, 6, 1.0, mb ? "throughput (MB/s)" : "throughput (operations/s)");
	fig_begin(out, "costs", "throughput per window");
	svg_plot_begin(&p, out, id, "throughput per window", FIG_W, FIG_H, &x, &y);
	for (size_t i = 0; i < g->n && r == 0; i++)
		r = fig_window_series(&p, &g->runs[i], mb ? rate_mb : rate_ops, svg_dash(g->runs[i].colour), 1.8, true);
	svg_plot_end(&p);
	fig_legend_runs(out, g, NULL);
	fig_end(out);
	return r;
}

/* CPU time of the reading CPUs over the run (their windows' /proc/stat deltas). */
static void reading_cpus(const struct result *res, uint64_t *ns)
{
	for (int c = 0; c < CPU_TIME_KINDS; c++)
		ns[c] = 0;
	for (size_t i = 0; i < res->ncpus; i++)
		for (size_t k = 0; k < res->cpus[i].nwin; k++)
			for (int c = 0; c < CPU_TIME_KINDS; c++)
				ns[c] += res->cpus[i].win[k].ctx.cpu_ns[c];
}

#define BARS_MAX (2 * 12)

static int cpu_breakdown(FILE *out, const struct report_group *g)
{
	double at[BARS_MAX], top = 0;
	char labels[BARS_MAX][16];
	const char *lp[BARS_MAX];
	uint64_t ns[BARS_MAX][CPU_TIME_KINDS];
	size_t run_of[BARS_MAX], nbars = 0;
	char id[64];

	for (size_t i = 0; i < g->n && nbars + 2u <= BARS_MAX; i++) {
		const struct result *res = g->runs[i].res;
		if (!res->machine.valid || !res->all.sum[0].count)
			continue;
		for (int c = 0; c < CPU_TIME_KINDS; c++)
			ns[nbars][c] = res->machine.total.cpu_ns[c];
		snprintf(labels[nbars], sizeof(labels[0]), "%lld machine", (long long)g->runs[i].id);
		run_of[nbars++] = i;
		reading_cpus(res, ns[nbars]);
		snprintf(labels[nbars], sizeof(labels[0]), "%lld reader", (long long)g->runs[i].id);
		run_of[nbars++] = i;
	}
	if (!nbars)
		return 0;
	for (size_t b = 0; b < nbars; b++) {
		double sum = 0, ops = (double)g->runs[run_of[b]].res->all.sum[0].count;
		for (int c = 0; c < CPU_TIME_KINDS; c++)
			if (c != CPU_IDLE)
				sum += (double)ns[b][c] / 1000.0 / ops;
		top = fmax(top, sum);
		at[b] = (double)b + 0.5;
		lp[b] = labels[b];
	}
	snprintf(id, sizeof(id), "io-cpu-%s", g->probe);
	struct svg_axis x, y;
	struct svg_plot p;
	svg_axis_custom(&x, 0, (double)nbars, nbars, at, lp, "run: the whole machine, and the reading CPU(s)");
	svg_axis_linear(&y, 0, top * 1.03, 6, 1.0, "CPU time per operation (us)");
	fig_begin(out, "costs", "CPU time per operation by category, stacked (idle left out; /proc/stat, 10 ms resolution)");
	svg_plot_begin(&p, out, id, "CPU time per operation by category", FIG_W, FIG_H, &x, &y);
	for (size_t b = 0; b < nbars; b++) {
		const struct report_run *rr = &g->runs[run_of[b]];
		double ops = (double)rr->res->all.sum[0].count, base = 0;
		for (int c = 0; c < CPU_TIME_KINDS; c++) {
			if (c == CPU_IDLE || !ns[b][c])
				continue;
			double v = (double)ns[b][c] / 1000.0 / ops;
			char tip[160];
			snprintf(tip, sizeof(tip), "run %lld %.15s: %s %.3f us per operation", (long long)rr->id,
				 labels[b], cpu_time_names[c], v);
			svg_rect(&p, (double)b + 0.2, base, (double)b + 0.8, base + v, kind_colour[c], tip);
			base += v;
		}
		/* A cap in the run's own colour ties the bar to the other figures. */
		svg_rect(&p, (double)b + 0.2, base, (double)b + 0.8, base + top * 0.025, svg_colour(rr->colour), rr->name);
	}
	svg_plot_end(&p);
	fputs("<div class=\"legend\">\n", out);
	for (int c = 0; c < CPU_TIME_KINDS; c++)
		if (c != CPU_IDLE)
			html_legend_item(out, kind_colour[c], NULL, cpu_time_names[c]);
	fputs("</div>\n", out);
	fig_legend_runs(out, g, NULL);
	fig_end(out);
	return 0;
}

int fig_io(FILE *out, const struct report_group *g)
{
	int r = throughput(out, g);
	return r == 0 ? cpu_breakdown(out, g) : r;
}
