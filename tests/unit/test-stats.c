/*
 * Unit tests for the running statistics (src/core/stats.c).
 *
 * The reference is a two-pass computation in long double: the mean first, then
 * the sum of squared deviations from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/stats.h"

#include "rng.h"

/* ---- reference ---- */

struct ref {
	uint64_t n, min, max;
	double mean, stddev;
};

static struct ref two_pass(const uint64_t *v, size_t n)
{
	struct ref r = { .n = n, .min = UINT64_MAX, .max = 0, .mean = 0.0, .stddev = 0.0 };
	long double sum = 0.0L, ss = 0.0L;

	if (n == 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		sum += (long double)v[i];
		if (v[i] < r.min)
			r.min = v[i];
		if (v[i] > r.max)
			r.max = v[i];
	}
	long double mean = sum / (long double)n;
	for (size_t i = 0; i < n; i++) {
		long double d = (long double)v[i] - mean;
		ss += d * d;
	}
	r.mean = (double)mean;
	r.stddev = (double)sqrtl(ss / (long double)n);
	return r;
}

/* |got - want| <= rel * |want| (or <= abs_floor when want is 0). */
static void assert_close(double got, double want, double rel, const char *what)
{
	double tol = rel * fabs(want);
	if (tol == 0.0)
		tol = 1e-12;
	if (!(fabs(got - want) <= tol)) {
		print_error("%s: got %.17g, want %.17g (relative error %.3g > %.3g)\n",
			    what, got, want, want != 0.0 ? fabs(got - want) / fabs(want) : fabs(got), rel);
		fail();
	}
}

static void assert_matches_reference(const struct stats *s, const struct ref *r, double rel)
{
	assert_int_equal(s->n, r->n);
	assert_int_equal(stats_min(s), r->n ? r->min : 0);
	assert_int_equal(s->max, r->max);
	assert_close(s->mean, r->mean, rel, "mean");
	assert_close(stats_stddev(s), r->stddev, rel, "stddev");
}

static struct stats stats_of(const uint64_t *v, size_t n)
{
	struct stats s = STATS_INIT;
	for (size_t i = 0; i < n; i++)
		stats_add(&s, v[i]);
	return s;
}

enum { N = 100000 };

typedef void (*fill_fn)(uint64_t *v, size_t n);

static void fill_uniform(uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = rng_below(1000000);
}

static void fill_billion_plus_jitter(uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = 1000000000u + rng_below(1000);
}

static void fill_log_uniform(uint64_t *v, size_t n)
{
	const double span = log(100e9);
	for (size_t i = 0; i < n; i++)
		v[i] = (uint64_t)llround(exp(rng_unit_open0() * span));
}

static void fill_heavy_tailed(uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double x = 1000.0 * pow(rng_unit_open0(), -1.0 / 1.5);
		v[i] = x >= 1e15 ? UINT64_C(1000000000000000) : (uint64_t)x;
	}
}

static void fill_latency_with_spikes(uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = rng_below(1000) == 0 ? 10000000u + rng_below(20000000) : 1800u + rng_below(400);
}

static void fill_billion_and_a_half_plus_small_jitter(uint64_t *v, size_t n)
{
	/* stddev ~29 on a mean of 1.5e9: a coefficient of variation of 2e-8. */
	for (size_t i = 0; i < n; i++)
		v[i] = 1500000000u + rng_below(100);
}

static const struct {
	const char *name;
	fill_fn fill;
} datasets[] = {
	{ "uniform", fill_uniform },
	{ "1e9 + jitter", fill_billion_plus_jitter },
	{ "log-uniform 1ns..100s", fill_log_uniform },
	{ "heavy-tailed", fill_heavy_tailed },
	{ "latency with spikes", fill_latency_with_spikes },
	{ "1.5e9 + small jitter", fill_billion_and_a_half_plus_small_jitter },
};

/* ---- tests ---- */

static void test_stats_init_and_reset_describe_an_empty_set(void **state)
{
	(void)state;
	struct stats s = STATS_INIT;
	assert_int_equal(s.n, 0);
	assert_int_equal(s.min, UINT64_MAX);
	assert_int_equal(s.max, 0);
	assert_int_equal(stats_min(&s), 0);
	assert_true(s.mean == 0.0);
	assert_true(stats_stddev(&s) == 0.0);

	stats_add(&s, 5);
	stats_add(&s, 7);
	stats_reset(&s);
	struct stats e = STATS_INIT;
	assert_memory_equal(&s, &e, sizeof(s));
}

