#include "result/tail.h"
#include "core/normal.h"
#include "core/units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/poisson.h"
#include "result/tail_check.h"
#include "result/tail_gpd.h"
#include "result/tail_prob.h"

/* Thresholds tried: from the 0.90 quantile, where a latency histogram's body
 * usually ends, to the 0.999, past which few runs keep 30 samples.  A run of
 * many samples (noise counts every turn of its loop: hundreds of millions)
 * moves them up so the lowest keeps at most CAND_TOP samples above it: its
 * 0.9 quantile is still the body, and the tail that matters lies far past it. */
#define CAND_TOP 20000.0
static const double quantiles[TAIL_MAX_CANDIDATES] = { 0.90, 0.925, 0.95,  0.96,  0.97,
						       0.98, 0.99,  0.995, 0.998, 0.999 };

static const struct {
	const char *name;
	double s;
} periods[TAIL_PERIODS] = {
	{ "1s", 1.0 },	     { "1min", 60.0 },	      { "1h", 3600.0 },
	{ "1day", 86400.0 }, { "1year", 31536000.0 },
};

#define CHOICE_ALPHA 0.001 /* of wrongly leaving a threshold above which the GPD holds */

/* Scratch too large for the stack of a monitor's thread. */
struct work {
	uint64_t above[HIST_BUCKETS + 1]; /* samples in bucket i and higher */
	struct gpd_bin bins[HIST_BUCKETS];
	struct gpd_est est[TAIL_MAX_CANDIDATES];
	unsigned first[TAIL_MAX_CANDIDATES]; /* each candidate's threshold bucket */
	bool fitted[TAIL_MAX_CANDIDATES];
};

const char *tail_period_name(unsigned i)
{
	return i < TAIL_PERIODS ? periods[i].name : NULL;
}

double tail_period_s(unsigned i)
{
	return i < TAIL_PERIODS ? periods[i].s : 0.0;
}

static struct tail_interval nan_interval(void)
{
	return (struct tail_interval){ (double)NAN, (double)NAN, (double)NAN };
}

/* The exceedances over bucket first's low edge as bins, empty buckets left
 * out (they add nothing to the likelihood); their number. */
static size_t make_bins(const struct hist *h, unsigned first, struct gpd_bin *bins)
{
	double u = (double)hist_bucket_low(first);
	size_t n = 0;

	for (unsigned i = hist_next(h, first); i < HIST_BUCKETS; i = hist_next(h, i + 1))
		bins[n++] = (struct gpd_bin){ (double)hist_bucket_low(i) - u,
					      (double)hist_bucket_high(i) + 1.0 - u, h->counts[i] };
	return n;
}

/* A start for the search: the method of moments on the bins' midpoints
 * (rough for a heavy tail, where it only has to land on the right slope). */
static void moments_start(const struct gpd_bin *bins, size_t n, double *xi, double *sigma)
{
	double w = 0.0, m = 0.0, v = 0.0;

	for (size_t i = 0; i < n; i++) {
		double x = (bins[i].a + bins[i].b) / 2.0, c = (double)bins[i].count;
		w += c;
		double d = x - m;
		m += c / w * d;
		v += c * d * (x - m);
	}
	v /= w;
	*xi = v > 0.0 ? fmin(fmax(0.5 * (1.0 - m * m / v), -0.5), 0.5) : 0.0;
	*sigma = m > 0.0 ? m * (1.0 - *xi) : 1.0;
}

