/*
 * Unit tests for the log-linear histogram (src/core/hist.c).
 *
 * The reference for percentiles is an exactly sorted array and the nearest-rank
 * definition computed in integers: p is given as num/den percent, and the rank
 * is ceil(num * n / (100 * den)), 1-based, with p = 0 meaning rank 1.
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
#include "core/hist.h"
#include "core/sparse.h"

#include "rng.h"

/* ---- helpers ---- */

static struct hist *hist_new(void)
{
	struct hist *h = test_malloc(sizeof(*h));
	/* Dirty it first so that hist_reset really has to clear it. */
	memset(h, 0xa5, sizeof(*h));
	hist_reset(h);
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t *sorted_copy(const uint64_t *v, size_t n)
{
	uint64_t *s = test_malloc(n * sizeof(*s) + 1u);
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u64);
	return s;
}

/* ceil(num * n / (100 * den)), at least 1: the nearest rank for p = num/den percent. */
static uint64_t ref_rank(uint64_t num, uint64_t den, uint64_t n)
{
	/* Keep the products inside 64 bits for every use in this file. */
	assert_true(num == 0 || n <= UINT64_MAX / num);
	uint64_t q = 100u * den;
	uint64_t r = (num * n + q - 1u) / q;
	return r ? r : 1u;
}

/* |got - exact| <= exact * HIST_REL_ERROR, and exact equality below HIST_LINEAR. */
static void assert_within_error_bound(uint64_t got, uint64_t exact, const char *what)
{
	if (exact < HIST_LINEAR) {
		if (got != exact) {
			print_error("%s: got %" PRIu64 ", want exactly %" PRIu64 "\n", what, got, exact);
			fail();
		}
		return;
	}
	uint64_t diff = got > exact ? got - exact : exact - got;
	/*
	 * HIST_REL_ERROR is 1/128 exactly; diff is an integer, so diff <= exact/128
	 * is the same as diff <= floor(exact/128), computed without rounding.
	 */
	assert_true(HIST_REL_ERROR * (double)(2u * HIST_SUB) == 1.0);
	uint64_t bound = exact / (2u * HIST_SUB);
	if (diff > bound) {
		print_error("%s: got %" PRIu64 ", exact %" PRIu64 ", error %" PRIu64 " > bound %" PRIu64 "\n",
			    what, got, exact, diff, bound);
		fail();
	}
}

/*
 * Check hist_percentile(h, num/den) against the nearest-rank element of the
 * sorted array: it must be the value of the very bucket holding that element,
 * and so within the documented error bound.
 */
static void check_percentile(const struct hist *h, const uint64_t *sorted, uint64_t n,
			     uint64_t num, uint64_t den)
{
	double p = (double)num / (double)den;
	uint64_t rank = ref_rank(num, den, n);
	uint64_t exact = sorted[rank - 1u];
	uint64_t got = hist_percentile(h, p);
	uint64_t want = hist_bucket_value(hist_index(exact));

	if (got != want) {
		print_error("p=%.17g (%" PRIu64 "/%" PRIu64 ") n=%" PRIu64 " rank=%" PRIu64
			    ": got %" PRIu64 ", want bucket value %" PRIu64 " (exact %" PRIu64 ")\n",
			    p, num, den, n, rank, got, want, exact);
		fail();
	}
	assert_within_error_bound(got, exact, "percentile");
}

static const struct {
	uint64_t num, den;
} common_ps[] = {
	{ 0, 1 }, { 1, 10 }, { 1, 1 }, { 5, 1 }, { 10, 1 }, { 25, 1 }, { 50, 1 },
	{ 75, 1 }, { 90, 1 }, { 95, 1 }, { 99, 1 }, { 999, 10 }, { 9999, 100 },
	{ 99999, 1000 }, { 100, 1 }, { 125, 10 }, { 375, 10 }, { 333, 10 },
};

/* Record v[0..n) and check many percentiles against the sorted reference. */
static void check_dataset(const uint64_t *v, size_t n)
{
	struct hist *h = hist_new();
	for (size_t i = 0; i < n; i++)
		hist_record(h, v[i]);
	assert_int_equal(h->total, n);
	assert_int_equal(hist_count_buckets(h), n);

	uint64_t *s = sorted_copy(v, n);
	for (size_t i = 0; i < ARRAY_SIZE(common_ps); i++)
		check_percentile(h, s, n, common_ps[i].num, common_ps[i].den);
	/* Every hundredth of a percent would be slow; a few hundred random ones. */
	for (int i = 0; i < 300; i++)
		check_percentile(h, s, n, rng_below(10001), 100);

	/* The extremes are the smallest and largest values. */
	assert_int_equal(hist_percentile(h, 0.0), hist_bucket_value(hist_index(s[0])));
	assert_int_equal(hist_percentile(h, 100.0), hist_bucket_value(hist_index(s[n - 1u])));

	test_free(s);
	test_free(h);
}