static void test_stats_min_of_empty_is_zero(void **state)
{
	(void)state;
	struct stats s;
	stats_reset(&s);
	assert_int_equal(stats_min(&s), 0);
	assert_int_equal(s.max, 0);
}

static void test_stats_of_one_value_has_that_mean_min_max_and_zero_stddev(void **state)
{
	(void)state;
	const uint64_t vals[] = { 0, 1, 12345, 1000000000, UINT64_C(1) << 53 };
	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		struct stats s = STATS_INIT;
		stats_add(&s, vals[i]);
		assert_int_equal(s.n, 1);
		assert_int_equal(stats_min(&s), vals[i]);
		assert_int_equal(s.max, vals[i]);
		assert_true(s.mean == (double)vals[i]);
		assert_true(stats_stddev(&s) == 0.0);
	}
}

static void test_stats_stddev_is_the_population_stddev_on_a_textbook_example(void **state)
{
	(void)state;
	/* 2 4 4 4 5 5 7 9: mean 5, population stddev 2 (sample stddev would be 2.138). */
	const uint64_t v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct stats s = stats_of(v, 8);
	assert_close(s.mean, 5.0, 1e-15, "mean");
	assert_close(stats_stddev(&s), 2.0, 1e-15, "stddev");
	assert_int_equal(stats_min(&s), 2);
	assert_int_equal(s.max, 9);

	/* Two values: stddev is half the distance. */
	struct stats t = STATS_INIT;
	stats_add(&t, 1000);
	stats_add(&t, 3000);
	assert_close(t.mean, 2000.0, 1e-15, "mean of two");
	assert_close(stats_stddev(&t), 1000.0, 1e-15, "stddev of two");
}

static void test_stats_stddev_of_equal_values_is_exactly_zero(void **state)
{
	(void)state;
	const uint64_t vals[] = { 0, 7, 1000000007, UINT64_C(1) << 52 };
	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		struct stats s = STATS_INIT;
		for (int k = 0; k < 10000; k++)
			stats_add(&s, vals[i]);
		assert_true(s.mean == (double)vals[i]);
		assert_true(stats_stddev(&s) == 0.0);
		assert_true(s.m2 == 0.0);
	}
}

static void test_stats_min_and_max_track_the_extremes_including_0_and_uint64_max(void **state)
{
	(void)state;
	rng_seed(21);
	struct stats s = STATS_INIT;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < 10000; i++) {
		uint64_t v = 1u + rng_below(UINT64_MAX - 2u);
		stats_add(&s, v);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		assert_int_equal(stats_min(&s), lo);
		assert_int_equal(s.max, hi);
	}
	stats_add(&s, 0);
	stats_add(&s, UINT64_MAX);
	assert_int_equal(stats_min(&s), 0);
	assert_int_equal(s.min, 0);
	assert_int_equal(s.max, UINT64_MAX);
	assert_int_equal(s.n, 10002);
}

static void test_stats_welford_matches_two_pass_reference_on_random_data(void **state)
{
	(void)state;
	uint64_t *v = test_malloc(N * sizeof(*v));
	for (size_t d = 0; d < ARRAY_SIZE(datasets); d++) {
		rng_seed(100u + d);
		datasets[d].fill(v, N);
		struct stats s = stats_of(v, N);
		struct ref r = two_pass(v, N);
		print_message("  %-24s mean %.6g stddev %.6g\n", datasets[d].name, r.mean, r.stddev);
		assert_matches_reference(&s, &r, 1e-9);
	}
	test_free(v);
}

static void test_stats_welford_is_accurate_where_naive_sum_of_squares_fails(void **state)
{
	(void)state;
	uint64_t *v = test_malloc(N * sizeof(*v));
	rng_seed(22);
	/* 1e9 + jitter 0..999: stddev ~289, mean^2 ~1e18 swamps the variance in double. */
	fill_billion_plus_jitter(v, N);

	double sum = 0.0, sumsq = 0.0;
	for (size_t i = 0; i < N; i++) {
		sum += (double)v[i];
		sumsq += (double)v[i] * (double)v[i];
	}
	double naive_mean = sum / N;
	double naive_var = sumsq / N - naive_mean * naive_mean;
	struct ref r = two_pass(v, N);
	/* The data set really is hard: the textbook formula is far off (or negative). */
	double naive_sd = naive_var > 0.0 ? sqrt(naive_var) : 0.0;
	print_message("  naive stddev %.17g, two-pass %.17g\n", naive_sd, r.stddev);
	assert_true(fabs(naive_sd - r.stddev) > 1e-3 * r.stddev);

	struct stats s = stats_of(v, N);
	assert_matches_reference(&s, &r, 1e-9);
	test_free(v);
}

