#include "report/text.h"

#include <string.h>
#include <time.h>

#include "core/nstime.h"
#include "core/units.h"

/* Microseconds with one decimal: the unit latency people read. */
static const char *us(uint64_t ns, char *buf, size_t size)
{
	snprintf(buf, size, "%.1f", (double)ns / 1000.0);
	return buf;
}

static const char *usd(double ns, char *buf, size_t size)
{
	snprintf(buf, size, "%.1f", ns / 1000.0);
	return buf;
}

static void text_header_system(FILE *out, const struct result *res)
{
	const struct sysdesc *s = &res->sys;
	fprintf(out, "system: %s, kernel %s %s%s%s, clocksource %s%s%s\n",
		s->cpu_model[0] ? s->cpu_model : "unknown CPU", s->kernel_release, s->preempt,
		s->preempt_mode[0] ? " " : "", s->preempt_mode,
		s->clocksource[0] ? s->clocksource : "unknown",
		s->hypervisor[0] ? ", hypervisor " : ", no hypervisor seen", s->hypervisor);
}

void text_header(FILE *out, const struct result *res, const char *what)
{
	char cpus[256];
	size_t n = 0;

	cpus[0] = '\0';
	for (size_t i = 0; i < res->ncpus && n < sizeof(cpus); i++)
		n += (size_t)snprintf(cpus + n, sizeof(cpus) - n, "%s%d", i ? "," : "", res->cpus[i].cpu);
	fprintf(out, "latscope %s: %s on cpu %s\n", res->probe, what, cpus);
	text_header_system(out, res);
}

void text_notes(FILE *out, const struct result *res, unsigned first, bool verbose)
{
	for (unsigned i = first; i < res->nnotes; i++)
		if (verbose || !res->note_is_info[i])
			fprintf(out, "latscope %s: %s\n", res->probe, res->notes[i]);
}

void text_window(FILE *out, const struct result *res, const struct cpu_result *cr,
		 const struct result_window *rw)
{
	const struct rec_window *w = &rw->w;
	const struct stats *st = &w->m[0].st;
	const struct stats *g = &cr->gwin[0];
	char a[32], b[32], c[32], d[32], e[32], f[32], t[32];
	double pct = st->n ? 100.0 * (double)w->m[0].above / (double)st->n : 0.0;

	fmt_duration(res->threshold_ns, t, sizeof(t));
	fprintf(out, "%8.2fs cpu%-3d n %-7llu mean %sus sd %sus above %s %.2f%% [%s - %s]us global [%s - %s]us missed %llu\n",
		(double)w->start_ns / 1e9, cr->cpu, (unsigned long long)st->n, usd(st->mean, a, sizeof(a)),
		usd(stats_stddev(st), b, sizeof(b)), t, pct, us(stats_min(st), c, sizeof(c)),
		us(st->max, d, sizeof(d)), us(stats_min(g), e, sizeof(e)), us(g->max, f, sizeof(f)),
		(unsigned long long)w->missed);
	fflush(out);
}

static void summary_row(FILE *out, const char *name, const struct cpu_result *cr)
{
	const struct summary *s = &cr->sum[0];
	char v[12][24];

	fprintf(out, "%-6s %10llu %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9llu %7.3f %8llu\n", name,
		(unsigned long long)s->count, us(s->min, v[0], 24), usd(s->mean, v[1], 24), usd(s->stddev, v[2], 24),
		us(s->p50, v[3], 24), us(s->p90, v[4], 24), us(s->p99, v[5], 24), us(s->p999, v[6], 24),
		us(s->p9999, v[7], 24), us(s->max, v[8], 24),
		s->has_warm_max ? us(s->warm_max, v[9], 24) : "-", (unsigned long long)s->above, s->above_pct,
		(unsigned long long)cr->missed);
}