/* ---- layout ---- */

static void test_hist_has_a_small_fixed_size(void **state)
{
	(void)state;
	assert_true(sizeof(struct hist) < 40u * 1024u);
	assert_int_equal(sizeof(struct hist), (HIST_BUCKETS + 1u) * sizeof(uint64_t));
	assert_int_equal(HIST_BUCKETS, 3776);
	assert_true(HIST_REL_ERROR <= 1.0 / 128.0);
}

static void test_hist_reset_clears_every_counter(void **state)
{
	(void)state;
	struct hist *h = test_malloc(sizeof(*h));
	memset(h, 0xff, sizeof(*h));
	hist_reset(h);
	assert_int_equal(h->total, 0);
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		assert_int_equal(h->counts[i], 0);
	test_free(h);
}

static void test_hist_first_bucket_starts_at_zero_and_last_ends_at_uint64_max(void **state)
{
	(void)state;
	assert_int_equal(hist_bucket_low(0), 0);
	assert_int_equal(hist_bucket_high(0), 0);
	assert_int_equal(hist_index(0), 0);
	assert_int_equal(hist_bucket_high(HIST_BUCKETS - 1u), UINT64_MAX);
	assert_int_equal(hist_index(UINT64_MAX), HIST_BUCKETS - 1u);
	assert_int_equal(hist_index(UINT64_MAX - 1u), HIST_BUCKETS - 1u);
	assert_int_equal(hist_bucket_low(HIST_BUCKETS - 1u), UINT64_C(127) << 57);
}

static void test_hist_buckets_are_contiguous_and_non_overlapping(void **state)
{
	(void)state;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
		assert_true(lo <= hi);
		if (i > 0)
			assert_int_equal(hist_bucket_high(i - 1u) + 1u, lo);
	}
}

static void test_hist_linear_buckets_hold_one_value_each(void **state)
{
	(void)state;
	for (unsigned i = 0; i < HIST_LINEAR; i++) {
		assert_int_equal(hist_bucket_low(i), i);
		assert_int_equal(hist_bucket_high(i), i);
		assert_int_equal(hist_bucket_value(i), i);
		assert_int_equal(hist_index(i), i);
	}
}

static void test_hist_index_agrees_with_bucket_edges_for_every_bucket(void **state)
{
	(void)state;
	rng_seed(1);
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);

		/* Both edges are inside, the values just outside are in the neighbours. */
		assert_int_equal(hist_index(lo), i);
		assert_int_equal(hist_index(hi), i);
		if (i > 0)
			assert_int_equal(hist_index(lo - 1u), i - 1u);
		if (i + 1u < HIST_BUCKETS)
			assert_int_equal(hist_index(hi + 1u), i + 1u);

		/* Values strictly inside. */
		uint64_t width = hi - lo;              /* may be 2^57 - 1: no + 1 overflow */
		for (int k = 0; k < 4; k++) {
			uint64_t v = width ? lo + 1u + rng_next() % width : lo;   /* in (lo, hi] */
			assert_int_equal(hist_index(v), i);
		}
		if (width >= 2) {
			assert_int_equal(hist_index(lo + 1u), i);
			assert_int_equal(hist_index(hi - 1u), i);
			assert_int_equal(hist_index(lo + width / 2u), i);
		}
	}
}

static void test_hist_value_is_in_its_bucket_iff_index_matches_on_random_values(void **state)
{
	(void)state;
	rng_seed(2);
	for (int k = 0; k < 200000; k++) {
		/* Spread over all magnitudes: random value shifted by a random amount. */
		uint64_t v = rng_next() >> rng_below(64);
		unsigned i = hist_index(v);
		assert_true(i < HIST_BUCKETS);
		assert_true(hist_bucket_low(i) <= v);
		assert_true(v <= hist_bucket_high(i));
		/* And no other bucket claims it: the neighbours exclude it. */
		if (i > 0)
			assert_true(hist_bucket_high(i - 1u) < v);
		if (i + 1u < HIST_BUCKETS)
			assert_true(hist_bucket_low(i + 1u) > v);
	}
}

static void test_hist_index_handles_every_power_of_two_and_its_neighbours(void **state)
{
	(void)state;
	unsigned prev_p2 = 0;
	for (unsigned k = 0; k < 64; k++) {
		uint64_t p2 = UINT64_C(1) << k;
		uint64_t vals[3] = { p2 - 1u, p2, p2 + 1u };
		unsigned prev = 0;
		for (int j = 0; j < 3; j++) {
			unsigned i = hist_index(vals[j]);
			assert_true(i < HIST_BUCKETS);
			assert_true(j == 0 || i >= prev);            /* monotonic in v */
			assert_true(hist_bucket_low(i) <= vals[j]);
			assert_true(vals[j] <= hist_bucket_high(i));
			prev = i;
		}
		/* Strictly increasing over the powers of two. */
		assert_true(k == 0 || hist_index(p2) > prev_p2);
		prev_p2 = hist_index(p2);
		/* A power of two of at least HIST_LINEAR starts a bucket. */
		if (p2 >= HIST_LINEAR)
			assert_int_equal(hist_bucket_low(hist_index(p2)), p2);
	}
}

