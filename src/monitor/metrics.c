#include "monitor/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/count.h"
#include "core/hist.h"
#include "report/omtext.h"

#define LABEL_NAME_MAX (sizeof("label_") - 1u + LABEL_KEY_MAX)

struct mon_cpu {
	int cpu;
	char name[12];                  /* its cpu label value */
	uint64_t slot[OM_LADDER_N + 1u];  /* samples per ladder slot, the last above every bound */
	uint64_t samples, missed, above, spikes;
	double sum_ns;
	bool has_window;
	uint64_t win_max, win_p99;
	uint64_t band_max[MON_SLOTS];   /* the max of each 10 s slot ... */
	uint64_t band_at[MON_SLOTS];    /* ... and which slot it is (mono / MON_SLOT_NS + 1; 0: none) */
	bool has_context;
	uint64_t steal_ns, irqs;
	bool has_smis;
	uint64_t smis;
};

struct mon_metrics {
	struct mon_identity id;
	unsigned nlabels;
	char label_names[LABELS_MAX][LABEL_NAME_MAX];
	bool up;
	const char *cause_kind[MON_CAUSE_KINDS];
	size_t ncause_kinds;
	uint64_t causes[MON_CAUSE_KINDS];
	const char *host_cause[MON_CAUSE_KINDS];
	size_t nhost_causes;
	uint64_t host_causes[MON_CAUSE_KINDS];
	size_t ncpus;
	struct mon_cpu cpus[];
};

static void add_capped(uint64_t *dst, uint64_t v)
{
	if (!count_add(dst, v))
		*dst = COUNT_MAX;
}

int mon_metrics_new(const struct cpuset *cpus, const struct mon_identity *id, struct mon_metrics **ret)
{
	size_t n = cpuset_count(cpus);
	struct mon_metrics *m;

	if (n == 0)
		return -EINVAL;
	if (!(m = calloc(1, sizeof(*m) + n * sizeof(m->cpus[0]))))
		return -ENOMEM;
	m->id = *id;
	m->ncpus = n;
	m->nlabels = id->labels ? id->labels->n : 0;
	for (unsigned i = 0; i < m->nlabels; i++)
		om_make_name(m->label_names[i], LABEL_NAME_MAX, "label_", id->labels->items[i].key);
	size_t k = 0;
	cpuset_foreach(c, cpus) {
		m->cpus[k].cpu = c;
		snprintf(m->cpus[k].name, sizeof(m->cpus[k].name), "%d", c);
		k++;
	}
	*ret = m;
	return 0;
}

void mon_metrics_free(struct mon_metrics *m)
{
	free(m);
}

static struct mon_cpu *find_cpu(struct mon_metrics *m, int cpu)
{
	for (size_t i = 0; i < m->ncpus; i++)
		if (m->cpus[i].cpu == cpu)
			return &m->cpus[i];
	return NULL;
}

int mon_metrics_add_window(struct mon_metrics *m, int cpu, const struct rec_window *w, const struct sparse_hist *h,
			   uint64_t p99_ns, uint64_t end_mono_ns)
{
	struct mon_cpu *c = find_cpu(m, cpu);
	const struct stats *st = &w->m[0].st;

	if (!c)
		return -ENOENT;
	for (uint32_t i = 0; i < h->n; i++)
		add_capped(&c->slot[om_ladder_slot(hist_bucket_high(h->b[i].index))], h->b[i].count);
	add_capped(&c->samples, st->n);
	add_capped(&c->missed, w->missed);
	add_capped(&c->above, w->m[0].above);
	add_capped(&c->spikes, w->spikes);
	c->sum_ns += st->mean * (double)st->n;
	if (st->n == 0)
		return 0;
	c->has_window = true;
	c->win_max = st->max;
	c->win_p99 = p99_ns;
	/* the slot of its end; a slot reused after 5 minutes starts again */
	uint64_t at = end_mono_ns / MON_SLOT_NS + 1u;
	size_t k = (size_t)(at % MON_SLOTS);
	if (c->band_at[k] != at) {
		c->band_at[k] = at;
		c->band_max[k] = 0;
	}
	if (st->max > c->band_max[k])
		c->band_max[k] = st->max;
	return 0;
}

