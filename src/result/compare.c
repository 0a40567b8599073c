#include "result/compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/count.h"
#include "core/normal.h"
#include "core/units.h"

const unsigned cmp_tail_periods[CMP_TAIL_LEVELS] = { TAIL_HOUR, TAIL_HOUR + 1u };

int cmp_row_init(struct cmp_row *w)
{
	*w = (struct cmp_row){ 0 };
	stats_reset(&w->st);
	w->hist = calloc(1, sizeof(*w->hist));
	return w->hist ? 0 : -ENOMEM;
}

int cmp_row_add(struct cmp_row *w, const struct cpu_result *cr, unsigned metric)
{
	const struct summary *s = &cr->sum[metric];
	struct block *blocks = realloc(w->blocks, (w->nblocks + cr->nwin + 1u) * sizeof(*blocks));

	if (!blocks)
		return -ENOMEM;
	w->blocks = blocks;
	uint64_t *max = realloc(w->win_max, (w->nwin_max + cr->nwin + 1u) * sizeof(*max));
	if (!max)
		return -ENOMEM;
	w->win_max = max;
	/* A row adds runs up: they may hold together more than a count can (core/count.h). */
	struct stats st = w->st;
	if (stats_merge(&st, &cr->st[metric]) < 0 || !count_add(&w->above, cr->above[metric]) ||
	    !count_add(&w->missed, cr->missed) || hist_add(w->hist, &cr->hist[metric]) < 0)
		return -EOVERFLOW;
	w->st = st;
	/* spikes are the leading metric's, and only runs that counted them have them */
	if (metric != 0 || !cr->lr.counted || !count_add(&w->spikes, cr->spikes) ||
	    !count_add(&w->observed_ns, cr->lr.observed_ns))
		w->spikes_unknown = true;
	if (s->has_warm_max && (!w->has_warm_max || s->warm_max > w->warm_max)) {
		w->warm_max = s->warm_max;
		w->has_warm_max = true;
	}
	for (size_t k = 0; k < cr->nwin; k++)
		w->blocks[w->nblocks++] = (struct block){ .st = cr->win[k].w.m[metric].st,
							  .hist = &cr->win[k].hist[metric] };
	/* as cpu_result_tail takes them: a folded window's maximum covers a longer span */
	for (size_t k = 0; k < cr->nwin; k++)
		if (cr->win[k].span <= 1 && cr->win[k].w.m[metric].st.n)
			w->win_max[w->nwin_max++] = cr->win[k].w.m[metric].st.max;
	w->tail_unknown = w->tail_unknown || metric != 0;
	w->tail_observed_ns += cr->lr.observed_ns ? cr->lr.observed_ns
			       : cr->nwin ? cr->win[cr->nwin - 1u].w.end_ns - cr->win[0].w.start_ns : 0;
	return 0;
}

void cmp_row_add_smis(struct cmp_row *w, const struct result *res, const struct cpu_result *cr)
{
	uint64_t n;
	if (!result_smis(res, cr, &n) || !count_add(&w->smis, n))
		w->smis_unknown = true;
}

void cmp_row_add_ops(struct cmp_row *w, const struct result *res)
{
	const struct op_figures *f = &res->ops;
	const double n = (double)res->all.sum[0].count;

	w->ops_runs++;
	if (!f->valid) {
		w->ops_unknown = true;
		return;
	}
	w->ops += n;
	w->op_secs += (double)res->elapsed_ns / 1e9;
	w->op_bytes += n * (double)f->bytes_per_op;
	w->bytes_unknown = w->bytes_unknown || !f->bytes_per_op;
	w->cpu_unknown = w->cpu_unknown || !f->has_cpu;
	for (int k = 0; f->has_cpu && k < CPU_TIME_KINDS; k++)
		w->op_cpu_ns[k] += (double)res->machine.total.cpu_ns[k];
}

/* A run of operations' figure of the row; *ret_none when a run has none. */
static double ops_stat(const struct cmp_row *w, enum expr_stat s, bool *ret_none)
{
	_Static_assert(EXPR_CPU_STEAL_PER_OP - EXPR_CPU_USER_PER_OP == CPU_STEAL - CPU_USER &&
			       EXPR_CPU_IOWAIT_PER_OP - EXPR_CPU_USER_PER_OP == CPU_IOWAIT - CPU_USER,
		       "the per-operation statistics are in /proc/stat's order");
	*ret_none = w->ops_runs == 0 || w->ops_unknown || w->ops <= 0 || w->op_secs <= 0;
	if (s == EXPR_OPS_PER_SEC)
		return *ret_none ? 0.0 : w->ops / w->op_secs;
	if (s == EXPR_BYTES_PER_SEC) {
		*ret_none = *ret_none || w->bytes_unknown;
		return *ret_none ? 0.0 : w->op_bytes / w->op_secs;
	}
	*ret_none = *ret_none || w->cpu_unknown;
	return *ret_none ? 0.0 : w->op_cpu_ns[CPU_USER + (int)(s - EXPR_CPU_USER_PER_OP)] / w->ops;
}

