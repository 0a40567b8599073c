/* Unit tests for oslat's figures, table and JSON (src/report/oslat.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/nstime.h"
#include "report/oslat.h"

/* A core whose gaps (ns) were counted in 1 us bins, nbins of them. */
static void core_of(struct cpu_result *cr, struct lin_hist *h, uint32_t nbins, const uint64_t *gaps, size_t n)
{
	memset(cr, 0, sizeof(*cr));
	assert_int_equal(lin_hist_init(h, NS_PER_US, nbins), 0);
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		lin_hist_record(h, gaps[i]);
		sum += (double)gaps[i];
	}
	cr->cpu = 3;
	cr->lin = h;
	cr->st[0].n = n;
	cr->st[0].mean = n ? sum / (double)n : 0.0;
}

static char *table(const struct oslat_view *v, const struct oslat_core *c, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(oslat_print_table(m, v, c, n), 0);
	fclose(m);
	return buf;
}

static void a_gap_of_k_whole_us_is_in_the_bucket_labelled_k_plus_one_and_the_last_takes_the_overflows(void **state)
{
	(void)state;
	const uint64_t gaps[] = { 999, 1000, 31999, 32000, 100000 };
	struct cpu_result cr;
	struct lin_hist h;
	struct oslat_core c;
	struct oslat_view v = { .bucket_size = 32 };

	core_of(&cr, &h, 32, gaps, 5);
	assert_int_equal(oslat_core_figures(&cr, &v, &c), 0);
	assert_int_equal(c.buckets[0], 1);
	assert_int_equal(c.buckets[1], 1);
	assert_int_equal(c.buckets[31], 3);
	assert_int_equal(c.count, 5);
	assert_int_equal(c.min_us, 1);
	assert_int_equal(c.max_us, 101);
	/* oslat's mean: 1 + 2 + 3 * 32 at the labels, plus the overflows' excess 0 + 68 */
	assert_true(c.average_us > 33.4 - 1e-9 && c.average_us < 33.4 + 1e-9);
	assert_true(c.duration_s > 165998e-9 - 1e-12 && c.duration_s < 165998e-9 + 1e-12);
	lin_hist_free(&h);
}

static void the_bias_moves_the_gaps_down_by_it_and_the_labels_up(void **state)
{
	(void)state;
	const uint64_t gaps[] = { 500, 1500, 2500, 3500, 9500 };
	struct cpu_result cr;
	struct lin_hist h;
	struct oslat_core c;
	struct oslat_view v = { .bucket_size = 5, .bias_us = 2 };

	core_of(&cr, &h, 7, gaps, 5);
	assert_int_equal(oslat_core_figures(&cr, &v, &c), 0);
	/* whole us 0, 1 and 2 less the bias are at most 0: the first bucket, labelled 003 */
	assert_int_equal(c.buckets[0], 3);
	assert_int_equal(c.buckets[1], 1);
	assert_int_equal(c.buckets[4], 1);
	assert_int_equal(c.min_us, 1);
	assert_int_equal(c.max_us, 10);
	/* 3 * 3 + 4 + 7 at the labels, and the overflow's excess, 9 - 2 - 5 */
	assert_true(c.average_us > 4.4 - 1e-9 && c.average_us < 4.4 + 1e-9);
	char *t = table(&v, &c, 1);
	assert_non_null(strstr(t, "    003 (us):\t 3\n    004 (us):\t 1\n"));
	assert_non_null(strstr(t, "    007 (us):\t 1 (including overflows)\n"));
	free(t);
	lin_hist_free(&h);
}

static void the_table_has_oslats_rows_widths_and_units(void **state)
{
	(void)state;
	const uint64_t gaps[] = { 20, 30, 1200, 9000 };
	struct cpu_result cr;
	struct lin_hist h;
	struct oslat_core c[2];
	struct oslat_view v = { .bucket_size = 5, .counter_mhz = 2445 };

	core_of(&cr, &h, 5, gaps, 4);
	assert_int_equal(oslat_core_figures(&cr, &v, &c[0]), 0);
	c[1] = c[0];
	c[1].cpu = 12;
	char *t = table(&v, c, 2);
	assert_string_equal(t, "        Core:\t 3 12\n"
			       "Counter Freq:\t 2445 2445 (Mhz)\n"
			       "    001 (us):\t 2 2\n"
			       "    002 (us):\t 1 1\n"
			       "    003 (us):\t 0 0\n"
			       "    004 (us):\t 0 0\n"
			       "    005 (us):\t 1 1 (including overflows)\n"
			       "     Minimum:\t 1 1 (us)\n"
			       "     Average:\t 3.250 3.250 (us)\n"
			       "     Maximum:\t 10 10 (us)\n"
			       "     Max-Min:\t 9 9 (us)\n"
			       "    Duration:\t 0.000 0.000 (sec)\n"
			       "\n");
	free(t);
	lin_hist_free(&h);
}