void mon_metrics_set_context(struct mon_metrics *m, int cpu, uint64_t steal_ns, uint64_t irqs)
{
	struct mon_cpu *c = find_cpu(m, cpu);

	if (!c)
		return;
	c->has_context = true;
	c->steal_ns = steal_ns;
	c->irqs = irqs;
}

void mon_metrics_set_smis(struct mon_metrics *m, int cpu, uint64_t smis)
{
	struct mon_cpu *c = find_cpu(m, cpu);

	if (!c)
		return;
	c->has_smis = true;
	c->smis = smis;
}

void mon_metrics_set_cause_kinds(struct mon_metrics *m, const char *const *kinds, size_t n)
{
	m->ncause_kinds = n < MON_CAUSE_KINDS ? n : MON_CAUSE_KINDS;
	for (size_t i = 0; i < m->ncause_kinds; i++)
		m->cause_kind[i] = kinds[i];
}

void mon_metrics_add_cause(struct mon_metrics *m, size_t kind)
{
	if (kind < m->ncause_kinds)
		add_capped(&m->causes[kind], 1);
}

void mon_metrics_set_host_causes(struct mon_metrics *m, const char *const *causes, size_t n)
{
	m->nhost_causes = n < MON_CAUSE_KINDS ? n : MON_CAUSE_KINDS;
	for (size_t i = 0; i < m->nhost_causes; i++)
		m->host_cause[i] = causes[i];
}

void mon_metrics_add_host_cause(struct mon_metrics *m, size_t cause)
{
	if (cause < m->nhost_causes)
		add_capped(&m->host_causes[cause], 1);
}

void mon_metrics_set_up(struct mon_metrics *m, bool up)
{
	m->up = up;
}

size_t mon_metrics_series(size_t ncpus, bool per_cpu_hist)
{
	/* a probe: its histogram, 5 counters, the threshold, 3 gauges a CPU; the host: up, build_info and the
	 * CPUs' steal and interrupts */
	const size_t hist = OM_LADDER_N + 1u + 2u, probe = 5u + 1u, per_cpu = 3u, host = 2u, host_per_cpu = 2u;

	return (per_cpu_hist ? hist * ncpus : hist) + probe + per_cpu * ncpus + host + host_per_cpu * ncpus;
}

/* The 5-minute max of c at now: the slots of the last 30 (the current one included). */
static bool last_5m_max(const struct mon_cpu *c, uint64_t now_mono_ns, uint64_t *ret)
{
	const uint64_t now = now_mono_ns / MON_SLOT_NS + 1u;
	bool any = false;

	*ret = 0;
	for (size_t k = 0; k < MON_SLOTS; k++) {
		if (!c->band_at[k] || c->band_at[k] > now || now - c->band_at[k] >= MON_SLOTS)
			continue;
		any = true;
		if (c->band_max[k] > *ret)
			*ret = c->band_max[k];
	}
	return any;
}

size_t mon_metrics_ncpus(const struct mon_metrics *m)
{
	return m->ncpus;
}

bool mon_metrics_up(const struct mon_metrics *m)
{
	return m->up;
}

void mon_metrics_view(const struct mon_metrics *m, size_t i, uint64_t now_mono_ns, struct mon_cpu_view *ret)
{
	const struct mon_cpu *c = &m->cpus[i];

	*ret = (struct mon_cpu_view){ .cpu = c->cpu, .samples = c->samples, .missed = c->missed, .above = c->above,
				      .spikes = c->spikes, .has_window = c->has_window, .win_max = c->win_max,
				      .win_p99 = c->win_p99, .has_context = c->has_context, .steal_ns = c->steal_ns,
				      .irqs = c->irqs };
	ret->has_5m = last_5m_max(c, now_mono_ns, &ret->max_5m);
}

struct out {
	FILE *f;
	const struct mon_metrics *m;    /* the probe being written */
	enum mon_format fmt;
	uint64_t now;                   /* CLOCK_MONOTONIC the 5-minute max is read at */
};

