/*
 * OpenMetrics 1.0 text exposition that the classic Prometheus text parser
 * (expfmt: node_exporter's textfile collector, pushgateway, promtool) reads
 * the same way, and that promtool's lint accepts:
 *
 * - "# UNIT" and "# EOF" are plain comments to the classic parser.
 * - HELP texts hold no '"' or '\': the classic parser rejects \" in HELP.
 * - Label values escape only \, " and newline, the escapes both formats know;
 *   bytes that are not UTF-8 become U+FFFD, as both demand UTF-8.
 * - No counter and no info family: neither can be written so that both
 *   formats read it (see missed() and run_info()).
 * - No timestamps and no _created samples: the textfile collector refuses
 *   the first, and the second would be untyped extra series to it.
 *
 * Every sample of a family has the same label names (the spec's SHOULD): a
 * run without one of another run's labels has it empty, which both formats
 * read as absent.
 */
#include "report/openmetrics.h"

#include "report/omtext.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/array.h"
#include "core/error.h"
#include "core/utf8.h"
#include "core/nstime.h"

#define MAX_LABEL_NAME (sizeof("label_") - 1 + LABEL_KEY_MAX + 8)

struct kv {
	const char *name;
	const char *value;
};

/* A run as written: its id and its labels under their exposed names. */
struct run {
	const struct result *res;
	char id[24];
	unsigned nlabels;
	char names[LABELS_MAX][MAX_LABEL_NAME];
	const char *values[LABELS_MAX];        /* into the result */
	char metric[REC_MAX_METRICS][RESULT_NAME_LEN];  /* metric names made valid */
};

struct om {
	FILE *out;
	int err;                        /* first write error */
	struct run *runs;
	size_t nruns;
	const char **labels;            /* union of the runs' label names, sorted */
	size_t nlabels;
};

static void failed(struct om *o)
{
	if (!o->err)
		o->err = errno > 0 ? -errno : -EIO;
}

static void put(struct om *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct om *o, const char *fmt, ...)
{
	va_list ap;

	if (o->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(o->out, fmt, ap) < 0)
		failed(o);
	va_end(ap);
}

/* A label value, escaped (report/omtext.h). */
static void put_label_value(struct om *o, const char *value)
{
	if (!o->err && om_put_label_value(o->out, value) < 0)
		failed(o);
}

/* UTC, millisecond precision, as the JSON result's start_time. */
static const char *iso_time(uint64_t realtime_ns, char *buf, size_t size)
{
	time_t t = (time_t)(realtime_ns / NS_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, size, "unknown");
		return buf;
	}
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03" PRIu64 "Z", realtime_ns % NS_PER_SEC / NS_PER_MS);
	return buf;
}

static const char *run_label(const struct run *r, const char *name)
{
	for (unsigned i = 0; i < r->nlabels; i++)
		if (strcmp(r->names[i], name) == 0)
			return r->values[i];
	return "";
}

/*
 * name{run,host,probe[,cpu],label_...[,extra...]} value.  Our own labels come
 * first and every label_* is written, so the label names of a family are the
 * same on all its samples.
 */
static void sample(struct om *o, const struct run *r, const char *name, const char *cpu,
		   const struct kv *extra, size_t nextra, const char *value)
{
	put(o, "%s{run=\"%s\",host=\"", name, r->id);
	put_label_value(o, r->res->sys.hostname);
	put(o, "\",probe=\"");
	put_label_value(o, r->res->probe);
	put(o, "\"");
	if (cpu)
		put(o, ",cpu=\"%s\"", cpu);
	for (size_t i = 0; i < o->nlabels; i++) {
		put(o, ",%s=\"", o->labels[i]);
		put_label_value(o, run_label(r, o->labels[i]));
		put(o, "\"");
	}
	for (size_t i = 0; i < nextra; i++) {
		put(o, ",%s=\"", extra[i].name);
		put_label_value(o, extra[i].value);
		put(o, "\"");
	}
	put(o, "} %s\n", value);
}

