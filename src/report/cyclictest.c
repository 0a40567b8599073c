#include "report/cyclictest.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/nstime.h"
#include "report/rtjson.h"

/* cyclictest casts its mean to long: truncation, not rounding. */
static uint64_t avg_units(const struct lin_hist *h)
{
	return (uint64_t)lin_hist_mean(h);
}

/* The SMIs of the windows whose context is in (the run's source is checked before it starts). */
static uint64_t smis_so_far(const struct cpu_result *cr)
{
	uint64_t n = 0;
	for (size_t i = 0; i < cr->nwin; i++)
		n += cr->win[i].ctx.smis;
	return n;
}

void cyc_print_stat(FILE *out, const struct cyc_view *v, unsigned thread, const struct cpu_result *cr)
{
	const struct lin_hist *h = cr->lin;
	int w = v->nsecs ? 8 : 5;       /* cyclictest widens Act and Avg for nanoseconds */

	if (!h)
		return;
	fprintf(out, "T:%2u (%5d) P:%2u I:%llu C:%7llu Min:%7llu Act:%*llu Avg:%*llu Max:%8llu", thread, cr->tid,
		v->priority, (unsigned long long)(v->interval_us + thread * v->distance_us),
		(unsigned long long)lin_load(&h->cycles),
		(unsigned long long)lin_load(&h->min), w, (unsigned long long)lin_load(&h->last), w,
		(unsigned long long)avg_units(h), (unsigned long long)lin_load(&h->max));
	if (v->smi)
		fprintf(out, " SMI:%8llu", (unsigned long long)smis_so_far(cr));
	fputc('\n', out);
}

void cyc_print_stats(FILE *out, const struct cyc_view *v, const struct result *res)
{
	for (size_t i = 0; i < res->ncpus; i++)
		cyc_print_stat(out, v, (unsigned)i, &res->cpus[i]);
}

void cyc_print_live(FILE *out, const struct cyc_view *v, const struct result *res, const char *loadavg, bool again)
{
	if (again)
		fprintf(out, "\033[%zuA", res->ncpus + 2u);
	fprintf(out, "policy: %s: loadavg: %s          \n\n", v->policy, loadavg);
	cyc_print_stats(out, v, res);
}

void cyc_print_break(FILE *out, const struct cyc_view *v, const struct result *res, int broke_cpu,
		     uint64_t broke_ns)
{
	int tid = 0;

	fprintf(out, "# Thread Ids:");
	for (size_t i = 0; i < res->ncpus; i++) {
		fprintf(out, " %05d", res->cpus[i].tid);
		if (res->cpus[i].cpu == broke_cpu)
			tid = res->cpus[i].tid;
	}
	fputc('\n', out);
	if (broke_cpu < 0)
		return;
	fprintf(out, "# Break thread: %d\n", tid);
	fprintf(out, "# Break value: %llu\n", (unsigned long long)(v->nsecs ? broke_ns : broke_ns / NS_PER_US));
}

/* One summary line: a value per thread, then (with -H) the one of all. */
static void summary_line(FILE *out, const char *name, const uint64_t *vals, size_t n, int width,
			 bool all, uint64_t allval)
{
	fprintf(out, "# %s:", name);
	for (size_t i = 0; i < n; i++)
		fprintf(out, " %0*llu", width, (unsigned long long)vals[i]);
	if (all)
		fprintf(out, " %0*llu", width, (unsigned long long)allval);
	fputc('\n', out);
}

