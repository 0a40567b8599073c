#include "result/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "core/nstime.h"
#include "result/tail_json.h"
#include "result/tailrun.h"

/* jansson's setters take ownership even on failure; remember failure once. */
struct builder {
	bool failed;
};

static void put(struct builder *b, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) < 0)
		b->failed = true;
}

static void push(struct builder *b, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v) < 0)
		b->failed = true;
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *stats_json(struct builder *b, const struct stats *st)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	put(b, o, "count", u64(st->n));
	put(b, o, "min_ns", u64(stats_min(st)));
	put(b, o, "max_ns", u64(st->max));
	put(b, o, "mean_ns", json_real(st->mean));
	put(b, o, "stddev_ns", json_real(stats_stddev(st)));
	return o;
}

/* [low_ns, high_ns, count]: the bounds make the file readable without our layout. */
static json_t *bucket_json(struct builder *b, unsigned index, uint64_t count)
{
	json_t *row = json_array();
	if (!row)
		return NULL;
	push(b, row, u64(hist_bucket_low(index)));
	push(b, row, u64(hist_bucket_high(index)));
	push(b, row, u64(count));
	return row;
}

static json_t *hist_json(struct builder *b, const struct hist *h)
{
	json_t *o = json_object(), *buckets = json_array();
	if (!o || !buckets) {
		json_decref(o);
		json_decref(buckets);
		return NULL;
	}
	put(b, o, "relative_error", json_real(HIST_REL_ERROR));
	put(b, o, "count", u64(h->total));
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u))
		push(b, buckets, bucket_json(b, i, h->counts[i]));
	put(b, o, "buckets", buckets);
	return o;
}

static json_t *sparse_json(struct builder *b, const struct sparse_hist *h)
{
	json_t *o = json_object(), *buckets = json_array();
	if (!o || !buckets) {
		json_decref(o);
		json_decref(buckets);
		return NULL;
	}
	put(b, o, "count", u64(sparse_total(h)));
	for (uint32_t i = 0; i < h->n; i++)
		push(b, buckets, bucket_json(b, h->b[i].index, h->b[i].count));
	put(b, o, "buckets", buckets);
	return o;
}

static json_t *summary_json(struct builder *b, const struct summary *s, const struct hist *h)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	put(b, o, "count", u64(s->count));
	put(b, o, "min_ns", u64(s->min));
	put(b, o, "mean_ns", json_real(s->mean));
	put(b, o, "stddev_ns", json_real(s->stddev));
	put(b, o, "p50_ns", u64(s->p50));
	put(b, o, "p90_ns", u64(s->p90));
	put(b, o, "p99_ns", u64(s->p99));
	put(b, o, "p99_9_ns", u64(s->p999));
	put(b, o, "p99_99_ns", u64(s->p9999));
	put(b, o, "max_ns", u64(s->max));
	put(b, o, "warm_max_ns", s->has_warm_max ? u64(s->warm_max) : json_null());
	put(b, o, "above", u64(s->above));
	put(b, o, "above_pct", json_real(s->above_pct));
	put(b, o, "above_total_ns", u64(s->above_ns));
	put(b, o, "histogram", hist_json(b, h));
	return o;
}

/* Where a CPU's time went, by /proc/stat's categories. */
static json_t *cpu_ns_json(struct builder *b, const uint64_t *ns)
{
	json_t *o = json_object();
	for (int k = 0; o && k < CPU_TIME_KINDS; k++)
		put(b, o, cpu_time_names[k], u64(ns[k]));
	return o;
}

/* A probe of operations: how many a second (null without a sample or elapsed time) and their bytes. */
static json_t *throughput_json(struct builder *b, const struct op_figures *f)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	put(b, o, "ops_per_sec", f->valid ? json_real(f->ops_per_sec) : json_null());
	put(b, o, "bytes_per_sec", f->valid && f->bytes_per_op ? json_real(f->bytes_per_sec) : json_null());
	put(b, o, "bytes_per_op", f->bytes_per_op ? u64(f->bytes_per_op) : json_null());
	return o;
}

/* The whole machine's CPU time per operation by category, and latscope's own. */
static json_t *cpu_per_op_json(struct builder *b, const struct op_figures *f)
{
	json_t *o = json_object();
	for (int k = 0; o && k < CPU_TIME_KINDS; k++)
		put(b, o, cpu_time_names[k], json_real(f->cpu_ns_per_op[k]));
	if (o) {
		put(b, o, "latscope_user", json_real(f->self_user_ns_per_op));
		put(b, o, "latscope_system", json_real(f->self_system_ns_per_op));
	}
	return o;
}