static void family(struct om *o, const char *name, const char *type, const char *unit, const char *help)
{
	put(o, "# TYPE %s %s\n", name, type);
	if (unit)
		put(o, "# UNIT %s %s\n", name, unit);
	put(o, "# HELP %s %s\n", name, help);
}

/* The CPU rows of a run then its merged row, as (row, cpu label) pairs. */
static const struct cpu_result *row(const struct result *res, size_t i, char *cpu, size_t size)
{
	if (i < res->ncpus) {
		snprintf(cpu, size, "%d", res->cpus[i].cpu);
		return &res->cpus[i];
	}
	snprintf(cpu, size, "all");
	return &res->all;
}

/* Index of the metric called name in run r, or -1. */
static int metric_of(const struct run *r, const char *name)
{
	for (unsigned m = 0; m < r->res->nmetrics; m++)
		if (strcmp(r->metric[m], name) == 0)
			return (int)m;
	return -1;
}

/*
 * Our buckets do not align with the ladder: a bucket counts toward le=X when
 * its upper bound is <= X.  Only the one bucket that straddles X is left out,
 * so the count given for X is exact for some bound in [X - w, X], where w, the
 * width of one of our buckets, is at most X/64: what le="0.0001" counts lies
 * between the exact counts at 98.4us and at 100us.
 */
static void histogram(struct om *o, const struct run *r, const char *fam, const char *cpu,
		      const struct hist *h, const struct summary *s)
{
	uint64_t cum[OM_LADDER_N] = { 0 }, total = 0;
	char name[160], v[48];
	size_t k = 0;

	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1)) {
		uint64_t high = hist_bucket_high(i);
		while (k < OM_LADDER_N && high > om_ladder[k].ns)
			k++;
		if (k < OM_LADDER_N)
			cum[k] += h->counts[i];
		total += h->counts[i];
	}
	snprintf(name, sizeof(name), "%s_bucket", fam);
	for (size_t i = 0; i < OM_LADDER_N; i++) {
		struct kv le = { "le", om_ladder[i].le };
		if (i)
			cum[i] += cum[i - 1];
		snprintf(v, sizeof(v), "%" PRIu64, cum[i]);
		sample(o, r, name, cpu, &le, 1, v);
	}
	struct kv inf = { "le", "+Inf" };
	snprintf(v, sizeof(v), "%" PRIu64, total);
	sample(o, r, name, cpu, &inf, 1, v);
	snprintf(name, sizeof(name), "%s_count", fam);
	sample(o, r, name, cpu, NULL, 0, v);
	snprintf(name, sizeof(name), "%s_sum", fam);
	sample(o, r, name, cpu, NULL, 0, om_secs_double(s->mean * (double)s->count, v, sizeof(v)));
}

/*
 * A summary rather than gauges with a quantile label: only a summary may carry
 * that label without promtool's lint objecting, and a classic parser fills in
 * a zero count and sum for a summary without them, hence the repetition.
 * Without samples the quantiles do not exist and are left out.
 */
static void summary(struct om *o, const struct run *r, const char *fam, const char *cpu,
		    const struct summary *s)
{
	static const char *const qname[] = { "0.5", "0.9", "0.99", "0.999", "0.9999" };
	const uint64_t q[] = { s->p50, s->p90, s->p99, s->p999, s->p9999 };
	char name[160], v[48];

	for (size_t j = 0; s->count && j < ARRAY_SIZE(q); j++) {
		struct kv kv = { "quantile", qname[j] };
		sample(o, r, fam, cpu, &kv, 1, om_secs(q[j], v, sizeof(v)));
	}
	snprintf(name, sizeof(name), "%s_count", fam);
	snprintf(v, sizeof(v), "%" PRIu64, s->count);
	sample(o, r, name, cpu, NULL, 0, v);
	snprintf(name, sizeof(name), "%s_sum", fam);
	sample(o, r, name, cpu, NULL, 0, om_secs_double(s->mean * (double)s->count, v, sizeof(v)));
}

