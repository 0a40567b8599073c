/*
 * Unit tests for --checkpoint (src/measure/checkpoint.c): when one is due, how far
 * a result in the making reaches, and the partial document made of it, which
 * must read back as partial and leave the result to go on.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "measure/checkpoint.h"
#include "core/array.h"
#include "core/cpuset.h"
#include "core/hist.h"
#include "core/stats.h"
#include "result/json.h"
#include "result/result.h"

#define WIN UINT64_C(10000000)          /* 10 ms windows */
#define MIN (60u * NS_PER_SEC)

static const char *const names[] = { "latency" };

/* A window of CPU row i holding n samples of value v. */
static void add_window(struct result *res, size_t i, uint64_t index, unsigned n, uint64_t v)
{
	struct rec_window w;
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	memset(&w, 0, sizeof(w));
	w.index = index;
	w.start_ns = index * WIN;
	w.end_ns = (index + 1u) * WIN;
	stats_reset(&w.overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		stats_reset(&w.m[m].st);
	hist_reset(h);
	for (unsigned k = 0; k < n; k++) {
		stats_add(&w.m[0].st, v);
		hist_record(h, v);
	}
	assert_int_equal(result_add_window(res, &res->cpus[i], &w, h), 0);
	free(h);
}

/* A run in the making, as the runner has it: no elapsed, no stop reason yet. */
static void measuring(struct result *res)
{
	static char a0[] = "latscope", a1[] = "timer";
	char *const argv[] = { a0, a1 };
	struct cpuset set;

	assert_int_equal(cpuset_parse("0-1", &set), 0);
	assert_int_equal(result_init(res, "timer", 1, names, &set), 0);
	assert_int_equal(result_set_argv(res, 2, argv), 0);
	res->params = json_object();
	res->threshold_ns = 100000;
	res->start_realtime_ns = UINT64_C(1700000000000000000);
	snprintf(res->sys.hostname, sizeof(res->sys.hostname), "host");
	add_window(res, 0, 0, 100, 20000);
	add_window(res, 0, 1, 100, 30000);
	add_window(res, 1, 0, 50, 40000);
}

static void test_the_default_is_ten_minutes_for_runs_over_an_hour_or_without_an_end(void **state)
{
	(void)state;
	assert_int_equal(checkpoint_default(0), 10u * MIN);
	assert_int_equal(checkpoint_default(60u * MIN + 1u), 10u * MIN);
	assert_int_equal(checkpoint_default(30u * 24u * 60u * MIN), 10u * MIN);
	assert_int_equal(checkpoint_default(60u * MIN), 0);
	assert_int_equal(checkpoint_default(3u * MIN), 0);
}

static void test_a_late_checkpoint_does_not_shift_the_next_and_missed_ones_are_skipped(void **state)
{
	(void)state;
	const uint64_t every = 30u * NS_PER_SEC, due = 1000u + every;

	assert_int_equal(checkpoint_next(due, every, due), due + every);
	assert_int_equal(checkpoint_next(due, every, due + 250u * NS_PER_MS), due + every);
	assert_int_equal(checkpoint_next(due, every, due + every - 1u), due + every);
	assert_int_equal(checkpoint_next(due, every, due + every), due + 2u * every);
	/* the main thread was held for three intervals: one checkpoint, then the grid again */
	assert_int_equal(checkpoint_next(due, every, due + 3u * every + 5u), due + 4u * every);
	assert_int_equal(checkpoint_next(due, every, due - 1u), due + every);
}

static void test_a_result_in_the_making_reaches_the_end_of_its_latest_window(void **state)
{
	(void)state;
	struct result res = { 0 };
	struct cpuset set;

	assert_int_equal(cpuset_parse("0-1", &set), 0);
	assert_int_equal(result_init(&res, "timer", 1, names, &set), 0);
	assert_int_equal(checkpoint_elapsed(&res), 0);
	add_window(&res, 1, 0, 10, 5000);
	assert_int_equal(checkpoint_elapsed(&res), WIN);
	add_window(&res, 0, 0, 10, 5000);
	add_window(&res, 0, 1, 10, 5000);
	add_window(&res, 0, 2, 10, 5000);
	assert_int_equal(checkpoint_elapsed(&res), 3u * WIN);
	result_free(&res);
}

static void test_the_partial_document_reads_back_as_partial_with_every_sample_so_far(void **state)
{
	(void)state;
	struct result res = { 0 }, back = { 0 };
	struct lat_error err = { { 0 } };

	measuring(&res);
	char *text = checkpoint_document(&res, &err);
	assert_non_null(text);
	if (result_from_text(text, strlen(text), &back, &err) < 0) {
		print_error("%s\n", err.msg);
		fail();
	}
	assert_true(back.partial);
	assert_true(back.interrupted);
	assert_string_equal(back.stop_reason, "checkpoint");
	assert_int_equal(back.elapsed_ns, 2u * WIN);
	assert_int_equal(back.all.sum[0].count, 250);
	assert_int_equal(back.cpus[0].sum[0].count, 200);
	assert_int_equal(back.cpus[0].nwin, 2);
	json_t *doc = json_loads(text, 0, NULL);
	assert_true(json_is_true(json_object_get(doc, "partial")));
	json_decref(doc);
	result_free(&back);
	free(text);
	result_free(&res);
}

static void test_the_result_goes_on_after_a_checkpoint_and_ends_whole_and_not_partial(void **state)
{
	(void)state;
	struct result res = { 0 }, back = { 0 };
	struct lat_error err = { { 0 } };

	measuring(&res);
	free(checkpoint_document(&res, &err));
	/* what the runner sets at the end is its own again */
	assert_false(res.partial);
	assert_false(res.interrupted);
	assert_string_equal(res.stop_reason, "");
	assert_int_equal(res.elapsed_ns, 0);
	add_window(&res, 1, 1, 50, 50000);
	add_window(&res, 0, 2, 100, 60000);
	res.elapsed_ns = 3u * WIN;
	snprintf(res.stop_reason, sizeof(res.stop_reason), "duration");
	assert_int_equal(result_finalize(&res), 0);
	assert_int_equal(res.all.sum[0].count, 400);
	assert_int_equal(res.all.sum[0].max, 60000);

	json_t *doc = result_to_json(&res);
	char *text = result_json_dump(doc);
	assert_null(json_object_get(doc, "partial"));
	assert_int_equal(result_from_text(text, strlen(text), &back, &err), 0);
	assert_false(back.partial);
	assert_int_equal(back.all.sum[0].count, 400);
	result_free(&back);
	free(text);
	json_decref(doc);
	result_free(&res);
}

static void test_a_partial_that_is_not_true_or_false_is_refused_by_name(void **state)
{
	(void)state;
	struct result res = { 0 }, back = { 0 };
	struct lat_error err = { { 0 } };

	measuring(&res);
	char *text = checkpoint_document(&res, &err);
	json_t *doc = json_loads(text, 0, NULL);
	json_object_set_new(doc, "partial", json_string("yes"));
	char *bad = json_dumps(doc, 0);
	assert_int_equal(result_from_text(bad, strlen(bad), &back, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "partial"));
	free(bad);
	json_decref(doc);
	free(text);
	result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_default_is_ten_minutes_for_runs_over_an_hour_or_without_an_end),
		cmocka_unit_test(test_a_late_checkpoint_does_not_shift_the_next_and_missed_ones_are_skipped),
		cmocka_unit_test(test_a_result_in_the_making_reaches_the_end_of_its_latest_window),
		cmocka_unit_test(test_the_partial_document_reads_back_as_partial_with_every_sample_so_far),
		cmocka_unit_test(test_the_result_goes_on_after_a_checkpoint_and_ends_whole_and_not_partial),
		cmocka_unit_test(test_a_partial_that_is_not_true_or_false_is_refused_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
