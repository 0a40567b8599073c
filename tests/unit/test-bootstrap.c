/*
 * Unit tests for the block bootstrap (src/core/bootstrap.c).
 *
 * Runs are synthetic windows of a known process: latencies lognormal around
 * 30 us, each window with its own scale (windows differ, as on a real
 * machine) and one window in ten with a burst of spikes near 2 ms.  The
 * reference for point estimates is the union of all samples of a side.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/bootstrap.h"

#include "rng.h"

#define REPS 1000
#define LEVEL 0.95
#define SEEDS 40
#define WINDOWS 60
#define PER_WINDOW 1000

/* ---- synthetic runs ---- */

struct run {
	size_t n;
	struct block *blocks;
	struct sparse_hist *hists;
	uint64_t *values;               /* every sample, in order */
	size_t nvalues;
};

static struct hist scratch;

static double normal(void)
{
	return sqrt(-2.0 * log(rng_unit_open0())) * cos(2.0 * M_PI * rng_unit_open0());
}

static void run_alloc(struct run *r, size_t nblocks, size_t nvalues)
{
	r->n = nblocks;
	r->blocks = calloc(nblocks ? nblocks : 1u, sizeof(*r->blocks));
	r->hists = calloc(nblocks ? nblocks : 1u, sizeof(*r->hists));
	r->values = malloc((nvalues ? nvalues : 1u) * sizeof(*r->values));
	r->nvalues = 0;
	assert_non_null(r->blocks);
	assert_non_null(r->hists);
	assert_non_null(r->values);
}

/* Block i gets the values v[0..n). */
static void run_set_block(struct run *r, size_t i, const uint64_t *v, size_t n)
{
	struct stats st = STATS_INIT;

	hist_reset(&scratch);
	for (size_t k = 0; k < n; k++) {
		hist_record(&scratch, v[k]);
		stats_add(&st, v[k]);
		r->values[r->nvalues++] = v[k];
	}
	assert_int_equal(sparse_from_hist(&scratch, &r->hists[i]), 0);
	r->blocks[i] = (struct block){ .st = st, .hist = &r->hists[i] };
}

/* nblocks windows of per samples of the process, every value times scale. */
static void run_make(struct run *r, uint64_t seed, size_t nblocks, size_t per, double scale)
{
	uint64_t *v = malloc(per * sizeof(*v));

	assert_non_null(v);
	run_alloc(r, nblocks, nblocks * per);
	rng_seed(seed);
	for (size_t i = 0; i < nblocks; i++) {
		double window = exp(0.05 * normal());
		size_t spikes = rng_below(10) == 0 ? 1u + (size_t)rng_below(per / 100u + 1u) : 0u;
		for (size_t k = 0; k < per; k++) {
			double x = 30000.0 * window * exp(0.25 * normal());
			if (k < spikes)
				x = 2e6 * (0.8 + 0.4 * rng_unit_open0());
			v[k] = (uint64_t)(x * scale);
		}
		run_set_block(r, i, v, per);
	}
	free(v);
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		sparse_free(&r->hists[i]);
	free(r->hists);
	free(r->blocks);
	free(r->values);
	memset(r, 0, sizeof(*r));
}

static struct block_set set_of(const struct run *r)
{
	return (struct block_set){ .n = r->n, .blocks = r->blocks };
}

static struct verdict compare_at(const struct run *a, const struct run *b, double stat, double level, uint64_t seed)
{
	struct block_set sa = set_of(a), sb = set_of(b);
	struct verdict v;

	assert_int_equal(bootstrap_compare(&sa, &sb, stat, level, REPS, seed, &v), 0);
	return v;
}

static struct verdict compare(const struct run *a, const struct run *b, double stat, uint64_t seed)
{
	return compare_at(a, b, stat, LEVEL, seed);
}

