/* The page of a monitor: its figure, then one row per period. */
#include "report/periods.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "core/array.h"
#include "core/units.h"
#include "report/html.h"
#include "report/reportfig.h"

void report_period_take(const struct result *res, int64_t id, struct report_period *ret)
{
	const struct summary *s = &res->all.sum[0];

	*ret = (struct report_period){
		.id = id, .start_ns = res->start_realtime_ns, .elapsed_ns = res->elapsed_ns, .count = s->count,
		.p99 = s->p99, .p999 = s->p999, .max = s->max, .missed = res->all.missed,
		.spikes_counted = res->long_run, .spikes = res->all.spikes, .threshold_ns = res->threshold_ns,
		.partial = res->partial, .interrupted = res->interrupted,
	};
	snprintf(ret->probe, sizeof(ret->probe), "%s", res->probe);
}

void report_monitor_describe(struct report_monitor *m, const struct result *first, const char *label_key)
{
	struct labels own = { 0 };

	snprintf(m->probe, sizeof(m->probe), "%s", first->probe);
	snprintf(m->metric, sizeof(m->metric), "%s", first->metric_names[0]);
	snprintf(m->host, sizeof(m->host), "%s", first->sys.hostname);
	for (unsigned i = 0; i < first->labels.n; i++)
		if (strcmp(first->labels.items[i].key, label_key) != 0)
			own.items[own.n++] = first->labels.items[i];
	labels_format(&own, m->labels, sizeof(m->labels));
}

/* ns in the table's unit, every digit kept: what `show --json` says, read in us. */
static void exact(const struct svg_unit *u, uint64_t ns, bool shown, char *buf, size_t size)
{
	if (!shown)
		snprintf(buf, size, "-");
	else if (u->ns == 1.0)
		snprintf(buf, size, "%llu", (unsigned long long)ns);
	else
		snprintf(buf, size, "%llu.%03llu", (unsigned long long)(ns / 1000u), (unsigned long long)(ns % 1000u));
}

static void periods_table(FILE *out, const struct report_monitor *m)
{
	struct svg_unit u = fig_table_unit(m->probe);
	char h[3][32];
	snprintf(h[0], sizeof(h[0]), "p99 (%s)", u.name);
	snprintf(h[1], sizeof(h[1]), "p99.9 (%s)", u.name);
	snprintf(h[2], sizeof(h[2]), "max (%s)", u.name);
	const char *head[] = { "run", "start (UTC)", "duration", "samples", h[0], h[1], h[2], "spikes", "missed",
			       "status" };

	html_table_begin(out, "periods", head, ARRAY_SIZE(head));
	for (size_t i = 0; i < m->n; i++) {
		const struct report_period *p = &m->periods[i];
		char when[32], dur[32], a[32], b[32], c[32];
		fmt_utc(p->start_ns, when, sizeof(when));
		fmt_duration(p->elapsed_ns, dur, sizeof(dur));
		exact(&u, p->p99, p->count, a, sizeof(a));
		exact(&u, p->p999, p->count, b, sizeof(b));
		exact(&u, p->max, p->count, c, sizeof(c));
		html_row_begin(out);
		fprintf(out, "<td>%lld</td>", (long long)p->id);
		html_cell(out, false, "%s", when);
		html_cell(out, true, "%s", dur);
		html_cell(out, true, "%llu", (unsigned long long)p->count);
		html_cell(out, true, "%s", a);
		html_cell(out, true, "%s", b);
		html_cell(out, true, "%s", c);
		if (p->spikes_counted)
			html_cell(out, true, "%llu", (unsigned long long)p->spikes);
		else
			html_cell(out, true, "-");
		html_cell(out, true, "%llu", (unsigned long long)p->missed);
		html_cell(out, false, "%s", p->partial ? "partial (still measuring)" : p->interrupted ? "stopped early" :
			  "complete");
		html_row_end(out);
	}
	html_table_end(out);
}

static void describe(FILE *out, const struct report_monitor *m)
{
	const struct report_period *first = &m->periods[0], *last = &m->periods[m->n - 1u];
	uint64_t samples = 0, missed = 0, top = 0;
	bool thr_varies = false, probes_vary = false;
	char from[32], to[32], thr[64] = "no threshold";

	for (size_t i = 0; i < m->n; i++) {
		samples += m->periods[i].count;
		missed += m->periods[i].missed;
		top = m->periods[i].count && m->periods[i].max > top ? m->periods[i].max : top;
		thr_varies |= m->periods[i].threshold_ns != first->threshold_ns;
		probes_vary |= strcmp(m->periods[i].probe, first->probe) != 0;
	}
	fmt_utc(first->start_ns, from, sizeof(from));
	fmt_utc(last->start_ns + last->elapsed_ns, to, sizeof(to));
	if (first->threshold_ns) {
		struct svg_unit u = svg_unit_for((double)first->threshold_ns);
		snprintf(thr, sizeof(thr), "threshold %.4g %s%s", (double)first->threshold_ns / u.ns, u.name,
			 thr_varies ? " in the first period (it changes)" : "");
	}
	html_elem(out, "p", NULL, "%zu period%s of %s on %s, from %s to %s UTC; %s%s%s.", m->n, m->n == 1 ? "" : "s",
		  m->probe, m->host, from, to, thr, m->labels[0] ? "; labels " : "", m->labels);
	struct svg_unit u = svg_unit_for((double)top);
	html_elem(out, "p", NULL, "%llu samples in all, %llu missed; the largest %s of all: %.4g %s.",
		  (unsigned long long)samples, (unsigned long long)missed, m->metric, (double)top / u.ns, u.name);
	if (probes_vary)
		html_elem(out, "p", "warn", "The periods are not all of probe %s: each is drawn in %s's metric and unit.",
			  m->probe, m->probe);
	if (last->partial)
		html_elem(out, "p", "muted", "The last period is a checkpoint: the monitor was still measuring it.");
}

int html_monitor_write(FILE *out, const struct report_monitor *m)
{
	char title[320];
	int r = 0;

	snprintf(title, sizeof(title), "latscope report: monitor %s", m->id);
	html_begin(out, title);
	html_elem(out, "h1", NULL, "%s", title);
	html_elem(out, "p", "muted", "latscope %s. One run stored per period; every figure and row is the period's, "
		  "every CPU merged.", LATSCOPE_VERSION);
	if (m->n) {
		describe(out, m);
		r = fig_periods(out, m);
		html_elem(out, "h2", NULL, "The periods");
		periods_table(out, m);
	}
	html_end(out);
	if (r == 0 && (fflush(out) != 0 || ferror(out)))
		r = -EIO;
	return r;
}
