/*
 * Reading a result back from its JSON: what import, compare, merge and export
 * build on.  Input may come from anywhere, so every value is checked and the
 * first problem is named by its path in the document.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "result/json.h"
#include "result/bands.h"

#define NOT_A_RESULT "not a latscope result (no \"schema\": \"" RESULT_SCHEMA "\")"

struct reader {
	struct lat_error *err;
	char path[160];
	/* Dense histograms the CPUs holding samples need, and what the text's size allows (see dense_budget). */
	size_t dense_used, dense_max;
};

static int bad(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The reason, after where in the document it was found. */
static int bad(struct reader *rd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(rd->err, -EINVAL, fmt, ap);
	va_end(ap);
	return rd->path[0] ? err_prefix(rd->err, -EINVAL, "%s: ", rd->path) : -EINVAL;
}

/* Descend into key (or [index] when key is NULL) for messages. */
static size_t enter(struct reader *rd, const char *key, size_t index)
{
	size_t len = strlen(rd->path);
	if (key)
		snprintf(rd->path + len, sizeof(rd->path) - len, "%s%s", len ? "." : "", key);
	else
		snprintf(rd->path + len, sizeof(rd->path) - len, "[%zu]", index);
	return len;
}

static void leave(struct reader *rd, size_t len)
{
	rd->path[len] = '\0';
}

static const json_t *need(struct reader *rd, const json_t *o, const char *key, json_type type)
{
	static const char *const names[] = { "an object", "an array", "a string", "an integer", "a number",
					     "a boolean", "a boolean", "null" };
	const json_t *v = json_object_get(o, key);
	if (!v || json_typeof(v) != type) {
		if (!(type == JSON_TRUE && v && json_is_boolean(v))) {
			size_t at = enter(rd, key, 0);
			bad(rd, v ? "is not %s" : "is missing (%s expected)", names[type]);
			leave(rd, at);
			return NULL;
		}
	}
	return v;
}

static int get_u64(struct reader *rd, const json_t *o, const char *key, uint64_t *ret)
{
	const json_t *v = need(rd, o, key, JSON_INTEGER);
	if (!v)
		return -EINVAL;
	if (json_integer_value(v) < 0) {
		size_t at = enter(rd, key, 0);
		int r = bad(rd, "is negative");
		leave(rd, at);
		return r;
	}
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_real(struct reader *rd, const json_t *o, const char *key, double *ret)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0) {
		size_t at = enter(rd, key, 0);
		int r = bad(rd, v ? "is not a non-negative number" : "is missing");
		leave(rd, at);
		return r;
	}
	*ret = json_number_value(v);
	return 0;
}

static int get_bool(struct reader *rd, const json_t *o, const char *key, bool *ret)
{
	const json_t *v = need(rd, o, key, JSON_TRUE);
	if (!v)
		return -EINVAL;
	*ret = json_is_true(v);
	return 0;
}

static int get_str(struct reader *rd, const json_t *o, const char *key, char *buf, size_t size)
{
	const json_t *v = need(rd, o, key, JSON_STRING);
	if (!v)
		return -EINVAL;
	/* Cut at a character boundary: the text may go back into JSON. */
	size_t len = strlen(json_string_value(v));
	if (len >= size) {
		len = size - 1u;
		while (len > 0 && ((unsigned char)json_string_value(v)[len] & 0xc0u) == 0x80u)
			len--;
	}
	memcpy(buf, json_string_value(v), len);
	buf[len] = '\0';
	return 0;
}

static int read_stats(struct reader *rd, const json_t *o, struct stats *st)
{
	uint64_t n, mn, mx;
	double mean, sd;
	int r;
	if ((r = get_u64(rd, o, "count", &n)) < 0 || (r = get_u64(rd, o, "min_ns", &mn)) < 0 ||
	    (r = get_u64(rd, o, "max_ns", &mx)) < 0 || (r = get_real(rd, o, "mean_ns", &mean)) < 0 ||
	    (r = get_real(rd, o, "stddev_ns", &sd)) < 0)
		return r;
	if (n && (mn > mx || mean < (double)mn * (1 - 1e-9) || mean > (double)mx * (1 + 1e-9) + 1e-9))
		return bad(rd, "min, mean and max are not in order");
	/* Values in [min, max] spread (max - min) / 2 at most; past it, sd * sd * n could
	 * be infinite and the result could not be written back. */
	double sd_max = ((double)mx - (double)mn) / 2.0;
	if (n && sd > sd_max * 1.001 + 1.0)
		return bad(rd, "stddev_ns is larger than min and max allow");
	stats_from_figures(st, n, mn, mx, mean, sd);
	return 0;
}

/* One [low, high, count] triple of our layout. */
static int read_bucket(struct reader *rd, const json_t *row, unsigned *ret_index, uint64_t *ret_count)
{
	json_int_t v[3];
	if (!json_is_array(row) || json_array_size(row) != 3)
		return bad(rd, "is not [low_ns, high_ns, count]");
	for (size_t i = 0; i < 3; i++) {
		const json_t *x = json_array_get(row, i);
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return bad(rd, "is not [low_ns, high_ns, count] of non-negative integers");
		v[i] = json_integer_value(x);
	}
	unsigned idx = hist_index((uint64_t)v[0]);
	if (hist_bucket_low(idx) != (uint64_t)v[0] || hist_bucket_high(idx) != (uint64_t)v[1])
		return bad(rd, "[%lld, %lld] is not a bucket of latscope's histogram layout", (long long)v[0],
			   (long long)v[1]);
	if (v[2] == 0)
		return bad(rd, "has a zero count");
	*ret_index = idx;
	*ret_count = (uint64_t)v[2];
	return 0;
}

/* Buckets of a histogram object, strictly increasing, adding up to want. */
static int read_buckets(struct reader *rd, const json_t *h, uint64_t want, struct hist *dense, struct sparse_hist *sparse)
{
	const json_t *buckets = need(rd, h, "buckets", JSON_ARRAY);
	uint64_t total = 0;
	int last = -1, r = 0;
	size_t i, at0;
	const json_t *row;

	if (!buckets)
		return -EINVAL;
	at0 = enter(rd, "buckets", 0);
	if (sparse) {
		sparse->n = 0;
		sparse->b = json_array_size(buckets) ? malloc(json_array_size(buckets) * sizeof(*sparse->b)) : NULL;
		if (json_array_size(buckets) && !sparse->b) {
			leave(rd, at0);
			return -ENOMEM;
		}
	}
	json_array_foreach(buckets, i, row) {
		unsigned idx = 0;
		uint64_t count = 0;
		size_t at = enter(rd, NULL, i);
		r = read_bucket(rd, row, &idx, &count);
		if (r == 0 && (int)idx <= last)
			r = bad(rd, "buckets are not in increasing order");
		if (r == 0 && __builtin_add_overflow(total, count, &total))
			r = bad(rd, "counts overflow");
		leave(rd, at);
		if (r < 0)
			break;
		last = (int)idx;
		if (dense) {
			dense->counts[idx] += count;
			dense->total += count;
		}
		if (sparse)
			sparse->b[sparse->n++] = (struct hist_bucket){ .index = idx, .count = count };
	}
	leave(rd, at0);
	if (r == 0 && total != want)
		r = bad(rd, "histogram counts add up to %llu, not the count %llu", (unsigned long long)total,
			(unsigned long long)want);
	return r;
}