static void test_stats_merge_of_two_halves_equals_the_single_pass(void **state)
{
	(void)state;
	uint64_t *v = test_malloc(N * sizeof(*v));
	for (size_t d = 0; d < ARRAY_SIZE(datasets); d++) {
		rng_seed(200u + d);
		datasets[d].fill(v, N);
		struct stats a = stats_of(v, N / 3), b = stats_of(v + N / 3, N - N / 3);
		stats_merge(&a, &b);
		struct ref r = two_pass(v, N);
		assert_matches_reference(&a, &r, 1e-9);
	}
	test_free(v);
}

static void test_stats_merge_of_many_uneven_parts_equals_the_single_pass(void **state)
{
	(void)state;
	enum { PARTS = 37 };
	uint64_t *v = test_malloc(N * sizeof(*v));
	for (size_t d = 0; d < ARRAY_SIZE(datasets); d++) {
		rng_seed(300u + d);
		datasets[d].fill(v, N);

		/* Random cut points, some parts empty, some a single value. */
		size_t cut[PARTS + 1];
		cut[0] = 0;
		cut[PARTS] = N;
		for (int p = 1; p < PARTS; p++)
			cut[p] = (size_t)rng_below(N + 1u);
		for (int p = 1; p < PARTS; p++)           /* insertion sort */
			for (int q = p; q > 1 && cut[q - 1] > cut[q]; q--) {
				size_t t = cut[q];
				cut[q] = cut[q - 1];
				cut[q - 1] = t;
			}
		cut[5] = cut[4];                          /* an empty part */
		cut[9] = cut[8] + (cut[8] < cut[10]);     /* a part of at most one value */

		struct stats part[PARTS];
		for (int p = 0; p < PARTS; p++)
			part[p] = stats_of(v + cut[p], cut[p + 1] - cut[p]);

		/* Left to right, as a run merges its windows. */
		struct stats seq = STATS_INIT;
		for (int p = 0; p < PARTS; p++)
			stats_merge(&seq, &part[p]);

		/* Pairwise tree, as threads could be merged. */
		struct stats tree[PARTS];
		memcpy(tree, part, sizeof(part));
		for (int step = 1; step < PARTS; step *= 2)
			for (int p = 0; p + step < PARTS; p += 2 * step)
				stats_merge(&tree[p], &tree[p + step]);

		struct ref r = two_pass(v, N);
		assert_matches_reference(&seq, &r, 1e-9);
		assert_matches_reference(&tree[0], &r, 1e-9);
	}
	test_free(v);
}

static void test_stats_merge_of_windows_of_one_value_each_equals_the_single_pass(void **state)
{
	(void)state;
	enum { M = 5000 };
	uint64_t v[M];
	rng_seed(23);
	fill_billion_plus_jitter(v, M);
	struct stats acc = STATS_INIT;
	for (size_t i = 0; i < M; i++) {
		struct stats one = STATS_INIT;
		stats_add(&one, v[i]);
		stats_merge(&acc, &one);
	}
	struct ref r = two_pass(v, M);
	assert_matches_reference(&acc, &r, 1e-9);
}

static void test_stats_merge_of_empty_into_empty_stays_empty(void **state)
{
	(void)state;
	struct stats a = STATS_INIT, b = STATS_INIT, e = STATS_INIT;
	stats_merge(&a, &b);
	assert_memory_equal(&a, &e, sizeof(a));
	assert_int_equal(a.n, 0);
	assert_int_equal(a.min, UINT64_MAX);
	assert_int_equal(stats_min(&a), 0);
	assert_int_equal(a.max, 0);
	assert_true(stats_stddev(&a) == 0.0);

	/* An empty set that absorbs a value afterwards behaves as fresh. */
	stats_add(&a, 42);
	assert_int_equal(stats_min(&a), 42);
	assert_int_equal(a.max, 42);
	assert_true(a.mean == 42.0);
}

static void test_stats_merge_of_empty_into_non_empty_changes_nothing(void **state)
{
	(void)state;
	struct stats a = STATS_INIT, e = STATS_INIT;
	const uint64_t v[] = { 10, 20, 30, 1000 };
	for (size_t i = 0; i < 4; i++)
		stats_add(&a, v[i]);
	struct stats before = a;
	stats_merge(&a, &e);
	assert_memory_equal(&a, &before, sizeof(a));
	/* The source is untouched too. */
	struct stats e2 = STATS_INIT;
	assert_memory_equal(&e, &e2, sizeof(e));
}

