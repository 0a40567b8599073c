#include "report/text.h"
#include "report/tprint.h"
#include "report/hosttext.h"
#include "report/tailtext.h"
#include "report/tracetext.h"

#include <string.h>
#include <time.h>

#include "core/nstime.h"
#include "core/quote.h"
#include "core/units.h"
#include <jansson.h>
#include "probe/probe.h"
#include "result/quiet.h"

/* Microseconds with one decimal: the unit latency people read. */


static void text_header_system(FILE *out, const struct result *res)
{
	const struct sysdesc *s = &res->sys;
	tprintf(out, "system: %s, kernel %s %s%s%s, clocksource %s%s%s\n",
		s->cpu_model[0] ? s->cpu_model : "unknown CPU", s->kernel_release, s->preempt,
		s->preempt_mode[0] ? " " : "", s->preempt_mode,
		s->clocksource[0] ? s->clocksource : "unknown",
		s->hypervisor[0] ? ", hypervisor " : ", no hypervisor seen", s->hypervisor);
}

void text_header(FILE *out, const char *cmd, const struct result *res, const char *what)
{
	char cpus[256];
	size_t n = 0;

	cpus[0] = '\0';
	for (size_t i = 0; i < res->ncpus && n < sizeof(cpus); i++)
		n += (size_t)snprintf(cpus + n, sizeof(cpus) - n, "%s%d", i ? "," : "", res->cpus[i].cpu);
	tprintf(out, "latscope %s: %s on cpu %s\n", cmd, what, cpus);
	text_header_system(out, res);
}

void text_notes(FILE *out, const char *cmd, const struct result *res, unsigned first, bool verbose)
{
	for (unsigned i = first; i < res->nnotes; i++)
		if (!res->note_kept[i] && (verbose || !res->note_is_info[i] || res->note_shown[i]))
			tprintf(out, "latscope %s: %s\n", cmd, res->notes[i]);
}


/* How a probe's values read best: microseconds with a decimal, or whole nanoseconds. */
struct unit {
	uint64_t ns;
	const char *name;
};

static struct unit unit_of_probe(const char *probe)
{
	const struct probe_ops *ops = probe_find(probe);
	if (ops && ops->unit_ns == 1)
		return (struct unit){ 1, "ns" };
	return (struct unit){ 1000, "us" };
}

static struct unit unit_of(const struct result *res)
{
	return unit_of_probe(res->probe);
}

static const char *val(struct unit u, double ns, char *buf, size_t size)
{
	if (u.ns == 1)
		snprintf(buf, size, "%.0f", ns);
	else
		snprintf(buf, size, "%.1f", ns / (double)u.ns);
	return buf;
}

/*
 * One line per CPU per window, a stable format (latscope-timer(1), LIVE OUTPUT)
 * that scripts parse: fields separated by spaces, every figure with its unit.
 *
 *   START cpuN n COUNT mean V sd V above THRESHOLD PCT% [MIN - MAX] global [MIN - MAX] missed N
 *
 * noise ends "... global [MIN - MAX] noise N above THRESHOLD, PCT% of the time"
 * and io "... global [MIN - MAX] R ops/s [B MB/s] [system V softirq V iowait V per op on cpuN]".
 */