static void test_hist_bucket_width_is_at_most_one_sixty_fourth_of_its_low_edge(void **state)
{
	(void)state;
	for (unsigned i = HIST_LINEAR; i < HIST_BUCKETS; i++) {
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
		uint64_t width_minus_1 = hi - lo;
		/* width = width_minus_1 + 1 <= lo / 64 */
		assert_true(width_minus_1 < lo / HIST_SUB);
	}
}

static void test_hist_midpoint_error_bound_holds_for_every_bucket(void **state)
{
	(void)state;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i), mid = hist_bucket_value(i);
		assert_true(lo <= mid && mid <= hi);
		/* The error grows towards the edges, so the edges are the worst cases. */
		assert_within_error_bound(mid, lo, "bucket low edge");
		assert_within_error_bound(mid, hi, "bucket high edge");
		/* And the relative error in floating point, for good measure. */
		if (lo > 0) {
			double e_lo = ((double)mid - (double)lo) / (double)lo;
			double e_hi = ((double)hi - (double)mid) / (double)hi;
			assert_true(e_lo <= HIST_REL_ERROR);
			assert_true(e_hi <= HIST_REL_ERROR);
		}
	}
}

/* ---- percentiles on random data ---- */

static void test_hist_percentile_of_empty_histogram_is_zero(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	assert_int_equal(hist_percentile(h, 0.0), 0);
	assert_int_equal(hist_percentile(h, 50.0), 0);
	assert_int_equal(hist_percentile(h, 99.9), 0);
	assert_int_equal(hist_percentile(h, 100.0), 0);
	assert_int_equal(hist_percentile(h, (double)NAN), 0);
	test_free(h);
}

static void test_hist_percentile_matches_sorted_array_within_error_bound_on_uniform_data(void **state)
{
	(void)state;
	enum { N = 100000 };
	uint64_t *v = test_malloc(N * sizeof(*v));
	rng_seed(3);
	for (size_t i = 0; i < N; i++)
		v[i] = rng_below(1000000);
	check_dataset(v, N);
	/* Uniform over the whole 64-bit range. */
	for (size_t i = 0; i < N; i++)
		v[i] = rng_next();
	check_dataset(v, N);
	test_free(v);
}

static void test_hist_percentile_matches_sorted_array_within_error_bound_on_log_uniform_data(void **state)
{
	(void)state;
	enum { N = 100000 };
	uint64_t *v = test_malloc(N * sizeof(*v));
	rng_seed(4);
	/* 1 ns .. 100 s, uniform in log. */
	const double span = log(100e9);
	for (size_t i = 0; i < N; i++)
		v[i] = (uint64_t)llround(exp(rng_unit_open0() * span));
	check_dataset(v, N);
	test_free(v);
}

static void test_hist_percentile_matches_sorted_array_within_error_bound_on_heavy_tailed_data(void **state)
{
	(void)state;
	enum { N = 100000 };
	uint64_t *v = test_malloc(N * sizeof(*v));
	rng_seed(5);
	/* Pareto, alpha 1.1, from 1 us: mean exists, variance does not. */
	for (size_t i = 0; i < N; i++) {
		double x = 1000.0 * pow(rng_unit_open0(), -1.0 / 1.1);
		v[i] = x >= 1e19 ? UINT64_MAX : (uint64_t)x;
	}
	check_dataset(v, N);

	/* Latency-like: a tight body near 2 us with rare 10-30 ms hypervisor spikes. */
	for (size_t i = 0; i < N; i++)
		v[i] = rng_below(1000) == 0 ? 10000000u + rng_below(20000000) : 1800u + rng_below(400);
	check_dataset(v, N);
	test_free(v);
}

static void test_hist_percentile_is_exact_for_small_values(void **state)
{
	(void)state;
	enum { N = 20000 };
	uint64_t *v = test_malloc(N * sizeof(*v));
	rng_seed(6);
	for (size_t i = 0; i < N; i++)
		v[i] = rng_below(HIST_LINEAR);
	struct hist *h = hist_new();
	for (size_t i = 0; i < N; i++)
		hist_record(h, v[i]);
	uint64_t *s = sorted_copy(v, N);
	for (uint64_t k = 0; k <= 1000; k++) {
		uint64_t rank = ref_rank(k, 10, N);
		assert_int_equal(hist_percentile(h, (double)k / 10.0), s[rank - 1u]);
	}
	test_free(s);
	test_free(h);
	test_free(v);
}

/* ---- percentiles on adversarial data ---- */

