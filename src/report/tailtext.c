#include "report/tailtext.h"

#include <math.h>

#include "core/units.h"
#include "report/tprint.h"
#include "result/tailrun.h"

static void dur(double ns, char *buf, size_t size)
{
	if (!isfinite(ns) || ns < 0)
		snprintf(buf, size, "-");
	else
		fmt_duration3((uint64_t)llround(ns), buf, size);
}

/* "13.2ms (7.85ms..23.4ms)" */
static void level(const struct tail_interval *t, char buf[128], size_t size)
{
	char e[32], lo[32], hi[32];
	dur(t->est, e, sizeof(e));
	dur(t->lo, lo, sizeof(lo));
	dur(t->hi, hi, sizeof(hi));
	snprintf(buf, size, "%s (%s..%s)", e, lo, hi);
}

static void one_line(FILE *out, const struct result *res, const struct cpu_result *cr,
		     const char *name)
{
	struct tail_fit f;
	struct lat_error err;
	char h[128], d[128];

	if (cpu_result_tail(res, cr, &f, &err) < 0) {
		tprintf(out, "  %-5s %s\n", name, err.msg);
		return;
	}
	if (f.status != TAIL_OK) {
		tprintf(out, "  %-5s %s\n", name, f.why);
		return;
	}
	level(&f.level_ns[TAIL_HOUR], h, sizeof(h));
	level(&f.level_ns[TAIL_HOUR + 1], d, sizeof(d));
	tprintf(out, "  %-5s once an hour %s, once a day %s; %s\n", name, h, d,
		f.reliable ? "reliable" : f.why);
}

void text_tail(FILE *out, const struct result *res)
{
	char name[16];

	tprintf(out, "tail (latency exceeded once per period of this workload, 95%% interval; "
		     "doc/tail-method.md):\n");
	for (size_t i = 0; i < res->ncpus; i++) {
		snprintf(name, sizeof(name), "cpu%d", res->cpus[i].cpu);
		one_line(out, res, &res->cpus[i], name);
	}
	if (res->ncpus > 1)
		one_line(out, res, &res->all, "all");
}

static void full(FILE *out, const struct result *res, const struct cpu_result *cr, const char *name)
{
	struct tail_fit f;
	struct lat_error err;
	char buf[128], t[32];

	tprintf(out, "%s:\n", name);
	if (cpu_result_tail(res, cr, &f, &err) < 0) {
		tprintf(out, "  %s\n", err.msg);
		return;
	}
	tprintf(out, "  %s %llu samples; %s\n",
		f.status == TAIL_OK ? "fitted from" : "not fitted, of",
		(unsigned long long)f.samples, f.reliable ? "reliable" : f.why);
	if (f.status != TAIL_OK)
		return;
	tprintf(out, "  %s\n", f.choice);
	tprintf(out, "  threshold stability (the shape at each candidate; * stable):\n");
	for (unsigned c = 0; c < f.ncand; c++) {
		const struct tail_candidate *k = &f.cand[c];
		dur((double)k->threshold_ns, t, sizeof(t));
		tprintf(out, "    %s q%-6.4g %10s %7llu above  shape %+.3f (%+.3f..%+.3f)%s\n",
			c == f.chosen ? ">" : " ", k->quantile, t, (unsigned long long)k->n_exceed,
			k->xi.est, k->xi.lo, k->xi.hi, k->stable ? " *" : "");
	}
	tprintf(out,
		"  shape %+.3f (%+.3f..%+.3f), scale %s, %.3g exceedances a second; bucket "
		"resolution %s\n",
		f.xi.est, f.xi.lo, f.xi.hi, (dur(f.sigma_ns.est, t, sizeof(t)), t), f.exceed_per_s,
		(dur(f.bucket_error_ns, buf, sizeof(buf)), buf));
	for (unsigned p = 0; p < TAIL_PERIODS; p++) {
		level(&f.level_ns[p], buf, sizeof(buf));
		tprintf(out, "  once per %-5s %s%s\n", tail_period_name(p), buf,
			f.level_observed[p] ? " (below the threshold: read from the histogram)"
					    : "");
	}
	tprintf(out,
		"  tests: window maxima independent p=%.3g, first and second half alike p=%.3g, "
		"fit p=%.3g\n",
		f.p_independent, f.p_stationary, f.p_fit);
}

void text_tail_full(FILE *out, const struct result *res)
{
	char name[16];

	for (size_t i = 0; i < res->ncpus; i++) {
		snprintf(name, sizeof(name), "cpu%d", res->cpus[i].cpu);
		full(out, res, &res->cpus[i], name);
	}
	if (res->ncpus > 1)
		full(out, res, &res->all, "all");
}