enum figure { FIG_HIST, FIG_QUANTILE, FIG_MIN, FIG_MAX, FIG_WARM_MAX, FIG_COUNT };

/* Per metric M: family latscope_M<infix>_seconds, its type, and its help around M. */
static const struct {
	const char *infix, *type, *help_before, *help_after;
} figures[FIG_COUNT] = {
	[FIG_HIST] = { "", "histogram", "",
		       " on a fixed 1-2-5 ladder of bounds; a bound X counts the values up to somewhere in [X - X/64, X]" },
	[FIG_QUANTILE] = { "_quantile", "summary", "",
			   " quantiles of the whole run, within 1/128 (count and sum repeat the histogram's)" },
	[FIG_MIN] = { "_min", "gauge", "Smallest ", " of the run" },
	[FIG_MAX] = { "_max", "gauge", "Largest ", " of the run" },
	[FIG_WARM_MAX] = { "_warm_max", "gauge", "Largest ", " after the warm-up windows" },
};

static void family_name(const char *metric, enum figure fig, char *buf, size_t size)
{
	snprintf(buf, size, "latscope_%s%s_seconds", metric, figures[fig].infix);
}

static void metric_family(struct om *o, const char *metric, enum figure fig)
{
	char fam[128], help[256], cpu[16], v[48];

	family_name(metric, fig, fam, sizeof(fam));
	snprintf(help, sizeof(help), "%s%s%s", figures[fig].help_before, metric, figures[fig].help_after);
	family(o, fam, figures[fig].type, "seconds", help);

	for (size_t ri = 0; ri < o->nruns; ri++) {
		const struct run *r = &o->runs[ri];
		int m = metric_of(r, metric);
		if (m < 0)
			continue;
		for (size_t i = 0; i <= r->res->ncpus; i++) {
			const struct cpu_result *cr = row(r->res, i, cpu, sizeof(cpu));
			const struct summary *s = &cr->sum[m];
			switch (fig) {
			case FIG_HIST:
				histogram(o, r, fam, cpu, &cr->hist[m], s);
				break;
			case FIG_QUANTILE:
				summary(o, r, fam, cpu, s);
				break;
			case FIG_MIN:
				if (s->count)
					sample(o, r, fam, cpu, NULL, 0, om_secs(s->min, v, sizeof(v)));
				break;
			case FIG_MAX:
				if (s->count)
					sample(o, r, fam, cpu, NULL, 0, om_secs(s->max, v, sizeof(v)));
				break;
			case FIG_WARM_MAX:
				if (s->count && s->has_warm_max)
					sample(o, r, fam, cpu, NULL, 0, om_secs(s->warm_max, v, sizeof(v)));
				break;
			case FIG_COUNT:
				break;
			}
		}
	}
}

/* A gauge: the classic parser rejects the OpenMetrics type "info". */
static void run_info(struct om *o)
{
	family(o, "latscope_run_info", "gauge", NULL, "The run: kernel, start time (UTC) and system; always 1");
	for (size_t ri = 0; ri < o->nruns; ri++) {
		const struct run *r = &o->runs[ri];
		const struct sysdesc *s = &r->res->sys;
		char start[64];
		const struct kv kv[] = {
			{ "kernel", s->kernel_release },
			{ "preempt", s->preempt },
			{ "clocksource", s->clocksource },
			{ "hypervisor", s->hypervisor },
			{ "start", iso_time(r->res->start_realtime_ns, start, sizeof(start)) },
		};
		sample(o, r, "latscope_run_info", NULL, kv, ARRAY_SIZE(kv), "1");
	}
}