/* {host[,probe][,cpu],label_...[,xname=xvalue]} */
static void labels(const struct out *o, bool probe, const char *cpu, const char *xname, const char *xvalue)
{
	const struct mon_metrics *m = o->m;

	fputs("{host=\"", o->f);
	om_put_label_value(o->f, m->id.host);
	fputc('"', o->f);
	if (probe) {
		fputs(",probe=\"", o->f);
		om_put_label_value(o->f, m->id.probe);
		fputc('"', o->f);
	}
	if (cpu)
		fprintf(o->f, ",cpu=\"%s\"", cpu);
	for (unsigned i = 0; i < m->nlabels; i++) {
		fprintf(o->f, ",%s=\"", m->label_names[i]);
		om_put_label_value(o->f, m->id.labels->items[i].value);
		fputc('"', o->f);
	}
	if (xname) {
		fprintf(o->f, ",%s=\"", xname);
		om_put_label_value(o->f, xvalue);
		fputc('"', o->f);
	}
	fputc('}', o->f);
}

static void sample_x(const struct out *o, const char *name, bool probe, const char *cpu, const char *xname,
		     const char *xvalue, const char *value)
{
	fputs(name, o->f);
	labels(o, probe, cpu, xname, xvalue);
	fprintf(o->f, " %s\n", value);
}

static void sample(const struct out *o, const char *name, bool probe, const char *cpu, const char *le,
		   const char *value)
{
	sample_x(o, name, probe, cpu, le ? "le" : NULL, le, value);
}

/*
 * The family's metadata.  A counter's family is named without _total in
 * OpenMetrics and with it in the 0.0.4 format; an info family likewise
 * without _info.  unit: the OpenMetrics UNIT, which must end the family name.
 */
static void family(const struct out *o, const char *name, const char *type, const char *unit, const char *help)
{
	char fam[96];
	size_t len = strlen(name);

	snprintf(fam, sizeof(fam), "%s", name);
	if (o->fmt == MON_OPENMETRICS) {
		if (strcmp(type, "counter") == 0 && len > 6 && strcmp(name + len - 6, "_total") == 0)
			fam[len - 6] = '\0';
		if (strcmp(type, "info") == 0 && len > 5 && strcmp(name + len - 5, "_info") == 0)
			fam[len - 5] = '\0';
	} else if (strcmp(type, "info") == 0) {
		type = "gauge";
	}
	fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", fam, help, fam, type);
	if (unit && o->fmt == MON_OPENMETRICS)
		fprintf(o->f, "# UNIT %s %s\n", fam, unit);
}

static void u64(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "%" PRIu64, v);
}

static void histogram(const struct out *o, const char *cpu, const uint64_t *slot, double sum_ns)
{
	uint64_t cum = 0;
	char v[48];

	for (size_t i = 0; i < OM_LADDER_N; i++) {
		cum += slot[i];
		u64(v, sizeof(v), cum);
		sample(o, "latscope_latency_seconds_bucket", true, cpu, om_ladder[i].le, v);
	}
	cum += slot[OM_LADDER_N];
	u64(v, sizeof(v), cum);
	sample(o, "latscope_latency_seconds_bucket", true, cpu, "+Inf", v);
	sample(o, "latscope_latency_seconds_count", true, cpu, NULL, v);
	sample(o, "latscope_latency_seconds_sum", true, cpu, NULL, om_secs_double(sum_ns, v, sizeof(v)));
}

static void histograms(const struct out *o)
{
	const struct mon_metrics *m = o->m;

	if (m->id.per_cpu_hist) {
		for (size_t i = 0; i < m->ncpus; i++)
			histogram(o, m->cpus[i].name, m->cpus[i].slot, m->cpus[i].sum_ns);
		return;
	}
	uint64_t slot[OM_LADDER_N + 1u] = { 0 };
	double sum = 0.0;
	for (size_t i = 0; i < m->ncpus; i++) {
		for (size_t k = 0; k <= OM_LADDER_N; k++)
			add_capped(&slot[k], m->cpus[i].slot[k]);
		sum += m->cpus[i].sum_ns;
	}
	histogram(o, NULL, slot, sum);
}

/* A counter summed over the CPUs, at offset off of struct mon_cpu. */
static uint64_t total(const struct mon_metrics *m, size_t off)
{
	uint64_t t = 0;

	for (size_t i = 0; i < m->ncpus; i++)
		add_capped(&t, *(const uint64_t *)(const void *)((const char *)&m->cpus[i] + off));
	return t;
}