/* Fit every candidate threshold; the number fitted. */
static unsigned fit_candidates(const struct hist *h, struct work *w, struct tail_fit *f, double z)
{
	unsigned nfit = 0;
	int prev = -1;

	for (unsigned c = 0; c < f->ncand; c++) {
		size_t n = make_bins(h, w->first[c], w->bins);
		double xi, sigma;
		if (prev >= 0) {
			/* above a higher threshold a GPD stays one, with the same
			 * shape and the scale grown by xi times the step */
			const struct gpd_est *p = &w->est[prev];
			xi = p->xi;
			sigma = p->sigma + p->xi * (double)(f->cand[c].threshold_ns -
							    f->cand[prev].threshold_ns);
			if (!(sigma > 0.0))
				moments_start(w->bins, n, &xi, &sigma);
		} else {
			moments_start(w->bins, n, &xi, &sigma);
		}
		w->fitted[c] = gpd_fit(w->bins, n, xi, sigma, &w->est[c]) == 0;
		f->cand[c].xi = nan_interval();
		if (!w->fitted[c])
			continue;
		double se = sqrt(w->est[c].cov[0][0]);
		f->cand[c].xi = (struct tail_interval){ w->est[c].xi, w->est[c].xi - z * se,
							w->est[c].xi + z * se };
		f->cand[c].sigma_ns = w->est[c].sigma;
		memcpy(f->cand[c].cov, w->est[c].cov, sizeof(f->cand[c].cov));
		prev = (int)c;
		nfit++;
	}
	return nfit;
}

/*
 * The lowest candidate above which the shape stays put.  The exceedances of
 * a higher threshold are a subset of a lower one's, so when the lower one's
 * GPD holds, the difference of the two estimates has the variance of the
 * higher minus that of the lower (Hausman); each higher candidate is compared
 * with a Bonferroni share of CHOICE_ALPHA.  It is small because a candidate
 * picked on a chance disagreement is the one whose estimate strayed, and its
 * intervals would not cover; a real misfit, at the exceedance counts of a
 * long run, differs by many standard errors.
 */
static unsigned choose(struct work *w, struct tail_fit *f)
{
	int chosen = -1;

	for (unsigned k = 0; k < f->ncand; k++) {
		if (!w->fitted[k])
			continue;
		unsigned m = 0;
		for (unsigned j = k + 1; j < f->ncand; j++)
			m += w->fitted[j];
		double z = m ? normal_quantile(1.0 - CHOICE_ALPHA / (2.0 * m)) : 0.0;
		bool stable = true;
		for (unsigned j = k + 1; j < f->ncand && stable; j++) {
			if (!w->fitted[j])
				continue;
			double vj = w->est[j].cov[0][0], vk = w->est[k].cov[0][0];
			double v = fmax(vj - vk, 1e-3 * vj);
			stable = fabs(w->est[j].xi - w->est[k].xi) <= z * sqrt(v);
		}
		f->cand[k].stable = stable;
		if (stable && chosen < 0)
			chosen = (int)k;
	}
	return (unsigned)chosen; /* the highest fitted one is always stable */
}

/* The value with c samples above it on average: the bucket where the count
 * from the top reaches c. */
static unsigned bucket_with_above(const struct work *w, double c)
{
	unsigned i = HIST_BUCKETS - 1u;

	while (i > 0 && (double)w->above[i] < c)
		i--;
	return i;
}

/* A level the run saw more than once a period: read from the histogram, its
 * interval from the count's normal spread (it is at least TAIL_MIN_EXCEED). */
static struct tail_interval observed_level(const struct work *w, double count, double z)
{
	double d = z * sqrt(count);
	return (struct tail_interval){
		(double)hist_bucket_value(bucket_with_above(w, count)),
		(double)hist_bucket_low(bucket_with_above(w, count + d)),
		(double)hist_bucket_high(bucket_with_above(w, fmax(count - d, 1.0))),
	};
}

/* ln of the excess over u exceeded once per m exceedances. */
static double log_excess(double xi, double lsigma, double lm)
{
	return log(gpd_excess(xi, exp(lsigma), exp(lm)));
}

/*
 * A level beyond the threshold, m exceedances a period: the delta method on
 * ln(level - u), with the rate's Poisson variance 1/n beside the shape's and
 * scale's.  On the log the interval stays above the threshold and leans right
 * as a far level's uncertainty does.
 */