static json_t *machine_window_json(struct builder *b, const struct machine_window *w, bool with_index)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (with_index)
		put(b, o, "index", u64(w->index));
	if (with_index && w->span > 1)
		put(b, o, "span", u64(w->span));
	put(b, o, "cpu_ns", cpu_ns_json(b, w->cpu_ns));
	put(b, o, "irqs", u64(w->irqs));
	put(b, o, "softirqs", u64(w->softirqs));
	put(b, o, "context_switches", u64(w->switches));
	put(b, o, "self_user_ns", u64(w->self_user_ns));
	put(b, o, "self_system_ns", u64(w->self_system_ns));
	return o;
}

static json_t *machine_json(struct builder *b, const struct machine_context *m)
{
	json_t *o = machine_window_json(b, &m->total, false), *wins = json_array();
	put(b, o, "windows", wins);
	for (size_t i = 0; wins && i < m->nwin; i++)
		push(b, wins, machine_window_json(b, &m->win[i], true));
	return o;
}

static json_t *window_json(struct builder *b, const struct result *res, const struct result_window *rw)
{
	const struct rec_window *w = &rw->w;
	json_t *o = json_object();
	if (!o)
		return NULL;
	put(b, o, "index", u64(w->index));
	if (rw->span != 1)
		put(b, o, "span", u64(rw->span));
	put(b, o, "start_ns", u64(w->start_ns));
	put(b, o, "end_ns", u64(w->end_ns));
	put(b, o, "missed", u64(w->missed));
	if (res->long_run)
		put(b, o, "spikes", u64(w->spikes));
	for (unsigned m = 0; m < res->nmetrics; m++) {
		json_t *mo = stats_json(b, &w->m[m].st);
		put(b, o, res->metric_names[m], mo);
		if (!mo)
			break;
		put(b, mo, "above", u64(w->m[m].above));
		put(b, mo, "above_total_ns", u64(w->m[m].above_ns));
		put(b, mo, "p50_ns", u64(rw->p50[m]));
		put(b, mo, "p99_ns", u64(rw->p99[m]));
		put(b, mo, "histogram", sparse_json(b, &rw->hist[m]));
	}
	put(b, o, "overhead_ns", stats_json(b, &w->overhead));
	if (rw->ctx.valid) {
		json_t *c = json_object();
		put(b, o, "context", c);
		if (c) {
			put(b, c, "irqs", u64(rw->ctx.irqs));
			put(b, c, "softirqs", u64(rw->ctx.softirqs));
			put(b, c, "involuntary_switches", u64(rw->ctx.involuntary));
			put(b, c, "steal_ns", u64(rw->ctx.cpu_ns[CPU_STEAL]));
			put(b, c, "cpu_ns", cpu_ns_json(b, rw->ctx.cpu_ns));
			if (res->smi_asked && res->smi_source != SMI_SOURCE_NONE)
				put(b, c, "smis", u64(rw->ctx.smis));
		}
	}
	return o;
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Metric 0 over a long run: spikes, how often, and the maximum of every band. */
static json_t *long_run_json(struct builder *b, const struct cpu_result *cr)
{
	const struct long_run *lr = &cr->lr;
	json_t *o = json_object(), *bands = json_object(), *max = json_array();

	put(b, o, "observed_ns", u64(lr->observed_ns));
	put(b, o, "spikes", u64(cr->spikes));
	put(b, o, "spikes_per_hour", json_real(lr->per_hour));
	put(b, o, "spikes_per_10min", json_real(lr->per_hour / 6.0));
	put(b, o, "mtbf_ns", lr->has_mtbf ? json_real(lr->mtbf_ns) : json_null());
	put(b, o, "mtbf_low_ns", real_or_null(lr->mtbf_lo_ns));
	put(b, o, "mtbf_high_ns", real_or_null(lr->mtbf_hi_ns));
	put(b, o, "worst_at_ns", lr->has_worst ? u64(lr->worst_at_ns) : json_null());
	put(b, o, "max_per_band", bands);
	if (!o || !bands || !max) {
		json_decref(max);
		return o;
	}
	put(b, bands, "band_ns", u64(cr->bands.band_ns ? cr->bands.band_ns : RESULT_BAND_NS));
	put(b, bands, "max_ns", max);
	for (size_t i = 0; i < cr->bands.n; i++)
		push(b, max, cr->bands.max[i] == RESULT_NO_BAND_MAX ? json_null() : u64(cr->bands.max[i]));
	return o;
}

/* [at_ns, value_ns] largest first; in "all" also the CPU: [at_ns, value_ns, cpu]. */
static json_t *largest_json(struct builder *b, const struct cpu_result *cr)
{
	json_t *arr = json_array();
	for (unsigned i = 0; arr && i < cr->ntop; i++) {
		json_t *row = json_array();
		push(b, arr, row);
		if (!row)
			break;
		push(b, row, u64(cr->top[i].at_ns));
		push(b, row, u64(cr->top[i].value));
		if (cr->cpu < 0)
			push(b, row, json_integer(cr->top_cpu[i]));
	}
	return arr;
}

static json_t *counts_json(struct builder *b, const struct named_counts *c)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < c->n; i++)
		put(b, o, c->items[i].name, u64(c->items[i].count));
	return o;
}