void text_window(FILE *out, const struct result *res, const struct cpu_result *cr,
		 const struct result_window *rw)
{
	const struct probe_ops *ops = probe_find(res->probe);
	const struct rec_window *w = &rw->w;
	const struct rec_metric *m = &w->m[0];
	const struct stats *g = &cr->gwin[0];
	struct unit u = unit_of(res);
	char a[32], b[32], c[32], d[32], e[32], f[32], t[32];
	const bool tiles = ops && ops->values_tile_time, per_op = ops && ops->per_op_costs;

	fmt_duration(res->threshold_ns, t, sizeof(t));
	tprintf(out, "%8.2fs cpu%-3d n %-7llu mean %s%s sd %s%s ", (double)w->start_ns / 1e9, cr->cpu,
		(unsigned long long)m->st.n, val(u, m->st.mean, a, sizeof(a)), u.name,
		val(u, stats_stddev(&m->st), b, sizeof(b)), u.name);
	if (!tiles && !per_op)
		tprintf(out, "above %s %.2f%% ", t, m->st.n ? 100.0 * (double)m->above / (double)m->st.n : 0.0);
	tprintf(out, "[%s%s - %s%s] global [%s%s - %s%s] ", val(u, (double)stats_min(&m->st), c, sizeof(c)), u.name,
		val(u, (double)m->st.max, d, sizeof(d)), u.name, val(u, (double)stats_min(g), e, sizeof(e)), u.name,
		val(u, (double)g->max, f, sizeof(f)), u.name);
	if (per_op) {
		double secs = (double)(w->end_ns - w->start_ns) / 1e9;
		uint64_t bytes = result_op_bytes(res);
		tprintf(out, "%.0f ops/s", secs > 0 ? (double)m->st.n / secs : 0.0);
		if (bytes)
			tprintf(out, " %.1f MB/s", secs > 0 ? (double)m->st.n * (double)bytes / secs / 1e6 : 0.0);
		if (rw->ctx.valid)
			tprintf(out, " system %.1fus softirq %.1fus iowait %.1fus per op on cpu%d",
				m->st.n ? (double)rw->ctx.cpu_ns[CPU_SYSTEM] / 1000.0 / (double)m->st.n : 0.0,
				m->st.n ? (double)rw->ctx.cpu_ns[CPU_SOFTIRQ] / 1000.0 / (double)m->st.n : 0.0,
				m->st.n ? (double)rw->ctx.cpu_ns[CPU_IOWAIT] / 1000.0 / (double)m->st.n : 0.0, cr->cpu);
		fputc('\n', out);
	} else if (tiles) {
		double time = m->st.mean * (double)m->st.n;
		tprintf(out, "noise %llu above %s, %.3f%% of the time\n", (unsigned long long)m->above, t,
			time > 0 ? 100.0 * (double)m->above_ns / time : 0.0);
	} else {
		tprintf(out, "missed %llu\n", (unsigned long long)w->missed);
	}
	fflush(out);
}

/* Metrics after the first have no threshold, and missed periods belong to the first. */
static void summary_row(FILE *out, struct unit u, const char *name, const struct cpu_result *cr, unsigned metric)
{
	const struct summary *s = &cr->sum[metric];
	char v[12][24];

	if (s->count == 0) {
		/* no sample: a count, missed periods, and no figure that would read as a measurement */
		tprintf(out, "%-6s %10llu %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s %8llu\n", name, 0ULL, "-", "-",
			"-", "-", "-", "-", "-", "-", "-", "-", "-", "-", (unsigned long long)(metric == 0 ? cr->missed : 0));
		return;
	}
	tprintf(out, "%-6s %10llu %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s ", name,
		(unsigned long long)s->count, val(u, (double)s->min, v[0], 24), val(u, s->mean, v[1], 24),
		val(u, s->stddev, v[2], 24), val(u, (double)s->p50, v[3], 24), val(u, (double)s->p90, v[4], 24),
		val(u, (double)s->p99, v[5], 24), val(u, (double)s->p999, v[6], 24), val(u, (double)s->p9999, v[7], 24),
		val(u, (double)s->max, v[8], 24), s->has_warm_max ? val(u, (double)s->warm_max, v[9], 24) : "-");
	if (metric == 0)
		tprintf(out, "%9llu %7.3f %8llu\n", (unsigned long long)s->above, s->above_pct,
			(unsigned long long)cr->missed);
	else
		tprintf(out, "%9s %7s %8s\n", "-", "-", "-");
}

static void summary_table(FILE *out, const struct result *res, struct unit u, unsigned metric)
{
	tprintf(out, "%-6s %10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s %8s\n", "cpu", "count", "min",
		"mean", "stddev", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm-max", "> thr", "% > thr",
		"missed");
	for (size_t i = 0; i < res->ncpus; i++) {
		char name[16];
		snprintf(name, sizeof(name), "%d", res->cpus[i].cpu);
		summary_row(out, u, name, &res->cpus[i], metric);
	}
	if (res->ncpus > 1)
		summary_row(out, u, "all", &res->all, metric);
}

