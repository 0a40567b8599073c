#include "report/htmlreport.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/array.h"
#include "core/units.h"
#include "probe/probe.h"
#include "report/html.h"
#include "report/reportfig.h"
#include "report/runinfo.h"
#include "result/compare.h"

static const char *probe_about(const char *probe)
{
	const struct probe_ops *ops = probe_find(probe);
	return ops && ops->about ? ops->about : "";
}

static void run_name(struct report_run *r)
{
	char labels[512];
	labels_format(&r->res->labels, labels, sizeof(labels));
	size_t len = (size_t)snprintf(r->name, sizeof(r->name), "run %lld %s%s%s", (long long)r->id, r->res->probe,
				      labels[0] ? " " : "", labels);
	if (r->res->interrupted && len < sizeof(r->name))
		snprintf(r->name + len, sizeof(r->name) - len, " (stopped early after %.2f s)",
			 (double)r->res->elapsed_ns / 1e9);
}

static void val(const struct svg_unit *u, double ns, char *buf, size_t size)
{
	snprintf(buf, size, "%.*f", u->ns == 1.0 ? 0 : 1, ns / u->ns);
}

static void overview(FILE *out, const struct report_run *runs, size_t n)
{
	static const char *const head[] = { "", "run", "probe", "started (UTC)", "host", "labels", "measured", "count",
					    "p50", "p99", "max", "status" };
	html_table_begin(out, "overview", head, ARRAY_SIZE(head));
	for (size_t i = 0; i < n; i++) {
		const struct result *res = runs[i].res;
		const struct summary *s = &res->all.sum[0];
		struct svg_unit u = fig_table_unit(res->probe);
		char when[32], labels[512], a[32] = "-", b[32] = "-", c[32] = "-";
		fmt_utc(res->start_realtime_ns, when, sizeof(when));
		labels_format(&res->labels, labels, sizeof(labels));
		if (s->count) {     /* figures of no sample would read as zero latency */
			val(&u, (double)s->p50, a, sizeof(a));
			val(&u, (double)s->p99, b, sizeof(b));
			val(&u, (double)s->max, c, sizeof(c));
		}
		html_row_begin(out);
		fprintf(out, "<td><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><rect width=\"14\" height=\"14\" "
			"fill=\"%s\"/></svg></td>", svg_colour(runs[i].colour));
		fprintf(out, "<td><a href=\"#run-%lld\">%lld</a></td>", (long long)runs[i].id, (long long)runs[i].id);
		html_cell(out, false, "%s", res->probe);
		html_cell(out, false, "%s", when);
		html_cell(out, false, "%s", res->sys.hostname);
		html_cell(out, false, "%s", labels);
		html_cell(out, true, "%.2f s", (double)res->elapsed_ns / 1e9);
		html_cell(out, true, "%llu", (unsigned long long)s->count);
		html_cell(out, true, "%s %s", a, s->count ? u.name : "");
		html_cell(out, true, "%s %s", b, s->count ? u.name : "");
		html_cell(out, true, "%s %s", c, s->count ? u.name : "");
		if (res->interrupted) {
			fputs("<td class=\"warn\">", out);
			char stopped[96];
			html_text(out, "%s", result_stopped_text(res, stopped, sizeof(stopped)));
			fputs("</td>", out);
		} else {
			html_cell(out, false, "complete");
		}
		html_row_end(out);
	}
	html_table_end(out);
}

static const enum expr_stat cmp_cols[] = {
	EXPR_COUNT, EXPR_MIN, EXPR_MEAN, EXPR_P50, EXPR_P90, EXPR_P99, EXPR_P999, EXPR_P9999, EXPR_MAX, EXPR_WARM_MAX,
	EXPR_ABOVE_PCT, EXPR_MISSED, EXPR_SPIKES_PER_HOUR, EXPR_MTBF,
};
#define NCOLS ARRAY_SIZE(cmp_cols)