static void assert_same_verdict(const struct verdict *x, const struct verdict *y)
{
	assert_int_equal(x->enough, y->enough);
	assert_true(x->a == y->a && x->b == y->b && x->ratio == y->ratio);
	assert_true(x->lo == y->lo && x->hi == y->hi);
	assert_int_equal(x->direction, y->direction);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* ---- verdicts on known differences ---- */

static void test_bootstrap_finds_no_difference_between_two_samples_of_the_same_process_in_most_seeds(void **state)
{
	static const double stats[] = { BOOT_MEAN, 50.0, 99.0 };
	unsigned positives[3] = { 0 };

	(void)state;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct run a, b;
		run_make(&a, 1000u + seed, WINDOWS, PER_WINDOW, 1.0);
		run_make(&b, 2000u + seed, WINDOWS, PER_WINDOW, 1.0);
		for (size_t s = 0; s < 3; s++) {
			struct verdict v = compare(&a, &b, stats[s], seed);
			assert_true(v.enough);
			assert_true(v.lo <= v.hi);
			positives[s] += v.direction != 0;
		}
		run_free(&a);
		run_free(&b);
	}
	for (size_t s = 0; s < 3; s++) {
		print_message("same process, stat %g: %u of %d seeds called a difference (%.1f %%)\n",
			      stats[s], positives[s], SEEDS, 100.0 * positives[s] / SEEDS);
		assert_true(positives[s] * 100u <= 15u * SEEDS);
	}
}

static void check_direction_for_every_seed(double scale, int want)
{
	static const double stats[] = { BOOT_MEAN, 50.0, 99.0 };

	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct run a, b;
		run_make(&a, 3000u + seed, WINDOWS, PER_WINDOW, 1.0);
		run_make(&b, 4000u + seed, WINDOWS, PER_WINDOW, scale);
		for (size_t s = 0; s < 3; s++) {
			struct verdict v = compare(&a, &b, stats[s], seed);
			if (v.direction != want)
				print_error("seed %" PRIu64 " stat %g: ratio %g [%g, %g] direction %d, want %d\n",
					    seed, stats[s], v.ratio, v.lo, v.hi, v.direction, want);
			assert_int_equal(v.direction, want);
			assert_true(v.lo <= v.ratio && v.ratio <= v.hi);
			assert_true(fabs(v.ratio / scale - 1.0) < 0.1);
		}
		run_free(&a);
		run_free(&b);
	}
}

/* The bursty process wanders by tens of percent between parts of a run, so the
 * shifts it must find are ones no drift can explain. */
static void test_bootstrap_finds_b_slower_on_mean_and_p99_when_every_value_is_doubled(void **state)
{
	(void)state;
	check_direction_for_every_seed(2.0, 1);
}

static void test_bootstrap_finds_b_faster_on_mean_and_p99_when_every_value_is_halved(void **state)
{
	(void)state;
	check_direction_for_every_seed(0.5, -1);
}

/* A process without bursts: windows differ by their scale only. */
static void run_make_steady(struct run *r, uint64_t seed, size_t nblocks, size_t per, double scale,
			    double second_half_scale)
{
	uint64_t *v = malloc(per * sizeof(*v));

	assert_non_null(v);
	run_alloc(r, nblocks, nblocks * per);
	rng_seed(seed);
	for (size_t i = 0; i < nblocks; i++) {
		double window = exp(0.02 * normal()) * (i >= nblocks / 2u ? second_half_scale : 1.0);
		for (size_t k = 0; k < per; k++)
			v[k] = (uint64_t)(30000.0 * window * exp(0.25 * normal()) * scale);
		run_set_block(r, i, v, per);
	}
	free(v);
}

static void test_bootstrap_finds_a_20_percent_shift_of_a_steady_process(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct run a, b;
		run_make_steady(&a, 100u + seed, WINDOWS, PER_WINDOW, 1.0, 1.0);
		run_make_steady(&b, 200u + seed, WINDOWS, PER_WINDOW, 1.2, 1.0);
		struct verdict v = compare(&a, &b, 99.0, seed);
		assert_true(v.drift < 1.1);
		assert_int_equal(v.direction, 1);
		v = compare(&a, &b, BOOT_MEAN, seed);
		assert_int_equal(v.direction, 1);
		run_free(&a);
		run_free(&b);
	}
}