static void test_hist_percentile_of_all_equal_values_is_that_value_for_every_p(void **state)
{
	(void)state;
	const uint64_t values[] = { 0, 1, 127, 128, 12345, 1000000000, UINT64_C(1) << 63, UINT64_MAX };
	for (size_t j = 0; j < ARRAY_SIZE(values); j++) {
		struct hist *h = hist_new();
		for (int i = 0; i < 1000; i++)
			hist_record(h, values[j]);
		uint64_t want = hist_bucket_value(hist_index(values[j]));
		for (int k = 0; k <= 1000; k++) {
			uint64_t got = hist_percentile(h, (double)k / 10.0);
			assert_int_equal(got, want);
		}
		assert_within_error_bound(want, values[j], "all equal");
		test_free(h);
	}
}

static void test_hist_percentile_of_a_single_value_is_that_value_for_every_p(void **state)
{
	(void)state;
	rng_seed(7);
	for (int j = 0; j < 200; j++) {
		uint64_t v = rng_next() >> rng_below(64);
		struct hist *h = hist_new();
		hist_record(h, v);
		const double ps[] = { 0.0, 1e-9, 0.1, 50.0, 99.9, 99.999, 100.0 };
		for (size_t k = 0; k < ARRAY_SIZE(ps); k++) {
			uint64_t got = hist_percentile(h, ps[k]);
			assert_int_equal(got, hist_bucket_value(hist_index(v)));
			assert_within_error_bound(got, v, "single value");
		}
		test_free(h);
	}
}

static void test_hist_percentile_separates_two_values_far_apart_at_the_exact_rank(void **state)
{
	(void)state;
	/* 999 values of 1 ns and one of 100 s: p99.9 is rank 999, so still 1 ns. */
	struct hist *h = hist_new();
	hist_record_n(h, 1, 999);
	hist_record(h, 100000000000u);
	uint64_t big = hist_bucket_value(hist_index(100000000000u));
	assert_int_equal(hist_percentile(h, 0.0), 1);
	assert_int_equal(hist_percentile(h, 50.0), 1);
	assert_int_equal(hist_percentile(h, 99.0), 1);
	assert_int_equal(hist_percentile(h, 99.9), 1);
	assert_int_equal(hist_percentile(h, 99.91), big);
	assert_int_equal(hist_percentile(h, 99.95), big);
	assert_int_equal(hist_percentile(h, 100.0), big);
	assert_within_error_bound(big, 100000000000u, "big value");

	/* The other way round: one small value among large ones. */
	hist_reset(h);
	hist_record(h, 3);
	hist_record_n(h, UINT64_MAX, 999);
	assert_int_equal(hist_percentile(h, 0.0), 3);
	assert_int_equal(hist_percentile(h, 0.1), 3);
	assert_int_equal(hist_percentile(h, 0.11), hist_bucket_value(HIST_BUCKETS - 1u));
	assert_int_equal(hist_percentile(h, 100.0), hist_bucket_value(HIST_BUCKETS - 1u));
	test_free(h);
}

static void test_hist_percentile_is_correct_for_values_exactly_on_bucket_edges(void **state)
{
	(void)state;
	/* Every low and high edge of every bucket, once each. */
	size_t n = 2u * HIST_BUCKETS;
	uint64_t *v = test_malloc(n * sizeof(*v));
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		v[2u * i] = hist_bucket_low(i);
		v[2u * i + 1u] = hist_bucket_high(i);
	}
	rng_seed(8);
	check_dataset(v, n);

	/* Every bucket then holds exactly two values (the same one twice when low == high). */
	struct hist *h = hist_new();
	for (size_t i = 0; i < n; i++)
		hist_record(h, v[i]);
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		assert_int_equal(h->counts[i], 2);
	test_free(h);
	test_free(v);
}

static void test_hist_percentile_handles_huge_values_near_uint64_max(void **state)
{
	(void)state;
	enum { N = 10000 };
	uint64_t *v = test_malloc(N * sizeof(*v));
	rng_seed(9);
	for (size_t i = 0; i < N; i++) {
		switch (rng_below(4)) {
		case 0: v[i] = UINT64_MAX - rng_below(1000); break;
		case 1: v[i] = (UINT64_C(1) << 63) + rng_below(1u << 20) - (1u << 19); break;
		case 2: v[i] = UINT64_MAX - rng_below(UINT64_C(1) << 58); break;
		default: v[i] = UINT64_MAX; break;
		}
	}
	check_dataset(v, N);
	test_free(v);
}

