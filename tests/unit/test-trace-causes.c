#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "trace/causes.h"

static struct trace_occupancy event(unsigned n, const struct trace_contrib *top, uint64_t other_ns)
{
	struct trace_occupancy occ;
	memset(&occ, 0, sizeof(occ));
	if (n)
		memcpy(occ.top, top, n * sizeof(*top));
	occ.ntop = n;
	occ.other_ns = other_ns;
	return occ;
}

static struct trace_contrib task(int32_t pid, const char *comm, uint64_t ns)
{
	struct trace_contrib c = { .ns = ns, .count = 1, .id = pid, .prio = 9, .kind = TRACE_OCC_TASK };
	strncpy(c.name, comm, sizeof(c.name) - 1);
	return c;
}

static void test_many_small_stretches_of_one_task_outrank_one_large_stretch_of_another(void **state)
{
	(void)state;
	struct trace_causes c = { 0 };
	struct trace_contrib big = task(7, "kworker", 5000000);
	struct trace_occupancy occ = event(1, &big, 0);
	assert_int_equal(trace_causes_add(&c, &occ), 0);
	for (int i = 0; i < 1000; i++) {
		struct trace_contrib small[2] = { task(42, "inject", 300000), { .ns = 1000, .count = 2, .id = -1,
										  .kind = TRACE_OCC_NO_EVENT } };
		strcpy(small[1].name, "no event");
		occ = event(2, small, 10);
		assert_int_equal(trace_causes_add(&c, &occ), 0);
	}
	trace_causes_rank(&c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.v[0].id, 42);
	assert_string_equal(c.v[0].name, "inject");
	assert_int_equal(c.v[0].ns, UINT64_C(300000000));
	assert_int_equal(c.v[0].count, 1000);
	assert_int_equal(c.v[1].id, 7);
	assert_int_equal(c.v[2].kind, TRACE_OCC_NO_EVENT);
	assert_int_equal(c.v[2].ns, 1000000);
	assert_int_equal(c.v[2].count, 2000);
	assert_int_equal(c.other_ns, 10000);
	trace_causes_free(&c);
	assert_null(c.v);
}

static void test_the_same_pid_under_a_new_name_is_a_new_cause(void **state)
{
	(void)state;
	struct trace_causes c = { 0 };
	struct trace_contrib a[2] = { task(5, "sh", 10), task(5, "make", 30) };
	struct trace_occupancy occ = event(2, a, 0);
	assert_int_equal(trace_causes_add(&c, &occ), 0);
	trace_causes_rank(&c);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.v[0].name, "make");
	assert_string_equal(c.v[1].name, "sh");
	trace_causes_free(&c);
}

static void test_a_thousand_distinct_causes_each_seen_three_times_are_summed_exactly(void **state)
{
	(void)state;
	struct trace_causes c = { 0 };
	for (int round = 0; round < 3; round++)
		for (int32_t pid = 1; pid <= 1000; pid += 2) {
			struct trace_contrib two[2] = { task(pid, "t", (uint64_t)pid), task(pid + 1, "t", (uint64_t)pid + 1) };
			struct trace_occupancy occ = event(2, two, 0);
			assert_int_equal(trace_causes_add(&c, &occ), 0);
		}
	trace_causes_rank(&c);
	assert_int_equal(c.n, 1000);
	for (size_t i = 0; i < c.n; i++) {
		assert_int_equal(c.v[i].id, 1000 - (int32_t)i);          /* largest first */
		assert_int_equal(c.v[i].ns, 3u * (uint64_t)c.v[i].id);
		assert_int_equal(c.v[i].count, 3);
	}
	trace_causes_free(&c);
}

static void test_an_event_with_no_contributor_adds_only_its_other_time(void **state)
{
	(void)state;
	struct trace_causes c = { 0 };
	struct trace_occupancy occ = event(0, NULL, 77);
	assert_int_equal(trace_causes_add(&c, &occ), 0);
	trace_causes_rank(&c);
	assert_int_equal(c.n, 0);
	assert_int_equal(c.other_ns, 77);
	trace_causes_free(&c);
}

static void test_no_event_gives_no_cause(void **state)
{
	(void)state;
	struct trace_causes c = { 0 };
	trace_causes_rank(&c);
	assert_int_equal(c.n, 0);
	trace_causes_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_small_stretches_of_one_task_outrank_one_large_stretch_of_another),
		cmocka_unit_test(test_the_same_pid_under_a_new_name_is_a_new_cause),
		cmocka_unit_test(test_a_thousand_distinct_causes_each_seen_three_times_are_summed_exactly),
		cmocka_unit_test(test_an_event_with_no_contributor_adds_only_its_other_time),
		cmocka_unit_test(test_no_event_gives_no_cause),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