static void test_bootstrap_does_not_call_a_shift_smaller_than_the_drift_within_a_run(void **state)
{
	(void)state;
	struct run a, b;
	/* a's second half runs 40 % slower: a second run could land anywhere in that span. */
	run_make_steady(&a, 301, WINDOWS, PER_WINDOW, 1.0, 1.4);
	run_make_steady(&b, 302, WINDOWS, PER_WINDOW, 1.3, 1.0);
	struct verdict v = compare(&a, &b, BOOT_MEAN, 1);
	assert_true(v.drift > 1.35);
	assert_true(v.lo > 1.0 / v.drift && v.hi < v.drift * 2.0);
	assert_int_equal(v.direction, 0);
	run_free(&a);
	run_free(&b);
}

static void test_bootstrap_of_identical_inputs_has_ratio_one_inside_its_interval(void **state)
{
	static const double stats[] = { BOOT_MEAN, 1.0, 50.0, 99.0, 99.99, 100.0 };
	struct run a;

	(void)state;
	run_make(&a, 7, WINDOWS, PER_WINDOW, 1.0);
	for (size_t s = 0; s < ARRAY_SIZE(stats); s++) {
		struct verdict v = compare(&a, &a, stats[s], 5);
		assert_true(v.enough);
		assert_true(v.a == v.b);
		assert_true(v.ratio == 1.0);
		assert_true(v.lo <= 1.0 && 1.0 <= v.hi);
		assert_int_equal(v.direction, 0);
	}
	run_free(&a);
}

/*
 * A machine whose level wanders and stays for a while: the log of each
 * window's scale follows an AR(1) with correlation 0.7 from one window to the
 * next and a spread of 0.33, with bursts in one window of four, close to what
 * bench/aa-ab saw of the per-window mean on the test guest (6 s idle runs:
 * correlation 0.47-0.70, spread 0.35).  Two runs of 6 windows, 2 windows
 * apart, of the one process: the windows of one run agree with each other
 * better than the two runs do, so resampling single windows gives too narrow
 * an interval.
 */
static void run_make_wander(struct run *r, size_t nblocks, size_t per, double *level)
{
	uint64_t *v = malloc((per ? per : 1u) * sizeof(*v));

	assert_non_null(v);
	run_alloc(r, nblocks, nblocks * per);
	for (size_t i = 0; i < nblocks; i++) {
		*level = 0.7 * *level + sqrt(1.0 - 0.7 * 0.7) * 0.33 * normal();
		size_t spikes = rng_below(4) == 0 ? 1u + (size_t)rng_below(per / 50u + 1u) : 0u;
		for (size_t k = 0; k < per; k++) {
			double x = 20000.0 * exp(*level + 0.3 * normal());
			if (k < spikes)
				x = 3e5 * (0.5 + rng_unit_open0());
			v[k] = (uint64_t)x;
		}
		run_set_block(r, i, v, per);
	}
	free(v);
}

static void test_bootstrap_calls_two_runs_of_a_wandering_machine_the_same_in_95_percent_of_pairs(void **state)
{
	enum { PAIRS = 200 };
	unsigned called = 0, by_stat[2] = { 0 };

	(void)state;
	for (uint64_t pair = 1; pair <= PAIRS; pair++) {
		struct run a, b, gap;
		double level = 0.0;
		rng_seed(9000u + pair);
		run_make_wander(&gap, 10, 0, &level);           /* a start anywhere in the process */
		run_make_wander(&a, 6, PER_WINDOW, &level);
		run_free(&gap);
		run_make_wander(&gap, 2, 0, &level);
		run_make_wander(&b, 6, PER_WINDOW, &level);
		bool any = false;
		for (int k = 0; k < 2; k++) {
			/* as latscope compare judges them: both statistics, each at boot_level(2) */
			struct verdict v = compare_at(&a, &b, k ? 99.0 : BOOT_MEAN, boot_level(2), 1);
			assert_true(v.enough);
			by_stat[k] += v.direction != 0;
			any = any || v.direction != 0;
		}
		called += any;
		run_free(&a);
		run_free(&gap);
		run_free(&b);
	}
	print_message("wandering machine: %u of %d pairs called different (mean %u, p99 %u)\n", called, PAIRS,
		      by_stat[0], by_stat[1]);
	assert_true(called * 100u <= 5u * PAIRS);
}

/* ---- too few windows ---- */

