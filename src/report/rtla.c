#include "report/rtla.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/nstime.h"

static const char *const ctx_names[RTLA_CTXS] = { "IRQ", "Thr", "Usr" };
static const char *const stage_keys[RTLA_CTXS] = { "irq", "thread", "user" };

void rtla_duration(uint64_t elapsed_ns, char *buf, size_t size)
{
	uint64_t s = (elapsed_ns + NS_PER_SEC / 2u) / NS_PER_SEC;   /* rtla's whole seconds of time() */
	snprintf(buf, size, "%3llu %02llu:%02llu:%02llu", (unsigned long long)(s / 86400u),
		 (unsigned long long)(s / 3600u % 24u), (unsigned long long)(s / 60u % 60u), (unsigned long long)(s % 60u));
}

static const json_t *trace_cpu(const struct result *res, int cpu)
{
	const json_t *cpus = res->trace ? json_object_get(res->trace, "cpus") : NULL;
	size_t i;
	const json_t *c;

	json_array_foreach(cpus, i, c)
		if (json_integer_value(json_object_get(c, "cpu")) == cpu)
			return c;
	return NULL;
}

static uint64_t jint(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));
	return v > 0 ? (uint64_t)v : 0;
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* rtla's avg is the mean of values truncated to its unit: exact from the sum of
 * whole units when a bin is one unit, else the truncated mean. */
static uint64_t col_avg(const struct rtla_col *c)
{
	return c->count ? c->sum / c->count : 0;
}

/* The sum from a mean in ns, when no sum of whole units was kept. */
static uint64_t sum_of_mean(double mean_ns, uint64_t count, uint64_t unit)
{
	return (uint64_t)(mean_ns * (double)count / (double)unit);
}

/* all += c (an ALL: column of every CPU's). */
static void col_merge(struct rtla_col *all, const struct rtla_col *c)
{
	if (!c->have || !c->count)
		return;
	all->have = true;
	if (all->count == 0 || c->min < all->min)
		all->min = c->min;
	if (c->max > all->max)
		all->max = c->max;
	all->count += c->count;
	all->sum += c->sum;
}

/* An IRQ or Thr column from the trace's stage (null when the CPU was not traced). */
static int stage_col(const struct rtla_view *v, const json_t *stage, struct rtla_col *c)
{
	const uint64_t unit = rtla_unit_ns(v);
	const json_t *lin = json_object_get(stage, "linear");

	if (!stage)
		return 0;
	c->have = true;
	c->count = jint(stage, "count");
	c->min = jint(stage, "min_ns") / unit;
	c->max = jint(stage, "max_ns") / unit;
	if (lin && jint(lin, "unit_ns") == unit)
		c->sum = jint(lin, "sum_units");
	else
		c->sum = sum_of_mean(json_number_value(json_object_get(stage, "mean_ns")), c->count, unit);
	if (!v->entries)
		return 0;
	uint64_t *bins = calloc(v->entries, sizeof(*bins));
	if (!bins)
		return -ENOMEM;
	c->bins = c->owned = bins;
	c->over = jint(lin, "over");
	size_t i;
	const json_t *b;
	json_array_foreach(json_object_get(lin, "bins"), i, b) {
		uint64_t idx = (uint64_t)json_integer_value(json_array_get(b, 0));
		uint64_t n = (uint64_t)json_integer_value(json_array_get(b, 1));
		if (idx < v->entries)
			bins[idx] += n;
		else
			c->over += n;
	}
	return 0;
}

/* Usr: every sample, from the kept linear histogram and the latency's summary. */
static int user_col(const struct rtla_view *v, const struct cpu_result *cr, bool live, struct rtla_col *c)
{
	const struct lin_hist *h = cr->lin;
	const uint64_t unit = rtla_unit_ns(v);

	if (!h)
		return 0;
	c->have = true;
	c->count = lin_load(&h->cycles);
	c->cur = lin_load(&h->last) * h->unit_ns / unit;
	if (live || h->unit_ns == unit) {
		/* the running figures are in the histogram's unit, the view's here */
		c->min = lin_load(&h->min) * h->unit_ns / unit;
		c->max = lin_load(&h->max) * h->unit_ns / unit;
		c->sum = lin_load(&h->sum) * (h->unit_ns / unit);
	} else {
		c->min = cr->sum[0].min / unit;
		c->max = cr->sum[0].max / unit;
		c->sum = sum_of_mean(cr->sum[0].mean, c->count, unit);
	}
	if (live || !v->entries || !h->bins)
		return 0;
	if (h->nbins != v->entries)
		return -EINVAL;         /* kept with another layout than the view's */
	c->bins = h->bins;
	c->over = h->overflow;
	return 0;
}