static struct tail_interval model_level(const struct tail_fit *f, double m, double z)
{
	const double d = 1e-6;
	double xi = f->xi.est, ls = log(f->sigma_ns.est), lm = log(m);
	double L = log_excess(xi, ls, lm);
	double gx = (log_excess(xi + d, ls, lm) - log_excess(xi - d, ls, lm)) / (2.0 * d);
	double gm = (log_excess(xi, ls, lm + d) - log_excess(xi, ls, lm - d)) / (2.0 * d);
	double var = gx * gx * f->cov[0][0] + 2.0 * gx * f->cov[0][1] + f->cov[1][1] +
		     gm * gm / (double)f->n_exceed;
	double u = (double)f->threshold_ns, s = z * sqrt(var);

	if (!isfinite(L) || !(var >= 0.0))
		return nan_interval();
	return (struct tail_interval){ u + exp(L), u + exp(L - s), u + exp(L + s) };
}

static void levels(const struct work *w, struct tail_fit *f, double observed_s, double z)
{
	f->reach_s = TAIL_REACH * observed_s;
	for (unsigned i = 0; i < TAIL_PERIODS; i++) {
		double m = f->exceed_per_s * periods[i].s;
		f->level_observed[i] = m <= 1.0;
		f->level_beyond[i] = m > 1.0 && periods[i].s > f->reach_s;
		f->level_ns[i] = m <= 1.0 ? observed_level(w, observed_s / periods[i].s, z)
					  : model_level(f, m, z);
	}
	double hour = f->level_ns[TAIL_HOUR].est;
	f->bucket_error_ns = (double)NAN;
	if (hour >= 0.0 && hour < 0x1p63) {
		unsigned b = hist_index((uint64_t)hour);
		f->bucket_error_ns =
			((double)hist_bucket_high(b) - (double)hist_bucket_low(b) + 1.0) / 2.0;
	}
}

/* reliable, or which tests failed or could not be run, in f->why. */
static void verdict(struct tail_fit *f)
{
	const struct {
		double p;
		const char *failed, *test, *untested;
	} t[] = {
		{ f->p_independent, "window maxima not independent", "Ljung-Box",
		  "too few windows to test independence" },
		{ f->p_stationary, "first and second half differ", "exceedance share",
		  "too few windows to test stationarity" },
		{ f->p_fit, "exceedances do not fit the GPD", "chi-square",
		  "too few exceedances to test the fit" },
	};
	size_t len = (size_t)snprintf(f->why, sizeof(f->why), "not reliable:");
	const char *sep = " ";

	f->reliable = true;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		bool untested = isnan(t[i].p);
		if (!untested && t[i].p >= TAIL_TEST_LEVEL)
			continue;
		f->reliable = false;
		if (len < sizeof(f->why))
			len += (size_t)(untested ? snprintf(f->why + len, sizeof(f->why) - len,
							    "%s%s", sep, t[i].untested)
						 : snprintf(f->why + len, sizeof(f->why) - len,
							    "%s%s (%s p=%.2g)", sep, t[i].failed,
							    t[i].test, t[i].p));
		sep = "; ";
	}
	if (f->reliable)
		snprintf(f->why, sizeof(f->why), "reliable");
}

static void describe_choice(struct tail_fit *f)
{
	const struct tail_candidate *c = &f->cand[f->chosen];
	int n = snprintf(f->choice, sizeof(f->choice),
			 "threshold %" PRIu64 " ns (%.3g quantile, %" PRIu64 " exceedances): ",
			 c->threshold_ns, c->quantile, c->n_exceed);
	size_t len = n > 0 ? (size_t)n : 0u;

	if (len >= sizeof(f->choice))
		return;
	if (f->chosen == 0)
		snprintf(f->choice + len, sizeof(f->choice) - len,
			 "the lowest of %u; the shape above it stays within its interval",
			 f->ncand);
	else
		snprintf(f->choice + len, sizeof(f->choice) - len,
			 "the shape at the %u lower thresholds disagrees with the higher ones",
			 f->chosen);
}