static void test_hist_percentile_uses_exact_rank_when_p_times_n_is_an_integer(void **state)
{
	(void)state;
	/*
	 * Values that each land in their own bucket, so being off by one rank
	 * changes the answer.  n = 1000 and p = k/10: p*n/100 is an integer for
	 * every k, the case where binary rounding of p/100 bites.
	 */
	const uint64_t ns[] = { 1, 2, 3, 7, 8, 10, 100, 200, 1000, 3000 };
	rng_seed(10);
	for (size_t j = 0; j < ARRAY_SIZE(ns); j++) {
		uint64_t n = ns[j];
		uint64_t *v = test_malloc(n * sizeof(*v));
		for (uint64_t i = 0; i < n; i++)
			v[i] = hist_bucket_low((unsigned)(200u + i));
		/* Shuffle: recording order must not matter. */
		for (uint64_t i = n - 1u; i > 0; i--) {
			uint64_t k = rng_below(i + 1u), t = v[i];
			v[i] = v[k];
			v[k] = t;
		}
		struct hist *h = hist_new();
		for (uint64_t i = 0; i < n; i++)
			hist_record(h, v[i]);
		uint64_t *s = sorted_copy(v, n);
		for (uint64_t k = 0; k <= 1000; k++)
			check_percentile(h, s, n, k, 10);          /* p = 0.0, 0.1, ..., 100.0 */
		for (uint64_t k = 0; k <= 10000; k += 7)
			check_percentile(h, s, n, k, 100);         /* p = 0.00 .. 100.00 */
		check_percentile(h, s, n, 12345, 1000);
		check_percentile(h, s, n, 99999, 1000);
		test_free(s);
		test_free(h);
		test_free(v);
	}
}

static void test_hist_percentile_uses_exact_rank_at_99_9_of_1000_and_99_999_of_100000(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	/* Value i+1 in bucket 200+i. */
	for (unsigned i = 0; i < 1000; i++)
		hist_record(h, hist_bucket_low(200u + i));
	assert_int_equal(hist_percentile(h, 99.9), hist_bucket_value(200u + 998u));
	assert_int_equal(hist_percentile(h, 99.8), hist_bucket_value(200u + 997u));
	assert_int_equal(hist_percentile(h, 0.1), hist_bucket_value(200u));
	assert_int_equal(hist_percentile(h, 0.2), hist_bucket_value(201u));
	assert_int_equal(hist_percentile(h, 50.0), hist_bucket_value(200u + 499u));
	assert_int_equal(hist_percentile(h, 100.0), hist_bucket_value(200u + 999u));

	/* 100000 values: 99999 in bucket 300 and the last one in bucket 400. */
	hist_reset(h);
	hist_record_n(h, hist_bucket_low(300), 99999);
	hist_record(h, hist_bucket_low(400));
	assert_int_equal(hist_percentile(h, 99.999), hist_bucket_value(300));
	assert_int_equal(hist_percentile(h, 99.9991), hist_bucket_value(400));
	test_free(h);
}

static void test_hist_rank_is_the_ceiling_of_p_times_n_over_100(void **state)
{
	(void)state;
	assert_int_equal(hist_rank(0.0, 1000), 0);
	assert_int_equal(hist_rank(100.0, 1000), 1000);
	assert_int_equal(hist_rank(99.9, 1000), 999);
	assert_int_equal(hist_rank(99.99, 10000), 9999);
	assert_int_equal(hist_rank(0.1, 1000), 1);
	assert_int_equal(hist_rank(50.0, 3), 2);
	assert_int_equal(hist_rank(50.0, 4), 2);
	assert_int_equal(hist_rank(25.0, 1), 1);
	assert_int_equal(hist_rank(1e-10, 1), 1);
	assert_int_equal(hist_rank(100.0, UINT64_MAX), UINT64_MAX);
	/* Every p = k/10 over n = 1000 and p = k/100 over n = 10000 is an integer rank. */
	for (uint64_t k = 0; k <= 1000; k++)
		assert_int_equal(hist_rank((double)k / 10.0, 1000), k);
	for (uint64_t k = 0; k <= 10000; k++)
		assert_int_equal(hist_rank((double)k / 100.0, 10000), k);
}

static void test_hist_rank_keeps_a_real_fraction_on_more_than_a_billion_values(void **state)
{
	(void)state;
	/* ceil(50/100 * 10000000001) = ceil(5000000000.5) = 5000000001 */
	assert_int_equal(hist_rank(50.0, UINT64_C(10000000001)), UINT64_C(5000000001));
	/* One hour at 1 MHz: 3.6e9 + 1 samples, p50 -> 1800000001 */
	assert_int_equal(hist_rank(50.0, UINT64_C(3600000001)), UINT64_C(1800000001));
	/* p99.9 of 2e9 + 1 values: 1998000000.999 -> 1998000001 */
	assert_int_equal(hist_rank(99.9, UINT64_C(2000000001)), UINT64_C(1998000001));
	/* And exact integers at that scale stay exact. */
	assert_int_equal(hist_rank(99.9, UINT64_C(10000000000)), UINT64_C(9990000000));
	assert_int_equal(hist_rank(50.0, UINT64_C(10000000000)), UINT64_C(5000000000));
}