/* The bucket that holds the value of rank r (1-based) in h. */
static unsigned bucket_of_rank(const struct sparse_hist *h, uint64_t rank)
{
	uint64_t seen = 0;
	for (uint32_t i = 0; i < h->n; i++)
		if ((seen += h->b[i].count) >= rank)
			return h->b[i].index;
	return h->b[h->n - 1u].index;
}

struct pct_key {
	const char *key;
	double p;
};

static const struct pct_key summary_pcts[] = {
	{ "p50_ns", 50.0 }, { "p90_ns", 90.0 }, { "p99_ns", 99.0 }, { "p99_9_ns", 99.9 }, { "p99_99_ns", 99.99 },
};
static const struct pct_key window_pcts[] = { { "p50_ns", 50.0 }, { "p99_ns", 99.0 } };

/*
 * A file's figures must be those its histogram h (of st.n values) gives: min in
 * the first bucket, max in the last, and each percentile present the value of
 * its rank's bucket, give or take one rank (writers may round the rank
 * differently; latscope reports the midpoint, clamped to [min, max] in a
 * summary).  latscope recomputes them all; a file that says otherwise lied.
 */
static int check_figures(struct reader *rd, const json_t *o, const struct stats *st, const struct sparse_hist *h,
			 const struct pct_key *pcts, size_t npcts, bool clamped)
{
	if (st->n == 0)
		return 0;                       /* then the buckets are none (read_buckets) */
	unsigned first = h->b[0].index, last = h->b[h->n - 1u].index;
	if (st->min < hist_bucket_low(first) || st->min > hist_bucket_high(first))
		return bad(rd, "min_ns %llu is not in the histogram's first bucket [%llu, %llu]",
			   (unsigned long long)st->min, (unsigned long long)hist_bucket_low(first),
			   (unsigned long long)hist_bucket_high(first));
	if (st->max < hist_bucket_low(last) || st->max > hist_bucket_high(last))
		return bad(rd, "max_ns %llu is not in the histogram's last bucket [%llu, %llu]",
			   (unsigned long long)st->max, (unsigned long long)hist_bucket_low(last),
			   (unsigned long long)hist_bucket_high(last));
	for (size_t i = 0; i < npcts; i++) {
		uint64_t v, rank = hist_rank(pcts[i].p, st->n);
		int r;
		if (!json_object_get(o, pcts[i].key))
			continue;
		if ((r = get_u64(rd, o, pcts[i].key, &v)) < 0)
			return r;
		uint64_t lo = hist_bucket_low(bucket_of_rank(h, rank > 1u ? rank - 1u : 1u));
		uint64_t hi = hist_bucket_high(bucket_of_rank(h, rank < st->n ? rank + 1u : st->n));
		if (clamped) {
			lo = lo > st->min ? lo : st->min;
			hi = hi < st->max ? hi : st->max;
		}
		if (v < lo || v > hi)
			return bad(rd, "%s %llu is not what the histogram gives (%llu to %llu)", pcts[i].key,
				   (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
	}
	return 0;
}

static int read_cpu_ns(struct reader *rd, const json_t *o, uint64_t *ns)
{
	if (!json_is_object(o))
		return bad(rd, "cpu_ns is not an object");
	size_t at = enter(rd, "cpu_ns", 0);
	int r = 0;
	for (int k = 0; k < CPU_TIME_KINDS && r == 0; k++)
		r = get_u64(rd, o, cpu_time_names[k], &ns[k]);
	leave(rd, at);
	return r;
}

/* Optional (1 when absent, as before windows were folded): how many windows a window covers. */
static int get_span(struct reader *rd, const json_t *o, uint64_t *ret)
{
	*ret = 1;
	if (!json_object_get(o, "span"))
		return 0;
	int r = get_u64(rd, o, "span", ret);
	if (r == 0 && (*ret == 0 || *ret > UINT64_C(1) << 48))
		r = bad(rd, "span: %llu is not a number of windows (1 to 2^48)", (unsigned long long)*ret);
	return r;
}

/* Windows in order, none covering another's index: a window's span ends before the next begins. */
static int check_follows(struct reader *rd, bool first, uint64_t prev_index, uint64_t prev_span, uint64_t index)
{
	if (!first && (index <= prev_index || index - prev_index < prev_span))
		return bad(rd, "windows are not in increasing order (or a span covers the next window)");
	return 0;
}

/* An optional object read as it is: shown and exported, never computed on. */
static int keep_object(struct reader *rd, const json_t *doc, const char *name, json_t **ret)
{
	const json_t *o = json_object_get(doc, name);
	if (o && !json_is_object(o))
		return bad(rd, "%s is not an object", name);
	if (o && !(*ret = json_deep_copy(o)))
		return -ENOMEM;
	return 0;
}

static int read_machine_window(struct reader *rd, const json_t *o, struct machine_window *w, bool with_index)
{
	int r = 0;
	memset(w, 0, sizeof(*w));
	if (!json_is_object(o))
		return bad(rd, "is not an object");
	if (with_index)
		r = get_u64(rd, o, "index", &w->index);
	if (r == 0 && with_index)
		r = get_span(rd, o, &w->span);
	if (r == 0)
		r = read_cpu_ns(rd, json_object_get(o, "cpu_ns"), w->cpu_ns);
	if (r == 0)
		r = get_u64(rd, o, "irqs", &w->irqs);
	if (r == 0)
		r = get_u64(rd, o, "softirqs", &w->softirqs);
	if (r == 0)
		r = get_u64(rd, o, "context_switches", &w->switches);
	if (r == 0)
		r = get_u64(rd, o, "self_user_ns", &w->self_user_ns);
	if (r == 0)
		r = get_u64(rd, o, "self_system_ns", &w->self_system_ns);
	return r;
}

/* Optional: the whole machine beside every window. */
static int read_machine(struct reader *rd, const json_t *doc, struct result *res)
{
	const json_t *m = json_object_get(doc, "machine"), *wins, *w;
	struct machine_window total;
	size_t i;
	int r;

	if (!m)
		return 0;
	size_t at = enter(rd, "machine", 0);
	r = read_machine_window(rd, m, &total, false);
	wins = json_object_get(m, "windows");
	if (r == 0 && !json_is_array(wins))
		r = bad(rd, "windows is not an array");
	json_array_foreach(wins, i, w) {
		struct machine_window mw;
		if (r < 0)
			break;
		size_t at2 = enter(rd, "windows", 0);
		enter(rd, NULL, i);
		r = read_machine_window(rd, w, &mw, true);
		const struct machine_context *mc = &res->machine;
		if (r == 0 && mc->nwin)
			r = check_follows(rd, false, mc->win[mc->nwin - 1u].index, mc->win[mc->nwin - 1u].span, mw.index);
		if (r == 0 && (r = machine_append(&res->machine, &mw)) == -EOVERFLOW)
			r = bad(rd, "the windows add up past 2^63");
		leave(rd, at2);
		if (r < 0)
			break;
	}
	if (r == 0 && memcmp(&total, &res->machine.total, sizeof(total)) != 0)
		r = bad(rd, "the windows do not add up to the totals");
	leave(rd, at);
	return r;
}

static int read_window(struct reader *rd, const struct result *res, const json_t *o, struct result_window *rw)
{
	int r;
	memset(rw, 0, sizeof(*rw));
	if ((r = get_u64(rd, o, "index", &rw->w.index)) < 0 || (r = get_span(rd, o, &rw->span)) < 0 ||
	    (r = get_u64(rd, o, "start_ns", &rw->w.start_ns)) < 0 ||
	    (r = get_u64(rd, o, "end_ns", &rw->w.end_ns)) < 0 || (r = get_u64(rd, o, "missed", &rw->w.missed)) < 0)
		return r;
	if (res->long_run && (r = get_u64(rd, o, "spikes", &rw->w.spikes)) < 0)
		return r;
	const json_t *ov = json_object_get(o, "overhead_ns");
	stats_reset(&rw->w.overhead);
	if (ov) {
		size_t at = enter(rd, "overhead_ns", 0);
		r = read_stats(rd, ov, &rw->w.overhead);
		leave(rd, at);
		if (r < 0)
			return r;
	}
	const json_t *ctx = json_object_get(o, "context");
	if (ctx) {
		size_t at = enter(rd, "context", 0);
		if (!json_is_object(ctx))
			r = bad(rd, "is not an object");
		if (r == 0)
			r = get_u64(rd, ctx, "irqs", &rw->ctx.irqs);
		if (r == 0)
			r = get_u64(rd, ctx, "softirqs", &rw->ctx.softirqs);
		if (r == 0)
			r = get_u64(rd, ctx, "involuntary_switches", &rw->ctx.involuntary);
		if (r == 0)
			r = get_u64(rd, ctx, "steal_ns", &rw->ctx.cpu_ns[CPU_STEAL]);
		if (r == 0 && json_object_get(ctx, "cpu_ns"))
			r = read_cpu_ns(rd, json_object_get(ctx, "cpu_ns"), rw->ctx.cpu_ns);
		if (r == 0 && json_object_get(ctx, "smis"))
			r = get_u64(rd, ctx, "smis", &rw->ctx.smis);
		leave(rd, at);
		if (r < 0)
			return r;
		rw->ctx.valid = true;
	}
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		stats_reset(&rw->w.m[m].st);
	for (unsigned m = 0; m < res->nmetrics; m++) {
		const json_t *mo = need(rd, o, res->metric_names[m], JSON_OBJECT);
		if (!mo)
			return -EINVAL;
		size_t at = enter(rd, res->metric_names[m], 0);
		if ((r = read_stats(rd, mo, &rw->w.m[m].st)) < 0 || (r = get_u64(rd, mo, "above", &rw->w.m[m].above)) < 0 ||
		    (json_object_get(mo, "above_total_ns") && (r = get_u64(rd, mo, "above_total_ns", &rw->w.m[m].above_ns)) < 0)) {
			leave(rd, at);
			return r;
		}
		if (rw->w.m[m].above > rw->w.m[m].st.n) {
			r = bad(rd, "above is more than count");
			leave(rd, at);
			return r;
		}
		const json_t *h = r == 0 ? need(rd, mo, "histogram", JSON_OBJECT) : NULL;
		if (r == 0 && !h)
			r = -EINVAL;
		if (r == 0) {
			size_t at2 = enter(rd, "histogram", 0);
			r = read_buckets(rd, h, rw->w.m[m].st.n, NULL, &rw->hist[m]);
			leave(rd, at2);
		}
		if (r == 0)
			r = check_figures(rd, mo, &rw->w.m[m].st, &rw->hist[m], window_pcts,
					  ARRAY_SIZE(window_pcts), false);
		rw->p50[m] = sparse_percentile(&rw->hist[m], 50.0);
		rw->p99[m] = sparse_percentile(&rw->hist[m], 99.0);
		leave(rd, at);
		if (r < 0)
			return r;
	}
	/* a spike begins with a sample above the threshold, in its window */
	if (rw->w.spikes > rw->w.m[0].above)
		return bad(rd, "spikes: more spikes than samples above the threshold");
	return 0;
}

/* Optional (results of the first version lack it): [[at_ns, value_ns], ...]. */
static int read_largest(struct reader *rd, const json_t *o, struct cpu_result *cr)
{
	const json_t *arr = json_object_get(o, "largest"), *row;
	struct rec_event ev[REC_TOP];
	size_t i;

	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > REC_TOP)
		return bad(rd, "largest: not an array of at most %d events", REC_TOP);
	json_array_foreach(arr, i, row) {
		const json_t *a = json_array_get(row, 0), *v = json_array_get(row, 1);
		if (!json_is_array(row) || !json_is_integer(a) || !json_is_integer(v) || json_integer_value(a) < 0 ||
		    json_integer_value(v) < 0)
			return bad(rd, "largest[%zu] is not [at_ns, value_ns]", i);
		ev[i] = (struct rec_event){ .at_ns = (uint64_t)json_integer_value(a), .value = (uint64_t)json_integer_value(v) };
		/* They are samples of the leading metric: no more of them than it counted, each in [min, max]. */
		if (i >= cr->st[0].n || ev[i].value < cr->st[0].min || ev[i].value > cr->st[0].max)
			return bad(rd, "largest[%zu]: %llu ns is not one of the %llu samples in [min_ns, max_ns]", i,
				   (unsigned long long)ev[i].value, (unsigned long long)cr->st[0].n);
	}
	result_set_top(cr, ev, (unsigned)json_array_size(arr));
	return 0;
}

/* Far more interrupt sources than a machine has. */
#define NAMED_COUNTS_MAX 4096

static int read_counts(struct reader *rd, const json_t *o, const char *key, struct named_counts *c)
{
	const json_t *obj = json_object_get(o, key), *v;
	const char *name;

	if (!json_is_object(obj))
		return bad(rd, "%s: not an object of counts", key);
	if (json_object_size(obj) > NAMED_COUNTS_MAX)
		return bad(rd, "%s: more than %d sources", key, NAMED_COUNTS_MAX);
	json_object_foreach((json_t *)obj, name, v) {
		/* A longer name would be cut: two could become one, or a character be cut in half. */
		if (strlen(name) >= RESULT_SOURCE_LEN)
			return bad(rd, "%s.%.40s...: the name is longer than %d bytes", key, name, RESULT_SOURCE_LEN - 1);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad(rd, "%s.%.40s is not a count", key, name);
		/* Each name once (an object's keys, never cut): appended without a search. */
		if (named_counts_append(c, name, (uint64_t)json_integer_value(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * A CPU holding samples gets dense histograms (result_cpu_hists): 30 KB per
 * metric, however few buckets its text lists.  A file of small CPU blocks could
 * so cost hundreds of times its size (4,096 CPUs of one sample in 1.6 MB: 120
 * MB), so they may take DENSE_FLOOR plus DENSE_PER_BYTE times the text.
 * latscope's smallest results (20 samples a CPU) spend 4.5 KB of text per CPU
 * and metric as written, 1.8 KB compacted: as written they always fit (8 times
 * 4.5 KB is more than 30 KB); compacted, the floor holds 1,100 CPU-metrics of
 * them.  CPUs without samples cost nothing: they share one empty histogram.
 */
#define DENSE_FLOOR ((size_t)32 << 20)
#define DENSE_PER_BYTE 8u

static size_t dense_budget(size_t text_len)
{
	return DENSE_FLOOR + DENSE_PER_BYTE * text_len;
}

/* cr's own histograms (*ret is NULL until then), charged to the budget the first time. */
static int dense_hists(struct reader *rd, const struct result *res, struct cpu_result *cr, struct hist **ret)
{
	size_t cost = res->nmetrics * sizeof(struct hist);
	if (*ret)
		return 0;
	if (cost > rd->dense_max - rd->dense_used)
		return bad(rd, "the CPUs holding samples need more than the %zu MiB of histograms a result of this "
			   "size may", rd->dense_max >> 20);
	rd->dense_used += cost;
	*ret = result_cpu_hists(res, cr);
	return *ret ? 0 : -ENOMEM;
}

/* The maxima of every band: listed, or (a file of an older latscope) from its windows, not yet folded. */
static int read_bands(struct reader *rd, const json_t *lr, struct cpu_result *cr)
{
	const json_t *b = lr ? json_object_get(lr, "max_per_band") : NULL;
	int r = 0;

	if (!b) {
		for (size_t k = 0; k < cr->nwin && r == 0; k++)
			if (cr->win[k].w.m[0].st.n)
				r = bands_add(&cr->bands, cr->win[k].w.start_ns, cr->win[k].w.m[0].st.max);
		return r < 0 ? bad(rd, "out of memory") : 0;
	}
	size_t at = enter(rd, "max_per_band", 0);
	const json_t *max = json_is_object(b) ? need(rd, b, "max_ns", JSON_ARRAY) : NULL;
	uint64_t band_ns = 0, *v = NULL, top = 0;
	size_t n = max ? json_array_size(max) : 0;
	if (!json_is_object(b))
		r = bad(rd, "is not an object");
	else if (!max)
		r = -EINVAL;
	if (r == 0)
		r = get_u64(rd, b, "band_ns", &band_ns);
	if (r == 0 && n > RESULT_BANDS_MAX)
		r = bad(rd, "max_ns: more than %u bands", RESULT_BANDS_MAX);
	if (r == 0 && !(v = malloc((n ? n : 1u) * sizeof(*v))))
		r = bad(rd, "out of memory");
	for (size_t i = 0; r == 0 && i < n; i++) {
		const json_t *e = json_array_get(max, i);
		if (json_is_null(e)) {
			v[i] = RESULT_NO_BAND_MAX;
			continue;
		}
		if (!json_is_integer(e) || json_integer_value(e) < 0 || (uint64_t)json_integer_value(e) > cr->st[0].max)
			r = bad(rd, "max_ns: band %zu is not a time between 0 and the maximum", i);
		else if ((v[i] = (uint64_t)json_integer_value(e)) > top)
			top = v[i];
	}
	if (r == 0 && (n || cr->st[0].n) && top != cr->st[0].max)
		r = bad(rd, "max_ns: the largest band is not the maximum");
	if (r == 0 && (r = bands_set(&cr->bands, band_ns, v, n)) == -EINVAL)
		r = bad(rd, "band_ns: not 5 minutes times a power of two");
	else if (r < 0)
		r = bad(rd, "out of memory");
	free(v);
	leave(rd, at);
	return r;
}

/* Spikes and the bands (the rest of long_run is derived).  Optional: older files lack it. */
static int read_long_run(struct reader *rd, const struct result *res, const json_t *o, struct cpu_result *cr)
{
	const json_t *lr = json_object_get(o, "long_run");
	int r = 0;

	if (res->long_run) {
		size_t at = enter(rd, "long_run", 0);
		uint64_t sum = 0;
		if (!json_is_object(lr))
			r = bad(rd, "is not an object");
		if (r == 0)
			r = get_u64(rd, lr, "spikes", &cr->spikes);
		for (size_t k = 0; r == 0 && k < cr->nwin; k++)
			if (__builtin_add_overflow(sum, cr->win[k].w.spikes, &sum))
				sum = UINT64_MAX;
		if (r == 0 && sum != cr->spikes)
			r = bad(rd, "spikes: the windows' spikes do not add up to the total");
		leave(rd, at);
	}
	if (r == 0) {
		size_t at = lr ? enter(rd, "long_run", 0) : 0;
		r = read_bands(rd, lr, cr);
		if (lr)
			leave(rd, at);
	}
	return r;
}

/* The tool's own costs on the CPU: reading the clock, and a wakeup to its sample recorded. */
static int read_overhead(struct reader *rd, const json_t *ov, struct cpu_result *cr)
{
	size_t at = enter(rd, "overhead", 0);
	const json_t *cc = need(rd, ov, "clock_read_ns", JSON_OBJECT), *wr = need(rd, ov, "wakeup_to_recorded_ns", JSON_OBJECT);
	int r = cc && wr ? 0 : -EINVAL;

	if (r == 0)
		r = read_stats(rd, cc, &cr->clock_cost);
	if (r == 0)
		r = read_stats(rd, wr, &cr->overhead);
	leave(rd, at);
	return r;
}

/* Metric m's totals and histogram, checked against each other.  *dense: the
 * CPU's histograms, made by the first metric that has samples. */
static int read_metric(struct reader *rd, const struct result *res, const json_t *mo, unsigned m,
		       struct cpu_result *cr, struct hist **dense)
{
	size_t at = enter(rd, res->metric_names[m], 0);
	int r = read_stats(rd, mo, &cr->st[m]);

	if (r == 0)
		r = get_u64(rd, mo, "above", &cr->above[m]);
	if (r == 0 && json_object_get(mo, "above_total_ns"))
		r = get_u64(rd, mo, "above_total_ns", &cr->above_ns[m]);
	if (r == 0 && cr->above[m] > cr->st[m].n)
		r = bad(rd, "above is more than count");
	const json_t *h = r == 0 ? need(rd, mo, "histogram", JSON_OBJECT) : NULL;
	if (r == 0 && !h)
		r = -EINVAL;
	if (r == 0 && cr->st[m].n)
		r = dense_hists(rd, res, cr, dense);
	struct sparse_hist listed = { 0 };
	if (r == 0) {
		size_t at2 = enter(rd, "histogram", 0);
		r = read_buckets(rd, h, cr->st[m].n, *dense ? &(*dense)[m] : NULL, &listed);
		leave(rd, at2);
	}
	if (r == 0)
		r = check_figures(rd, mo, &cr->st[m], &listed, summary_pcts, ARRAY_SIZE(summary_pcts), true);
	sparse_free(&listed);
	leave(rd, at);
	return r;
}

static int read_metrics(struct reader *rd, const struct result *res, const json_t *metrics, struct cpu_result *cr)
{
	size_t at = enter(rd, "metrics", 0);
	struct hist *dense = NULL;
	int r = 0;

	for (unsigned m = 0; m < res->nmetrics && r == 0; m++) {
		const json_t *mo = need(rd, metrics, res->metric_names[m], JSON_OBJECT);
		r = mo ? read_metric(rd, res, mo, m, cr, &dense) : -EINVAL;
	}
	leave(rd, at);
	return r;
}

/* One window appended to cr, after the one before it; *missed grows by its missed periods. */
static int read_cpu_window(struct reader *rd, const struct result *res, const json_t *wo, size_t i,
			   struct cpu_result *cr, uint64_t *missed)
{
	struct result_window rw;
	size_t at = enter(rd, NULL, i);
	int r;

	memset(&rw, 0, sizeof(rw));     /* freed below on any failure, also before read_window */
	if (!json_is_object(wo))
		r = bad(rd, "is not an object");
	else
		r = read_window(rd, res, wo, &rw);
	if (r == 0 && cr->nwin)
		r = check_follows(rd, false, cr->win[cr->nwin - 1u].w.index, cr->win[cr->nwin - 1u].span, rw.w.index);
	if (r == 0 && (r = result_append_window(cr, &rw)) < 0)
		bad(rd, "out of memory");
	if (r < 0)
		for (unsigned m = 0; m < REC_MAX_METRICS; m++)
			sparse_free(&rw.hist[m]);
	leave(rd, at);
	if (r == 0 && __builtin_add_overflow(*missed, rw.w.missed, missed))
		*missed = UINT64_MAX;           /* above any total: reported by the caller */
	return r;
}

/* The windows, whose counts must add up to the CPU's totals. */
static int read_cpu_windows(struct reader *rd, const struct result *res, const json_t *wins, struct cpu_result *cr)
{
	size_t at = enter(rd, "windows", 0), i;
	const json_t *wo;
	uint64_t missed = 0;
	int r = 0;

	json_array_foreach(wins, i, wo)
		if ((r = read_cpu_window(rd, res, wo, i, cr, &missed)) < 0)
			break;
	/* Sums that wrapped around could otherwise match the totals. */
	for (unsigned m = 0; m < res->nmetrics && r == 0; m++) {
		uint64_t n = 0, above = 0;
		bool wrapped = false;
		for (size_t k = 0; k < cr->nwin; k++)
			wrapped |= __builtin_add_overflow(n, cr->win[k].w.m[m].st.n, &n) ||
				   __builtin_add_overflow(above, cr->win[k].w.m[m].above, &above);
		if (wrapped || n != cr->st[m].n || above != cr->above[m])
			r = bad(rd, "the windows' counts do not add up to the totals");
	}
	if (r == 0 && missed != cr->missed)
		r = bad(rd, "the windows' missed periods do not add up to the total");
	leave(rd, at);
	return r;
}

static int read_cpu(struct reader *rd, struct result *res, const json_t *o, struct cpu_result *cr)
{
	const json_t *metrics = need(rd, o, "metrics", JSON_OBJECT), *wins = need(rd, o, "windows", JSON_ARRAY);
	const json_t *ov = need(rd, o, "overhead", JSON_OBJECT);
	int r;

	if (!metrics || !wins || !ov)
		return -EINVAL;
	if ((r = get_u64(rd, o, "missed", &cr->missed)) < 0 || (r = read_overhead(rd, ov, cr)) < 0 ||
	    (r = read_metrics(rd, res, metrics, cr)) < 0 || (r = read_cpu_windows(rd, res, wins, cr)) < 0 ||
	    (r = read_long_run(rd, res, o, cr)) < 0 || (r = read_largest(rd, o, cr)) < 0)
		return r;
	if (json_object_get(o, "interrupts")) {
		cr->has_context = true;
		r = read_counts(rd, o, "interrupts", &cr->irqs);
		if (r == 0)
			r = read_counts(rd, o, "softirqs", &cr->softirqs);
	}
	return r;
}

static int read_system(struct reader *rd, const json_t *o, struct sysdesc *s)
{
	size_t at = enter(rd, "system", 0);
	int r;
	memset(s, 0, sizeof(*s));
	if ((r = get_str(rd, o, "hostname", s->hostname, sizeof(s->hostname))) < 0 ||
	    (r = get_str(rd, o, "kernel_release", s->kernel_release, sizeof(s->kernel_release))) < 0 ||
	    (r = get_str(rd, o, "kernel_version", s->kernel_version, sizeof(s->kernel_version))) < 0 ||
	    (r = get_str(rd, o, "machine", s->machine, sizeof(s->machine))) < 0 ||
	    (r = get_str(rd, o, "preempt", s->preempt, sizeof(s->preempt))) < 0 ||
	    (r = get_str(rd, o, "preempt_mode", s->preempt_mode, sizeof(s->preempt_mode))) < 0 ||
	    (r = get_str(rd, o, "clocksource", s->clocksource, sizeof(s->clocksource))) < 0 ||
	    (r = get_str(rd, o, "clocksources_available", s->clocksources, sizeof(s->clocksources))) < 0 ||
	    (r = get_str(rd, o, "cpu_model", s->cpu_model, sizeof(s->cpu_model))) < 0 ||
	    (r = get_str(rd, o, "hypervisor", s->hypervisor, sizeof(s->hypervisor))) < 0 ||
	    (r = get_str(rd, o, "online_cpus", s->online_cpus, sizeof(s->online_cpus))) < 0)
		goto out;
	uint64_t n;
	if ((r = get_u64(rd, o, "ncpus_online", &n)) == 0)
		s->ncpus_online = n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
out:
	leave(rd, at);
	return r;
}

static int read_labels(struct reader *rd, const json_t *o, struct labels *ls)
{
	const char *key;
	const json_t *v;
	ls->n = 0;
	json_object_foreach((json_t *)o, key, v) {
		char text[LABEL_KEY_MAX + LABEL_VALUE_MAX + 2];
		struct label l;
		if (!json_is_string(v) || ls->n >= LABELS_MAX)
			return bad(rd, "labels: '%.60s' is not a string or there are too many", key);
		snprintf(text, sizeof(text), "%s=%s", key, json_string_value(v));
		if (strlen(key) >= LABEL_KEY_MAX || strchr(key, '=') || parse_label(text, &l) < 0)
			return bad(rd, "labels: '%.60s' is not a valid label", key);
		ls->items[ls->n++] = l;
	}
	return 0;
}

static int read_head(struct reader *rd, const json_t *doc, struct result *res, const json_t **ret_cpus)
{
	const json_t *metrics = need(rd, doc, "metrics", JSON_ARRAY), *cpus = need(rd, doc, "cpus", JSON_ARRAY);
	const json_t *tool = need(rd, doc, "tool", JSON_OBJECT);
	char probe[RESULT_NAME_LEN];
	const char *names[REC_MAX_METRICS];
	struct cpuset set;
	size_t i;
	const json_t *v;
	int r;

	if (!metrics || !cpus || !tool || (r = get_str(rd, doc, "probe", probe, sizeof(probe))) < 0)
		return -EINVAL;
	if (json_array_size(metrics) == 0 || json_array_size(metrics) > REC_MAX_METRICS)
		return bad(rd, "metrics: between 1 and %d names expected", REC_MAX_METRICS);
	json_array_foreach(metrics, i, v) {
		if (!json_is_string(v) || !*json_string_value(v) || strlen(json_string_value(v)) >= RESULT_NAME_LEN)
			return bad(rd, "metrics[%zu] is not a metric name", i);
		names[i] = json_string_value(v);
		/* A window holds its metrics beside these keys: the writer would overwrite one with the other. */
		static const char *const window_keys[] = { "index", "start_ns", "end_ns", "missed", "overhead_ns", "context" };
		for (size_t k = 0; k < ARRAY_SIZE(window_keys); k++)
			if (strcmp(names[i], window_keys[k]) == 0)
				return bad(rd, "metrics: '%s' is not a metric name (a window has a field of that name)", names[i]);
		for (size_t k = 0; k < i; k++)
			if (strcmp(names[k], names[i]) == 0)
				return bad(rd, "metrics: '%s' is named twice", names[i]);
	}
	cpuset_clear(&set);
	json_array_foreach(cpus, i, v) {
		const json_t *c = json_object_get(v, "cpu");
		if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) >= (json_int_t)CPUSET_MAX)
			return bad(rd, "cpus[%zu].cpu is not a CPU number", i);
		if (cpuset_has(&set, (unsigned)json_integer_value(c)))
			return bad(rd, "cpus[%zu]: cpu %lld is listed twice", i, (long long)json_integer_value(c));
		cpuset_add(&set, (unsigned)json_integer_value(c));
	}
	if (cpuset_count(&set) == 0)
		return bad(rd, "cpus is empty");
	if ((r = result_init(res, probe, (unsigned)json_array_size(metrics), names, &set)) < 0)
		return r == -EINVAL ? bad(rd, "probe or metric names are too long") : r;
	/* What wrote it: kept as it is, as params are. */
	if (!(res->tool = json_deep_copy(tool)))
		return -ENOMEM;
	*ret_cpus = cpus;
	return 0;
}

static int by_cpu(const void *key, const void *elem)
{
	int cpu = *(const int *)key, other = ((const struct cpu_result *)elem)->cpu;
	return (cpu > other) - (cpu < other);
}

/* "smi_source": a name, or null for "not available here"; absent: an older latscope's file. */
static int read_smi_source(struct reader *rd, const json_t *doc, struct result *res)
{
	const json_t *v = json_object_get(doc, "smi_source");

	if (!v)
		return 0;
	res->smi_asked = true;
	res->smi_source = SMI_SOURCE_NONE;
	if (json_is_null(v))
		return 0;
	if (!json_is_string(v) || smi_source_parse(json_string_value(v), &res->smi_source) < 0)
		return bad(rd, "smi_source is not \"msr_pmu\", \"msr\" or null");
	return 0;
}

static int read_rest(struct reader *rd, const json_t *doc, struct result *res, const json_t *cpus)
{
	const json_t *argv = need(rd, doc, "command_line", JSON_ARRAY), *params = need(rd, doc, "params", JSON_OBJECT);
	const json_t *labels = need(rd, doc, "labels", JSON_OBJECT), *sys = need(rd, doc, "system", JSON_OBJECT);
	const json_t *applied = need(rd, doc, "applied", JSON_OBJECT), *notes = need(rd, doc, "notes", JSON_ARRAY);
	const json_t *all = need(rd, doc, "all", JSON_OBJECT), *v;
	size_t i;
	int r;

	if (!argv || !params || !labels || !sys || !applied || !notes || !all)
		return -EINVAL;
	if ((r = get_u64(rd, doc, "start_realtime_ns", &res->start_realtime_ns)) < 0 ||
	    (r = get_u64(rd, doc, "elapsed_ns", &res->elapsed_ns)) < 0 ||
	    (r = get_bool(rd, doc, "interrupted", &res->interrupted)) < 0 ||
	    (r = get_str(rd, doc, "stop_reason", res->stop_reason, sizeof(res->stop_reason))) < 0 ||
	    (json_object_get(doc, "partial") && (r = get_bool(rd, doc, "partial", &res->partial)) < 0) ||
	    (r = get_u64(rd, doc, "threshold_ns", &res->threshold_ns)) < 0 ||
	    (r = get_u64(rd, doc, "warmup_windows", &res->warmup)) < 0 || (r = read_smi_source(rd, doc, res)) < 0 ||
	    (r = read_labels(rd, labels, &res->labels)) < 0 || (r = read_system(rd, sys, &res->sys)) < 0)
		return r;
	size_t at = enter(rd, "applied", 0);
	if ((r = get_bool(rd, applied, "rt_policy", &res->applied.rt_policy)) < 0 ||
	    (r = get_bool(rd, applied, "memlock", &res->applied.memlock)) < 0 ||
	    (r = get_bool(rd, applied, "pm_qos", &res->applied.pm_qos)) < 0 ||
	    (r = get_bool(rd, applied, "timer_slack", &res->applied.timer_slack)) < 0 ||
	    (r = get_bool(rd, applied, "main_thread_off_measured_cpus", &res->applied.main_moved)) < 0 ||
	    (json_object_get(applied, "idle_states") &&
	     (r = get_str(rd, applied, "idle_states", res->applied.idle_states, sizeof(res->applied.idle_states))) < 0)) {
		leave(rd, at);
		return r;
	}
	leave(rd, at);
	json_array_foreach(notes, i, v) {
		if (!json_is_string(v))
			return bad(rd, "notes[%zu] is not a string", i);
		result_note(res, "%s", json_string_value(v));
	}
	char **args = calloc(json_array_size(argv) + 1u, sizeof(*args));
	if (!args)
		return -ENOMEM;
	json_array_foreach(argv, i, v) {
		if (!json_is_string(v)) {
			free(args);
			return bad(rd, "command_line[%zu] is not a string", i);
		}
		args[i] = (char *)json_string_value(v);
	}
	r = result_set_argv(res, (int)json_array_size(argv), args);
	free(args);
	if (r < 0)
		return r;
	res->params = json_deep_copy(params);
	if (!res->params)
		return -ENOMEM;
	/* Optional, and read as they are: shown and exported, never computed on. */
	const json_t *fp = json_object_get(doc, "fingerprint"), *fi = json_object_get(doc, "findings");
	if (fp && !json_is_object(fp))
		return bad(rd, "fingerprint is not an object");
	if (fi && !json_is_array(fi))
		return bad(rd, "findings is not an array");
	if ((fp && !(res->fingerprint = json_deep_copy(fp))) || (fi && !(res->findings = json_deep_copy(fi))))
		return -ENOMEM;
	if ((r = keep_object(rd, doc, "trace", &res->trace)) < 0 || (r = keep_object(rd, doc, "host", &res->host)) < 0 ||
	    (r = keep_object(rd, doc, "on_threshold", &res->on_threshold)) < 0 ||
	    (r = keep_object(rd, doc, "until", &res->until)) < 0 || (r = keep_object(rd, doc, "hwlat", &res->hwlat)) < 0)
		return r;

	if ((r = read_machine(rd, doc, res)) < 0)
		return r;
	/* The throughput and the CPU per operation are derived again when the
	 * result is finalized (result_op_figures): that they are here says only
	 * that the values are operations. */
	const json_t *tp = json_object_get(doc, "throughput"), *cpo = json_object_get(doc, "cpu_per_op_ns");
	if (tp && !json_is_object(tp))
		return bad(rd, "throughput is not an object");
	if (cpo && !json_is_object(cpo))
		return bad(rd, "cpu_per_op_ns is not an object");
	res->ops.per_op = tp != NULL;
	/* Spikes are counted since latscope kept long_run: an older file has none to give. */
	res->long_run = json_object_get(all, "long_run") != NULL;
	json_array_foreach(cpus, i, v) {
		int cpu = (int)json_integer_value(json_object_get(v, "cpu"));
		/* result_init made one row per CPU, in CPU order. */
		struct cpu_result *cr = bsearch(&cpu, res->cpus, res->ncpus, sizeof(*res->cpus), by_cpu);
		at = enter(rd, "cpus", 0);
		enter(rd, NULL, i);
		r = cr ? read_cpu(rd, res, v, cr) : -EINVAL;
		leave(rd, at);
		if (r < 0)
			return r;
	}
	return 0;
}

static int disagree(struct reader *rd, const char *what, uint64_t file, uint64_t sum)
{
	return bad(rd, "%s %llu is not what the CPUs add up to (%llu)", what, (unsigned long long)file,
		   (unsigned long long)sum);
}

/* A real of the file's all block against latscope's sum of the CPUs: theirs was added up
 * before rounding to RESULT_REAL_DIGITS, ours after, so a lie is what passes the rounding. */
static bool close_enough(double file, double sum, double scale)
{
	return fabs(file - sum) <= 1e-6 * (fabs(sum) + scale) + 1e-3;
}

/* The metric m of the all block o, against res->all. */
static int check_all_metric(struct reader *rd, const json_t *mo, const struct result *res, unsigned m)
{
	const struct cpu_result *all = &res->all;
	const struct stats *sum = &all->st[m];
	struct sparse_hist listed = { 0 };
	struct stats st;
	uint64_t above, above_ns = all->above_ns[m];
	int r;

	if ((r = read_stats(rd, mo, &st)) < 0 || (r = get_u64(rd, mo, "above", &above)) < 0 ||
	    (json_object_get(mo, "above_total_ns") && (r = get_u64(rd, mo, "above_total_ns", &above_ns)) < 0))
		return r;
	if (st.n != sum->n)
		return disagree(rd, "count", st.n, sum->n);
	if (stats_min(&st) != stats_min(sum))
		return disagree(rd, "min_ns", stats_min(&st), stats_min(sum));
	if (st.max != sum->max)
		return disagree(rd, "max_ns", st.max, sum->max);
	if (above != all->above[m])
		return disagree(rd, "above", above, all->above[m]);
	if (above_ns != all->above_ns[m])
		return disagree(rd, "above_total_ns", above_ns, all->above_ns[m]);
	if (!close_enough(st.mean, sum->mean, 0.0))
		return bad(rd, "mean_ns %.12g is not what the CPUs add up to (%.12g)", st.mean, sum->mean);
	if (!close_enough(stats_stddev(&st), stats_stddev(sum), sum->mean))
		return bad(rd, "stddev_ns %.12g is not what the CPUs add up to (%.12g)", stats_stddev(&st),
			   stats_stddev(sum));
	const json_t *h = need(rd, mo, "histogram", JSON_OBJECT);
	if (!h)
		return -EINVAL;
	size_t at = enter(rd, "histogram", 0);
	r = read_buckets(rd, h, st.n, NULL, &listed);
	unsigned i = hist_next(&all->hist[m], 0);
	for (uint32_t k = 0; r == 0 && (k < listed.n || i < HIST_BUCKETS); k++, i = hist_next(&all->hist[m], i + 1u))
		if (k >= listed.n || i >= HIST_BUCKETS || listed.b[k].index != i ||
		    listed.b[k].count != all->hist[m].counts[i])
			r = bad(rd, "the buckets are not the sum of the CPUs'");
	leave(rd, at);
	if (r == 0)
		r = check_figures(rd, mo, sum, &listed, summary_pcts, ARRAY_SIZE(summary_pcts),
				  true);
	sparse_free(&listed);
	return r;
}

/*
 * The file's "all" block must be the sum of its CPUs, which latscope has added
 * up again (result_finalize): counts, extremes, above, missed and histogram
 * exactly, mean and stddev within their rounding, percentiles as the sum's
 * histogram gives them.  Its windows and largest values are rebuilt, unread.
 */
static int check_all(struct reader *rd, const json_t *o, const struct result *res)
{
	const json_t *metrics = need(rd, o, "metrics", JSON_OBJECT);
	uint64_t missed;
	int r;

	if (!metrics)
		return -EINVAL;
	if ((r = get_u64(rd, o, "missed", &missed)) < 0)
		return r;
	if (missed != res->all.missed)
		return disagree(rd, "missed", missed, res->all.missed);
	const json_t *lr = json_object_get(o, "long_run");
	if (res->long_run) {
		uint64_t spikes;
		size_t at = enter(rd, "long_run", 0);
		r = json_is_object(lr) ? get_u64(rd, lr, "spikes", &spikes) : bad(rd, "is not an object");
		if (r == 0 && spikes != res->all.spikes)
			r = disagree(rd, "spikes", spikes, res->all.spikes);
		leave(rd, at);
		if (r < 0)
			return r;
	}
	size_t at = enter(rd, "metrics", 0);
	for (unsigned m = 0; m < res->nmetrics && r == 0; m++) {
		const json_t *mo = need(rd, metrics, res->metric_names[m], JSON_OBJECT);
		size_t at2 = enter(rd, res->metric_names[m], 0);
		r = mo ? check_all_metric(rd, mo, res, m) : -EINVAL;
		leave(rd, at2);
	}
	leave(rd, at);
	return r;
}

/* The document read whole; text_len is the size of the text it came from (for the budgets). */
static int read_doc(const json_t *doc, size_t text_len, struct result *ret, struct lat_error *err)
{
	struct reader rd = { .err = err, .dense_max = dense_budget(text_len) };
	const json_t *schema, *version, *cpus;
	int r;

	err_set(err, 0, "%s", "");
	memset(ret, 0, sizeof(*ret));
	if (!json_is_object(doc))
		return bad(&rd, "not a JSON object");
	schema = json_object_get(doc, "schema");
	if (!json_is_string(schema) || strcmp(json_string_value(schema), RESULT_SCHEMA) != 0)
		return bad(&rd, "%s", NOT_A_RESULT);
	version = json_object_get(doc, "schema_version");
	if (!json_is_integer(version) || json_integer_value(version) < 1)
		return bad(&rd, "schema_version is missing or not a positive integer");
	if (json_integer_value(version) > RESULT_SCHEMA_VERSION) {
		return err_set(err, -EPROTO, "schema version %lld is newer than this latscope reads (%d)",
			 (long long)json_integer_value(version), RESULT_SCHEMA_VERSION);
	}
	r = read_head(&rd, doc, ret, &cpus);
	if (r == 0)
		r = read_rest(&rd, doc, ret, cpus);
	if (r == 0) {
		/* The "all" row adds the CPUs up: it must fit where the CPUs each did. */
		struct lat_error why;
		r = result_finalize_why(ret, &why);
		if (r == -EOVERFLOW)
			r = bad(&rd, "the CPUs cannot be added up: %.400s", why.msg);
	}
	if (r == 0) {
		size_t at = enter(&rd, "all", 0);
		r = check_all(&rd, json_object_get(doc, "all"), ret);
		leave(&rd, at);
	}
	if (r == -ENOMEM)
		err_set(err, 0, "out of memory");
	if (r < 0)
		result_free(ret);
	return r;
}

/*
 * Reading costs memory in proportion to the text, never more:
 *
 * - RESULT_TEXT_MAX bounds the text, checked before anything is read or
 *   parsed (see json.h);
 * - a text that is not an object naming "schema": "latscope.result" at its top
 *   level is refused by one pass over its bytes, before any tree is built
 *   (jansson's tree of a JSON text costs up to 75 times the text);
 * - jansson's allocations are counted while it parses, and the parse is
 *   refused once they pass TREE_PER_BYTE times the text (plus TREE_FLOOR): the
 *   tree of a result latscope wrote costs 4 times its text as written
 *   (indented) and 10 to 13 times compacted, so 16 refuses only what no result
 *   needs;
 * - dense histograms are budgeted too (dense_budget).
 */
#define TREE_PER_BYTE 16u
#define TREE_FLOOR ((size_t)1 << 20)

struct parse_budget {
	size_t used, limit;
	bool exceeded;
};

static _Thread_local struct parse_budget *budget;

static void *counted_malloc(size_t size)
{
	struct parse_budget *b = budget;
	if (b) {
		size_t cost = size + 16u;       /* and the allocator's own header */
		if (cost > b->limit - b->used) {
			b->exceeded = true;
			return NULL;
		}
		b->used += cost;
	}
	return malloc(size);
}

static void counted_free(void *p)
{
	free(p);
}

/* Before main, so that every jansson allocation, whoever makes it, is a plain malloc; only
 * a parse here sets a budget, on its own thread. */
__attribute__((constructor)) static void count_jansson(void)
{
	json_set_alloc_funcs(counted_malloc, counted_free);
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* Past the string that starts at t[i] (a quote): just after its closing quote, or len. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1u;
	}
	return len;
}

/* Past the value at t[i], to the ',' or '}' after it: brackets counted, strings skipped,
 * nothing checked (jansson does that). */
static size_t skip_value(const char *t, size_t len, size_t i)
{
	size_t depth = 0;
	while (i < len) {
		char c = t[i];
		if (c == '"') {
			i = skip_string(t, len, i);
			continue;
		}
		if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (depth == 0)
				return i;
			depth--;
		} else if (c == ',' && depth == 0)
			return i;
		i++;
	}
	return len;
}

enum shape { SHAPE_RESULT, SHAPE_NOT_OBJECT, SHAPE_NO_SCHEMA, SHAPE_UNKNOWN };

/*
 * What the text is, by one pass over its bytes: an object whose member
 * "schema" is "latscope.result", something else, or malformed (for jansson to
 * say where).  The bytes are compared as they are: a key or value written with
 * escapes is not recognised, as latscope never writes them so.
 */
static enum shape text_shape(const char *t, size_t len)
{
	static const char key[] = "\"schema\"", value[] = "\"" RESULT_SCHEMA "\"";
	size_t i = skip_ws(t, len, 0);

	if (i >= len)
		return SHAPE_UNKNOWN;
	if (t[i] != '{')
		return t[i] == '[' || t[i] == '"' || t[i] == '-' || (t[i] >= '0' && t[i] <= '9') || t[i] == 't' ||
		       t[i] == 'f' || t[i] == 'n' ? SHAPE_NOT_OBJECT : SHAPE_UNKNOWN;
	for (i++;;) {
		i = skip_ws(t, len, i);
		if (i < len && t[i] == '}')
			return SHAPE_NO_SCHEMA;
		if (i >= len || t[i] != '"')
			return SHAPE_UNKNOWN;
		size_t k = i;
		i = skip_string(t, len, i);
		bool schema = i - k == sizeof(key) - 1u && memcmp(t + k, key, sizeof(key) - 1u) == 0;
		i = skip_ws(t, len, i);
		if (i >= len || t[i] != ':')
			return SHAPE_UNKNOWN;
		i = skip_ws(t, len, i + 1u);
		if (schema) {
			size_t v = i;
			if (i < len && t[i] == '"')
				i = skip_string(t, len, i);
			return i - v == sizeof(value) - 1u && memcmp(t + v, value, sizeof(value) - 1u) == 0
				       ? SHAPE_RESULT
				       : SHAPE_NO_SCHEMA;
		}
		i = skip_ws(t, len, skip_value(t, len, i));
		if (i >= len)
			return SHAPE_UNKNOWN;
		if (t[i] == '}')
			return SHAPE_NO_SCHEMA;
		if (t[i] != ',')
			return SHAPE_UNKNOWN;
		i++;
	}
}

int result_text_too_large(size_t len, struct lat_error *err)
{
	if (len <= RESULT_TEXT_MAX)
		return 0;
	return err_set(err, -EFBIG, "larger than %u MiB, the most a result may be", RESULT_TEXT_MAX >> 20);
}

json_t *result_json_parse(const char *text, size_t len, struct lat_error *err)
{
	struct parse_budget b = { .limit = TREE_FLOOR + TREE_PER_BYTE * len };
	json_error_t jerr;

	err_set(err, 0, "%s", "");
	if (result_text_too_large(len, err) < 0)
		return NULL;
	switch (text_shape(text, len)) {
	case SHAPE_NOT_OBJECT:
		err_set(err, 0, "not a JSON object");
		return NULL;
	case SHAPE_NO_SCHEMA:
		err_set(err, 0, "%s", NOT_A_RESULT);
		return NULL;
	case SHAPE_RESULT:
	case SHAPE_UNKNOWN:
		break;
	}
	budget = &b;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	budget = NULL;
	if (!doc && b.exceeded)
		err_set(err, 0, "its JSON needs more memory to read than a text of its size may take (%u times "
			 "its size)", TREE_PER_BYTE);
	else if (!doc)
		err_set(err, 0, "not valid JSON (line %d, column %d: %s)", jerr.line, jerr.column, jerr.text);
	return doc;
}

int result_from_text(const char *text, size_t len, struct result *ret, struct lat_error *err)
{
	json_t *doc = result_json_parse(text, len, err);
	if (!doc) {
		memset(ret, 0, sizeof(*ret));
		return -EINVAL;
	}
	int r = read_doc(doc, len, ret, err);
	json_decref(doc);
	return r;
}

char *result_store_text(const struct result *res)
{
	char *out = NULL;
	json_t *doc = result_to_json(res);
	if (doc && (!res->tool || json_object_set(doc, "tool", res->tool) == 0))
		out = result_json_dump(doc);
	json_decref(doc);
	return out;
}
