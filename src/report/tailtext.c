#include "report/tailtext.h"

#include <math.h>

#include "core/units.h"
#include "report/tprint.h"
#include "result/tail_gpd.h"
#include "result/tailrun.h"

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
	tail_level_text(&f.level_ns[TAIL_HOUR], h, sizeof(h));
	tail_level_text(&f.level_ns[TAIL_HOUR + 1], d, sizeof(d));
	tprintf(out, "  %-5s once an hour %s, once a day %s; %s", name, h, d,
		f.reliable ? "reliable" : f.why);
	if (f.reliable && f.level_beyond[TAIL_HOUR + 1]) {
		fmt_duration3_ns(f.reach_s * 1e9, h, sizeof(h));
		tprintf(out, " to once per %s (%gx the run); longer periods extrapolated", h,
			TAIL_REACH);
	}
	tprintf(out, "\n");
}

/* What a level is beside its interval: read from the histogram, carried past
 * the fit's reach, raised to a CPU's (all). */
static void level_note(const struct tail_fit *f, unsigned p, char *buf, size_t size)
{
	char r[32];

	buf[0] = '\0';
	if (f->level_observed[p]) {
		snprintf(buf, size, " (below the threshold: read from the histogram)");
		return;
	}
	int n = 0;
	if (f->level_beyond[p]) {
		fmt_duration3_ns(f->reach_s * 1e9, r, sizeof(r));
		n = snprintf(buf, size, " (extrapolated past the fit's reach, once per %s)", r);
	}
	if (f->level_cpu[p] >= 0 && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (raised to cpu%d's)", f->level_cpu[p]);
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

/* Fitted against measured quantiles of the exceedances: a fit that holds
 * keeps each pair close, and where they part the tail bends away from it. */
static void qq(FILE *out, const struct cpu_result *cr, const struct tail_fit *f)
{
	static const double probs[] = { 0.5, 0.75, 0.9, 0.95, 0.99, 0.999 };
	char m[32], e[32];

	tprintf(out, "  quantiles of the exceedances, fitted against measured:");
	for (size_t i = 0; i < sizeof(probs) / sizeof(probs[0]); i++) {
		/* fewer exceedances than the quantile needs: nothing measured to set against it */
		if ((1.0 - probs[i]) * (double)f->n_exceed < 1.0)
			break;
		double rank = (double)(f->samples - f->n_exceed) + probs[i] * (double)f->n_exceed;
		uint64_t measured = hist_percentile(&cr->hist[0], 100.0 * rank / (double)f->samples);
		fmt_duration3_ns((double)f->threshold_ns + gpd_excess(f->xi.est, f->sigma_ns.est, 1.0 / (1.0 - probs[i])), m,
		    sizeof(m));
		fmt_duration3_ns((double)measured, e, sizeof(e));
		tprintf(out, "%s %g%% %s/%s", i ? "," : "", 100.0 * probs[i], m, e);
	}
	tprintf(out, "\n");
}

/* How often x is crossed, per hour: "above the threshold 100us: 37/h (29/h..46/h), counted". */
static void above(FILE *out, const struct result *res, const struct cpu_result *cr, const struct tail_fit *f,
		  const char *what, uint64_t x)
{
	struct tail_interval r;
	char t[32], e[32], lo[32], hi[32];
	int from = x ? tail_rate_above(f, &cr->hist[0], cpu_result_observed(res, cr), x, &r) : -1;

	if (from < 0)
		return;
	fmt_duration(x, t, sizeof(t));
	fmt_per_hour(r.est, e, sizeof(e));
	fmt_per_hour(r.lo, lo, sizeof(lo));
	fmt_per_hour(r.hi, hi, sizeof(hi));
	tprintf(out, "  above %s%s: %s (%s..%s), %s\n", what, t, e, lo, hi,
		from == TAIL_FROM_MODEL ? "from the fit" : "counted");
}

static void full(FILE *out, const struct result *res, const struct cpu_result *cr, const char *name,
		 uint64_t above_ns)
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
		fmt_duration3_ns((double)k->threshold_ns, t, sizeof(t));
		tprintf(out, "    %s q%-6.4g %10s %7llu above  shape %+.3f (%+.3f..%+.3f)%s\n",
			c == f.chosen ? ">" : " ", k->quantile, t, (unsigned long long)k->n_exceed,
			k->xi.est, k->xi.lo, k->xi.hi, k->stable ? " *" : "");
	}
	tprintf(out,
		"  shape %+.3f (%+.3f..%+.3f), scale %s, %.3g exceedances a second; bucket "
		"resolution %s\n",
		f.xi.est, f.xi.lo, f.xi.hi, (fmt_duration3_ns(f.sigma_ns.est, t, sizeof(t)), t), f.exceed_per_s,
		(fmt_duration3_ns(f.bucket_error_ns, buf, sizeof(buf)), buf));
	for (unsigned p = 0; p < TAIL_PERIODS; p++) {
		char note[128];
		tail_level_text(&f.level_ns[p], buf, sizeof(buf));
		level_note(&f, p, note, sizeof(note));
		tprintf(out, "  once per %-5s %s%s\n", tail_period_name(p), buf, note);
	}
	qq(out, cr, &f);
	above(out, res, cr, &f, "the threshold ", res->threshold_ns);
	above(out, res, cr, &f, "", above_ns);
	tprintf(out,
		"  tests: window maxima independent p=%.3g, first and second half alike p=%.3g, "
		"fit p=%.3g\n",
		f.p_independent, f.p_stationary, f.p_fit);
}

void text_tail_full(FILE *out, const struct result *res, uint64_t above_ns)
{
	char name[16];

	for (size_t i = 0; i < res->ncpus; i++) {
		snprintf(name, sizeof(name), "cpu%d", res->cpus[i].cpu);
		full(out, res, &res->cpus[i], name, above_ns);
	}
	if (res->ncpus > 1)
		full(out, res, &res->all, "all", above_ns);
}