/*
 * A gauge, not the counter latscope_missed_periods_total: OpenMetrics names a
 * counter family without "_total" and its sample with it, while the classic
 * format wants TYPE and HELP to name the sample, so no counter reads as one in
 * both (node_exporter would expose it untyped, promtool would find no help).
 * A finished run's count never changes anyway, which is what a gauge says.
 */
static void missed(struct om *o)
{
	char cpu[16], v[32];

	family(o, "latscope_missed_periods", "gauge", NULL, "Periods of the run that passed without a wakeup");
	for (size_t ri = 0; ri < o->nruns; ri++) {
		const struct run *r = &o->runs[ri];
		for (size_t i = 0; i <= r->res->ncpus; i++) {
			const struct cpu_result *cr = row(r->res, i, cpu, sizeof(cpu));
			snprintf(v, sizeof(v), "%" PRIu64, cr->missed);
			sample(o, r, "latscope_missed_periods", cpu, NULL, 0, v);
		}
	}
}

/* SMIs of the rows whose run counted them (a gauge for the reason missed() gives); none: no family. */
static void smis(struct om *o)
{
	char cpu[16], v[32];
	bool any = false;
	uint64_t n;

	for (size_t ri = 0; ri < o->nruns && !any; ri++)
		any = o->runs[ri].res->smi_asked && o->runs[ri].res->smi_source != SMI_SOURCE_NONE;
	if (!any)
		return;
	family(o, "latscope_smis", "gauge", NULL, "System Management Interrupts counted on the CPU during the run");
	for (size_t ri = 0; ri < o->nruns; ri++) {
		const struct run *r = &o->runs[ri];
		for (size_t i = 0; i <= r->res->ncpus; i++) {
			const struct cpu_result *cr = row(r->res, i, cpu, sizeof(cpu));
			if (!result_smis(r->res, cr, &n))
				continue;
			snprintf(v, sizeof(v), "%" PRIu64, n);
			sample(o, r, "latscope_smis", cpu, NULL, 0, v);
		}
	}
}

/* One gauge of every row of every run that counted spikes; value() false leaves a row out. */
static void long_run_gauge(struct om *o, const char *name, const char *unit, const char *help,
			   bool (*value)(const struct cpu_result *cr, char *buf, size_t size))
{
	char cpu[16], v[48];

	family(o, name, "gauge", unit, help);
	for (size_t ri = 0; ri < o->nruns; ri++) {
		const struct run *r = &o->runs[ri];
		for (size_t i = 0; r->res->long_run && i <= r->res->ncpus; i++) {
			const struct cpu_result *cr = row(r->res, i, cpu, sizeof(cpu));
			if (value(cr, v, sizeof(v)))
				sample(o, r, name, cpu, NULL, 0, v);
		}
	}
}

static bool spikes_value(const struct cpu_result *cr, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64, cr->spikes);
	return true;
}

static bool rate_value(const struct cpu_result *cr, char *buf, size_t size)
{
	snprintf(buf, size, "%.9g", cr->lr.per_hour);
	return cr->lr.observed_ns > 0;
}

static bool mtbf_value(const struct cpu_result *cr, char *buf, size_t size)
{
	om_secs_double(cr->lr.mtbf_ns, buf, size);
	return cr->lr.has_mtbf;
}

static bool worst_value(const struct cpu_result *cr, char *buf, size_t size)
{
	om_secs(cr->lr.worst_at_ns, buf, size);
	return cr->lr.has_worst;
}

static bool last_band_value(const struct cpu_result *cr, char *buf, size_t size)
{
	const struct band_max *b = &cr->bands;
	if (b->n == 0 || b->max[b->n - 1u] == RESULT_NO_BAND_MAX)
		return false;
	om_secs(b->max[b->n - 1u], buf, size);
	return true;
}