static void test_bootstrap_gives_no_verdict_with_fewer_than_the_minimum_blocks_on_either_side(void **state)
{
	struct run few, many, fast;

	(void)state;
	run_make(&few, 11, BOOT_MIN_BLOCKS - 1, PER_WINDOW, 2.0);
	run_make(&many, 12, WINDOWS, PER_WINDOW, 1.0);
	run_make(&fast, 13, BOOT_MIN_BLOCKS, PER_WINDOW, 0.5);

	struct verdict v = compare(&many, &few, BOOT_MEAN, 1);
	assert_false(v.enough);
	assert_int_equal(v.direction, 0);
	assert_true(isnan(v.lo) && isnan(v.hi));
	assert_true(v.ratio > 1.5);                     /* the point estimates are still there */

	v = compare(&few, &many, 99.0, 1);
	assert_false(v.enough);
	assert_int_equal(v.direction, 0);

	v = compare(&many, &fast, BOOT_MEAN, 1);        /* exactly the minimum is enough */
	assert_true(v.enough);
	assert_int_equal(v.direction, -1);

	run_free(&few);
	run_free(&many);
	run_free(&fast);
}

static void test_bootstrap_does_not_count_blocks_without_samples(void **state)
{
	struct run real, padded, other;
	struct sparse_hist empty = { 0 };

	(void)state;
	run_make(&real, 21, BOOT_MIN_BLOCKS - 1, PER_WINDOW, 1.0);
	run_make(&other, 22, WINDOWS, PER_WINDOW, 1.0);
	/* The same blocks with an empty one (with or without a histogram) after each. */
	run_alloc(&padded, 2u * real.n, 0);
	for (size_t i = 0; i < real.n; i++) {
		padded.blocks[2u * i] = real.blocks[i];
		padded.blocks[2u * i + 1u] = (struct block){ .st = STATS_INIT, .hist = i % 2u ? &empty : NULL };
	}

	for (int pct = 0; pct < 2; pct++) {
		double stat = pct ? 90.0 : BOOT_MEAN;
		struct verdict want = compare(&real, &other, stat, 3);
		struct verdict got = compare(&padded, &other, stat, 3);
		assert_false(got.enough);
		assert_true(got.a == want.a);
		assert_true(got.ratio == want.ratio);
	}
	run_free(&padded);
	run_free(&real);
	run_free(&other);
}

/* ---- point estimates ---- */

static void test_bootstrap_point_estimates_are_the_exact_mean_and_nearest_rank_percentile_of_all_samples(void **state)
{
	static const double ps[] = { 0.1, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0 };
	struct run a, b;

	(void)state;
	run_make(&a, 31, WINDOWS, PER_WINDOW, 1.0);
	run_make(&b, 32, 17, 333, 1.3);                 /* sides need not match */

	const struct run *sides[] = { &a, &b };
	for (size_t side = 0; side < 2; side++) {
		const struct run *r = sides[side];
		long double sum = 0.0L;
		struct hist *all = calloc(1, sizeof(*all));
		uint64_t *sorted = malloc(r->nvalues * sizeof(*sorted));
		assert_non_null(all);
		assert_non_null(sorted);
		for (size_t k = 0; k < r->nvalues; k++) {
			sum += (long double)r->values[k];
			hist_record(all, r->values[k]);
			sorted[k] = r->values[k];
		}
		qsort(sorted, r->nvalues, sizeof(*sorted), cmp_u64);
		double mean = (double)(sum / (long double)r->nvalues);

		const struct run *other = sides[1u - side];
		struct verdict v = compare(r, other, BOOT_MEAN, 1);
		double got = v.a;
		assert_true(fabs(got - mean) <= 1e-12 * mean);

		for (size_t i = 0; i < ARRAY_SIZE(ps); i++) {
			uint64_t want = hist_percentile(all, ps[i]);
			if (want < sorted[0])
				want = sorted[0];
			if (want > sorted[r->nvalues - 1u])
				want = sorted[r->nvalues - 1u];
			v = compare(r, other, ps[i], 1);
			got = v.a;
			assert_true(got == (double)want);
			/* and within the histogram's error of the sorted samples' nearest rank */
			uint64_t rank = hist_rank(ps[i], r->nvalues);
			double exact = (double)sorted[rank ? rank - 1u : 0u];
			assert_true(fabs(got - exact) <= HIST_REL_ERROR * exact);
		}
		free(all);
		free(sorted);
	}
	run_free(&a);
	run_free(&b);
}