static void overhead_line(FILE *out, const struct cpu_result *cr, const char *name)
{
	fprintf(out, "  %-5s clock read %.0f ns (min %llu), wakeup to recorded %.0f ns mean, %llu ns max\n", name,
		cr->clock_cost.mean, (unsigned long long)stats_min(&cr->clock_cost), cr->overhead.mean,
		(unsigned long long)cr->overhead.max);
}

void text_summary(FILE *out, const struct result *res)
{
	char t[32], el[32];

	fmt_duration(res->threshold_ns, t, sizeof(t));
	fmt_duration(res->elapsed_ns, el, sizeof(el));
	fprintf(out, "\n%s (us) after %s%s%s%s\n", res->metric_names[0], el,
		res->interrupted ? ", stopped early (" : "", res->interrupted ? res->stop_reason : "",
		res->interrupted ? ")" : "");
	fprintf(out, "%-6s %10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s %8s\n", "cpu", "count", "min",
		"mean", "stddev", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm-max", "> thr", "% > thr",
		"missed");
	for (size_t i = 0; i < res->ncpus; i++) {
		char name[16];
		snprintf(name, sizeof(name), "%d", res->cpus[i].cpu);
		summary_row(out, name, &res->cpus[i]);
	}
	if (res->ncpus > 1)
		summary_row(out, "all", &res->all);
	fprintf(out, "threshold %s; warm max leaves out the first %llu window(s)\n", t,
		(unsigned long long)res->warmup);
	fprintf(out, "latscope's own cost per CPU:\n");
	for (size_t i = 0; i < res->ncpus; i++) {
		char name[16];
		snprintf(name, sizeof(name), "cpu%d", res->cpus[i].cpu);
		overhead_line(out, &res->cpus[i], name);
	}
}

static void labels_text(const struct labels *ls, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < ls->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", i ? " " : "", ls->items[i].key,
					ls->items[i].value);
}

void text_runs(FILE *out, const struct run_info *runs, size_t n)
{
	char v[5][24], when[24], labels[512];

	if (n == 0) {
		fprintf(out, "no runs\n");
		return;
	}
	fprintf(out, "%6s  %-19s  %-6s  %-12s %10s %9s %9s %9s %9s %7s  %s\n", "id", "start (UTC)", "probe", "host",
		"count", "p50", "p99", "max", "warm-max", "missed", "labels");
	for (size_t i = 0; i < n; i++) {
		const struct run_info *r = &runs[i];
		snprintf(when, sizeof(when), "%.19s", r->start_time);
		if (strlen(when) > 10)
			when[10] = ' ';
		labels_text(&r->labels, labels, sizeof(labels));
		fprintf(out, "%6lld  %-19s  %-6s  %-12.12s %10llu %9s %9s %9s %9s %7llu  %s%s\n", (long long)r->id, when,
			r->probe, r->host, (unsigned long long)r->count, us(r->p50_ns, v[0], 24), us(r->p99_ns, v[1], 24),
			us(r->max_ns, v[2], 24), r->has_warm_max ? us(r->warm_max_ns, v[3], 24) : "-",
			(unsigned long long)r->missed, labels, r->interrupted ? " (stopped early)" : "");
	}
}

void text_result(FILE *out, const struct result *res, int64_t id)
{
	char when[64], labels[512];
	time_t secs = (time_t)(res->start_realtime_ns / NS_PER_SEC);
	struct tm tm;

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	else
		snprintf(when, sizeof(when), "?");
	fprintf(out, "run %lld: %s, started %s on %s\n", (long long)id, res->probe, when, res->sys.hostname);
	fprintf(out, "command:");
	for (int i = 0; i < res->argc; i++)
		fprintf(out, " %s", res->argv[i]);
	fprintf(out, "\n");
	labels_text(&res->labels, labels, sizeof(labels));
	if (labels[0])
		fprintf(out, "labels: %s\n", labels);
	text_header_system(out, res);
	for (unsigned i = 0; i < res->nnotes; i++)
		fprintf(out, "note: %s\n", res->notes[i]);
	text_summary(out, res);
}