/* The distinct thresholds with enough exceedances; false when even the
 * lowest has too few samples or buckets (f->why says which). */
static bool candidates(const struct hist *h, struct work *w, struct tail_fit *f)
{
	unsigned last = HIST_BUCKETS;
	const double top = (double)h->total * (1.0 - quantiles[0]);
	const double scale = top > CAND_TOP ? CAND_TOP / top : 1.0;

	for (unsigned q = 0; q < TAIL_MAX_CANDIDATES; q++) {
		const double quantile = 1.0 - (1.0 - quantiles[q]) * scale;
		/* the bucket above the quantile's: which one that is depends on
		 * how many samples lie above it, never on where, so the
		 * exceedances stay a sample of the tail (the quantile's own bucket
		 * would be the one the ranks fell in, its count size-biased) */
		unsigned first = hist_index(hist_percentile(h, 100.0 * quantile)) + 1u;
		if (first >= HIST_BUCKETS)
			first = HIST_BUCKETS -
				1u; /* the quantile in the top bucket: nothing above */
		uint64_t n = w->above[first];
		unsigned buckets = 0;
		for (unsigned i = hist_next(h, first); i < HIST_BUCKETS && buckets < 3;
		     i = hist_next(h, i + 1))
			buckets++;
		if (q == 0 && (n < TAIL_MIN_EXCEED || buckets < 3)) {
			snprintf(f->why, sizeof(f->why),
				 "too few samples above any threshold: %" PRIu64
				 " above the %.6g quantile, in %u bucket%s (%u and 3 needed)",
				 n, quantile, buckets, buckets == 1 ? "" : "s", TAIL_MIN_EXCEED);
			return false;
		}
		if (first == last || n < TAIL_MIN_EXCEED || buckets < 3)
			continue;
		last = first;
		w->first[f->ncand] = first;
		f->cand[f->ncand++] = (struct tail_candidate){
			.quantile = quantile,
			.threshold_ns = hist_bucket_low(first),
			.n_exceed = n,
		};
	}
	return true;
}

static void clear(struct tail_fit *f, const struct hist *h)
{
	memset(f, 0, sizeof(*f));
	f->samples = h->total;
	f->exceed_per_s = f->bucket_error_ns = f->reach_s = (double)NAN;
	f->p_independent = f->p_stationary = f->p_fit = (double)NAN;
	f->xi = f->sigma_ns = nan_interval();
	for (unsigned i = 0; i < TAIL_PERIODS; i++) {
		f->level_ns[i] = nan_interval();
		f->level_cpu[i] = -1;
	}
}

int tail_fit(const struct hist *h, uint64_t observed_ns, const uint64_t *win_max, size_t nwin,
	     struct tail_fit *ret, struct lat_error *err)
{
	if (!h || !ret || (nwin && !win_max))
		return err_set(err, -EINVAL, "tail fit: no histogram, result or window maxima");
	if (observed_ns == 0)
		return err_set(err, -EINVAL, "tail fit: no observed time");
	if (hist_count_buckets(h) != h->total)
		return err_set(err, -EINVAL,
			       "tail fit: the histogram's counts do not add up to its total");

	struct work *w = malloc(sizeof(*w));
	struct tail_fit *f = malloc(sizeof(*f));
	if (!w || !f) {
		free(w);
		free(f);
		return err_set(err, -ENOMEM, "tail fit: out of memory");
	}
	double z = normal_quantile(1.0 - (1.0 - TAIL_CONF) / 2.0);
	double observed_s = (double)observed_ns / 1e9;
	w->above[HIST_BUCKETS] = 0;
	for (unsigned i = HIST_BUCKETS; i-- > 0;)
		w->above[i] = w->above[i + 1] + h->counts[i];