static void test_bootstrap_percentile_is_clamped_to_the_exact_min_and_max(void **state)
{
	const uint64_t value = 1000003;                 /* not its bucket's midpoint */
	uint64_t v[100];
	struct run a;

	(void)state;
	assert_true(hist_bucket_value(hist_index(value)) != value);
	for (size_t k = 0; k < 100; k++)
		v[k] = value;
	run_alloc(&a, 6, 600);
	for (size_t i = 0; i < 6; i++)
		run_set_block(&a, i, v, 100);
	for (double p = 1.0; p <= 100.0; p += 33.0) {
		struct verdict r = compare(&a, &a, p, 1);
		assert_true(r.a == (double)value);
		assert_true(r.lo == 1.0 && r.hi == 1.0);
	}
	run_free(&a);
}

static void test_bootstrap_mean_needs_no_histograms(void **state)
{
	struct run a, b;

	(void)state;
	run_make(&a, 41, WINDOWS, PER_WINDOW, 1.0);
	run_make(&b, 42, WINDOWS, PER_WINDOW, 1.2);
	struct verdict want = compare(&a, &b, BOOT_MEAN, 9);
	for (size_t i = 0; i < a.n; i++)
		a.blocks[i].hist = NULL;
	struct verdict got = compare(&a, &b, BOOT_MEAN, 9);
	assert_same_verdict(&got, &want);
	assert_int_equal(got.direction, 1);
	run_free(&a);
	run_free(&b);
}

/* A replicate draws every block again with replacement: its sums could pass what a count holds. */
static void test_bootstrap_refuses_blocks_whose_resampled_counts_could_overflow(void **state)
{
	struct run a, b;
	struct verdict v = { .ratio = 42.0 };

	(void)state;
	run_make(&a, 41, WINDOWS, PER_WINDOW, 1.0);
	run_make(&b, 42, WINDOWS, PER_WINDOW, 1.0);
	b.blocks[0].st.n = (UINT64_C(1) << 62);        /* one block of 2^62: WINDOWS draws of it pass 2^63 */
	struct block_set sa = set_of(&a), sb = set_of(&b);
	assert_int_equal(bootstrap_compare(&sa, &sb, BOOT_MEAN, LEVEL, 100, 1, &v), -EOVERFLOW);
	assert_true(v.ratio == 42.0);                   /* untouched */
	run_free(&a);
	run_free(&b);
}

/* ---- a side at zero ---- */

static void test_bootstrap_ratio_against_zero_is_one_for_zero_and_infinite_otherwise(void **state)
{
	uint64_t zeros[50] = { 0 }, ones[50];
	struct run z, p;

	(void)state;
	for (size_t k = 0; k < 50; k++)
		ones[k] = k < 40 ? 0 : 500;             /* p50 0, p99 500 */
	run_alloc(&z, 8, 400);
	run_alloc(&p, 8, 400);
	for (size_t i = 0; i < 8; i++) {
		run_set_block(&z, i, zeros, 50);
		run_set_block(&p, i, ones, 50);
	}

	struct verdict v = compare(&z, &z, 99.0, 1);
	assert_true(v.a == 0.0 && v.ratio == 1.0 && v.lo == 1.0 && v.hi == 1.0);
	assert_int_equal(v.direction, 0);

	v = compare(&z, &p, 99.0, 1);
	assert_true(isinf(v.ratio) && isinf(v.lo));
	assert_int_equal(v.direction, 1);

	v = compare(&p, &z, BOOT_MEAN, 1);
	assert_true(v.ratio == 0.0 && v.hi == 0.0);
	assert_int_equal(v.direction, -1);

	v = compare(&z, &p, 50.0, 1);                   /* 0 against 0 */
	assert_true(v.ratio == 1.0);
	assert_int_equal(v.direction, 0);

	run_free(&z);
	run_free(&p);
}

/* ---- determinism ---- */