static int fill(struct rtla_view *v, const struct result *res, bool live)
{
	rtla_view_free(v);
	v->elapsed_ns = res->elapsed_ns;
	if (!(v->cpus = calloc(res->ncpus ? res->ncpus : 1u, sizeof(*v->cpus))))
		return -ENOMEM;
	v->ncpus = res->ncpus;
	for (size_t i = 0; i < res->ncpus; i++) {
		struct rtla_cpu *rc = &v->cpus[i];
		const json_t *tc = live ? NULL : trace_cpu(res, res->cpus[i].cpu);
		const json_t *stages = json_object_get(tc, "stages");
		rc->cpu = res->cpus[i].cpu;
		for (int k = RTLA_IRQ; k <= RTLA_THR; k++)
			if (stage_col(v, json_object_get(stages, stage_keys[k]), &rc->col[k]) < 0)
				return -ENOMEM;
		int r = user_col(v, &res->cpus[i], live, &rc->col[RTLA_USR]);
		if (r < 0)
			return r;
	}
	return 0;
}

int rtla_view_fill(struct rtla_view *v, const struct result *res)
{
	return fill(v, res, false);
}

int rtla_view_live(struct rtla_view *v, const struct result *res)
{
	return fill(v, res, true);
}

void rtla_view_free(struct rtla_view *v)
{
	for (size_t i = 0; v->cpus && i < v->ncpus; i++)
		for (int k = 0; k < RTLA_CTXS; k++)
			free(v->cpus[i].col[k].owned);
	free(v->cpus);
	v->cpus = NULL;
	v->ncpus = 0;
}

/* Whether any CPU has the trace's figures. */
static bool view_traced(const struct rtla_view *v)
{
	for (size_t i = 0; i < v->ncpus; i++)
		if (v->cpus[i].col[RTLA_IRQ].have || v->cpus[i].col[RTLA_THR].have)
			return true;
	return false;
}

/* Which columns a CPU shows: IRQ and Thr unless switched off, as rtla, with
 * zero counts where the trace has no figures (rteval reads three columns a
 * CPU by position: a missing one would shift every later CPU's); Usr with -u
 * as rtla, and also without the trace, the only figures then. */
static bool shown(const struct rtla_view *v, const struct rtla_cpu *rc, int k)
{
	(void)rc;
	if (k == RTLA_IRQ)
		return !v->no_irq;
	if (k == RTLA_THR)
		return !v->no_thread;
	return v->user || !view_traced(v);
}

/* rtla leaves out a CPU without a sample (offline, or not measured). */
static bool cpu_shown(const struct rtla_view *v, const struct rtla_cpu *rc)
{
	for (int k = 0; k < RTLA_CTXS; k++)
		if (shown(v, rc, k) && rc->col[k].count)
			return true;
	return false;
}

static void summary_value(FILE *out, uint64_t count, uint64_t val)
{
	if (count)
		fprintf(out, "%9llu ", (unsigned long long)val);
	else
		fprintf(out, "%9c ", '-');
}

enum row { ROW_COUNT, ROW_MIN, ROW_AVG, ROW_MAX, ROWS };

static uint64_t row_value(const struct rtla_col *c, enum row r)
{
	return r == ROW_COUNT ? c->count : r == ROW_MIN ? c->min : r == ROW_AVG ? col_avg(c) : c->max;
}

/* The summary rows' names, and the columns' figures in them. */
static const char *const row_heads[ROWS] = { "count:", "min:  ", "avg:  ", "max:  " };

