/*
 * Unit tests for the tail estimate (src/result/tail*.c).
 *
 * Known answers: samples drawn from distributions whose tail is known exactly
 * go through the histogram as a run's would; over 100 seeded runs each, the
 * fitted shape and the level exceeded once in 10^6 samples must lie inside
 * their 95 % intervals in at least 93 (coverage, not just closeness).  Each
 * run is 10^5 samples at one a microsecond, so the once-a-second level is the
 * one-in-10^6 one, ten times beyond the run.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "result/tail.h"
#include "core/normal.h"
#include "result/tail_check.h"
#include "result/tail_json.h"
#include "result/tail_prob.h"

#define TRIALS	  100
#define SAMPLES	  100000u
#define WINDOWS	  100u
#define SAMPLE_NS 1000u /* one sample a microsecond */
#define ONE_IN	  1e6	/* the level checked: the once-a-second one */

/* ---- a seeded generator of the test's own (splitmix64) ---- */

static uint64_t mix_state;

static uint64_t mix_next(void)
{
	uint64_t z = (mix_state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double unit(void)
{
	return ((double)(mix_next() >> 11) + 1.0) * 0x1.0p-53;
}

static double normal(void)
{
	return sqrt(-2.0 * log(unit())) * cos(2.0 * M_PI * unit());
}

/* ---- the distributions, each with its exact tail ---- */

struct dist {
	const char *name;
	double base, sigma, xi; /* GPD above base; xi -1 is the uniform on [base, base + sigma] */
};

static const struct dist exponential = { "exponential", 0.0, 50000.0, 0.0 };
static const struct dist gpd_bounded = { "GPD xi=-0.2", 20000.0, 2000.0, -0.2 };
static const struct dist gpd_zero = { "GPD xi=0", 20000.0, 2000.0, 0.0 };
static const struct dist gpd_heavy = { "GPD xi=0.3", 20000.0, 2000.0, 0.3 };
static const struct dist uniform = { "uniform", 20000.0, 100000.0, -1.0 };

static double draw(const struct dist *d)
{
	double u = unit();
	if (d->xi == 0.0)
		return d->base - d->sigma * log(u);
	return d->base + d->sigma * (pow(u, -d->xi) - 1.0) / d->xi;
}

/* The value exceeded with probability p: the level of period 1/p samples. */
static double true_level(const struct dist *d, double p)
{
	if (d->xi == 0.0)
		return d->base - d->sigma * log(p);
	return d->base + d->sigma * (pow(p, -d->xi) - 1.0) / d->xi;
}

/* ---- runs ---- */

struct run {
	struct hist h;
	uint64_t win[1000];
	size_t nwin;
	uint64_t observed_ns;
};

static struct run run;

static void run_start(uint64_t seed)
{
	mix_state = seed * UINT64_C(0x2545f4914f6cdd1d) + 1u;
	hist_reset(&run.h);
	run.nwin = 0;
	run.observed_ns = 0;
}

/* One window of n samples, each shift + a draw (nanoseconds, truncated as a
 * clock reads them). */
static void run_window(const struct dist *d, double shift, size_t n)
{
	uint64_t max = 0;
	for (size_t i = 0; i < n; i++) {
		double x = fmax(draw(d) + shift, 0.0);
		uint64_t v = (uint64_t)x;
		hist_record(&run.h, v);
		max = v > max ? v : max;
	}
	run.win[run.nwin++] = max;
	run.observed_ns += n * SAMPLE_NS;
}

static void run_plain(const struct dist *d, uint64_t seed)
{
	run_start(seed);
	for (unsigned w = 0; w < WINDOWS; w++)
		run_window(d, 0.0, SAMPLES / WINDOWS);
}

static struct tail_fit fit_run(void)
{
	struct tail_fit f;
	struct lat_error err;
	assert_int_equal(tail_fit(&run.h, run.observed_ns, run.win, run.nwin, &f, &err), 0);
	return f;
}

static bool inside(const struct tail_interval *t, double v)
{
	return t->lo <= v && v <= t->hi;
}

static void assert_coverage(const struct dist *d, uint64_t salt)
{
	unsigned xi_in = 0, level_in = 0, reliable = 0;
	double truth = true_level(d, 1.0 / ONE_IN);
	double xi = d->xi;

	for (uint64_t t = 0; t < TRIALS; t++) {
		run_plain(d, salt * 1000u + t);
		struct tail_fit f = fit_run();
		assert_int_equal(f.status, TAIL_OK);
		assert_false(f.level_observed[0]);
		xi_in += inside(&f.xi, xi);
		level_in += inside(&f.level_ns[0], truth);
		reliable += f.reliable;
	}
	print_message("%s: shape covered in %u of %u, 1-in-10^6 level in %u, reliable %u\n",
		      d->name, xi_in, TRIALS, level_in, reliable);
	assert_true(xi_in >= 93);
	assert_true(level_in >= 93);
}

static void test_tail_intervals_cover_an_exponential_tail(void **state)
{
	(void)state;
	assert_coverage(&exponential, 1);
}

static void test_tail_intervals_cover_a_gpd_tail_with_an_end_point(void **state)
{
	(void)state;
	assert_coverage(&gpd_bounded, 2);
}

static void test_tail_intervals_cover_a_gpd_tail_of_shape_zero(void **state)
{
	(void)state;
	assert_coverage(&gpd_zero, 3);
}

static void test_tail_intervals_cover_a_heavy_gpd_tail(void **state)
{
	(void)state;
	assert_coverage(&gpd_heavy, 4);
}

static void test_tail_intervals_cover_a_bounded_uniform_tail(void **state)
{
	(void)state;
	assert_coverage(&uniform, 5);
}

/* ---- the assumption tests ---- */

#define DEP_WINDOWS    200u
#define DEP_PER_WINDOW 500u

/* Windows shifted by an AR(1) with coefficient phi (0: independent shifts),
 * of stationary standard deviation 2 sigma: the maxima inherit it. */
static void run_shifted(uint64_t seed, double phi)
{
	double sd = 2.0 * gpd_zero.sigma, a = sd * normal();

	run_start(seed);
	for (unsigned w = 0; w < DEP_WINDOWS; w++) {
		a = phi * a + sd * sqrt(1.0 - phi * phi) * normal();
		run_window(&gpd_zero, a, DEP_PER_WINDOW);
	}
}

static void test_tail_flags_dependent_window_maxima(void **state)
{
	unsigned flagged_dep = 0, flagged_indep = 0;

	(void)state;
	for (uint64_t t = 0; t < TRIALS; t++) {
		run_shifted(7000u + t, 0.8);
		struct tail_fit f = fit_run();
		assert_int_equal(f.status, TAIL_OK);
		if (f.p_independent < TAIL_TEST_LEVEL) {
			flagged_dep++;
			assert_false(f.reliable);
			assert_non_null(
				strstr(f.why, "window maxima not independent (Ljung-Box p="));
		}
		run_shifted(8000u + t, 0.0);
		f = fit_run();
		flagged_indep += f.p_independent < TAIL_TEST_LEVEL;
	}
	print_message("AR(1) phi=0.8 flagged in %u of %u, independent in %u\n", flagged_dep, TRIALS,
		      flagged_indep);
	assert_true(flagged_dep >= 90);
	assert_true(flagged_indep <= 5);
}

static void test_tail_flags_a_run_whose_second_half_is_slower(void **state)
{
	(void)state;
	run_start(42);
	for (unsigned w = 0; w < WINDOWS; w++)
		run_window(&gpd_zero, w < WINDOWS / 2 ? 0.0 : 3000.0, SAMPLES / WINDOWS);
	struct tail_fit f = fit_run();
	assert_int_equal(f.status, TAIL_OK);
	assert_true(f.p_stationary < TAIL_TEST_LEVEL);
	assert_false(f.reliable);
	assert_non_null(strstr(f.why, "first and second half differ"));
}

static void test_tail_is_reliable_for_an_independent_stationary_gpd_run(void **state)
{
	(void)state;
	run_plain(&gpd_zero, 99);
	struct tail_fit f = fit_run();
	assert_int_equal(f.status, TAIL_OK);
	assert_true(f.reliable);
	assert_string_equal(f.why, "reliable");
	assert_true(f.p_independent >= TAIL_TEST_LEVEL && f.p_stationary >= TAIL_TEST_LEVEL &&
		    f.p_fit >= TAIL_TEST_LEVEL);
}

static void test_tail_flags_exceedances_that_are_no_gpd(void **state)
{
	/* an exponential with a bump of 3 % of the samples at 40-42 us: no
	 * GPD has a bump, so either the fit fails its test or the threshold
	 * moves up past it */
	(void)state;
	run_start(5);
	for (unsigned w = 0; w < WINDOWS; w++) {
		uint64_t max = 0;
		for (unsigned i = 0; i < SAMPLES / WINDOWS; i++) {
			double x = unit() < 0.03 ? 40000.0 + 2000.0 * unit() : draw(&gpd_zero);
			hist_record(&run.h, (uint64_t)x);
			max = (uint64_t)x > max ? (uint64_t)x : max;
		}
		run.win[run.nwin++] = max;
		run.observed_ns += (SAMPLES / WINDOWS) * SAMPLE_NS;
	}
	struct tail_fit f = fit_run();
	assert_int_equal(f.status, TAIL_OK);
	if (f.chosen == 0) {
		assert_true(f.p_fit < TAIL_TEST_LEVEL);
		assert_non_null(strstr(f.why, "exceedances do not fit the GPD (chi-square p="));
	} else {
		assert_true(f.threshold_ns >= 40000u);
	}
}

static void test_tail_without_windows_is_not_reliable_and_says_why(void **state)
{
	struct tail_fit f;

	(void)state;
	run_plain(&gpd_zero, 3);
	assert_int_equal(tail_fit(&run.h, run.observed_ns, NULL, 0, &f, NULL), 0);
	assert_int_equal(f.status, TAIL_OK);
	assert_false(f.reliable);
	assert_true(isnan(f.p_independent) && isnan(f.p_stationary));
	assert_non_null(strstr(f.why, "not reliable: too few windows to test independence"));
}

/* ---- too little data, bad input ---- */

static void test_tail_with_too_few_samples_gives_no_level(void **state)
{
	struct tail_fit f;

	(void)state;
	run_start(1);
	run_window(&gpd_zero, 0.0, 200); /* 20 above the 0.9 quantile */
	assert_int_equal(tail_fit(&run.h, run.observed_ns, run.win, run.nwin, &f, NULL), 0);
	assert_int_equal(f.status, TAIL_TOO_FEW);
	assert_non_null(strstr(f.why, "too few samples above any threshold"));
	assert_true(isnan(f.level_ns[TAIL_HOUR].est));
	assert_false(f.reliable);

	hist_reset(&run.h);
	assert_int_equal(tail_fit(&run.h, 1000, NULL, 0, &f, NULL), 0);
	assert_int_equal(f.status, TAIL_TOO_FEW);
}

static void test_tail_of_a_histogram_in_one_bucket_is_too_few(void **state)
{
	struct tail_fit f;

	(void)state;
	hist_reset(&run.h);
	hist_record_n(&run.h, 5000, 1000000);
	assert_int_equal(tail_fit(&run.h, UINT64_C(1000000000), NULL, 0, &f, NULL), 0);
	assert_int_equal(f.status, TAIL_TOO_FEW);
	assert_non_null(strstr(f.why, "0 above the 0.98 quantile, in 0 buckets")); /* 10^6 samples: the lowest candidate keeps 20000 above it */
}

static void test_tail_rejects_bad_arguments_and_leaves_the_result_untouched(void **state)
{
	struct tail_fit f;
	struct lat_error err;

	(void)state;
	run_plain(&gpd_zero, 3);
	memset(&f, 0x5a, sizeof(f));
	assert_int_equal(tail_fit(&run.h, 0, run.win, run.nwin, &f, &err), -EINVAL);
	assert_int_equal(tail_fit(NULL, 1000, NULL, 0, &f, &err), -EINVAL);
	assert_int_equal(tail_fit(&run.h, 1000, NULL, 3, &f, &err), -EINVAL);
	run.h.total++;
	assert_int_equal(tail_fit(&run.h, 1000, NULL, 0, &f, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "do not add up"));
	assert_int_equal(f.status, 0x5a5a5a5a);
}

/* ---- rates ---- */

static void test_tail_rate_above_the_threshold_covers_the_true_rate(void **state)
{
	struct tail_interval r;
	unsigned in = 0;
	double x = true_level(&gpd_heavy, 1.0 / ONE_IN); /* once a second: 3600 an hour */

	(void)state;
	for (uint64_t t = 0; t < 20; t++) {
		run_plain(&gpd_heavy, 4000u + t);
		struct tail_fit f = fit_run();
		assert_int_equal(tail_rate_above(&f, &run.h, run.observed_ns, (uint64_t)x, &r),
				 TAIL_FROM_MODEL);
		assert_true(r.lo < r.est && r.est < r.hi);
		in += inside(&r, 3600.0);
	}
	assert_true(in >= 18);
}

static void test_tail_rate_below_the_threshold_is_the_count_with_its_poisson_interval(void **state)
{
	struct tail_interval r;

	(void)state;
	run_plain(&gpd_zero, 11);
	struct tail_fit f = fit_run();
	uint64_t x = f.threshold_ns - 1000u, k = 0;
	for (unsigned i = hist_index(x) + 1u; i < HIST_BUCKETS; i++)
		k += run.h.counts[i];
	double hours = (double)run.observed_ns / 3.6e12;
	assert_int_equal(tail_rate_above(&f, &run.h, run.observed_ns, x, &r), TAIL_FROM_COUNT);
	assert_true(fabs(r.est - (double)k / hours) < 1e-9 * r.est);
	assert_true(r.lo < r.est && r.est < r.hi);
}

static void test_tail_rate_beyond_a_fitted_end_point_is_zero_with_an_upper_bound(void **state)
{
	struct tail_interval r;

	(void)state;
	run_plain(&gpd_bounded, 12);
	struct tail_fit f = fit_run();
	assert_true(f.xi.est < 0.0);
	assert_int_equal(tail_rate_above(&f, &run.h, run.observed_ns, 1000000u, &r),
			 TAIL_FROM_MODEL);
	assert_true(r.est == 0.0 && r.lo == 0.0 && r.hi >= 0.0);
	assert_int_equal(tail_rate_above(NULL, &run.h, 1, 1, &r), -EINVAL);
}

/* ---- levels, candidates, JSON ---- */

static void
test_tail_levels_grow_with_the_period_and_short_ones_come_from_the_histogram(void **state)
{
	(void)state;
	run_start(21);
	/* one sample a second: the threshold is exceeded once in 10 s, so
	 * the once-a-second level lies below it, in the histogram */
	for (unsigned w = 0; w < WINDOWS; w++) {
		run_window(&gpd_zero, 0.0, SAMPLES / WINDOWS);
		run.observed_ns += (SAMPLES / WINDOWS) * (UINT64_C(1000000000) - SAMPLE_NS);
	}
	struct tail_fit f = fit_run();
	assert_int_equal(f.status, TAIL_OK);
	assert_true(f.level_observed[0]);
	assert_false(f.level_observed[1]);
	for (unsigned i = 0; i < TAIL_PERIODS; i++) {
		assert_true(f.level_ns[i].lo <= f.level_ns[i].est);
		assert_true(f.level_ns[i].est <= f.level_ns[i].hi);
		if (i)
			assert_true(f.level_ns[i].est > f.level_ns[i - 1].est);
	}
	assert_true(f.bucket_error_ns > 0.0 &&
		    f.bucket_error_ns <= f.level_ns[TAIL_HOUR].est / 64.0);
	assert_string_equal(tail_period_name(4), "1year");
	assert_null(tail_period_name(TAIL_PERIODS));
}

static void test_tail_lists_its_candidates_and_why_it_picked_one(void **state)
{
	(void)state;
	run_plain(&gpd_zero, 31);
	struct tail_fit f = fit_run();
	assert_true(f.ncand >= 5 && f.chosen < f.ncand);
	assert_int_equal(f.threshold_ns, f.cand[f.chosen].threshold_ns);
	assert_true(f.cand[f.chosen].stable);
	for (unsigned i = 1; i < f.ncand; i++)
		assert_true(f.cand[i].threshold_ns > f.cand[i - 1].threshold_ns);
	assert_non_null(strstr(f.choice, "quantile"));
}

static void test_tail_json_has_the_levels_and_nulls_for_untested_assumptions(void **state)
{
	struct tail_fit f;

	(void)state;
	run_plain(&gpd_zero, 3);
	assert_int_equal(tail_fit(&run.h, run.observed_ns, NULL, 0, &f, NULL), 0);
	json_t *o = tail_to_json(&f);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "ok");
	json_t *levels = json_object_get(o, "levels");
	assert_int_equal(json_array_size(levels), TAIL_PERIODS);
	assert_string_equal(json_string_value(json_object_get(json_array_get(levels, 2), "period")),
			    "1h");
	assert_true(json_is_null(json_object_get(json_object_get(o, "tests"), "p_independent")));
	assert_true(json_is_false(json_object_get(o, "reliable")));
	json_decref(o);
}

/* ---- the distribution functions ---- */

static void test_tail_probabilities_match_tabled_values(void **state)
{
	(void)state;
	assert_true(fabs(tail_chi2_upper(3.841459, 1.0) - 0.05) < 1e-6);
	assert_true(fabs(tail_chi2_upper(23.209251, 10.0) - 0.01) < 1e-6);
	assert_true(fabs(tail_chi2_upper(124.342, 100.0) - 0.05) < 1e-4);
	assert_true(tail_chi2_upper(0.0, 3.0) == 1.0);
	assert_true(fabs(normal_quantile(0.975) - 1.959964) < 1e-6);
	assert_true(isnan(normal_quantile(1.0)));
	/* all 5 marked of 10 in the first 5: 1/252, and all in the second as likely */
	assert_true(fabs(tail_check_halves(10, 5, 5, 5) - 2.0 / 252.0) < 1e-12);
	assert_true(fabs(tail_check_halves(10, 5, 4, 2) - 1.0) < 1e-12);
	assert_true(tail_check_halves(100000, 50000, 2000, 1000) > 0.9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tail_intervals_cover_an_exponential_tail),
		cmocka_unit_test(test_tail_intervals_cover_a_gpd_tail_with_an_end_point),
		cmocka_unit_test(test_tail_intervals_cover_a_gpd_tail_of_shape_zero),
		cmocka_unit_test(test_tail_intervals_cover_a_heavy_gpd_tail),
		cmocka_unit_test(test_tail_intervals_cover_a_bounded_uniform_tail),
		cmocka_unit_test(test_tail_flags_dependent_window_maxima),
		cmocka_unit_test(test_tail_flags_a_run_whose_second_half_is_slower),
		cmocka_unit_test(test_tail_is_reliable_for_an_independent_stationary_gpd_run),
		cmocka_unit_test(test_tail_flags_exceedances_that_are_no_gpd),
		cmocka_unit_test(test_tail_without_windows_is_not_reliable_and_says_why),
		cmocka_unit_test(test_tail_with_too_few_samples_gives_no_level),
		cmocka_unit_test(test_tail_of_a_histogram_in_one_bucket_is_too_few),
		cmocka_unit_test(test_tail_rejects_bad_arguments_and_leaves_the_result_untouched),
		cmocka_unit_test(test_tail_rate_above_the_threshold_covers_the_true_rate),
		cmocka_unit_test(
			test_tail_rate_below_the_threshold_is_the_count_with_its_poisson_interval),
		cmocka_unit_test(
			test_tail_rate_beyond_a_fitted_end_point_is_zero_with_an_upper_bound),
		cmocka_unit_test(
			test_tail_levels_grow_with_the_period_and_short_ones_come_from_the_histogram),
		cmocka_unit_test(test_tail_lists_its_candidates_and_why_it_picked_one),
		cmocka_unit_test(test_tail_json_has_the_levels_and_nulls_for_untested_assumptions),
		cmocka_unit_test(test_tail_probabilities_match_tabled_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