static void test_bootstrap_gives_the_same_interval_for_the_same_seed_and_another_for_another_seed(void **state)
{
	struct run a, b;

	(void)state;
	run_make(&a, 51, WINDOWS, PER_WINDOW, 1.0);
	run_make(&b, 52, WINDOWS, PER_WINDOW, 1.05);
	for (int pct = 0; pct < 2; pct++) {
		double stat = pct ? 99.0 : BOOT_MEAN;
		struct verdict v1 = compare(&a, &b, stat, 77);
		struct verdict v2 = compare(&a, &b, stat, 77);
		assert_same_verdict(&v1, &v2);
		bool differs = false;
		for (uint64_t seed = 78; seed < 88 && !differs; seed++) {
			struct verdict v3 = compare(&a, &b, stat, seed);
			assert_true(v3.ratio == v1.ratio);
			differs = v3.lo != v1.lo || v3.hi != v1.hi;
		}
		assert_true(differs);
	}
	run_free(&a);
	run_free(&b);
}

/* ---- many blocks ---- */

/*
 * Blocks alternate between all-10 ns and all-30 ns.  In groups of two
 * consecutive blocks every draw has as many of each, so the interval collapses
 * to the point; blocks resampled one by one vary.
 */
static void make_alternating(struct run *r, size_t n)
{
	uint64_t lo[20], hi[20];

	for (size_t k = 0; k < 20; k++) {
		lo[k] = 10;
		hi[k] = 30;
	}
	run_alloc(r, n, n * 20u);
	for (size_t i = 0; i < n; i++)
		run_set_block(r, i, i % 2u ? hi : lo, 20);
}

static void test_bootstrap_resamples_more_than_2000_blocks_in_2000_groups_of_consecutive_blocks(void **state)
{
	struct run grouped, single;

	(void)state;
	make_alternating(&grouped, 2u * BOOT_MAX_GROUPS);
	make_alternating(&single, BOOT_MAX_GROUPS);
	for (int pct = 0; pct < 2; pct++) {
		double stat = pct ? 50.0 : BOOT_MEAN;
		struct verdict v = compare(&grouped, &grouped, stat, 1);
		assert_true(v.enough);
		assert_true(v.a == (pct ? 10.0 : 20.0));
		assert_true(v.lo == 1.0 && v.hi == 1.0);

		v = compare(&single, &single, stat, 1);
		assert_true(v.lo < 1.0 && v.hi > 1.0);
		assert_int_equal(v.direction, 0);
	}
	run_free(&grouped);
	run_free(&single);
}

static void test_bootstrap_with_uneven_groups_keeps_exact_point_estimates_and_finds_a_difference(void **state)
{
	struct run a, b, whole;

	(void)state;
	run_make(&a, 61, 4001, 50, 1.0);                 /* groups of 2 and 3 blocks */
	run_make(&b, 62, 2500, 50, 1.2);                 /* groups of 1 and 2 blocks */

	/* The same samples as one block per side of a: the union is what counts. */
	run_alloc(&whole, 1, a.nvalues);
	run_set_block(&whole, 0, a.values, a.nvalues);

	static const double stats[] = { BOOT_MEAN, 50.0, 99.0 };
	for (size_t s = 0; s < 3; s++) {
		struct verdict v = compare(&a, &b, stats[s], 1);
		struct verdict w = compare(&whole, &b, stats[s], 1);
		assert_true(v.enough);
		assert_false(w.enough);
		if (stats[s] == BOOT_MEAN)
			assert_true(fabs(v.a - w.a) <= 1e-12 * w.a);
		else
			assert_true(v.a == w.a);
		assert_int_equal(v.direction, 1);
		assert_true(v.lo <= v.ratio && v.ratio <= v.hi);

		v = compare(&a, &a, stats[s], 2);
		assert_int_equal(v.direction, 0);
	}
	run_free(&a);
	run_free(&b);
	run_free(&whole);
}

/* ---- blocks of unequal size (a long run's folded windows) ---- */

/*
 * r's blocks with the first `first` of them folded in blocks of `span` each,
 * as a long run folds its older windows: the same samples, fewer blocks.
 */