/* The table and verdicts of `latscope compare` for the runs of one probe, the first the baseline. */
/* compare's tail lines: each run's once-an-hour and once-a-day levels against the first run's. */
static int tail_verdicts(FILE *out, const struct report_group *g, const struct cmp_row *rows)
{
	struct tail_fit base, fit;
	struct lat_error err;

	if (g->runs[0].res->ops.per_op)
		return 0;
	if (cmp_row_tail(&rows[0], &base, &err) < 0)
		return -ENOMEM;
	for (size_t i = 1; i < g->n; i++) {
		char a[32], b[32], line[640];
		if (cmp_row_tail(&rows[i], &fit, &err) < 0)
			return -ENOMEM;
		snprintf(a, sizeof(a), "run %lld", (long long)g->runs[0].id);
		snprintf(b, sizeof(b), "run %lld", (long long)g->runs[i].id);
		for (unsigned k = 0; k < CMP_TAIL_LEVELS; k++) {
			struct cmp_tail_verdict v;
			cmp_tail_judge(&base, &fit, cmp_tail_periods[k], &v);
			cmp_tail_text(b, a, cmp_tail_periods[k], &v, line, sizeof(line));
			html_elem(out, "li", v.direction ? "warn" : NULL, "%s", line);
		}
	}
	return 0;
}

static int comparison(FILE *out, const struct report_group *g)
{
	struct cmp_row *rows = calloc(g->n, sizeof(*rows));
	struct svg_unit u = fig_table_unit(g->probe);
	const char *head[NCOLS + 1];
	char names[NCOLS][32];
	int r = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < g->n && r == 0; i++)
		if ((r = cmp_row_init(&rows[i])) == 0)
			r = cmp_row_add(&rows[i], &g->runs[i].res->all, 0);
	if (r < 0)
		goto out;
	head[0] = "run";
	for (size_t c = 0; c < NCOLS; c++) {
		snprintf(names[c], sizeof(names[c]), "%s%s%s%s", expr_stat_name(cmp_cols[c]),
			 cmp_stat_is_time(cmp_cols[c]) ? " (" : "", cmp_stat_is_time(cmp_cols[c]) ? u.name : "",
			 cmp_stat_is_time(cmp_cols[c]) ? ")" : "");
		head[c + 1u] = names[c];
	}
	fputs("<h3 id=\"", out);
	html_id(out, "compare-", g->probe);
	fputs("\">", out);
	html_text(out, "comparison, as latscope compare sees it (%s, every CPU merged)", g->metric);
	fputs("</h3>\n", out);
	html_table_begin(out, "compare", head, NCOLS + 1u);
	for (size_t i = 0; i < g->n; i++) {
		html_row_begin(out);
		fprintf(out, "<td><span style=\"color:%s\">&#9632;</span> ", svg_colour(g->runs[i].colour));
		html_text(out, "%lld", (long long)g->runs[i].id);
		fputs("</td>", out);
		for (size_t c = 0; c < NCOLS; c++) {
			bool none;
			double v = cmp_row_stat(&rows[i], cmp_cols[c], &none);
			char text[32];
			if (none)
				snprintf(text, sizeof(text), "-");
			else if (cmp_cols[c] == EXPR_ABOVE_PCT)
				snprintf(text, sizeof(text), "%.3f", v);
			else if (cmp_cols[c] == EXPR_SPIKES_PER_HOUR)
				snprintf(text, sizeof(text), "%.1f", v);
			else if (cmp_stat_is_time(cmp_cols[c]))
				val(&u, v, text, sizeof(text));
			else
				snprintf(text, sizeof(text), "%.0f", v);
			html_cell(out, true, "%s", text);
		}
		html_row_end(out);
	}
	html_table_end(out);
	if (g->n < 2) {
		html_elem(out, "p", "muted", "One run of %s: nothing to compare it with.", g->probe);
		goto out;
	}
	fputs("<ul class=\"verdicts\">\n", out);
	for (size_t i = 1; i < g->n && r == 0; i++)
		for (int k = 0; k < 2 && r == 0; k++) {
			struct verdict v;
			char a[32], b[32], line[640];
			if ((r = cmp_judge(&rows[0], &rows[i], k ? 99.0 : BOOT_MEAN, &v)) < 0)
				break;
			snprintf(a, sizeof(a), "run %lld", (long long)g->runs[0].id);
			snprintf(b, sizeof(b), "run %lld", (long long)g->runs[i].id);
			cmp_verdict_text(b, a, k ? "p99" : "mean", &v, line, sizeof(line));
			html_elem(out, "li", v.direction ? "warn" : NULL, "%s", line);
		}
	if (r == 0)
		r = tail_verdicts(out, g, rows);
	fputs("</ul>\n", out);
	html_elem(out, "p", "muted", "The verdict, against the first run of the probe, takes the wider of a block "
		  "bootstrap over the runs' windows and batch means over their contiguous parts, the mean and p99 each at "
		  "97.5 %% (doc/compare-method.md).");