static void test_hist_rank_is_zero_for_non_positive_or_nan_p_and_saturates_above_uint64_max(void **state)
{
	(void)state;
	assert_int_equal(hist_rank(0.0, 0), 0);
	assert_int_equal(hist_rank(50.0, 0), 0);
	assert_int_equal(hist_rank(-0.0, 1000), 0);
	assert_int_equal(hist_rank(-50.0, 1000), 0);
	assert_int_equal(hist_rank(-1e300, UINT64_MAX), 0);
	assert_int_equal(hist_rank((double)NAN, 1000), 0);
	assert_int_equal(hist_rank(200.0, 10), 20);
	assert_int_equal(hist_rank(200.0, UINT64_MAX), UINT64_MAX);
	assert_int_equal(hist_rank((double)INFINITY, 10), UINT64_MAX);
}

static void test_hist_percentile_is_the_upper_median_on_an_odd_count_above_a_billion(void **state)
{
	(void)state;
	/* 5e9 samples of 100 ns and 5e9 + 1 of 200 ns: the median sample is a 200. */
	struct hist *h = hist_new();
	hist_record_n(h, 100, UINT64_C(5000000000));
	hist_record_n(h, 200, UINT64_C(5000000001));
	assert_int_equal(hist_percentile(h, 50.0), 200);
	test_free(h);
}

static void test_hist_percentile_clamps_p_outside_0_to_100_and_nan(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_record(h, 5);
	hist_record(h, 50);
	hist_record(h, 500);
	uint64_t hi = hist_bucket_value(hist_index(500));
	assert_int_equal(hist_percentile(h, -1.0), 5);
	assert_int_equal(hist_percentile(h, -(double)INFINITY), 5);
	assert_int_equal(hist_percentile(h, (double)NAN), 5);
	assert_int_equal(hist_percentile(h, 100.5), hi);
	assert_int_equal(hist_percentile(h, 1e300), hi);
	assert_int_equal(hist_percentile(h, (double)INFINITY), hi);
	test_free(h);
}

/* ---- merging, bulk recording, iteration ---- */

static void test_hist_add_of_two_halves_equals_the_histogram_of_all(void **state)
{
	(void)state;
	enum { N = 50000 };
	struct hist *all = hist_new(), *a = hist_new(), *b = hist_new();
	rng_seed(11);
	for (int i = 0; i < N; i++) {
		uint64_t v = rng_next() >> rng_below(64);
		hist_record(all, v);
		hist_record(i < N / 2 ? a : b, v);
	}
	hist_add(a, b);
	assert_memory_equal(a, all, sizeof(*all));
	assert_int_equal(a->total, N);

	/* Adding an empty histogram changes nothing; adding into an empty one copies. */
	struct hist *empty = hist_new(), *c = hist_new();
	hist_add(a, empty);
	assert_memory_equal(a, all, sizeof(*all));
	hist_add(c, all);
	assert_memory_equal(c, all, sizeof(*all));
	test_free(c);
	test_free(empty);
	test_free(b);
	test_free(a);
	test_free(all);
}

static void test_hist_add_of_many_per_thread_parts_equals_the_histogram_of_all(void **state)
{
	(void)state;
	enum { PARTS = 8, N = 80000 };
	struct hist *all = hist_new(), *sum = hist_new();
	struct hist *part[PARTS];
	for (int p = 0; p < PARTS; p++)
		part[p] = hist_new();
	rng_seed(12);
	for (int i = 0; i < N; i++) {
		uint64_t v = 1000u + (rng_next() >> (20 + rng_below(44)));
		hist_record(all, v);
		hist_record(part[rng_below(PARTS)], v);
	}
	for (int p = 0; p < PARTS; p++)
		hist_add(sum, part[p]);
	assert_memory_equal(sum, all, sizeof(*all));
	assert_int_equal(hist_percentile(sum, 99.0), hist_percentile(all, 99.0));
	for (int p = 0; p < PARTS; p++)
		test_free(part[p]);
	test_free(sum);
	test_free(all);
}

static void test_hist_record_n_equals_n_single_records(void **state)
{
	(void)state;
	struct hist *a = hist_new(), *b = hist_new();
	rng_seed(13);
	for (int j = 0; j < 300; j++) {
		uint64_t v = rng_next() >> rng_below(64);
		uint64_t n = rng_below(20);
		hist_record_n(a, v, n);
		for (uint64_t k = 0; k < n; k++)
			hist_record(b, v);
	}
	assert_memory_equal(a, b, sizeof(*a));
	assert_int_equal(hist_count_buckets(a), a->total);

	/* n = 0 is a no-op. */
	memcpy(b, a, sizeof(*a));
	hist_record_n(a, 42, 0);
	hist_record_n(a, UINT64_MAX, 0);
	assert_memory_equal(a, b, sizeof(*a));
	test_free(b);
	test_free(a);
}

