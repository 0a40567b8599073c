/* --keep: what a monitor removes after storing a period, and what it never touches. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/nstime.h"
#include "monitor/keep.h"

#define HOUR (UINT64_C(3600) * NS_PER_SEC)

static struct run_info run_of(const char *probe, int64_t id, uint64_t start, const char *monitor, bool partial)
{
	struct run_info r = { .id = id, .start_realtime_ns = start, .partial = partial };
	snprintf(r.probe, sizeof(r.probe), "%s", probe);
	if (monitor) {
		r.labels.n = 2;
		snprintf(r.labels.items[0].key, LABEL_KEY_MAX, "site");
		snprintf(r.labels.items[0].value, LABEL_VALUE_MAX, "lab");
		snprintf(r.labels.items[1].key, LABEL_KEY_MAX, "monitor");
		snprintf(r.labels.items[1].value, LABEL_VALUE_MAX, "%s", monitor);
	}
	return r;
}

static struct run_info run(int64_t id, uint64_t start, const char *monitor, bool partial)
{
	return run_of("timer", id, start, monitor, partial);
}

static void test_keep_reads_a_count_or_a_duration_with_its_unit(void **state)
{
	(void)state;
	struct keep_rule k;
	struct lat_error err;

	assert_int_equal(keep_parse("2", &k, &err), 0);
	assert_true(k.by_count);
	assert_int_equal(k.count, 2);
	assert_int_equal(keep_parse("7d", &k, &err), 0);
	assert_false(k.by_count);
	assert_int_equal(k.age_ns, 7u * 24u * HOUR);
	assert_int_equal(keep_parse("0", &k, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "option '--keep': 0 runs is out of range"));
	assert_int_equal(keep_parse("1.5", &k, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "option '--keep': '1.5' is neither"));
	assert_int_equal(keep_parse("soon", &k, &err), -EINVAL);
}

static void test_keep_by_count_removes_the_oldest_monitor_runs_only(void **state)
{
	(void)state;
	const struct run_info runs[] = {
		run(1, 1 * HOUR, "a", false), run(2, 2 * HOUR, NULL, false), run(3, 3 * HOUR, "b", false),
		run(4, 4 * HOUR, "a", false), run(5, 5 * HOUR, NULL, false), run(6, 6 * HOUR, "a", false),
	};
	struct keep_rule k = { .by_count = true, .count = 2 };
	int64_t ids[6];

	assert_int_equal(keep_select(runs, 6, &k, 7 * HOUR, ids), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 3);
	k.count = 10;
	assert_int_equal(keep_select(runs, 6, &k, 7 * HOUR, ids), 0);
}

static void test_keep_by_age_removes_runs_that_started_before_the_limit(void **state)
{
	(void)state;
	const struct run_info runs[] = {
		run(1, 1 * HOUR, "a", false), run(2, 2 * HOUR, NULL, false), run(3, 5 * HOUR, "a", false),
	};
	struct keep_rule k = { .age_ns = 3 * HOUR };
	int64_t ids[3];

	assert_int_equal(keep_select(runs, 3, &k, 6 * HOUR, ids), 1);
	assert_int_equal(ids[0], 1);
}

static void test_keep_by_count_keeps_the_newest_n_of_each_probe(void **state)
{
	(void)state;
	const struct run_info runs[] = {
		run_of("timer", 1, 1 * HOUR, "a", false), run_of("noise", 2, 2 * HOUR, "a", false),
		run_of("timer", 3, 3 * HOUR, "a", false), run_of("noise", 4, 4 * HOUR, "a", false),
		run_of("timer", 5, 5 * HOUR, "a", false),
	};
	struct keep_rule k = { .by_count = true, .count = 2 };
	int64_t ids[5];

	/* two periods and two noise runs stay: noise runs do not take the periods' places */
	assert_int_equal(keep_select(runs, 5, &k, 6 * HOUR, ids), 1);
	assert_int_equal(ids[0], 1);
}

static void test_keep_never_removes_a_partial_run(void **state)
{
	(void)state;
	const struct run_info runs[] = { run(1, 1 * HOUR, "a", true), run(2, 2 * HOUR, "a", false) };
	struct keep_rule k = { .by_count = true, .count = 1 };
	int64_t ids[2];

	assert_int_equal(keep_select(runs, 2, &k, 9 * HOUR, ids), 0);
	k = (struct keep_rule){ .age_ns = HOUR };
	assert_int_equal(keep_select(runs, 2, &k, 9 * HOUR, ids), 1);
	assert_int_equal(ids[0], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_reads_a_count_or_a_duration_with_its_unit),
		cmocka_unit_test(test_keep_by_count_removes_the_oldest_monitor_runs_only),
		cmocka_unit_test(test_keep_by_age_removes_runs_that_started_before_the_limit),
		cmocka_unit_test(test_keep_by_count_keeps_the_newest_n_of_each_probe),
		cmocka_unit_test(test_keep_never_removes_a_partial_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