out:
	for (size_t i = 0; i < g->n; i++)
		cmp_row_free(&rows[i]);
	free(rows);
	return r;
}

static int group_section(FILE *out, struct report_group *g)
{
	const struct probe_ops *ops = probe_find(g->probe);
	double top = 0;
	int r;

	for (size_t i = 0; i < g->n; i++)
		top = fmax(top, (double)g->runs[i].res->all.sum[0].max);
	g->unit = svg_unit_for(top);
	fputs("<section class=\"probe\" id=\"", out);
	html_id(out, "probe-", g->probe);
	fputs("\">\n", out);
	html_elem(out, "h2", NULL, "%s: %s", g->probe, probe_about(g->probe));
	for (size_t i = 0; i < g->n; i++)
		if (g->runs[i].res->all.sum[0].count == 0)
			html_elem(out, "p", "warn", "run %lld has no sample (%s): nothing of it is drawn.",
				  (long long)g->runs[i].id, g->runs[i].res->interrupted ? "stopped before the first one" :
				  "none was taken");
	fputs("<div class=\"figs\">\n", out);
	r = fig_distributions(out, g);
	if (r == 0)
		r = fig_windows(out, g);
	if (r == 0)
		r = fig_bands(out, g);
	if (r == 0 && !(ops && ops->per_op_costs))
		r = fig_tail(out, g);
	if (r == 0 && ops && ops->values_tile_time)
		r = fig_noise(out, g);
	if (r == 0 && ops && ops->per_op_costs)
		r = fig_io(out, g);
	fputs("</div>\n", out);
	if (r == 0)
		r = comparison(out, g);
	fputs("</section>\n", out);
	return r;
}

int html_report_write(FILE *out, const struct result *res, const int64_t *ids, size_t n)
{
	struct report_run *runs = calloc(n ? n : 1, sizeof(*runs));
	struct report_run *sorted = calloc(n ? n : 1, sizeof(*sorted));
	bool *done = calloc(n ? n : 1, sizeof(*done));
	char title[256];
	size_t len, ns = 0;
	int r = 0;

	if (!runs || !sorted || !done) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		runs[i] = (struct report_run){ .id = ids[i], .res = &res[i], .colour = i };
		run_name(&runs[i]);
	}
	len = (size_t)snprintf(title, sizeof(title), "latscope report: run%s", n > 1 ? "s" : "");
	for (size_t i = 0; i < n && len < sizeof(title); i++)
		len += (size_t)snprintf(title + len, sizeof(title) - len, "%s %lld", i ? "," : "", (long long)ids[i]);
	html_begin(out, title);
	html_elem(out, "h1", NULL, "%s", title);
	html_elem(out, "p", "muted", "latscope %s. Times in %s; every figure draws each run in its own colour, the same "
		  "throughout; axes always reach the largest value.", LATSCOPE_VERSION, "the unit on each axis");
	overview(out, runs, n);
	/* One section per probe, in the order they first come; runs of a probe share the leading metric. */
	for (size_t i = 0; i < n && r == 0; i++) {
		if (done[i])
			continue;
		struct report_group g = { .probe = runs[i].res->probe, .metric = runs[i].res->metric_names[0],
					  .runs = sorted + ns };
		for (size_t k = i; k < n; k++)
			if (!done[k] && strcmp(runs[k].res->probe, g.probe) == 0) {
				sorted[ns++] = runs[k];
				done[k] = true;
				g.n++;
			}
		r = group_section(out, &g);
	}
	html_elem(out, "h2", NULL, "The runs");
	for (size_t i = 0; i < n && r == 0; i++)
		runinfo_write(out, ids[i], &res[i], svg_colour(runs[i].colour));
	html_end(out);
	if (r == 0 && (fflush(out) != 0 || ferror(out)))
		r = -EIO;
out:
	free(runs);
	free(sorted);
	free(done);
	return r;
}