int cyc_print_hist(FILE *out, const struct cyc_view *v, const struct result *res)
{
	const size_t n = res->ncpus;
	const bool all = v->histofall && n > 1;
	uint32_t nbins;

	if (n == 0 || !res->cpus[0].lin || res->cpus[0].lin->nbins == 0)
		return -EINVAL;
	nbins = res->cpus[0].lin->nbins;
	for (size_t j = 0; j < n; j++)
		if (!res->cpus[j].lin || res->cpus[j].lin->nbins != nbins)
			return -EINVAL;
	uint64_t *tot = calloc(2u * n, sizeof(*tot));
	if (!tot)
		return -ENOMEM;
	uint64_t *col = tot + n;
	fprintf(out, "# Histogram\n");
	for (uint32_t i = 0; i < nbins; i++) {
		uint64_t sum = 0;
		fprintf(out, "%06u ", i);
		for (size_t j = 0; j < n; j++) {
			uint64_t c = res->cpus[j].lin->bins[i];
			fprintf(out, "%06llu%s", (unsigned long long)c, j + 1 < n ? "\t" : "");
			tot[j] += c;
			sum += c;
		}
		if (all)
			fprintf(out, "\t%06llu", (unsigned long long)sum);
		fputc('\n', out);
	}
	uint64_t alltot = 0, maxmax = 0, allover = 0;
	for (size_t j = 0; j < n; j++)
		alltot += tot[j];
	summary_line(out, "Total", tot, n, 9, all, alltot);
	for (size_t j = 0; j < n; j++)
		col[j] = lin_load(&res->cpus[j].lin->min);
	summary_line(out, "Min Latencies", col, n, 5, false, 0);
	for (size_t j = 0; j < n; j++)
		col[j] = avg_units(res->cpus[j].lin);
	summary_line(out, "Avg Latencies", col, n, 5, false, 0);
	for (size_t j = 0; j < n; j++) {
		col[j] = lin_load(&res->cpus[j].lin->max);
		maxmax = col[j] > maxmax ? col[j] : maxmax;
	}
	summary_line(out, "Max Latencies", col, n, 5, all, maxmax);
	for (size_t j = 0; j < n; j++) {
		col[j] = res->cpus[j].lin->overflow;
		allover += col[j];
	}
	summary_line(out, "Histogram Overflows", col, n, 5, all, allover);
	fprintf(out, "# Histogram Overflow at cycle number:\n");
	for (size_t j = 0; j < n; j++) {
		const struct lin_hist *h = res->cpus[j].lin;
		fprintf(out, "# Thread %zu:", j);
		for (uint64_t k = 0; k < h->noutliers; k++)
			fprintf(out, " %05llu", (unsigned long long)h->outliers[k]);
		if (h->noutliers < h->overflow)
			fprintf(out, " # %05llu others", (unsigned long long)(h->overflow - h->noutliers));
		fputc('\n', out);
	}
	if (v->smi) {
		for (size_t j = 0; j < n; j++)
			col[j] = smis_so_far(&res->cpus[j]);
		summary_line(out, "SMIs", col, n, 5, false, 0);
	}
	fputc('\n', out);
	free(tot);
	return ferror(out) ? -EIO : 0;
}

struct cyc_json_ctx {
	const struct result *res;
	const struct cyc_run *run;
};

static json_t *thread_json(const struct cpu_result *cr, int node)
{
	const struct lin_hist *h = cr->lin;
	json_t *hist = json_object();
	char key[24];

	for (uint32_t i = 0; hist && i < h->nbins; i++) {
		if (h->bins[i] == 0)
			continue;
		snprintf(key, sizeof(key), "%u", i);
		json_object_set_new(hist, key, json_integer((json_int_t)h->bins[i]));
	}
	/* cyclictest writes its mean with two decimals */
	double avg = round(lin_hist_mean(h) * 100.0) / 100.0;
	return json_pack("{s:o, s:I, s:I, s:I, s:f, s:i, s:i}", "histogram", hist,
			 "cycles", (json_int_t)lin_load(&h->cycles), "min", (json_int_t)lin_load(&h->min),
			 "max", (json_int_t)lin_load(&h->max), "avg", avg, "cpu", cr->cpu, "node", node);
}

/* One thread of the --json document: its CPU's histogram and figures. */
static json_t *cyc_thread(const void *ctx, size_t i)
{
	const struct result *res = ((const struct cyc_json_ctx *)ctx)->res;
	const struct cyc_run *run = ((const struct cyc_json_ctx *)ctx)->run;
	return res->cpus[i].lin ? thread_json(&res->cpus[i], run->node ? run->node[i] : 0) : NULL;
}

json_t *cyc_json(const struct result *res, const struct cyc_run *run)
{
	const struct cyc_json_ctx ctx = { res, run };
	json_t *doc = rtjson_head(run->cmdline, run->version, run->start_realtime_ns, run->end_realtime_ns,
				  run->return_code, res, (int)res->ncpus);
	return rtjson_with_threads(doc, true, res->ncpus, cyc_thread, &ctx, run->stored_id);
}