static void largest_line(FILE *out, const struct cpu_result *cr, const char *name)
{
	if (cr->ntop == 0)
		return;
	tprintf(out, "  %-5s largest:", name);
	for (unsigned i = 0; i < cr->ntop && i < 3; i++) {
		char v[32], at[32];
		fmt_duration(cr->top[i].value, v, sizeof(v));
		fmt_duration(cr->top[i].at_ns, at, sizeof(at));
		tprintf(out, "%s %s at %s", i ? "," : "", v, at);
		if (cr->cpu < 0)
			tprintf(out, " (cpu %d)", cr->top_cpu[i]);
	}
	fputc('\n', out);
}

/* The sum of the values is the time measured: say how much of it went above the threshold. */
static void share_line(FILE *out, const struct result *res, const struct cpu_result *cr, const char *name)
{
	const struct summary *s = &cr->sum[0];
	double time = s->mean * (double)s->count;
	char t[32], tot[32], floor[32];

	fmt_duration(res->threshold_ns, t, sizeof(t));
	fmt_duration(s->above_ns, tot, sizeof(tot));
	fmt_duration(s->min, floor, sizeof(floor));
	tprintf(out, "  %-5s %llu gaps above %s took %s, %.3f%% of the time; the loop's own period (min gap) is %s\n",
		name, (unsigned long long)s->above, t, tot, time > 0 ? 100.0 * (double)s->above_ns / time : 0.0, floor);
}

/* The three largest counts of c as "NAME n, NAME n". */
static void top_counts(const struct named_counts *c, char *buf, size_t size)
{
	size_t used[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, len = 0;
	buf[0] = '\0';
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < c->n; i++) {
			if (i == used[0] || i == used[1])
				continue;
			if (used[k] == SIZE_MAX || c->items[i].count > c->items[used[k]].count)
				used[k] = i;
		}
		if (used[k] == SIZE_MAX)
			break;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s %llu", k ? ", " : "", c->items[used[k]].name,
						(unsigned long long)c->items[used[k]].count);
	}
}

static uint64_t count_total(const struct named_counts *c)
{
	uint64_t t = 0;
	for (size_t i = 0; i < c->n; i++)
		t += c->items[i].count;
	return t;
}

/* "SMIs 3" or why there is no count. */
static void smi_text(const struct result *res, bool counted, uint64_t smis, char *buf, size_t size)
{
	if (counted)
		snprintf(buf, size, "SMIs %llu (%s)", (unsigned long long)smis, smi_source_name(res->smi_source));
	else if (res->smi_asked)
		snprintf(buf, size, "SMIs not available here");
	else
		snprintf(buf, size, "SMIs not counted (a result of a latscope before them)");
}

/* What else the CPU saw, and what the events above the threshold are not explained by. */
static void context_lines(FILE *out, const struct result *res, const struct cpu_result *cr, const char *name)
{
	uint64_t invol = 0, steal = 0, unexplained = 0, above = 0, smis = 0;
	uint64_t by[QUIET_CAUSES] = { 0 };
	char irqs[160], softs[160], st[32], smi[80];
	bool counted = result_smis(res, cr, &smis);

	if (!cr->has_context)
		return;
	for (size_t i = 0; i < cr->nwin; i++) {
		const struct result_window *w = &cr->win[i];
		uint64_t beside = w->ctx.irqs + w->ctx.softirqs + w->ctx.involuntary;
		invol += w->ctx.involuntary;
		steal += w->ctx.cpu_ns[CPU_STEAL];
		if (w->span != 1)
			continue;       /* a folded block's quiet windows would explain its busy ones */
		above += w->w.m[0].above;
		if (w->w.m[0].above > beside) {
			unexplained += w->w.m[0].above - beside;
			by[quiet_cause_of(res, &w->ctx)] += w->w.m[0].above - beside;
		}
	}
	top_counts(&cr->irqs, irqs, sizeof(irqs));
	top_counts(&cr->softirqs, softs, sizeof(softs));
	fmt_duration(steal, st, sizeof(st));
	smi_text(res, counted, smis, smi, sizeof(smi));
	tprintf(out, "  %-5s beside them: %llu interrupts (%s), %llu softirqs (%s), %llu preemptions, steal %s, %s\n", name,
		(unsigned long long)count_total(&cr->irqs), irqs[0] ? irqs : "none", (unsigned long long)count_total(&cr->softirqs),
		softs[0] ? softs : "none", (unsigned long long)invol, st, smi);
	/* A slow read is not explained by the interrupts that complete it. */
	const struct probe_ops *ops = probe_find(res->probe);
	if (unexplained == 0 || above == 0 || (ops && ops->per_op_costs))
		return;
	tprintf(out, "  %-5s %llu of %llu events above the threshold (in the windows kept as measured) came with no "
		"interrupt, softirq or preemption in their window to explain them:", name, (unsigned long long)unexplained,
		(unsigned long long)above);
	for (int k = 0, first = 1; k < QUIET_CAUSES; k++)
		if (by[k]) {
			tprintf(out, "%s %llu %s", first ? "" : ";", (unsigned long long)by[k], quiet_cause_text(k));
			first = 0;
		}
	fputc('\n', out);
}