	clear(f, h);
	f->status = TAIL_TOO_FEW;
	if (h->total && candidates(h, w, f)) {
		f->status = TAIL_NO_FIT;
		snprintf(f->why, sizeof(f->why), "no maximum of the likelihood at any threshold");
	} else if (!h->total) {
		snprintf(f->why, sizeof(f->why),
			 "too few samples above any threshold: none at all");
	}
	if (f->status == TAIL_NO_FIT && fit_candidates(h, w, f, z) > 0) {
		f->chosen = choose(w, f);
		const struct gpd_est *e = &w->est[f->chosen];
		const struct tail_candidate *c = &f->cand[f->chosen];
		double ss = sqrt(e->cov[1][1]);
		f->status = TAIL_OK;
		f->threshold_ns = c->threshold_ns;
		f->n_exceed = c->n_exceed;
		f->exceed_per_s = (double)c->n_exceed / observed_s;
		f->xi = c->xi;
		f->sigma_ns = (struct tail_interval){ e->sigma, e->sigma * exp(-z * ss),
						      e->sigma * exp(z * ss) };
		memcpy(f->cov, e->cov, sizeof(f->cov));
		describe_choice(f);
		levels(w, f, observed_s, z);
		int r = tail_check_windows(win_max, nwin, f->threshold_ns, &f->p_independent,
					   &f->p_stationary);
		if (r < 0) {
			free(w);
			free(f);
			return err_set(err, r, "tail fit: out of memory");
		}
		f->p_fit = tail_check_fit(h, w->first[f->chosen], f->n_exceed, e->xi, e->sigma);
		verdict(f);
	}
	*ret = *f;
	free(w);
	free(f);
	return 0;
}

struct tail_interval tail_level_at(const struct tail_fit *f, double period_s)
{
	double m = f->exceed_per_s * period_s;
	if (f->status != TAIL_OK || !(m > 1.0))
		return nan_interval();
	return model_level(f, m, normal_quantile(1.0 - (1.0 - TAIL_CONF) / 2.0));
}

void tail_at_top(const struct tail_fit *f, struct tail_fit *ret)
{
	*ret = *f;
	unsigned c = f->ncand;
	while (c-- > 0 && isnan(f->cand[c].xi.est))
		;
	if (f->status != TAIL_OK || c >= f->ncand || c == f->chosen)
		return;
	const struct tail_candidate *k = &f->cand[c];
	double z = normal_quantile(1.0 - (1.0 - TAIL_CONF) / 2.0), ss = sqrt(k->cov[1][1]);
	ret->chosen = c;
	ret->threshold_ns = k->threshold_ns;
	ret->n_exceed = k->n_exceed;
	ret->exceed_per_s = f->exceed_per_s * (double)k->n_exceed / (double)f->n_exceed;
	ret->xi = k->xi;
	ret->sigma_ns = (struct tail_interval){ k->sigma_ns, k->sigma_ns * exp(-z * ss),
						k->sigma_ns * exp(z * ss) };
	memcpy(ret->cov, k->cov, sizeof(ret->cov));
	for (unsigned i = 0; i < TAIL_PERIODS; i++) {
		double m = ret->exceed_per_s * periods[i].s;
		if (m > 1.0)
			ret->level_ns[i] = model_level(ret, m, z);
	}
}

void tail_floor(struct tail_fit *all, const struct tail_fit *cpu, int cpu_id)
{
	if (all->status != TAIL_OK || cpu->status != TAIL_OK)
		return;
	for (unsigned i = 0; i < TAIL_PERIODS; i++) {
		struct tail_interval *a = &all->level_ns[i];
		const struct tail_interval *c = &cpu->level_ns[i];
		if (c->est > a->est || c->lo > a->lo || c->hi > a->hi)
			all->level_cpu[i] = cpu_id;
		a->est = fmax(a->est, c->est);
		a->lo = fmax(a->lo, c->lo);
		a->hi = fmax(a->hi, c->hi);
	}
}

/* The rate above x counted: samples in buckets wholly above x, per hour,
 * with the exact Poisson interval of their count. */