static json_t *cpu_json(struct builder *b, const struct result *res, const struct cpu_result *cr)
{
	json_t *o = json_object(), *metrics = json_object(), *wins = json_array(), *ov = json_object();
	bool merged = cr->cpu < 0;

	put(b, o, "cpu", merged ? json_string("all") : json_integer(cr->cpu));
	put(b, o, "metrics", metrics);
	put(b, o, "missed", u64(cr->missed));
	put(b, o, "overhead", ov);
	put(b, o, "windows", wins);
	put(b, o, "largest", largest_json(b, cr));
	if (res->long_run)
		put(b, o, "long_run", long_run_json(b, cr));
	struct tail_fit tail;
	struct lat_error terr;
	if (cpu_result_tail(res, cr, &tail, &terr) == 0) {
		json_t *t = tail_to_json(&tail);
		struct tail_interval above;
		int from = res->threshold_ns ? tail_rate_above(&tail, &cr->hist[0], cpu_result_observed(res, cr),
							      res->threshold_ns, &above) : -1;
		if (t && from >= 0)
			put(b, t, "above_threshold", tail_above_json(res->threshold_ns, &above, from));
		put(b, o, "tail", t);
	}
	if (cr->has_context) {
		uint64_t smis;
		put(b, o, "interrupts", counts_json(b, &cr->irqs));
		put(b, o, "softirqs", counts_json(b, &cr->softirqs));
		if (result_smis(res, cr, &smis))
			put(b, o, "smis", u64(smis));
	}
	if (!o || !metrics || !wins || !ov)
		return o;
	put(b, ov, "clock_read_ns", stats_json(b, &cr->clock_cost));
	put(b, ov, "wakeup_to_recorded_ns", stats_json(b, &cr->overhead));
	for (unsigned m = 0; m < res->nmetrics; m++)
		put(b, metrics, res->metric_names[m], summary_json(b, &cr->sum[m], &cr->hist[m]));
	for (size_t i = 0; i < cr->nwin; i++)
		push(b, wins, window_json(b, res, &cr->win[i]));
	return o;
}

static json_t *system_json(struct builder *b, const struct sysdesc *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	put(b, o, "hostname", json_string(s->hostname));
	put(b, o, "kernel_release", json_string(s->kernel_release));
	put(b, o, "kernel_version", json_string(s->kernel_version));
	put(b, o, "machine", json_string(s->machine));
	put(b, o, "preempt", json_string(s->preempt));
	put(b, o, "preempt_mode", json_string(s->preempt_mode));
	put(b, o, "clocksource", json_string(s->clocksource));
	put(b, o, "clocksources_available", json_string(s->clocksources));
	put(b, o, "cpu_model", json_string(s->cpu_model));
	put(b, o, "hypervisor", json_string(s->hypervisor));
	put(b, o, "online_cpus", json_string(s->online_cpus));
	put(b, o, "ncpus_online", json_integer(s->ncpus_online));
	return o;
}

static json_t *iso_time(uint64_t realtime_ns)
{
	time_t secs = (time_t)(realtime_ns / NS_PER_SEC);
	struct tm tm;
	char buf[64];

	if (!gmtime_r(&secs, &tm))
		return json_null();
	size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%03lluZ",
		 (unsigned long long)(realtime_ns % NS_PER_SEC / NS_PER_MS));
	return json_string(buf);
}

