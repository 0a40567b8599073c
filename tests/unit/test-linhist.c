/* Unit tests for cyclictest's linear histogram (src/core/linhist.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/linhist.h"

static void values_are_truncated_to_whole_units_before_they_are_counted(void **state)
{
	(void)state;
	struct lin_hist h;
	assert_int_equal(lin_hist_init(&h, 1000, 10), 0);
	lin_hist_record(&h, 999);       /* 0 us */
	lin_hist_record(&h, 1000);      /* 1 us */
	lin_hist_record(&h, 1999);      /* 1 us */
	lin_hist_record(&h, 9999);      /* 9 us: the last bin */
	assert_int_equal(h.bins[0], 1);
	assert_int_equal(h.bins[1], 2);
	assert_int_equal(h.bins[9], 1);
	assert_int_equal(h.overflow, 0);
	assert_int_equal(lin_load(&h.min), 0);
	assert_int_equal(lin_load(&h.max), 9);
	assert_int_equal(lin_load(&h.last), 9);
	assert_int_equal(lin_load(&h.cycles), 4);
	lin_hist_free(&h);
}

static void overflows_keep_the_cycle_numbers_of_the_first_nbins_of_them(void **state)
{
	(void)state;
	struct lin_hist h;
	assert_int_equal(lin_hist_init(&h, 1000, 3), 0);
	uint64_t values[] = { 1000, 5000, 2000, 3000, 7000, 8000, 9000, 0 };
	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		lin_hist_record(&h, values[i]);
	/* 3000 is the first value at the limit (3 bins: 0, 1, 2 us) */
	assert_int_equal(h.overflow, 5);
	assert_int_equal(h.noutliers, 3);
	assert_int_equal(h.outliers[0], 1);
	assert_int_equal(h.outliers[1], 3);
	assert_int_equal(h.outliers[2], 4);
	assert_int_equal(h.bins[0] + h.bins[1] + h.bins[2] + h.overflow, 8);
	lin_hist_free(&h);
}

static void the_mean_is_cyclictests_mean_of_truncated_values(void **state)
{
	(void)state;
	struct lin_hist h;
	assert_int_equal(lin_hist_init(&h, 1000, 0), 0);
	lin_hist_record(&h, 1900);
	lin_hist_record(&h, 2900);
	/* (1 + 2) / 2, not (1.9 + 2.9) / 2 */
	assert_true(lin_hist_mean(&h) == 1.5);
	assert_null(h.bins);
	lin_hist_free(&h);
}

static void an_empty_histogram_reports_cyclictests_starting_minimum(void **state)
{
	(void)state;
	struct lin_hist h;
	assert_int_equal(lin_hist_init(&h, 1, 5), 0);
	assert_int_equal(lin_load(&h.min), LINHIST_NO_MIN);
	assert_true(lin_hist_mean(&h) == 0.0);
	lin_hist_free(&h);
}

static void impossible_shapes_are_refused(void **state)
{
	(void)state;
	struct lin_hist h;
	assert_int_equal(lin_hist_init(&h, 0, 5), -EINVAL);
	assert_int_equal(lin_hist_init(&h, 1000, LINHIST_MAX_BINS + 1u), -EINVAL);
}

static void a_move_hands_over_the_bins_and_leaves_the_source_its_figures_and_no_bins(void **state)
{
	(void)state;
	struct lin_hist src, dst;
	assert_int_equal(lin_hist_init(&src, 1000, 2), 0);
	assert_int_equal(lin_hist_init(&dst, 1, 0), 0);
	lin_hist_record(&src, 1500);
	lin_hist_record(&src, 4000);    /* an overflow, at cycle 1 */
	uint64_t *bins = src.bins;
	lin_hist_move(&dst, &src);
	assert_ptr_equal(dst.bins, bins);
	assert_int_equal(dst.unit_ns, 1000);
	assert_int_equal(dst.nbins, 2);
	assert_int_equal(dst.bins[1], 1);
	assert_int_equal(dst.overflow, 1);
	assert_int_equal(dst.noutliers, 1);
	assert_int_equal(dst.outliers[0], 1);
	assert_int_equal(lin_load(&dst.cycles), 2);
	assert_int_equal(lin_load(&dst.sum), 5);
	/* The source counts on, figures only, and freeing it leaves dst's bins alone. */
	assert_null(src.bins);
	assert_null(src.outliers);
	assert_int_equal(src.nbins, 0);
	assert_int_equal(src.overflow, 0);
	assert_int_equal(lin_load(&src.cycles), 2);
	lin_hist_record(&src, 999999);
	assert_int_equal(lin_load(&src.max), 999);
	lin_hist_free(&src);
	assert_int_equal(dst.bins[1], 1);
	lin_hist_free(&dst);
}

static void copying_the_figures_copies_cycles_min_max_last_and_sum_but_no_bins(void **state)
{
	(void)state;
	struct lin_hist src, dst;
	assert_int_equal(lin_hist_init(&src, 1, 10), 0);
	assert_int_equal(lin_hist_init(&dst, 1, 10), 0);
	lin_hist_record(&src, 8);
	lin_hist_record(&src, 3);
	lin_hist_record(&src, 5);
	lin_hist_copy_figures(&dst, &src);
	assert_int_equal(lin_load(&dst.cycles), 3);
	assert_int_equal(lin_load(&dst.min), 3);
	assert_int_equal(lin_load(&dst.max), 8);
	assert_int_equal(lin_load(&dst.last), 5);
	assert_int_equal(lin_load(&dst.sum), 16);
	assert_true(lin_hist_mean(&dst) == 16.0 / 3.0);
	for (uint32_t i = 0; i < dst.nbins; i++)
		assert_int_equal(dst.bins[i], 0);
	lin_hist_free(&src);
	lin_hist_free(&dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_are_truncated_to_whole_units_before_they_are_counted),
		cmocka_unit_test(overflows_keep_the_cycle_numbers_of_the_first_nbins_of_them),
		cmocka_unit_test(the_mean_is_cyclictests_mean_of_truncated_values),
		cmocka_unit_test(an_empty_histogram_reports_cyclictests_starting_minimum),
		cmocka_unit_test(impossible_shapes_are_refused),
		cmocka_unit_test(a_move_hands_over_the_bins_and_leaves_the_source_its_figures_and_no_bins),
		cmocka_unit_test(copying_the_figures_copies_cycles_min_max_last_and_sum_but_no_bins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
