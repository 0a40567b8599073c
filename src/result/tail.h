/*
 * The extreme tail of a run from what latscope keeps of it (its histogram,
 * the time it observed, its window maxima): a generalized Pareto fit to the
 * exceedances of a threshold chosen from the data, the latencies exceeded once
 * per second, minute, hour, day and year with 95 % intervals, and the tests of
 * the assumptions that make them mean anything.  doc/tail-method.md says how
 * and why.  Pure computation: no I/O.
 */
#ifndef LATSCOPE_RESULT_TAIL_H
#define LATSCOPE_RESULT_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/hist.h"

#define TAIL_PERIODS	    5	 /* 1 s, 1 min, 1 h, 1 day, 1 year */
#define TAIL_HOUR	    2u	 /* the index of the once-an-hour level */
#define TAIL_MAX_CANDIDATES 10	 /* thresholds tried: quantiles 0.90 to 0.999 */
#define TAIL_MIN_EXCEED	    30u	 /* exceedances a threshold needs to be tried */
#define TAIL_CONF	    0.95 /* of every interval */
#define TAIL_TEST_LEVEL	    0.01 /* an assumption test below this p fails */
/* A fit speaks for periods up to this many times its observed time: the
 * extrapolation its coverage trials check (doc/tail-method.md) */
#define TAIL_REACH 10.0

enum tail_status {
	TAIL_OK = 0,	  /* fitted: the levels are numbers (see reliable) */
	TAIL_TOO_FEW = 1, /* too few samples above any threshold, or too few buckets */
	TAIL_NO_FIT = 2,  /* the likelihood had no maximum at any threshold */
};

/* est with its interval at TAIL_CONF: ns for levels, per hour for rates. */
struct tail_interval {
	double est, lo, hi;
};

/* One threshold tried, for `show --tail`'s stability table. */
struct tail_candidate {
	double quantile;	 /* of the samples, from which the threshold came */
	uint64_t threshold_ns;	 /* the low edge of the bucket above the quantile's */
	uint64_t n_exceed;	 /* samples at or above it */
	struct tail_interval xi; /* NaN when the fit failed there */
	bool stable;		 /* every higher candidate's xi agrees with this one's */
	double sigma_ns;	 /* the fit there, for tail_at_top */
	double cov[2][2];
};

struct tail_fit {
	int status;	  /* enum tail_status; the fields below are NaN or 0 unless TAIL_OK */
	uint64_t samples; /* the histogram's total */
	uint64_t threshold_ns;
	uint64_t n_exceed;
	double exceed_per_s;	       /* n_exceed over the observed seconds */
	struct tail_interval xi;       /* < 0: the tail has an end; 0: exponential; > 0: heavy */
	struct tail_interval sigma_ns; /* the GPD's scale */
	/* exceeded once per tail_period_s(i) on average; read from the
	 * histogram itself (level_observed) when the period sees at most one
	 * exceedance of the threshold on average: the level then lies below the
	 * threshold, among the samples, and is no extrapolation */
	struct tail_interval level_ns[TAIL_PERIODS];
	bool level_observed[TAIL_PERIODS];
	/* past the reach, TAIL_REACH times the observed time: the level is the
	 * model carried where no data of the run can check it; --until decides
	 * only "above" from it, through the level at the reach */
	double reach_s;
	bool level_beyond[TAIL_PERIODS];
	double bucket_error_ns; /* half the bucket width at the once-an-hour level */
	/* the assumption tests' p-values (NaN: too little data to run it) */
	double p_independent, p_stationary, p_fit;
	bool reliable;		/* all three were run and none is below TAIL_TEST_LEVEL */
	char why[160];		/* "reliable", "not reliable: ...", or why there is no fit */
	char choice[160];	/* which threshold was picked and why */
	unsigned ncand, chosen; /* cand[chosen] is the threshold used */
	struct tail_candidate cand[TAIL_MAX_CANDIDATES];
	double cov[2][2]; /* of (xi, ln sigma), for tail_rate_above */
	/* all's levels only: the CPU whose own level raised this one (tail_floor), else -1 */
	int level_cpu[TAIL_PERIODS];
};

/*
 * Fit the tail of h, whose samples span observed_ns of measuring time, with
 * the maxima of nwin equal windows in time order (win_max may be NULL when
 * nwin is 0: the window tests are then not run and the fit is not reliable).
 * 0 with *ret filled (status says whether there is a fit), or -EINVAL (NULL
 * h or ret, observed_ns 0, a histogram whose counts do not add up to its
 * total) or -ENOMEM, with err set and ret untouched.
 */
int tail_fit(const struct hist *h, uint64_t observed_ns, const uint64_t *win_max, size_t nwin,
	     struct tail_fit *ret, struct lat_error *err);

/*
 * The level exceeded once per period_s seconds beyond the threshold (the
 * fit's model, at least one exceedance a period): for periods other than
 * the five, such as the fit's reach.  NaN when f is not TAIL_OK or the period
 * sees at most one exceedance (the level then lies among the samples).
 */
struct tail_interval tail_level_at(const struct tail_fit *f, double period_s);

/*
 * f as the highest fitted candidate threshold fits it (its own shape, scale,
 * covariance and rate): the levels it extrapolates (at least one exceedance
 * of that threshold a period) recomputed from it, the others kept from f.
 * The chosen threshold is the lowest stable one, for precision; the highest
 * fits only the largest samples and is the one least tied to the body, with
 * the uncertainty the top of the data truly leaves.  *ret = *f when f is not
 * TAIL_OK or its top is the chosen.
 */
void tail_at_top(const struct tail_fit *f, struct tail_fit *ret);

/*
 * Raise the machine-wide fit all to one CPU's: the samples of all are the
 * union of the CPUs', so the latency exceeded once per period anywhere is
 * at least each CPU's, and a bound of the CPU's is one of all's.  Each level's
 * estimate and both ends become the larger of the two (level_cpu says which
 * ones cpu raised, as cpu_id).  No effect unless both are TAIL_OK.
 */
void tail_floor(struct tail_fit *all, const struct tail_fit *cpu, int cpu_id);

enum { TAIL_FROM_MODEL = 0, TAIL_FROM_COUNT = 1 };

/*
 * How often a latency above x_ns is expected per hour, with its interval.
 * Above the fit's threshold from the fit (TAIL_FROM_MODEL); below it, or with
 * no fit, from the samples counted in buckets wholly above x_ns and their exact
 * Poisson interval (TAIL_FROM_COUNT).  f must come from tail_fit on the same
 * h and observed_ns.  -EINVAL for NULL arguments or observed_ns 0.
 */
int tail_rate_above(const struct tail_fit *f, const struct hist *h, uint64_t observed_ns,
		    uint64_t x_ns, struct tail_interval *per_hour);

/* The samples of h above x: in buckets wholly above it (*sure), and those
 * plus x's own bucket's when it reaches past x (*maybe). */
void tail_count_above(const struct hist *h, uint64_t x, uint64_t *sure, uint64_t *maybe);

/* A level with its interval: "13.2ms (7.85ms..23.4ms)", "-" for what is not a number. */
void tail_level_text(const struct tail_interval *t, char *buf, size_t size);

/* "1s", "1min", "1h", "1day", "1year"; NULL for i >= TAIL_PERIODS. */
const char *tail_period_name(unsigned i);
/* The period in seconds (a year is 365 days); 0 for i >= TAIL_PERIODS. */
double tail_period_s(unsigned i);

#endif