void cmp_row_free(struct cmp_row *w)
{
	free(w->hist);
	free(w->blocks);
	free(w->win_max);
	w->hist = NULL;
	w->blocks = NULL;
	w->win_max = NULL;
	w->nblocks = w->nwin_max = 0;
}

bool cmp_stat_is_time(enum expr_stat s)
{
	return s != EXPR_COUNT && s != EXPR_ABOVE_PCT && s != EXPR_MISSED && s != EXPR_SPIKES && s != EXPR_SPIKES_PER_HOUR &&
	       s != EXPR_OPS_PER_SEC && s != EXPR_BYTES_PER_SEC && s != EXPR_SMIS;
}

double cmp_row_stat(const struct cmp_row *w, enum expr_stat s, bool *ret_none)
{
	const struct hist *h = w->hist;
	double lo = (double)stats_min(&w->st), hi = (double)w->st.max;
	double v = 0.0;

	/* a row without a sample has a count and missed periods, and no other figure */
	*ret_none = w->st.n == 0 && s != EXPR_COUNT && s != EXPR_MISSED;
	switch (s) {
	case EXPR_COUNT: return (double)w->st.n;
	case EXPR_MIN: return lo;
	case EXPR_MEAN: return w->st.mean;
	case EXPR_STDDEV: return stats_stddev(&w->st);
	case EXPR_P50: v = (double)hist_percentile(h, 50.0); break;
	case EXPR_P90: v = (double)hist_percentile(h, 90.0); break;
	case EXPR_P99: v = (double)hist_percentile(h, 99.0); break;
	case EXPR_P999: v = (double)hist_percentile(h, 99.9); break;
	case EXPR_P9999: v = (double)hist_percentile(h, 99.99); break;
	case EXPR_MAX: return hi;
	case EXPR_WARM_MAX:
		*ret_none = *ret_none || !w->has_warm_max;
		return (double)w->warm_max;
	case EXPR_ABOVE_PCT: return w->st.n ? 100.0 * (double)w->above / (double)w->st.n : 0.0;
	case EXPR_MISSED: return (double)w->missed;
	case EXPR_SPIKES:
		*ret_none = w->spikes_unknown;
		return (double)w->spikes;
	case EXPR_SPIKES_PER_HOUR:
		*ret_none = w->spikes_unknown || w->observed_ns == 0;
		return w->observed_ns ? (double)w->spikes * 3600e9 / (double)w->observed_ns : 0.0;
	case EXPR_MTBF:
		*ret_none = w->spikes_unknown || w->spikes == 0;
		return w->spikes ? (double)w->observed_ns / (double)w->spikes : 0.0;
	case EXPR_OPS_PER_SEC:
	case EXPR_BYTES_PER_SEC:
	case EXPR_CPU_USER_PER_OP:
	case EXPR_CPU_NICE_PER_OP:
	case EXPR_CPU_SYSTEM_PER_OP:
	case EXPR_CPU_IDLE_PER_OP:
	case EXPR_CPU_IOWAIT_PER_OP:
	case EXPR_CPU_IRQ_PER_OP:
	case EXPR_CPU_SOFTIRQ_PER_OP:
	case EXPR_CPU_STEAL_PER_OP:
		return ops_stat(w, s, ret_none);
	case EXPR_SMIS:
		*ret_none = w->smis_unknown;     /* counted or not, whatever the samples */
		return (double)w->smis;
	}
	/* A bucket midpoint can lie outside the exact min and max. */
	return v < lo ? lo : v > hi ? hi : v;
}

void cmp_stat_text(enum expr_stat s, double v, bool raw, double unit_ns, char *buf, size_t size)
{
	if (s == EXPR_ABOVE_PCT)
		snprintf(buf, size, raw ? "%.6g" : "%.3f", v);
	else if (s == EXPR_SPIKES_PER_HOUR)
		snprintf(buf, size, raw ? "%.6g" : "%.1f", v);
	else if (!cmp_stat_is_time(s) || raw || unit_ns == 1.0)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.1f", v / unit_ns);
}

double cmp_change_pct(double v, double base)
{
	return base != 0.0 ? (v - base) / base * 100.0 : (v == 0.0 ? 0.0 : (double)INFINITY);
}

int cmp_judge(const struct cmp_row *a, const struct cmp_row *b, double stat, struct verdict *ret)
{
	struct block_set sa = { a->nblocks, a->blocks }, sb = { b->nblocks, b->blocks };
	return bootstrap_compare(&sa, &sb, stat, CMP_LEVEL, CMP_BOOT_REPS, CMP_BOOT_SEED, ret);
}

static void pct_text(double ratio, char *buf, size_t size)
{
	snprintf(buf, size, "%+.1f%%", (ratio - 1.0) * 100.0);
}