static void test_hist_record_n_with_huge_counts_keeps_totals_and_percentiles(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_record_n(h, 1000, UINT64_C(1000000000000));
	hist_record_n(h, 2000000, UINT64_C(1000000000));
	assert_int_equal(h->total, UINT64_C(1001000000000));
	assert_int_equal(hist_count_buckets(h), UINT64_C(1001000000000));
	assert_int_equal(h->counts[hist_index(1000)], UINT64_C(1000000000000));
	assert_int_equal(hist_percentile(h, 50.0), hist_bucket_value(hist_index(1000)));
	/* 1e9 of 1.001e12 is the top 0.0999 %: p99.9 is still 1000 ns, p99.95 is 2 ms. */
	assert_int_equal(hist_percentile(h, 99.9), hist_bucket_value(hist_index(1000)));
	assert_int_equal(hist_percentile(h, 99.95), hist_bucket_value(hist_index(2000000)));
	test_free(h);
}

static void test_hist_next_visits_exactly_the_non_empty_buckets_and_counts_add_to_total(void **state)
{
	(void)state;
	struct hist *h = hist_new();

	/* Empty: nothing to visit from anywhere. */
	assert_int_equal(hist_next(h, 0), HIST_BUCKETS);
	assert_int_equal(hist_next(h, HIST_BUCKETS - 1u), HIST_BUCKETS);
	assert_int_equal(hist_next(h, HIST_BUCKETS), HIST_BUCKETS);

	rng_seed(14);
	hist_record(h, 0);                     /* first bucket */
	hist_record(h, UINT64_MAX);            /* last bucket */
	for (int i = 0; i < 5000; i++)
		hist_record(h, rng_next() >> rng_below(64));

	unsigned visited = 0, expect_visits = 0;
	uint64_t sum = 0;
	unsigned prev = 0;
	int first = 1;
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u)) {
		assert_true(h->counts[i] > 0);
		if (!first)
			assert_true(i > prev);
		/* Nothing non-empty was skipped between prev and i. */
		for (unsigned k = first ? 0 : prev + 1u; k < i; k++)
			assert_int_equal(h->counts[k], 0);
		sum += h->counts[i];
		visited++;
		prev = i;
		first = 0;
	}
	for (unsigned k = prev + 1u; k < HIST_BUCKETS; k++)
		assert_int_equal(h->counts[k], 0);
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		expect_visits += h->counts[i] != 0;

	assert_int_equal(visited, expect_visits);
	assert_int_equal(sum, h->total);
	assert_int_equal(hist_count_buckets(h), h->total);
	assert_int_equal(hist_next(h, 0), 0);
	assert_int_equal(prev, HIST_BUCKETS - 1u);
	assert_int_equal(hist_next(h, HIST_BUCKETS), HIST_BUCKETS);
	test_free(h);
}

static void test_hist_add_refuses_a_total_past_int64_max_and_changes_nothing(void **state)
{
	(void)state;
	struct hist *a = hist_new(), *b = hist_new();
	hist_record_n(a, 5, UINT64_C(1) << 62);
	hist_record_n(b, 900, UINT64_C(1) << 62);
	struct hist *before = hist_new();
	memcpy(before, a, sizeof(*a));
	assert_int_equal(hist_add(a, b), -EOVERFLOW);
	assert_memory_equal(a, before, sizeof(*a));
	b->counts[hist_index(900)]--;
	b->total--;
	assert_int_equal(hist_add(a, b), 0);
	assert_int_equal(a->total, (uint64_t)INT64_MAX);
	test_free(before);
	test_free(b);
	test_free(a);
}

static void test_sparse_merge_refuses_a_count_past_int64_max_and_changes_nothing(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	struct sparse_hist a, b;
	hist_record_n(h, 5, UINT64_C(1) << 62);
	hist_record_n(h, 7, 3);
	assert_int_equal(sparse_from_hist(h, &a), 0);
	hist_reset(h);
	hist_record_n(h, 7, (UINT64_C(1) << 62) - 6u);
	hist_record_n(h, 9, 3);                 /* a total of 2^63, whatever bucket holds it */
	assert_int_equal(sparse_from_hist(h, &b), 0);
	assert_int_equal(sparse_merge(&a, &b), -EOVERFLOW);
	assert_int_equal(a.n, 2);
	assert_int_equal(sparse_total(&a), (UINT64_C(1) << 62) + 3u);
	b.b[1].count--;
	assert_int_equal(sparse_merge(&a, &b), 0);
	assert_int_equal(sparse_total(&a), (uint64_t)INT64_MAX);
	assert_int_equal(a.n, 3);
	sparse_free(&a);
	sparse_free(&b);
	test_free(h);
}