json_t *result_to_json(const struct result *res)
{
	struct builder b = { false };
	json_t *doc = json_object(), *tool = json_object(), *argv = json_array(), *labels = json_object(),
	       *applied = json_object(), *notes = json_array(), *metrics = json_array(), *cpus = json_array();

	put(&b, doc, "schema", json_string(RESULT_SCHEMA));
	put(&b, doc, "schema_version", json_integer(RESULT_SCHEMA_VERSION));
	put(&b, doc, "tool", tool);
	put(&b, doc, "probe", json_string(res->probe));
	put(&b, doc, "start_time", iso_time(res->start_realtime_ns));
	put(&b, doc, "start_realtime_ns", u64(res->start_realtime_ns));
	put(&b, doc, "elapsed_ns", u64(res->elapsed_ns));
	put(&b, doc, "interrupted", json_boolean(res->interrupted));
	put(&b, doc, "stop_reason", json_string(res->stop_reason));
	if (res->partial)
		put(&b, doc, "partial", json_true());
	put(&b, doc, "command_line", argv);
	put(&b, doc, "params", res->params ? json_incref(res->params) : json_object());
	put(&b, doc, "labels", labels);
	put(&b, doc, "system", system_json(&b, &res->sys));
	put(&b, doc, "applied", applied);
	put(&b, doc, "notes", notes);
	put(&b, doc, "threshold_ns", u64(res->threshold_ns));
	put(&b, doc, "warmup_windows", u64(res->warmup));
	put(&b, doc, "metrics", metrics);
	put(&b, doc, "cpus", cpus);
	put(&b, doc, "all", cpu_json(&b, res, &res->all));
	if (res->smi_asked) {
		const char *src = smi_source_name(res->smi_source);
		put(&b, doc, "smi_source", src ? json_string(src) : json_null());
	}
	if (res->machine.valid)
		put(&b, doc, "machine", machine_json(&b, &res->machine));
	if (res->ops.per_op)
		put(&b, doc, "throughput", throughput_json(&b, &res->ops));
	if (res->ops.valid && res->ops.has_cpu)
		put(&b, doc, "cpu_per_op_ns", cpu_per_op_json(&b, &res->ops));
	if (res->fingerprint)
		put(&b, doc, "fingerprint", json_incref(res->fingerprint));
	if (res->findings)
		put(&b, doc, "findings", json_incref(res->findings));
	if (res->trace)
		put(&b, doc, "trace", json_incref(res->trace));
	if (res->host)
		put(&b, doc, "host", json_incref(res->host));
	if (res->on_threshold)
		put(&b, doc, "on_threshold", json_incref(res->on_threshold));
	if (res->until)
		put(&b, doc, "until", json_incref(res->until));
	if (res->hwlat)
		put(&b, doc, "hwlat", json_incref(res->hwlat));
	if (b.failed || !tool || !argv || !labels || !applied || !notes || !metrics || !cpus)
		goto fail;

	put(&b, tool, "name", json_string("latscope"));
	put(&b, tool, "version", json_string(LATSCOPE_VERSION));
	for (int i = 0; i < res->argc; i++)
		push(&b, argv, json_string(res->argv[i]));
	for (unsigned i = 0; i < res->labels.n; i++)
		put(&b, labels, res->labels.items[i].key, json_string(res->labels.items[i].value));
	put(&b, applied, "rt_policy", json_boolean(res->applied.rt_policy));
	put(&b, applied, "memlock", json_boolean(res->applied.memlock));
	put(&b, applied, "pm_qos", json_boolean(res->applied.pm_qos));
	put(&b, applied, "timer_slack", json_boolean(res->applied.timer_slack));
	put(&b, applied, "main_thread_off_measured_cpus", json_boolean(res->applied.main_moved));
	if (res->applied.idle_states[0])
		put(&b, applied, "idle_states", json_string(res->applied.idle_states));
	for (unsigned i = 0; i < res->nnotes; i++)
		push(&b, notes, json_string(res->notes[i]));
	for (unsigned m = 0; m < res->nmetrics; m++)
		push(&b, metrics, json_string(res->metric_names[m]));
	for (size_t i = 0; i < res->ncpus; i++)
		push(&b, cpus, cpu_json(&b, res, &res->cpus[i]));
	if (b.failed)
		goto fail;
	return doc;
fail:
	json_decref(doc);
	return NULL;
}

char *result_json_dump(const json_t *doc)
{
	const size_t flags = JSON_INDENT(1) | JSON_REAL_PRECISION(RESULT_REAL_DIGITS);
	/* Sized first, then written into exactly that: json_dumps grows its buffer by
	 * doubling, which for a large result costs twice the text at the end. */
	size_t n = json_dumpb(doc, NULL, 0, flags);
	char *text = n ? malloc(n + 1u) : NULL;

	if (text && json_dumpb(doc, text, n, flags) != n) {
		free(text);
		return NULL;
	}
	if (text)
		text[n] = '\0';
	return text;
}

int json_file_commit(struct atomic_file *f, const char *text)
{
	int r = atomic_file_write(f, text, strlen(text));
	if (r == 0)
		r = atomic_file_write(f, "\n", 1);
	return r < 0 ? r : atomic_file_commit(f);
}