static void test_stats_merge_of_non_empty_into_empty_copies_it(void **state)
{
	(void)state;
	struct stats a = STATS_INIT, src = STATS_INIT;
	stats_add(&src, 3);
	stats_add(&src, 9);
	stats_add(&src, 6);
	struct stats copy = src;
	stats_merge(&a, &src);
	assert_memory_equal(&a, &src, sizeof(a));
	assert_memory_equal(&src, &copy, sizeof(src));
	assert_int_equal(stats_min(&a), 3);
	assert_int_equal(a.max, 9);
	assert_close(a.mean, 6.0, 1e-15, "mean");
}

static void test_stats_merge_keeps_the_smaller_min_and_larger_max_from_either_side(void **state)
{
	(void)state;
	struct stats a = STATS_INIT, b = STATS_INIT;
	stats_add(&a, 100);
	stats_add(&a, 200);
	stats_add(&b, 50);
	stats_add(&b, 150);
	struct stats ab = a, ba = b;
	stats_merge(&ab, &b);
	stats_merge(&ba, &a);
	assert_int_equal(stats_min(&ab), 50);
	assert_int_equal(ab.max, 200);
	assert_int_equal(stats_min(&ba), 50);
	assert_int_equal(ba.max, 200);
	assert_int_equal(ab.n, 4);
	/* Order of merging does not matter. */
	assert_close(ab.mean, 125.0, 1e-15, "mean a+b");
	assert_close(ba.mean, 125.0, 1e-15, "mean b+a");
	assert_close(stats_stddev(&ab), stats_stddev(&ba), 1e-14, "stddev a+b vs b+a");
	/* 50 100 150 200: population stddev sqrt(3125) */
	assert_close(stats_stddev(&ab), sqrt(3125.0), 1e-14, "stddev");
}

static void test_stats_merge_refuses_a_count_past_int64_max_and_changes_nothing(void **state)
{
	(void)state;
	struct stats a = STATS_INIT, b = STATS_INIT;
	stats_add(&a, 10);
	stats_add(&b, 20);
	a.n = UINT64_C(1) << 62;
	b.n = UINT64_C(1) << 62;        /* together 2^63: one past what a JSON integer holds */
	struct stats before = a, src = b;
	assert_int_equal(stats_merge(&a, &b), -EOVERFLOW);
	assert_memory_equal(&a, &before, sizeof(a));
	assert_memory_equal(&b, &src, sizeof(b));
	b.n--;                          /* exactly INT64_MAX */
	assert_int_equal(stats_merge(&a, &b), 0);
	assert_int_equal(a.n, (uint64_t)INT64_MAX);
	assert_int_equal(a.max, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_init_and_reset_describe_an_empty_set),
		cmocka_unit_test(test_stats_min_of_empty_is_zero),
		cmocka_unit_test(test_stats_of_one_value_has_that_mean_min_max_and_zero_stddev),
		cmocka_unit_test(test_stats_stddev_is_the_population_stddev_on_a_textbook_example),
		cmocka_unit_test(test_stats_stddev_of_equal_values_is_exactly_zero),
		cmocka_unit_test(test_stats_min_and_max_track_the_extremes_including_0_and_uint64_max),
		cmocka_unit_test(test_stats_welford_matches_two_pass_reference_on_random_data),
		cmocka_unit_test(test_stats_welford_is_accurate_where_naive_sum_of_squares_fails),
		cmocka_unit_test(test_stats_merge_of_two_halves_equals_the_single_pass),
		cmocka_unit_test(test_stats_merge_of_many_uneven_parts_equals_the_single_pass),
		cmocka_unit_test(test_stats_merge_of_windows_of_one_value_each_equals_the_single_pass),
		cmocka_unit_test(test_stats_merge_of_empty_into_empty_stays_empty),
		cmocka_unit_test(test_stats_merge_of_empty_into_non_empty_changes_nothing),
		cmocka_unit_test(test_stats_merge_of_non_empty_into_empty_copies_it),
		cmocka_unit_test(test_stats_merge_keeps_the_smaller_min_and_larger_max_from_either_side),
		cmocka_unit_test(test_stats_merge_refuses_a_count_past_int64_max_and_changes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