static void summary_row(FILE *out, const struct rtla_view *v, enum row r, const struct rtla_col *const *cols, size_t n)
{
	fputs(v->no_index ? "" : row_heads[r], out);
	for (size_t j = 0; j < n; j++) {
		if (r == ROW_COUNT)
			fprintf(out, "%9llu ", (unsigned long long)cols[j]->count);
		else
			summary_value(out, cols[j]->count, row_value(cols[j], r));
	}
	fputc('\n', out);
}

/* The ALL: block: every CPU's column of a kind summed (rtla's print_stats_all). */
static void print_all(FILE *out, const struct rtla_view *v)
{
	struct rtla_col all[RTLA_CTXS] = { 0 };
	const struct rtla_col *cols[RTLA_CTXS];
	size_t n = 0;
	bool any[RTLA_CTXS] = { false };

	for (size_t i = 0; i < v->ncpus; i++) {
		const struct rtla_cpu *rc = &v->cpus[i];
		for (int k = 0; k < RTLA_CTXS && cpu_shown(v, rc); k++)
			if (shown(v, rc, k)) {
				any[k] = true;
				col_merge(&all[k], &rc->col[k]);
			}
	}
	fputs(v->no_index ? "" : "ALL:  ", out);
	for (int k = 0; k < RTLA_CTXS; k++)
		if (any[k]) {
			fprintf(out, k == RTLA_IRQ ? "      %s" : "       %s", ctx_names[k]);
			cols[n++] = &all[k];
		}
	fputc('\n', out);
	for (int r = 0; r < ROWS; r++)
		summary_row(out, v, (enum row)r, cols, n);
}

int rtla_print_hist(FILE *out, const struct rtla_view *v)
{
	const struct rtla_col **cols = calloc(v->ncpus * RTLA_CTXS + 1u, sizeof(*cols));
	size_t n = 0;
	char dur[32];

	if (!cols)
		return -ENOMEM;
	/* the columns in rtla's order: by CPU, then IRQ, Thr, Usr */
	rtla_duration(v->elapsed_ns, dur, sizeof(dur));
	if (!v->no_header)
		fprintf(out, "# RTLA timerlat histogram\n# Time unit is %s\n# Duration: %s\n%s",
			v->nano ? "nanoseconds (ns)" : "microseconds (us)", dur, v->no_index ? "" : "Index");
	for (size_t i = 0; i < v->ncpus; i++)
		for (int k = 0; k < RTLA_CTXS && cpu_shown(v, &v->cpus[i]); k++)
			if (shown(v, &v->cpus[i], k)) {
				cols[n++] = &v->cpus[i].col[k];
				if (!v->no_header)
					fprintf(out, "   %s-%03d", ctx_names[k], v->cpus[i].cpu);
			}
	if (!v->no_header)
		fputc('\n', out);
	for (uint32_t b = 0; b < v->entries; b++) {
		uint64_t total = 0;
		for (size_t j = 0; j < n; j++)
			total += cols[j]->bins ? cols[j]->bins[b] : 0;
		if (total == 0 && !v->with_zeros)
			continue;
		if (!v->no_index)
			fprintf(out, "%-6llu", (unsigned long long)b * v->bucket);
		for (size_t j = 0; j < n; j++)
			fprintf(out, "%9llu ", (unsigned long long)(cols[j]->bins ? cols[j]->bins[b] : 0));
		fputc('\n', out);
	}
	fputs(v->no_index ? "" : "over: ", out);
	for (size_t j = 0; j < n; j++)
		fprintf(out, "%9llu ", (unsigned long long)cols[j]->over);
	fputc('\n', out);
	if (!v->no_summary) {
		for (int r = 0; r < ROWS; r++)
			summary_row(out, v, (enum row)r, cols, n);
		print_all(out, v);
	}
	free(cols);
	return ferror(out) ? -EIO : 0;
}

static const char no_value[] = "        -";

/* One context's four figures of a top row; last says no " |" after them. */
static void top_values(FILE *out, const struct rtla_col *c, bool live_cur, bool last)
{
	if (!c->have || !c->count) {
		fprintf(out, "%s %s %s %s%s", no_value, no_value, no_value, no_value, last ? "" : " |");
		return;
	}
	if (live_cur)
		fprintf(out, "%9llu ", (unsigned long long)c->cur);
	else
		fprintf(out, "%s ", no_value);          /* the trace keeps no last sample */
	fprintf(out, "%9llu %9llu %9llu%s", (unsigned long long)c->min, (unsigned long long)col_avg(c),
		(unsigned long long)c->max, last ? "" : " |");
}