void tail_count_above(const struct hist *h, uint64_t x, uint64_t *sure, uint64_t *maybe)
{
	*sure = *maybe = 0;
	for (unsigned i = hist_next(h, hist_index(x)); i < HIST_BUCKETS; i = hist_next(h, i + 1u)) {
		if (hist_bucket_low(i) > x)
			*sure += h->counts[i];
		if (hist_bucket_high(i) > x)
			*maybe += h->counts[i];
	}
}

void tail_level_text(const struct tail_interval *t, char *buf, size_t size)
{
	char e[32], lo[32], hi[32];
	fmt_duration3_ns(t->est, e, sizeof(e));
	fmt_duration3_ns(t->lo, lo, sizeof(lo));
	fmt_duration3_ns(t->hi, hi, sizeof(hi));
	snprintf(buf, size, "%s (%s..%s)", e, lo, hi);
}

static void counted_rate(const struct hist *h, double hours, uint64_t x, struct tail_interval *out)
{
	uint64_t k, unused;
	double lo, hi;

	tail_count_above(h, x, &k, &unused);
	poisson_interval(k, TAIL_CONF, &lo, &hi);
	*out = (struct tail_interval){ (double)k / hours, lo / hours, hi / hours };
}

/* ln of the rate per hour above the excess y, at (xi, ln sigma). */
static double log_rate(const struct tail_fit *f, double xi, double ls, double y)
{
	return log(f->exceed_per_s * 3600.0) + gpd_logsurv(y, xi, exp(ls));
}

int tail_rate_above(const struct tail_fit *f, const struct hist *h, uint64_t observed_ns,
		    uint64_t x_ns, struct tail_interval *per_hour)
{
	if (!f || !h || !per_hour || observed_ns == 0)
		return -EINVAL;
	double hours = (double)observed_ns / 3.6e12;
	if (f->status != TAIL_OK || x_ns < f->threshold_ns) {
		counted_rate(h, hours, x_ns, per_hour);
		return TAIL_FROM_COUNT;
	}
	const double d = 1e-6;
	double z = normal_quantile(1.0 - (1.0 - TAIL_CONF) / 2.0);
	double y = (double)(x_ns - f->threshold_ns), xi = f->xi.est, ls = log(f->sigma_ns.est);
	double L = log_rate(f, xi, ls, y);
	if (L == -HUGE_VAL) {
		/* beyond the fitted end point: none expected; the upper bound is
		 * the largest rate over the parameters' joint 95 % region (its
		 * ellipse, for the chi-square with 2 degrees of freedom) at the
		 * rate's upper Poisson bound */
		double r = sqrt(-2.0 * log(1.0 - TAIL_CONF)), best = -HUGE_VAL, lo, hi;
		double l00 = sqrt(f->cov[0][0]), l10 = f->cov[0][1] / l00;
		double l11 = sqrt(fmax(f->cov[1][1] - l10 * l10, 0.0));
		for (int i = 0; i < 64; i++) {
			double a = r * cos(i * M_PI / 32.0), b = r * sin(i * M_PI / 32.0);
			best = fmax(best, log_rate(f, xi + l00 * a, ls + l10 * a + l11 * b, y));
		}
		poisson_interval(f->n_exceed, TAIL_CONF, &lo, &hi);
		*per_hour =
			(struct tail_interval){ 0.0, 0.0, exp(best) * hi / (double)f->n_exceed };
		return TAIL_FROM_MODEL;
	}
	double gx = (log_rate(f, xi + d, ls, y) - log_rate(f, xi - d, ls, y)) / (2.0 * d);
	double gs = (log_rate(f, xi, ls + d, y) - log_rate(f, xi, ls - d, y)) / (2.0 * d);
	double var = gx * gx * f->cov[0][0] + 2.0 * gx * gs * f->cov[0][1] +
		     gs * gs * f->cov[1][1] + 1.0 / (double)f->n_exceed;
	double s = isfinite(var) && var >= 0.0 ? z * sqrt(var) : HUGE_VAL;
	*per_hour = (struct tail_interval){ exp(L), exp(L - s), exp(L + s) };
	return TAIL_FROM_MODEL;
}