void cmp_verdict_text(const char *bname, const char *aname, const char *what, const struct verdict *v, char *buf,
		      size_t size)
{
	char p[32], lo[32], hi[32], drift[32];

	if (!v->enough) {
		snprintf(buf, size, "%s vs %s at %s: too few windows for a verdict (%d or more per side; run longer or use "
			 "a shorter --window)", bname, aname, what, BOOT_MIN_BLOCKS);
		return;
	}
	pct_text(v->ratio, p, sizeof(p));
	pct_text(v->lo, lo, sizeof(lo));
	pct_text(v->hi, hi, sizeof(hi));
	snprintf(drift, sizeof(drift), "%.1f%%", (v->drift - 1.0) * 100.0);
	if (v->direction > 0)
		snprintf(buf, size, "%s is slower than %s at %s by %s (95%% CI %s..%s; drift within runs %s)", bname, aname,
			 what, p, lo, hi, drift);
	else if (v->direction < 0)
		snprintf(buf, size, "%s is faster than %s at %s by %s (95%% CI %s..%s; drift within runs %s)", bname, aname,
			 what, p, lo, hi, drift);
	else
		snprintf(buf, size, "%s vs %s at %s: no significant difference (%s, 95%% CI %s..%s; drift within runs %s)",
			 bname, aname, what, p, lo, hi, drift);
}

int cmp_row_tail(const struct cmp_row *w, struct tail_fit *ret, struct lat_error *err)
{
	if (w->tail_unknown || w->tail_observed_ns == 0) {
		*ret = (struct tail_fit){ .status = TAIL_TOO_FEW, .samples = w->st.n };
		snprintf(ret->why, sizeof(ret->why), "%s",
			 w->tail_unknown ? "the tail is the leading metric's only" : "no time observed");
		return 0;
	}
	return tail_fit(w->hist, w->tail_observed_ns, w->win_max, w->nwin_max, ret, err);
}

/* The standard error of ln(level) from its interval, which is symmetric on a log scale. */
static double log_se(const struct tail_interval *t, double z)
{
	return (log(t->hi) - log(t->lo)) / (2.0 * z);
}

void cmp_tail_judge(const struct tail_fit *a, const struct tail_fit *b, unsigned period,
		    struct cmp_tail_verdict *ret)
{
	const double z = normal_quantile(1.0 - (1.0 - TAIL_CONF) / 2.0);
	struct cmp_tail_verdict v = { .ratio = (double)NAN, .lo = (double)NAN, .hi = (double)NAN };

	v.a = a->level_ns[period];
	v.b = b->level_ns[period];
	if (a->status != TAIL_OK || b->status != TAIL_OK) {
		snprintf(v.why, sizeof(v.why), "%s has no fit: %s", a->status != TAIL_OK ? "the baseline" : "it",
			 a->status != TAIL_OK ? a->why : b->why);
	} else if (!a->reliable || !b->reliable) {
		snprintf(v.why, sizeof(v.why), "%s fit is %s", !a->reliable ? "the baseline's" : "its",
			 !a->reliable ? a->why : b->why);
	} else if (!(v.a.est > 0.0 && v.a.lo > 0.0 && v.b.est > 0.0 && v.b.lo > 0.0)) {
		snprintf(v.why, sizeof(v.why), "a level without an interval");
	} else {
		double d = log(v.b.est) - log(v.a.est);
		double se = sqrt(pow(log_se(&v.a, z), 2.0) + pow(log_se(&v.b, z), 2.0));
		v.judged = true;
		v.ratio = exp(d);
		v.lo = exp(d - z * se);
		v.hi = exp(d + z * se);
		v.direction = v.lo > 1.0 ? 1 : v.hi < 1.0 ? -1 : 0;
	}
	*ret = v;
}

/* A level compare shows: "-" where the fit gave none. */
static void level_text(const struct tail_interval *t, char *buf, size_t size)
{
	if (!(t->est >= 0.0) || !isfinite(t->est))
		snprintf(buf, size, "-");
	else
		tail_level_text(t, buf, size);
}

void cmp_tail_text(const char *bname, const char *aname, unsigned period, const struct cmp_tail_verdict *v,
		   char *buf, size_t size)
{
	static const char *const names[] = { "once a second", "once a minute", "once an hour", "once a day",
					     "once a year" };
	const char *when = period < sizeof(names) / sizeof(names[0]) ? names[period] : "?";
	char a[128], b[128];

	level_text(&v->a, a, sizeof(a));
	level_text(&v->b, b, sizeof(b));
	if (!v->judged)
		snprintf(buf, size, "%s vs %s %s: %s against %s; not judged: %s", bname, aname, when, b, a, v->why);
	else if (v->direction == 0)
		snprintf(buf, size, "%s vs %s %s: no significant difference: %s against %s (x%.2f, 95%% CI x%.2f..x%.2f)",
			 bname, aname, when, b, a, v->ratio, v->lo, v->hi);
	else
		snprintf(buf, size, "%s is %s than %s %s: %s against %s (x%.2f, 95%% CI x%.2f..x%.2f)", bname,
			 v->direction > 0 ? "higher" : "lower", aname, when, b, a, v->ratio, v->lo, v->hi);
}