static void top_sum_values(FILE *out, const struct rtla_col *c, bool last)
{
	if (!c->have || !c->count) {
		fprintf(out, "          %s %s %s%s", no_value, no_value, no_value, last ? "" : " |");
		return;
	}
	fprintf(out, "          %9llu %9llu %9llu%s", (unsigned long long)c->min, (unsigned long long)col_avg(c),
		(unsigned long long)c->max, last ? "" : " |");
}

int rtla_print_top(FILE *out, const struct rtla_view *v, bool clear)
{
	static const char split[] = "----------------------------------------";
	const char *unit = v->nano ? "ns" : "us";
	struct rtla_col all[RTLA_CTXS] = { 0 };
	char dur[32];

	if (clear)
		fputs("\033c", out);
	rtla_duration(v->elapsed_ns, dur, sizeof(dur));
	fprintf(out, "                                     Timer Latency                                              %s\n",
		v->user ? "                                         " : "");
	fprintf(out, "%-6s   |          IRQ Timer Latency (%s)        |         Thread Timer Latency (%s)", dur, unit, unit);
	if (v->user)
		fprintf(out, "      |    Ret user Timer Latency (%s)", unit);
	fprintf(out, "\nCPU COUNT      |      cur       min       avg       max |      cur       min       avg       max%s\n",
		v->user ? " |      cur       min       avg       max" : "");
	for (size_t i = 0; i < v->ncpus; i++) {
		const struct rtla_cpu *rc = &v->cpus[i];
		uint64_t count = rc->col[RTLA_IRQ].count > rc->col[RTLA_USR].count ? rc->col[RTLA_IRQ].count
										    : rc->col[RTLA_USR].count;
		if (!count)
			continue;
		fprintf(out, "%3d #%-9llu |", rc->cpu, (unsigned long long)count);
		top_values(out, &rc->col[RTLA_IRQ], false, false);
		top_values(out, &rc->col[RTLA_THR], false, true);
		if (v->user) {
			fputs(" |", out);
			top_values(out, &rc->col[RTLA_USR], true, true);
		}
		fputc('\n', out);
		for (int k = 0; k < RTLA_CTXS; k++)
			col_merge(&all[k], &rc->col[k]);
	}
	uint64_t count = all[RTLA_IRQ].count > all[RTLA_USR].count ? all[RTLA_IRQ].count : all[RTLA_USR].count;
	if (count) {
		int e = 0;
		while (count > 999999) {
			e++;
			count /= 10;
		}
		fprintf(out, "%.*s|%.*s|%.*s", 15, split, 40, split, 39, split);
		if (v->user)
			fprintf(out, "-|%.*s", 39, split);
		fprintf(out, "\nALL #%-6llu e%d |", (unsigned long long)count, e);
		top_sum_values(out, &all[RTLA_IRQ], false);
		top_sum_values(out, &all[RTLA_THR], true);
		if (v->user) {
			fputs(" |", out);
			top_sum_values(out, &all[RTLA_USR], true);
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- auto-analysis ------------------------------------------------------ */

static double us(int64_t ns)
{
	return (double)(ns > 0 ? ns : 0) / 1000.0;
}

static double share(int64_t total, int64_t ns)
{
	return total > 0 ? (double)(ns > 0 ? ns : 0) * 100.0 / (double)total : 0.0;
}

static int64_t part(const json_t *spike, const char *name)
{
	json_int_t v = json_integer_value(json_object_get(json_object_get(spike, "parts"), name));
	return v > 0 ? (int64_t)v : 0;
}

static int64_t kind_ns(const json_t *occ, const char *kind)
{
	return (int64_t)jint(json_object_get(occ, "by_kind_ns"), kind);
}

/* The spike of the sample at at_ns, else the largest. */
static const json_t *find_spike(const json_t *spikes, int64_t at_ns)
{
	size_t i;
	const json_t *s;

	json_array_foreach(spikes, i, s)
		if (json_integer_value(json_object_get(s, "at_ns")) == at_ns)
			return s;
	return json_array_get(spikes, 0);
}

/* The contributors of one kind, as rtla lists them under a heading. */
static void list_kind(FILE *out, const json_t *occ, const char *kind, const json_t *skip, const char *tabs)
{
	size_t i;
	const json_t *c;

	json_array_foreach(json_object_get(occ, "by"), i, c) {
		if (c == skip || strcmp(jstr(c, "kind"), kind) != 0)
			continue;
		const char *name = json_string_value(json_object_get(c, "name"));
		fprintf(out, "\t%24s:%-3lld%s%9.2f us\n", name ? name : "<...>",
			(long long)json_integer_value(json_object_get(c, "id")), tabs,
			us((int64_t)jint(c, "ns")));
	}
}

int rtla_print_analysis(FILE *out, const struct result *res, int cpu, int64_t at_ns)
{
	const json_t *tc = trace_cpu(res, cpu);
	const json_t *spike = find_spike(json_object_get(tc, "spikes"), at_ns);

	if (!spike)
		return -ENOENT;
	const json_t *before = json_object_get(spike, "before_expiry");
	const json_t *after = json_object_get(spike, "after_expiry");
	int64_t irq = part(spike, "irq delay"), handler = part(spike, "timer handler");
	int64_t total = irq + handler + part(spike, "wakeup to running");

	/* the thread that held the CPU: the largest task after the expiry */
	const json_t *blocking = NULL;
	int64_t tasks_ns = 0;
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(after, "by"), i, c)
		if (strcmp(jstr(c, "kind"), "task") == 0) {
			if (!blocking)
				blocking = c;
			else
				tasks_ns += (int64_t)jint(c, "ns");
		}

	fprintf(out, "## CPU %d hit stop tracing, analyzing it ##\n", cpu);
	if (kind_ns(before, "irq") > 0)
		fprintf(out, "  Previous IRQ interference:\t\t\t up to  %9.2f us\n", us(kind_ns(before, "irq")));
	fprintf(out, "  IRQ handler delay:\t\t%16s\t%9.2f us (%.2f %%)\n", "", us(irq), share(total, irq));
	fprintf(out, "  IRQ latency:\t\t\t\t\t\t%9.2f us\n", us(irq));
	fprintf(out, "  Timerlat IRQ duration:\t\t\t\t%9.2f us (%.2f %%)\n", us(handler), share(total, handler));
	int64_t block_ns = blocking ? (int64_t)jint(blocking, "ns") : 0;
	fprintf(out, "  Blocking thread:\t\t\t\t\t%9.2f us (%.2f %%)\n", us(block_ns), share(total, block_ns));
	if (blocking) {
		const char *name = json_string_value(json_object_get(blocking, "name"));
		fprintf(out, "\t%24s:%-9lld\t\t%9.2f us\n", name ? name : "<...>",
			(long long)json_integer_value(json_object_get(blocking, "id")), us(block_ns));
	}
	if (kind_ns(after, "irq") > 0) {
		fprintf(out, "  IRQ interference\t\t\t\t\t%9.2f us (%.2f %%)\n", us(kind_ns(after, "irq")),
			share(total, kind_ns(after, "irq")));
		list_kind(out, after, "irq", NULL, "\t\t\t");
	}
	if (kind_ns(after, "softirq") > 0) {
		fprintf(out, "  Softirq interference\t\t\t\t\t%9.2f us (%.2f %%)\n", us(kind_ns(after, "softirq")),
			share(total, kind_ns(after, "softirq")));
		list_kind(out, after, "softirq", NULL, "\t\t\t");
	}
	if (tasks_ns > 0) {
		fprintf(out, "  Thread interference\t\t\t\t\t%9.2f us (%.2f %%)\n", us(tasks_ns), share(total, tasks_ns));
		list_kind(out, after, "task", blocking, "\t\t\t\t");
	}
	fprintf(out, "------------------------------------------------------------------------\n");
	fprintf(out, "  Thread latency:\t\t\t\t\t%9.2f us (100%%)\n", us(total));
	return ferror(out) ? -EIO : 0;
}