static void run_fold(struct run *ret, const struct run *r, size_t first, size_t span)
{
	size_t folded = first / span;

	run_alloc(ret, folded + r->n - first, 0);
	for (size_t k = 0; k < folded; k++) {
		struct stats st = STATS_INIT;
		for (size_t i = k * span; i < (k + 1u) * span; i++) {
			assert_int_equal(stats_merge(&st, &r->blocks[i].st), 0);
			assert_int_equal(sparse_merge(&ret->hists[k], r->blocks[i].hist), 0);
		}
		ret->blocks[k] = (struct block){ .st = st, .hist = &ret->hists[k] };
	}
	for (size_t i = first; i < r->n; i++)
		ret->blocks[folded + i - first] = r->blocks[i];      /* shares r's histograms */
	ret->n = folded + r->n - first;
}

static void run_free_folded(struct run *r, size_t folded)
{
	for (size_t k = 0; k < folded; k++)
		sparse_free(&r->hists[k]);
	free(r->hists);
	free(r->blocks);
	free(r->values);
	memset(r, 0, sizeof(*r));
}

static void test_bootstrap_cuts_a_run_with_folded_blocks_into_parts_by_samples_not_by_blocks(void **state)
{
	struct run x, folded, y, slow;

	(void)state;
	/* x's second half runs 40 % slower; its first half is folded into 4 blocks of 8 windows */
	run_make_steady(&x, 401, 64, PER_WINDOW, 1.0, 1.4);
	run_fold(&folded, &x, 32, 8);
	run_make_steady(&y, 402, 64, PER_WINDOW, 1.0, 1.0);
	run_make_steady(&slow, 403, 64, PER_WINDOW, 2.5, 1.0);
	for (int pct = 0; pct < 2; pct++) {
		double stat = pct ? 99.0 : BOOT_MEAN;
		struct verdict want = compare(&x, &y, stat, 1), got = compare(&folded, &y, stat, 1);
		assert_true(got.enough);
		assert_true(fabs(got.a / want.a - 1.0) < 1e-12);
		/* the drift is x's (y is steady) and the parts hold the same windows */
		assert_true(want.drift > 1.3);
		assert_true(fabs(got.drift / want.drift - 1.0) < 1e-9);
		assert_int_equal(got.direction, want.direction);

		want = compare(&x, &slow, stat, 1);
		got = compare(&folded, &slow, stat, 1);
		assert_int_equal(want.direction, 1);
		assert_int_equal(got.direction, 1);
	}
	run_free_folded(&folded, 4);
	run_free(&x);
	run_free(&y);
	run_free(&slow);
}

static void test_bootstrap_gives_no_verdict_when_one_folded_block_holds_most_of_a_side(void **state)
{
	struct run x, folded, y;

	(void)state;
	/* 60 windows in one block and the last 6 on their own: 7 blocks, but 91 % of
	 * the samples are in one, and the 6 cannot stand for its variation */
	run_make(&x, 411, 66, PER_WINDOW, 1.0);
	run_fold(&folded, &x, 60, 60);
	run_make(&y, 412, WINDOWS, PER_WINDOW, 2.0);
	for (int pct = 0; pct < 2; pct++) {
		double stat = pct ? 99.0 : BOOT_MEAN;
		struct verdict want = compare(&x, &y, stat, 1), got = compare(&folded, &y, stat, 1);
		assert_true(want.enough);
		assert_false(got.enough);
		assert_int_equal(got.direction, 0);
		assert_true(fabs(got.a / want.a - 1.0) < 1e-12);   /* the figures are still exact */
		assert_true(got.ratio == got.b / got.a);
	}
	run_free_folded(&folded, 1);
	run_free(&x);
	run_free(&y);
}

/* ---- bad arguments ---- */

