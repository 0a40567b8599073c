#include "report/oslat.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/nstime.h"
#include "report/rtjson.h"

void oslat_print_header(FILE *out, const struct oslat_header *h)
{
	fprintf(out, "Total runtime: \t\t%" PRIu64 " seconds\n", h->runtime_s);
	if (h->rtprio)
		fprintf(out, "Thread priority: \tSCHED_FIFO:%u\n", h->rtprio);
	else
		fprintf(out, "Thread priority: \tdefault\n");
	fprintf(out, "CPU list: \t\t%s\n", h->cpu_list);
	fprintf(out, "CPU for main thread: \t%u\n", h->main_cpu);
	fprintf(out, "Workload: \t\t%s\n", h->workload);
	fprintf(out, "Workload mem: \t\t%" PRIu64 " (KiB)\n", h->workload_mem_kib);
	fprintf(out, "Preheat cores: \t\t%u\n\n", h->preheat_cores);
}

int oslat_core_figures(const struct cpu_result *cr, const struct oslat_view *v, struct oslat_core *ret)
{
	const struct lin_hist *h = cr->lin;
	const uint64_t n = v->bucket_size, b = v->bias_us;

	if (!h || h->unit_ns != NS_PER_US || n == 0 || n > OSLAT_BUCKETS_MAX || h->nbins < n + b)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->cpu = cr->cpu;
	ret->count = lin_load(&h->cycles);
	/* oslat's us is the whole microseconds plus one; its minimum starts at the largest value */
	ret->min_us = ret->count ? lin_load(&h->min) + 1u : UINT64_MAX;
	ret->max_us = ret->count ? lin_load(&h->max) + 1u : 0;

	/* A gap of u whole us has index u - bias, at least 0: bucket index, the last also holding the indexes
	 * above (the bins end at u == n + bias, the rest are the overflows). */
	uint64_t below_sum = 0;         /* of the whole us in the bins */
	for (uint64_t u = 0; u < n + b; u++) {
		uint64_t index = u > b ? u - b : 0;
		ret->buckets[index < n ? index : n - 1u] += h->bins[u];
		below_sum += u * h->bins[u];
	}
	ret->buckets[n - 1u] += h->overflow;
	/* oslat's mean: each bucket at its label, plus each overflow's excess over the last one,
	 * u - bias - n (so an overflow counts as u, one less than its us) */
	double sum = 0.0;
	for (uint64_t j = 0; j < n; j++)
		sum += (double)ret->buckets[j] * (double)(b + j + 1u);
	uint64_t over_units = lin_load(&h->sum) - below_sum;    /* the overflows' whole us */
	sum += (double)over_units - (double)h->overflow * (double)(n + b);
	ret->average_us = ret->count ? sum / (double)ret->count : (double)NAN;
	ret->duration_s = (double)cr->st[0].n * cr->st[0].mean / 1e9;
	return 0;
}

/* A row as oslat's putfield: the label right-aligned to 12, a colon and a tab, a field per core. */
#define ROW(out, label, n, fmt, expr, end)                      \
	do {                                                    \
		fprintf(out, "%12s:\t", label);                 \
		for (size_t i_ = 0; i_ < (n); i_++)             \
			fprintf(out, " " fmt, expr(i_));        \
		fprintf(out, "%s\n", end);                      \
	} while (0)

int oslat_print_table(FILE *out, const struct oslat_view *v, const struct oslat_core *c, size_t n)
{
	char label[64];
	bool skipped = false;

#define CORE(i) c[i].cpu
#define MHZ(i) v->counter_mhz
#define MIN(i) c[i].min_us
#define AVG(i) c[i].average_us
#define MAX(i) c[i].max_us
#define SPAN(i) (c[i].max_us - c[i].min_us)
#define DUR(i) c[i].duration_s
	ROW(out, "Core", n, "%d", CORE, "");
	ROW(out, "Counter Freq", n, "%u", MHZ, " (Mhz)");
	for (uint32_t j = 0; j < v->bucket_size; j++) {
		bool last = j + 1u == v->bucket_size;
		if (v->zero_omit && !last) {
			size_t k = 0;
			while (k < n && c[k].buckets[j] == 0)
				k++;
			if (k == n) {
				skipped = true;
				continue;
			}
		}
		if (skipped)
			fprintf(out, "    ...\n");
		skipped = false;
		snprintf(label, sizeof(label), "%03" PRIu64 " (us)", v->bias_us + j + 1u);
#define BUCKET(i) c[i].buckets[j]
		ROW(out, label, n, "%" PRIu64, BUCKET, last ? " (including overflows)" : "");
#undef BUCKET
	}
	ROW(out, "Minimum", n, "%" PRIu64, MIN, " (us)");
	ROW(out, "Average", n, "%.3lf", AVG, " (us)");
	ROW(out, "Maximum", n, "%" PRIu64, MAX, " (us)");
	ROW(out, "Max-Min", n, "%" PRIu64, SPAN, " (us)");
	ROW(out, "Duration", n, "%.3f", DUR, " (sec)");
#undef CORE
#undef MHZ
#undef MIN
#undef AVG
#undef MAX
#undef SPAN
#undef DUR
	fprintf(out, "\n");
	return ferror(out) ? -EIO : 0;
}

/* A real rounded as oslat's printf writes it (digits after the point). */
static json_t *rounded(double v, double digits)
{
	const double scale = pow(10.0, digits);
	return isfinite(v) ? json_real(round(v * scale) / scale) : json_null();
}

static json_t *core_json(const struct oslat_view *v, const struct oslat_core *c)
{
	json_t *hist = json_object();
	char key[32];

	for (uint32_t j = 0; hist && j < v->bucket_size; j++) {
		if (!c->buckets[j])
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, v->bias_us + j + 1u);
		if (json_object_set_new(hist, key, json_integer((json_int_t)c->buckets[j])) < 0) {
			json_decref(hist);
			hist = NULL;
		}
	}
	if (!hist)
		return NULL;
	/* min and max as oslat's unsigned 64-bit figures; json_int_t is signed */
	return json_pack("{s:i, s:i, s:I, s:o, s:I, s:o, s:o}", "cpu", c->cpu, "freq", (int)v->counter_mhz,
			 "min", (json_int_t)(c->min_us > INT64_MAX ? -1 : (int64_t)c->min_us), "avg",
			 rounded(c->average_us, 6), "max", (json_int_t)c->max_us, "duration", rounded(c->duration_s, 3),
			 "histogram", hist);
}

struct oslat_json_ctx {
	const struct oslat_view *v;
	const struct oslat_core *cores;
};

static json_t *oslat_thread(const void *ctx, size_t i)
{
	const struct oslat_json_ctx *c = ctx;
	return core_json(c->v, &c->cores[i]);
}

json_t *oslat_json(const struct result *res, const struct oslat_view *v, const struct oslat_core *cores, size_t n,
		   const struct oslat_run *run)
{
	const struct oslat_json_ctx ctx = { v, cores };
	json_t *doc = rtjson_head(run->cmdline, run->version, run->start_realtime_ns, run->end_realtime_ns,
				  run->return_code, res, (int)n);
	return rtjson_with_threads(doc, false, n, oslat_thread, &ctx, run->stored_id);
}