static void zero_omit_leaves_out_rows_of_zeros_but_never_the_last(void **state)
{
	(void)state;
	const uint64_t one[] = { 20, 30 }, other[] = { 2500 };
	struct cpu_result cr[2];
	struct lin_hist h[2];
	struct oslat_core c[2];
	struct oslat_view v = { .bucket_size = 6, .zero_omit = true };

	core_of(&cr[0], &h[0], 6, one, 2);
	core_of(&cr[1], &h[1], 6, other, 1);
	assert_int_equal(oslat_core_figures(&cr[0], &v, &c[0]), 0);
	assert_int_equal(oslat_core_figures(&cr[1], &v, &c[1]), 0);
	char *t = table(&v, c, 2);
	/* a row stays when any core has a count in it */
	assert_non_null(strstr(t, "Counter Freq:\t 0 0 (Mhz)\n"
				  "    001 (us):\t 2 0\n"
				  "    ...\n"
				  "    003 (us):\t 0 1\n"
				  "    ...\n"
				  "    006 (us):\t 0 0 (including overflows)\n"
				  "     Minimum:"));
	free(t);
	lin_hist_free(&h[0]);
	lin_hist_free(&h[1]);
}

static void a_histogram_too_short_for_the_buckets_and_bias_is_refused(void **state)
{
	(void)state;
	const uint64_t gaps[] = { 20 };
	struct cpu_result cr;
	struct lin_hist h;
	struct oslat_core c;
	struct oslat_view v = { .bucket_size = 32, .bias_us = 1 };

	core_of(&cr, &h, 32, gaps, 1);
	assert_int_equal(oslat_core_figures(&cr, &v, &c), -EINVAL);
	cr.lin = NULL;
	assert_int_equal(oslat_core_figures(&cr, &v, &c), -EINVAL);
	lin_hist_free(&h);
}

static void the_json_has_oslats_keys_and_the_histogram_by_label(void **state)
{
	(void)state;
	const uint64_t gaps[] = { 500, 1500, 2500, 3500 };
	struct result res;
	struct cpu_result cr;
	struct lin_hist h;
	struct oslat_core c;
	struct oslat_view v = { .bucket_size = 5, .bias_us = 2, .counter_mhz = 2445 };
	struct oslat_run run = { .cmdline = "oslat -B", .version = "x", .return_code = 0, .stored_id = 7 };

	memset(&res, 0, sizeof(res));
	core_of(&cr, &h, 7, gaps, 4);
	assert_int_equal(oslat_core_figures(&cr, &v, &c), 0);
	json_t *doc = oslat_json(&res, &v, &c, 1, &run);
	assert_non_null(doc);
	const char *keys[] = { "file_version", "cmdline:", "rt_test_version:", "start_time", "end_time", "return_code",
			       "sysinfo", "num_threads", "thread", "latscope_run_id" };
	size_t i = 0;
	const char *key;
	json_t *val;
	json_object_foreach(doc, key, val) {
		assert_true(i < sizeof(keys) / sizeof(keys[0]));
		assert_string_equal(key, keys[i++]);
	}
	json_t *t = json_object_get(json_object_get(doc, "thread"), "0");
	assert_int_equal(json_integer_value(json_object_get(t, "cpu")), 3);
	assert_int_equal(json_integer_value(json_object_get(t, "freq")), 2445);
	assert_int_equal(json_integer_value(json_object_get(t, "min")), 1);
	assert_int_equal(json_integer_value(json_object_get(t, "max")), 4);
	json_t *hist = json_object_get(t, "histogram");
	assert_int_equal(json_object_size(hist), 2);
	assert_int_equal(json_integer_value(json_object_get(hist, "3")), 3);
	assert_int_equal(json_integer_value(json_object_get(hist, "4")), 1);
	json_decref(doc);
	lin_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_gap_of_k_whole_us_is_in_the_bucket_labelled_k_plus_one_and_the_last_takes_the_overflows),
		cmocka_unit_test(the_bias_moves_the_gaps_down_by_it_and_the_labels_up),
		cmocka_unit_test(the_table_has_oslats_rows_widths_and_units),
		cmocka_unit_test(zero_omit_leaves_out_rows_of_zeros_but_never_the_last),
		cmocka_unit_test(a_histogram_too_short_for_the_buckets_and_bias_is_refused),
		cmocka_unit_test(the_json_has_oslats_keys_and_the_histogram_by_label),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