/* What a long run is judged by (result.h struct long_run); only for runs that counted spikes. */
static void long_run(struct om *o)
{
	bool any = false;
	for (size_t ri = 0; ri < o->nruns; ri++)
		any |= o->runs[ri].res->long_run;
	if (!any)
		return;
	long_run_gauge(o, "latscope_spikes", NULL,
		       "Spikes of the first metric: runs of consecutive samples above the threshold", spikes_value);
	long_run_gauge(o, "latscope_spikes_per_hour", NULL, "Spikes an hour of the time measured", rate_value);
	long_run_gauge(o, "latscope_spike_mtbf_seconds", "seconds",
		       "Mean time between spikes (time measured over spikes; none without a spike)", mtbf_value);
	long_run_gauge(o, "latscope_worst_spike_time_seconds", "seconds",
		       "When the largest value of the first metric came, from the start of the run", worst_value);
	long_run_gauge(o, "latscope_last_band_max_seconds", "seconds",
		       "Largest value of the first metric in the run's last band of 5 minutes (or its fold)",
		       last_band_value);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp((*(const struct label *const *)a)->key, (*(const struct label *const *)b)->key);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static bool has_name(const struct run *r, const char *name)
{
	for (unsigned i = 0; i < r->nlabels; i++)
		if (strcmp(r->names[i], name) == 0)
			return true;
	return false;
}

/*
 * label_<key>.  Keys differing only in '-', '.' and '_' would meet on one
 * name: in key order, the later ones get "_2", "_3"... so that the output
 * stays valid and the same for the same labels.
 */
static void map_labels(struct run *r)
{
	const struct labels *ls = &r->res->labels;
	const struct label *order[LABELS_MAX] = { 0 };
	unsigned n = ls->n < LABELS_MAX ? ls->n : LABELS_MAX;

	for (unsigned i = 0; i < n; i++)
		order[i] = &ls->items[i];
	qsort(order, n, sizeof(*order), cmp_label);
	r->nlabels = 0;
	for (unsigned i = 0; i < n; i++) {
		char *name = r->names[r->nlabels];
		om_make_name(name, MAX_LABEL_NAME, "label_", order[i]->key);
		size_t len = strlen(name);
		for (unsigned suffix = 2; has_name(r, name); suffix++)
			snprintf(name + len, MAX_LABEL_NAME - len, "_%u", suffix);
		r->values[r->nlabels++] = order[i]->value;
	}
}

static int prepare(struct om *o, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err)
{
	int64_t *idcopy = malloc((n ? n : 1) * sizeof(*idcopy));
	int r = 0;

	o->runs = calloc(n ? n : 1, sizeof(*o->runs));
	o->labels = malloc((n ? n : 1) * LABELS_MAX * sizeof(*o->labels));
	if (!idcopy || !o->runs || !o->labels) {
		r = -ENOMEM;
		goto out;
	}
	o->nruns = n;
	for (size_t i = 0; i < n; i++) {
		struct run *run = &o->runs[i];
		if (!results[i] || results[i]->nmetrics > REC_MAX_METRICS) {
			r = err_set(err, -EINVAL, "result %zu is missing or has too many metrics", i + 1u);
			goto out;
		}
		run->res = results[i];
		for (size_t c = 0; c <= run->res->ncpus && run->res->nmetrics; c++) {
			const struct cpu_result *cr = c < run->res->ncpus ? &run->res->cpus[c] : &run->res->all;
			if (!cr->hist) {
				r = err_set(err, -EINVAL, "result %zu is not finalized", i + 1u);
				goto out;
			}
		}
		idcopy[i] = ids ? ids[i] : (int64_t)i + 1;
		snprintf(run->id, sizeof(run->id), "%" PRId64, idcopy[i]);
		for (unsigned m = 0; m < run->res->nmetrics; m++) {
			om_make_name(run->metric[m], RESULT_NAME_LEN, "", run->res->metric_names[m]);
			int first = metric_of(run, run->metric[m]);
			if (!run->metric[m][0]) {
				r = err_set(err, -EINVAL, "run %s: a metric has no name", run->id);
				goto out;
			}
			if (first != (int)m) {
				r = err_set(err, -EINVAL, "run %s: metrics '%s' and '%s' would both be named %s",
					    run->id, run->res->metric_names[first], run->res->metric_names[m],
					    run->metric[m]);
				goto out;
			}
		}
		map_labels(run);
		for (unsigned l = 0; l < run->nlabels; l++)
			o->labels[o->nlabels++] = run->names[l];
	}
	qsort(idcopy, n, sizeof(*idcopy), cmp_i64);
	for (size_t i = 1; i < n; i++)
		if (idcopy[i] == idcopy[i - 1]) {
			r = err_set(err, -EINVAL, "run %" PRId64 " is given twice", idcopy[i]);
			goto out;
		}
	qsort(o->labels, o->nlabels, sizeof(*o->labels), cmp_str);
	size_t u = 0;
	for (size_t i = 0; i < o->nlabels; i++)
		if (u == 0 || strcmp(o->labels[u - 1], o->labels[i]) != 0)
			o->labels[u++] = o->labels[i];
	o->nlabels = u;
out:
	free(idcopy);
	return r;
}

int openmetrics_write(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err)
{
	struct om o = { .out = out };
	const char **metrics = NULL;
	const struct run **named_by = NULL;     /* the run that first names metrics[j] */
	size_t nmetrics = 0;
	int r;

	err_set(err, 0, "%s", "");
	if (!out || (n && !results))
		return err_set(err, -EINVAL, "nothing to write to, or no results");
	if ((r = prepare(&o, results, ids, n, err)) < 0)
		goto out;
	/* Every metric name once, in the order the runs first name them. */
	metrics = malloc((n ? n : 1) * REC_MAX_METRICS * sizeof(*metrics));
	named_by = malloc((n ? n : 1) * REC_MAX_METRICS * sizeof(*named_by));
	if (!metrics || !named_by) {
		r = err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned m = 0; m < o.runs[i].res->nmetrics; m++) {
			size_t j = 0;
			while (j < nmetrics && strcmp(metrics[j], o.runs[i].metric[m]) != 0)
				j++;
			if (j == nmetrics) {
				named_by[nmetrics] = &o.runs[i];
				metrics[nmetrics++] = o.runs[i].metric[m];
			}
		}

	/* Metrics such as "latency" and "latency_max" would meet on one family name. */
	for (size_t i = 0; i < nmetrics; i++)
		for (size_t j = i + 1; j < nmetrics; j++)
			for (int f = 0; f < FIG_COUNT; f++)
				for (int g = 0; g < FIG_COUNT; g++) {
					char a[128], b[128];
					family_name(metrics[i], (enum figure)f, a, sizeof(a));
					family_name(metrics[j], (enum figure)g, b, sizeof(b));
					if (strcmp(a, b) == 0) {
						r = err_set(err, -EINVAL,
							    "metric '%s' of run %s and metric '%s' of run %s would both "
							    "write %s", metrics[i], named_by[i]->id, metrics[j],
							    named_by[j]->id, a);
						goto out;
					}
				}

	if (n)
		run_info(&o);
	for (size_t j = 0; j < nmetrics; j++)
		for (int f = 0; f < FIG_COUNT; f++)
			metric_family(&o, metrics[j], (enum figure)f);
	if (n) {
		missed(&o);
		smis(&o);
		long_run(&o);
	}
	put(&o, "# EOF\n");
	/* A full disk shows only when the buffer goes out. */
	if (!o.err && fflush(out) != 0)
		failed(&o);
	r = o.err;
	if (!r && ferror(out))
		r = -EIO;
	if (r < 0)
		err_set(err, r, "%s", strerror(-r));
out:
	free(named_by);
	free(metrics);
	free(o.runs);
	free(o.labels);
	return r;
}