/* noise --hwlat: what the kernel's hwlat tracer saw on the measured CPUs (the hardware's part). */
static void hwlat_line(FILE *out, const struct result *res)
{
	const json_t *h = res->hwlat;
	char inner[32], outer[32];

	if (!h)
		return;
	fmt_duration((uint64_t)json_integer_value(json_object_get(h, "max_inner_ns")), inner, sizeof(inner));
	fmt_duration((uint64_t)json_integer_value(json_object_get(h, "max_outer_ns")), outer, sizeof(outer));
	tprintf(out, "hardware (hwlat tracer): %zu samples above its threshold, largest inner %s, outer %s, %lld NMIs in them\n",
		json_array_size(json_object_get(h, "samples")), inner, outer,
		(long long)json_integer_value(json_object_get(h, "nmi_count")));
}

static void overhead_line(FILE *out, const struct cpu_result *cr, const char *name)
{
	if (cr->clock_cost.n)
		tprintf(out, "  %-5s clock read %.0f ns (min %llu)", name, cr->clock_cost.mean,
			(unsigned long long)stats_min(&cr->clock_cost));
	else
		tprintf(out, "  %-5s clock read not measured (it is, after the run: a checkpoint has none)", name);
	if (cr->overhead.n)
		tprintf(out, ", wakeup to recorded %.0f ns mean, %llu ns max", cr->overhead.mean,
			(unsigned long long)cr->overhead.max);
	fputc('\n', out);
}

static void cost_line(FILE *out, const char *who, const uint64_t *cpu_ns, double ops)
{
	tprintf(out, "  %-22s", who);
	for (int k = 0; k < CPU_TIME_KINDS; k++)
		if (k != CPU_IDLE)
			tprintf(out, " %s %.2f", cpu_time_names[k], (double)cpu_ns[k] / 1000.0 / ops);
	tprintf(out, "  (idle %.2f)\n", (double)cpu_ns[CPU_IDLE] / 1000.0 / ops);
}