static void test_bootstrap_rejects_bad_arguments_and_leaves_the_result_untouched(void **state)
{
	struct run a;
	struct verdict v, untouched;
	struct block_set good, none = { .n = 3, .blocks = NULL };
	static const double bad_stats[] = {
		0.0, -0.5, -2.0, 100.5, 1e9, (double)NAN, (double)INFINITY, -(double)INFINITY,
	};

	(void)state;
	run_make(&a, 71, 10, 100, 1.0);
	good = set_of(&a);
	memset(&v, 0x5a, sizeof(v));
	memcpy(&untouched, &v, sizeof(v));

	assert_int_equal(bootstrap_compare(NULL, &good, 50.0, LEVEL, REPS, 1, &v), -EINVAL);
	assert_int_equal(bootstrap_compare(&good, NULL, 50.0, LEVEL, REPS, 1, &v), -EINVAL);
	assert_int_equal(bootstrap_compare(&good, &good, 50.0, LEVEL, REPS, 1, NULL), -EINVAL);
	assert_int_equal(bootstrap_compare(&good, &good, 50.0, LEVEL, 0, 1, &v), -EINVAL);
	assert_int_equal(bootstrap_compare(&none, &good, BOOT_MEAN, LEVEL, REPS, 1, &v), -EINVAL);
	assert_int_equal(bootstrap_compare(&good, &none, 50.0, LEVEL, REPS, 1, &v), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_stats); i++)
		assert_int_equal(bootstrap_compare(&good, &good, bad_stats[i], LEVEL, REPS, 1, &v), -EINVAL);

	/* A percentile needs every histogram; a corrupt bucket index is refused. */
	const struct sparse_hist *kept = a.blocks[3].hist;
	a.blocks[3].hist = NULL;
	assert_int_equal(bootstrap_compare(&good, &good, 99.0, LEVEL, REPS, 1, &v), -EINVAL);
	a.blocks[3].hist = kept;
	uint32_t index = a.hists[3].b[0].index;
	a.hists[3].b[0].index = HIST_BUCKETS;
	assert_int_equal(bootstrap_compare(&good, &good, 99.0, LEVEL, REPS, 1, &v), -EINVAL);
	a.hists[3].b[0].index = index;
	assert_memory_equal(&v, &untouched, sizeof(v));

	/* An empty side is valid: no verdict. */
	struct block_set empty = { .n = 0, .blocks = NULL };
	assert_int_equal(bootstrap_compare(&empty, &good, 99.0, LEVEL, REPS, 1, &v), 0);
	assert_false(v.enough);
	assert_true(v.a == 0.0);
	run_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bootstrap_finds_no_difference_between_two_samples_of_the_same_process_in_most_seeds),
		cmocka_unit_test(test_bootstrap_finds_b_slower_on_mean_and_p99_when_every_value_is_doubled),
		cmocka_unit_test(test_bootstrap_finds_b_faster_on_mean_and_p99_when_every_value_is_halved),
		cmocka_unit_test(test_bootstrap_finds_a_20_percent_shift_of_a_steady_process),
		cmocka_unit_test(test_bootstrap_does_not_call_a_shift_smaller_than_the_drift_within_a_run),
		cmocka_unit_test(test_bootstrap_of_identical_inputs_has_ratio_one_inside_its_interval),
		cmocka_unit_test(test_bootstrap_calls_two_runs_of_a_wandering_machine_the_same_in_95_percent_of_pairs),
		cmocka_unit_test(test_bootstrap_gives_no_verdict_with_fewer_than_the_minimum_blocks_on_either_side),
		cmocka_unit_test(test_bootstrap_does_not_count_blocks_without_samples),
		cmocka_unit_test(test_bootstrap_point_estimates_are_the_exact_mean_and_nearest_rank_percentile_of_all_samples),
		cmocka_unit_test(test_bootstrap_percentile_is_clamped_to_the_exact_min_and_max),
		cmocka_unit_test(test_bootstrap_mean_needs_no_histograms),
		cmocka_unit_test(test_bootstrap_refuses_blocks_whose_resampled_counts_could_overflow),
		cmocka_unit_test(test_bootstrap_ratio_against_zero_is_one_for_zero_and_infinite_otherwise),
		cmocka_unit_test(test_bootstrap_gives_the_same_interval_for_the_same_seed_and_another_for_another_seed),
		cmocka_unit_test(test_bootstrap_resamples_more_than_2000_blocks_in_2000_groups_of_consecutive_blocks),
		cmocka_unit_test(test_bootstrap_with_uneven_groups_keeps_exact_point_estimates_and_finds_a_difference),
		cmocka_unit_test(test_bootstrap_cuts_a_run_with_folded_blocks_into_parts_by_samples_not_by_blocks),
		cmocka_unit_test(test_bootstrap_gives_no_verdict_when_one_folded_block_holds_most_of_a_side),
		cmocka_unit_test(test_bootstrap_rejects_bad_arguments_and_leaves_the_result_untouched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