static void threshold(const struct out *o)
{
	char v[48];

	sample(o, "latscope_threshold_seconds", true, NULL, NULL, om_secs(o->m->id.threshold_ns, v, sizeof(v)));
}

static const struct counter_row {
	const char *name;
	size_t off;
	const char *help;
} counter_rows[] = {
	{ "latscope_samples_total", offsetof(struct mon_cpu, samples), "Samples measured: timer wakeups, noise gaps." },
	{ "latscope_missed_periods_total", offsetof(struct mon_cpu, missed),
	  "Periods that passed while the thread was late, without a wakeup." },
	{ "latscope_above_threshold_total", offsetof(struct mon_cpu, above),
	  "Samples above the threshold (latscope_threshold_seconds)." },
	{ "latscope_spikes_total", offsetof(struct mon_cpu, spikes), "Runs of consecutive samples above the threshold." },
};

static void counter(const struct out *o, size_t r)
{
	char v[48];

	u64(v, sizeof(v), total(o->m, counter_rows[r].off));
	sample(o, counter_rows[r].name, true, NULL, NULL, v);
}

static void latency_sum(const struct out *o)
{
	double sum = 0.0;
	char v[48];

	for (size_t i = 0; i < o->m->ncpus; i++)
		sum += o->m->cpus[i].sum_ns;
	sample(o, "latscope_latency_sum_seconds_total", true, NULL, NULL, om_secs_double(sum, v, sizeof(v)));
}

/* A gauge of every CPU with a window: the uint64_t at offset off of struct mon_cpu, in seconds. */
static void window_gauge(const struct out *o, const char *name, size_t off)
{
	char v[48];

	for (size_t i = 0; i < o->m->ncpus; i++) {
		const struct mon_cpu *c = &o->m->cpus[i];
		if (c->has_window)
			sample(o, name, true, c->name, NULL,
			       om_secs(*(const uint64_t *)(const void *)((const char *)c + off), v, sizeof(v)));
	}
}

static void window_max(const struct out *o)
{
	window_gauge(o, "latscope_window_max_seconds", offsetof(struct mon_cpu, win_max));
}

static void window_p99(const struct out *o)
{
	window_gauge(o, "latscope_window_p99_seconds", offsetof(struct mon_cpu, win_p99));
}

static void max_5m(const struct out *o)
{
	char v[48];
	uint64_t x;

	for (size_t i = 0; i < o->m->ncpus; i++)
		if (last_5m_max(&o->m->cpus[i], o->now, &x))
			sample(o, "latscope_last_5m_max_seconds", true, o->m->cpus[i].name, NULL, om_secs(x, v, sizeof(v)));
}

/* Per probe: every probe's samples of one family, under one metadata block. */
static void each_probe(struct out *o, const struct mon_metrics *const *ms, size_t n, void (*fn)(const struct out *))
{
	for (size_t k = 0; k < n; k++) {
		o->m = ms[k];
		fn(o);
	}
	o->m = ms[0];
}

static void causes(const struct out *o)
{
	char v[48];

	for (size_t k = 0; k < o->m->ncause_kinds; k++) {
		u64(v, sizeof(v), o->m->causes[k]);
		sample_x(o, "latscope_spike_causes_total", true, NULL, "kind", o->m->cause_kind[k], v);
	}
}

static void host_causes(const struct out *o)
{
	char v[48];

	for (size_t k = 0; k < o->m->nhost_causes; k++) {
		u64(v, sizeof(v), o->m->host_causes[k]);
		sample_x(o, "latscope_spike_host_causes_total", true, NULL, "cause", o->m->host_cause[k], v);
	}
}