/* Throughput, and what each operation cost the CPU, by category. */
static void op_costs(FILE *out, const struct result *res)
{
	const struct summary *s = &res->all.sum[0];
	double ops = (double)s->count, secs = (double)res->elapsed_ns / 1e9;
	uint64_t bytes = result_op_bytes(res);
	char rate[64] = "";

	if (s->count == 0 || secs <= 0)
		return;
	if (bytes)
		snprintf(rate, sizeof(rate), ", %.1f MB/s", ops * (double)bytes / secs / 1e6);
	tprintf(out, "throughput: %.0f ops/s%s\n", ops / secs, rate);
	if (!res->machine.valid)
		return;
	const struct machine_window *m = &res->machine.total;
	tprintf(out, "CPU time per operation (us), from /proc/stat (10 ms resolution per CPU):\n");
	cost_line(out, "whole machine", m->cpu_ns, ops);
	for (size_t i = 0; i < res->ncpus; i++) {
		uint64_t ns[CPU_TIME_KINDS] = { 0 };
		char who[32];
		for (size_t k = 0; k < res->cpus[i].nwin; k++)
			for (int c = 0; c < CPU_TIME_KINDS; c++)
				ns[c] += res->cpus[i].win[k].ctx.cpu_ns[c];
		snprintf(who, sizeof(who), "cpu%d (reading)", res->cpus[i].cpu);
		cost_line(out, who, ns, ops);
	}
	tprintf(out, "  %-22s user %.2f system %.2f (getrusage)\n", "latscope itself", (double)m->self_user_ns / 1000.0 / ops,
		(double)m->self_system_ns / 1000.0 / ops);
	tprintf(out, "interrupts per operation %.3f, softirqs %.3f, context switches %.3f (whole machine)\n",
		(double)m->irqs / ops, (double)m->softirqs / ops, (double)m->switches / ops);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* How often the threshold was passed, and the OSADL view of the maximum per 5 minutes. */
static void long_run_lines(FILE *out, const struct result *res, struct unit u)
{
	const struct cpu_result *all = &res->all;
	const struct long_run *lr = &all->lr;
	char mtbf[32], lo[32], hi[32], at[32], v[3][24];

	if (!res->long_run || lr->observed_ns == 0)
		return;
	fmt_duration(lr->mtbf_lo_ns > 0 ? (uint64_t)lr->mtbf_lo_ns : 0, lo, sizeof(lo));
	if (lr->has_mtbf) {
		char worst[64] = "";
		fmt_duration((uint64_t)lr->mtbf_ns, mtbf, sizeof(mtbf));
		fmt_duration((uint64_t)lr->mtbf_hi_ns, hi, sizeof(hi));
		fmt_duration(lr->worst_at_ns, at, sizeof(at));
		if (lr->has_worst)      /* a checkpoint has no largest values yet */
			snprintf(worst, sizeof(worst), "; the worst at %s on cpu%d", at, all->top_cpu[0]);
		tprintf(out, "spikes (runs of samples above the threshold): %llu, %.1f per hour (%.1f per 10 min); "
			"one every %s (95%% CI %s..%s)%s\n", (unsigned long long)all->spikes, lr->per_hour,
			lr->per_hour / 6.0, mtbf, lo, hi, worst);
	} else {
		/* the two-sided interval's upper count: a one-sided 97.5 % bound */
		tprintf(out, "spikes (runs of samples above the threshold): none; one every %s or more (97.5%%)\n", lo);
	}
	/* The last band is still filling (or cut short by the end): lowest and median
	 * are of the whole bands before it, highest of every band. */
	const struct band_max *b = &all->bands;
	uint64_t *sorted = b->n >= 2 ? malloc(b->n * sizeof(*sorted)) : NULL, top = 0;
	size_t n = 0;
	for (size_t k = 0; sorted && k < b->n; k++)
		if (b->max[k] != RESULT_NO_BAND_MAX) {
			top = b->max[k] > top ? b->max[k] : top;
			if (k + 1u < b->n)
				sorted[n++] = b->max[k];
		}
	if (n >= 1) {
		qsort(sorted, n, sizeof(*sorted), by_value);
		uint64_t median = sorted[n / 2u];
		tprintf(out, "max per %.0f minutes over %zu whole bands: lowest %s, median %s; highest of all %s %s\n",
			(double)b->band_ns / 60e9, n, val(u, (double)sorted[0], v[0], 24), val(u, (double)median, v[1], 24),
			val(u, (double)top, v[2], 24), u.name);
	}
	free(sorted);
}

void text_summary(FILE *out, const struct result *res, bool separate)
{
	const struct probe_ops *ops = probe_find(res->probe);
	struct unit u = unit_of(res);
	char t[32], el[32];

	fmt_duration(res->threshold_ns, t, sizeof(t));
	fmt_duration(res->elapsed_ns, el, sizeof(el));
	if (separate)
		fputc('\n', out);
	char stopped[96];
	tprintf(out, "%s (%s) after %s%s%s\n", res->metric_names[0], u.name, el,
		res->interrupted ? ", " : "",
		res->interrupted ? result_stopped_text(res, stopped, sizeof(stopped)) : "");
	summary_table(out, res, u, 0);
	tprintf(out, "threshold %s; warm max leaves out the first %llu window(s)\n", t,
		(unsigned long long)res->warmup);
	long_run_lines(out, res, u);
	if (!(ops && ops->per_op_costs))
		text_tail(out, res);
	/* A probe's other metrics (such as wake's wake_call), each in the same table. */
	for (unsigned m = 1; m < res->nmetrics; m++) {
		tprintf(out, "%s (%s)\n", res->metric_names[m], u.name);
		summary_table(out, res, u, m);
	}
	for (size_t i = 0; i < res->ncpus; i++) {
		const struct cpu_result *cr = &res->cpus[i];
		char name[16];
		snprintf(name, sizeof(name), "cpu%d", cr->cpu);
		largest_line(out, cr, name);
		if (ops && ops->values_tile_time)
			share_line(out, res, cr, name);
		context_lines(out, res, cr, name);
	}
	if (ops && ops->per_op_costs)
		op_costs(out, res);
	text_trace(out, res);
	hwlat_line(out, res);
	text_host(out, res);
	tprintf(out, "latscope's own cost per CPU:\n");
	for (size_t i = 0; i < res->ncpus; i++) {
		char name[16];
		snprintf(name, sizeof(name), "cpu%d", res->cpus[i].cpu);
		overhead_line(out, &res->cpus[i], name);
	}
}

void text_runs(FILE *out, const struct run_info *runs, size_t n)
{
	char v[5][24], when[24], labels[512];
	int hostw = 12; /* as wide as the longest host: a merge's "merged: 5 runs of ..." uncut */

	if (n == 0) {
		tprintf(out, "no runs\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(runs[i].host);
		if (len > (size_t)hostw)
			hostw = (int)(len < sizeof(runs[i].host) ? len : sizeof(runs[i].host));
	}
	tprintf(out, "%6s  %-19s  %-6s  %-*s %10s %9s %9s %9s %9s %7s  %s\n", "id", "start (UTC)",
		"probe", hostw, "host", "count", "p50", "p99", "max", "warm-max", "missed",
		"labels");
	for (size_t i = 0; i < n; i++) {
		const struct run_info *r = &runs[i];
		struct unit u = unit_of_probe(r->probe);
		snprintf(when, sizeof(when), "%.19s", r->start_time);
		if (strlen(when) > 10)
			when[10] = ' ';
		labels_format(&r->labels, labels, sizeof(labels));
		const bool some = r->count > 0;     /* figures of no sample would read as zero latency */
		tprintf(out,
			"%6lld  %-19s  %-6s  %-*s %10llu %7s%2s %7s%2s %7s%2s %7s%2s "
			"%7llu%s%s%s%s\n",
			(long long)r->id, when, r->probe, hostw, r->host,
			(unsigned long long)r->count,
			some ? val(u, (double)r->p50_ns, v[0], 24) : "-", some ? u.name : "",
			some ? val(u, (double)r->p99_ns, v[1], 24) : "-", some ? u.name : "",
			some ? val(u, (double)r->max_ns, v[2], 24) : "-", some ? u.name : "",
			r->has_warm_max ? val(u, (double)r->warm_max_ns, v[3], 24) : "-",
			r->has_warm_max ? u.name : "", (unsigned long long)r->missed,
			labels[0] ? "  " : "", labels, r->interrupted ? " (stopped early)" : "",
			r->partial ? " (partial)" : "");
	}
}

void text_result(FILE *out, const struct result *res, int64_t id)
{
	char when[64], labels[512];

	fmt_utc(res->start_realtime_ns, when, sizeof(when));
	if (id > 0)
		tprintf(out, "run %lld: %s, started %s UTC on %s\n", (long long)id, res->probe, when, res->sys.hostname);
	else
		tprintf(out, "not stored: %s, started %s UTC on %s\n", res->probe, when, res->sys.hostname);
	/* each argument as a shell reads it back: what was one argument reads as one */
	tprintf(out, "command:");
	for (int i = 0; i < res->argc; i++) {
		char *w = quote_shell_dup(res->argv[i]);
		tprintf(out, " %s", w ? w : res->argv[i]);
		free(w);
	}
	tprintf(out, "\n");
	labels_format(&res->labels, labels, sizeof(labels));
	if (labels[0])
		tprintf(out, "labels: %s\n", labels);
	text_header_system(out, res);
	if (res->partial) {
		char at[64];
		fmt_utc(res->start_realtime_ns + res->elapsed_ns, at, sizeof(at));
		tprintf(out, "partial: the run was not finished; this is its last checkpoint, at %s UTC\n", at);
	}
	for (unsigned i = 0; i < res->nnotes; i++)
		tprintf(out, "note: %s\n", res->notes[i]);
	text_summary(out, res, true);
}