static void test_sparse_percentile_and_sum_agree_with_the_dense_histogram(void **state)
{
	(void)state;
	enum { PARTS = 5, N = 3000 };
	struct hist *all = hist_new(), *part = hist_new();
	struct sparse_hist sp[PARTS], sum;
	const struct sparse_hist *src[PARTS];
	rng_seed(21);
	for (int p = 0; p < PARTS; p++) {
		hist_reset(part);
		for (int i = 0; i < N * (p + 1); i++) {
			uint64_t v = rng_next() >> (20 + rng_below(40));
			hist_record(part, v);
			hist_record(all, v);
		}
		assert_int_equal(sparse_from_hist(part, &sp[p]), 0);
		src[p] = &sp[p];
	}
	assert_int_equal(sparse_sum(src, PARTS, &sum), 0);
	hist_reset(part);
	sparse_add_to(&sum, part);
	assert_memory_equal(part, all, sizeof(*all));
	static const double ps[] = { 0.0, 0.001, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0 };
	for (size_t i = 0; i < ARRAY_SIZE(ps); i++)
		assert_int_equal(sparse_percentile(&sum, ps[i]), hist_percentile(all, ps[i]));
	struct sparse_hist none = { 0 };
	assert_int_equal(sparse_percentile(&none, 50.0), 0);
	sparse_free(&sum);
	for (int p = 0; p < PARTS; p++)
		sparse_free(&sp[p]);
	test_free(part);
	test_free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_has_a_small_fixed_size),
		cmocka_unit_test(test_hist_reset_clears_every_counter),
		cmocka_unit_test(test_hist_first_bucket_starts_at_zero_and_last_ends_at_uint64_max),
		cmocka_unit_test(test_hist_buckets_are_contiguous_and_non_overlapping),
		cmocka_unit_test(test_hist_linear_buckets_hold_one_value_each),
		cmocka_unit_test(test_hist_index_agrees_with_bucket_edges_for_every_bucket),
		cmocka_unit_test(test_hist_value_is_in_its_bucket_iff_index_matches_on_random_values),
		cmocka_unit_test(test_hist_index_handles_every_power_of_two_and_its_neighbours),
		cmocka_unit_test(test_hist_bucket_width_is_at_most_one_sixty_fourth_of_its_low_edge),
		cmocka_unit_test(test_hist_midpoint_error_bound_holds_for_every_bucket),
		cmocka_unit_test(test_hist_percentile_of_empty_histogram_is_zero),
		cmocka_unit_test(test_hist_percentile_matches_sorted_array_within_error_bound_on_uniform_data),
		cmocka_unit_test(test_hist_percentile_matches_sorted_array_within_error_bound_on_log_uniform_data),
		cmocka_unit_test(test_hist_percentile_matches_sorted_array_within_error_bound_on_heavy_tailed_data),
		cmocka_unit_test(test_hist_percentile_is_exact_for_small_values),
		cmocka_unit_test(test_hist_percentile_of_all_equal_values_is_that_value_for_every_p),
		cmocka_unit_test(test_hist_percentile_of_a_single_value_is_that_value_for_every_p),
		cmocka_unit_test(test_hist_percentile_separates_two_values_far_apart_at_the_exact_rank),
		cmocka_unit_test(test_hist_percentile_is_correct_for_values_exactly_on_bucket_edges),
		cmocka_unit_test(test_hist_percentile_handles_huge_values_near_uint64_max),
		cmocka_unit_test(test_hist_percentile_uses_exact_rank_when_p_times_n_is_an_integer),
		cmocka_unit_test(test_hist_percentile_uses_exact_rank_at_99_9_of_1000_and_99_999_of_100000),
		cmocka_unit_test(test_hist_rank_is_the_ceiling_of_p_times_n_over_100),
		cmocka_unit_test(test_hist_rank_keeps_a_real_fraction_on_more_than_a_billion_values),
		cmocka_unit_test(test_hist_rank_is_zero_for_non_positive_or_nan_p_and_saturates_above_uint64_max),
		cmocka_unit_test(test_hist_percentile_is_the_upper_median_on_an_odd_count_above_a_billion),
		cmocka_unit_test(test_hist_percentile_clamps_p_outside_0_to_100_and_nan),
		cmocka_unit_test(test_hist_add_of_two_halves_equals_the_histogram_of_all),
		cmocka_unit_test(test_hist_add_of_many_per_thread_parts_equals_the_histogram_of_all),
		cmocka_unit_test(test_hist_record_n_equals_n_single_records),
		cmocka_unit_test(test_hist_record_n_with_huge_counts_keeps_totals_and_percentiles),
		cmocka_unit_test(test_hist_next_visits_exactly_the_non_empty_buckets_and_counts_add_to_total),
		cmocka_unit_test(test_hist_add_refuses_a_total_past_int64_max_and_changes_nothing),
		cmocka_unit_test(test_sparse_merge_refuses_a_count_past_int64_max_and_changes_nothing),
		cmocka_unit_test(test_sparse_percentile_and_sum_agree_with_the_dense_histogram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
