/* The timer probe's deadlines (src/probe/timer.c): each CPU's period and its first deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cpuset.h"
#include "core/nstime.h"
#include "probe/timer.h"

/* CPUs 1, 3, 4 and 6: the measured CPUs' ranks are 0 to 3, whatever the numbers between them. */
static struct cpuset four_cpus(void)
{
	struct cpuset s;
	cpuset_clear(&s);
	cpuset_add(&s, 1);
	cpuset_add(&s, 3);
	cpuset_add(&s, 4);
	cpuset_add(&s, 6);
	return s;
}

static void test_without_an_offset_every_cpu_has_its_first_deadline_at_the_origin(void **state)
{
	(void)state;
	const struct cpuset s = four_cpus();
	const struct timer_params tp = { .interval_ns = NS_PER_MS };
	const struct timer_params with_distance = { .interval_ns = NS_PER_MS,
						    .distance_ns = 500u * NS_PER_US };

	for (unsigned cpu = 0; cpu < 8; cpu++) {
		assert_int_equal(timer_phase_of(&tp, &s, cpu), 0);
		assert_int_equal(timer_phase_of(&with_distance, &s, cpu), 0);
	}
}

static void test_the_nth_cpu_has_its_deadlines_n_offsets_after_the_first_cpu_s(void **state)
{
	(void)state;
	const struct cpuset s = four_cpus();
	const struct timer_params tp = { .interval_ns = NS_PER_MS,
					 .aligned_offset_ns = 200u * NS_PER_US };

	assert_int_equal(timer_phase_of(&tp, &s, 1), 0);
	assert_int_equal(timer_phase_of(&tp, &s, 3), 200u * NS_PER_US);
	assert_int_equal(timer_phase_of(&tp, &s, 4), 400u * NS_PER_US);
	assert_int_equal(timer_phase_of(&tp, &s, 6), 600u * NS_PER_US);
	/* every CPU keeps the one period */
	assert_int_equal(timer_interval_of(&tp, &s, 6), NS_PER_MS);
}

static void test_an_offset_past_the_period_is_taken_within_the_period_on_the_same_grid(void **state)
{
	(void)state;
	const struct cpuset s = four_cpus();
	const struct timer_params tp = { .interval_ns = NS_PER_MS,
					 .aligned_offset_ns = 400u * NS_PER_US };
	const struct timer_params whole = { .interval_ns = NS_PER_MS,
					    .aligned_offset_ns = 3u * NS_PER_MS };
	const struct timer_params longest = { .interval_ns = 3u * NS_PER_MS,
					      .aligned_offset_ns = 3600u * NS_PER_SEC - 1u };

	/* 0, 400us, 800us, 1.2ms: the fourth at 1.2ms - 1ms, on the grid 1.2ms + k * 1ms */
	assert_int_equal(timer_phase_of(&tp, &s, 4), 800u * NS_PER_US);
	assert_int_equal(timer_phase_of(&tp, &s, 6), 200u * NS_PER_US);
	/* a whole number of periods: the same instants as without an offset */
	assert_int_equal(timer_phase_of(&whole, &s, 6), 0);
	/* the largest offset the option takes, on the last of 4096 CPUs: no overflow */
	struct cpuset all;
	cpuset_clear(&all);
	for (unsigned cpu = 0; cpu < CPUSET_MAX; cpu++)
		cpuset_add(&all, cpu);
	const uint64_t off = longest.aligned_offset_ns % longest.interval_ns;
	assert_int_equal(timer_phase_of(&longest, &all, CPUSET_MAX - 1u),
			 (uint64_t)(CPUSET_MAX - 1u) * off % longest.interval_ns);
	assert_true(timer_phase_of(&longest, &all, CPUSET_MAX - 1u) < longest.interval_ns);
}

static void test_with_a_distance_each_cpu_s_offset_is_taken_within_its_own_period(void **state)
{
	(void)state;
	const struct cpuset s = four_cpus();
	const struct timer_params tp = { .interval_ns = NS_PER_MS,
					 .distance_ns = 500u * NS_PER_US,
					 .aligned_offset_ns = 800u * NS_PER_US };

	/* periods 1ms, 1.5ms, 2ms, 2.5ms; offsets 0, 800us, 1.6ms, 2.4ms */
	assert_int_equal(timer_interval_of(&tp, &s, 1), NS_PER_MS);
	assert_int_equal(timer_interval_of(&tp, &s, 6), 2500u * NS_PER_US);
	assert_int_equal(timer_phase_of(&tp, &s, 1), 0);
	assert_int_equal(timer_phase_of(&tp, &s, 3), 800u * NS_PER_US);
	assert_int_equal(timer_phase_of(&tp, &s, 4), 1600u * NS_PER_US);
	assert_int_equal(timer_phase_of(&tp, &s, 6), 2400u * NS_PER_US);
	const struct timer_params wrap = { .interval_ns = NS_PER_MS,
					   .distance_ns = 500u * NS_PER_US,
					   .aligned_offset_ns = 1200u * NS_PER_US };
	/* 1.2ms in 1.5ms; 2.4ms in 2ms is 400us; 3.6ms in 2.5ms is 1.1ms */
	assert_int_equal(timer_phase_of(&wrap, &s, 3), 1200u * NS_PER_US);
	assert_int_equal(timer_phase_of(&wrap, &s, 4), 400u * NS_PER_US);
	assert_int_equal(timer_phase_of(&wrap, &s, 6), 1100u * NS_PER_US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_without_an_offset_every_cpu_has_its_first_deadline_at_the_origin),
		cmocka_unit_test(
			test_the_nth_cpu_has_its_deadlines_n_offsets_after_the_first_cpu_s),
		cmocka_unit_test(
			test_an_offset_past_the_period_is_taken_within_the_period_on_the_same_grid),
		cmocka_unit_test(
			test_with_a_distance_each_cpu_s_offset_is_taken_within_its_own_period),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