static void context(const struct out *o)
{
	const struct mon_metrics *m = o->m;
	char v[48];

	family(o, "latscope_steal_seconds_total", "counter", "seconds",
	       "Time the hypervisor ran something else on the measured CPU, since boot.");
	for (size_t i = 0; i < m->ncpus; i++)
		if (m->cpus[i].has_context)
			sample(o, "latscope_steal_seconds_total", false, m->cpus[i].name, NULL,
			       om_secs(m->cpus[i].steal_ns, v, sizeof(v)));
	family(o, "latscope_interrupts_total", "counter", NULL, "Hard interrupts on the measured CPU, since boot.");
	for (size_t i = 0; i < m->ncpus; i++)
		if (m->cpus[i].has_context) {
			u64(v, sizeof(v), m->cpus[i].irqs);
			sample(o, "latscope_interrupts_total", false, m->cpus[i].name, NULL, v);
		}
	bool smis = false;
	for (size_t i = 0; i < m->ncpus; i++)
		smis |= m->cpus[i].has_smis;
	if (!smis)
		return;         /* no SMI source here: no family, never a 0 */
	family(o, "latscope_smi_total", "counter", NULL,
	       "System Management Interrupts on the measured CPU, since the monitor started.");
	for (size_t i = 0; i < m->ncpus; i++)
		if (m->cpus[i].has_smis) {
			u64(v, sizeof(v), m->cpus[i].smis);
			sample(o, "latscope_smi_total", false, m->cpus[i].name, NULL, v);
		}
}

char *mon_metrics_render(const struct mon_metrics *const *ms, size_t n, enum mon_format f, uint64_t now_mono_ns)
{
	char *text = NULL;
	size_t size = 0;
	struct out o = { .f = NULL, .m = n ? ms[0] : NULL, .fmt = f, .now = now_mono_ns };

	if (n == 0 || !(o.f = open_memstream(&text, &size)))
		return NULL;
	const struct mon_metrics *m = ms[0];
	family(&o, "latscope_monitor_up", "gauge", NULL, "1 while latscope monitor measures.");
	sample(&o, "latscope_monitor_up", false, NULL, NULL, m->up ? "1" : "0");
	family(&o, "latscope_build_info", "info", NULL, "The latscope that measures.");
	fputs("latscope_build_info{host=\"", o.f);
	om_put_label_value(o.f, m->id.host);
	fputs("\",version=\"", o.f);
	om_put_label_value(o.f, m->id.version);
	fputs("\"} 1\n", o.f);
	family(&o, "latscope_threshold_seconds", "gauge", "seconds", "Samples above this count as above the threshold.");
	each_probe(&o, ms, n, threshold);
	family(&o, "latscope_latency_seconds", "histogram", "seconds",
	       "Latency since the monitor started (noise: the gaps), on a fixed 1-2-5 ladder of bounds.");
	each_probe(&o, ms, n, histograms);
	for (size_t r = 0; r < sizeof(counter_rows) / sizeof(counter_rows[0]); r++) {
		family(&o, counter_rows[r].name, "counter", NULL, counter_rows[r].help);
		for (size_t k = 0; k < n; k++) {
			o.m = ms[k];
			counter(&o, r);
		}
		o.m = ms[0];
	}
	family(&o, "latscope_latency_sum_seconds_total", "counter", "seconds", "The sum of all latencies measured.");
	each_probe(&o, ms, n, latency_sum);
	family(&o, "latscope_window_max_seconds", "gauge", "seconds", "The largest latency of the last finished window.");
	each_probe(&o, ms, n, window_max);
	family(&o, "latscope_window_p99_seconds", "gauge", "seconds", "The p99 latency of the last finished window.");
	each_probe(&o, ms, n, window_p99);
	family(&o, "latscope_last_5m_max_seconds", "gauge", "seconds",
	       "The largest latency of the windows that ended in the last 5 minutes.");
	each_probe(&o, ms, n, max_5m);
	bool traced = false;
	for (size_t k = 0; k < n; k++)
		traced |= ms[k]->ncause_kinds > 0;
	if (traced) {
		family(&o, "latscope_spike_causes_total", "counter", NULL,
		       "Spikes explained from the trace ring (--trace-spikes), by the kind of what held the CPU.");
		each_probe(&o, ms, n, causes);
	}
	bool hosted = false;
	for (size_t k = 0; k < n; k++)
		hosted |= ms[k]->nhost_causes > 0;
	if (hosted) {
		family(&o, "latscope_spike_host_causes_total", "counter", NULL,
		       "Spikes explained from the trace ring, by what the VM's host did to the vCPU (--host).");
		each_probe(&o, ms, n, host_causes);
	}
	context(&o);                    /* the CPUs', once: the first probe's */
	if (f == MON_OPENMETRICS)
		fputs("# EOF\n", o.f);
	bool bad = ferror(o.f) != 0;
	if (fclose(o.f) != 0 || bad) {
		free(text);
		return NULL;
	}
	return text;
}
