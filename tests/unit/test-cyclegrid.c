/* Where a program's cycles should have started (src/probe/cyclegrid.c), on injected call times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/nstime.h"
#include "probe/cyclegrid.h"

#define P  NS_PER_MS
#define T0 (UINT64_C(1000) * NS_PER_SEC)

/* The delay of cycle k: 5us at least, up to 60us, never the same twice running. */
static uint64_t delay(uint64_t k)
{
	return 5000u + (k * 7919u % 23u) * 2500u;
}

static void test_calls_with_due_times_are_late_by_exactly_their_delay_from_it(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	(void)state;
	cyclegrid_init(&g, P);
	for (uint64_t k = 0; k < 200; k++) {
		const uint64_t due = T0 + k * P;
		assert_true(cyclegrid_call(&g, due + delay(k), due, &c));
		assert_int_equal(c.late_ns, delay(k));
		assert_int_equal(c.from_ns, due);
		assert_int_equal(c.missed, 0);
	}
	assert_int_equal(g.exact, 200);
	assert_int_equal(g.estimated, 0);
}

static void test_a_due_time_periods_past_the_last_counts_the_periods_between_missed(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	(void)state;
	cyclegrid_init(&g, P);
	assert_true(cyclegrid_call(&g, T0 + 10000u, T0, &c));
	/* The program skipped two periods: its next sleep was to end three on. */
	assert_true(cyclegrid_call(&g, T0 + 3u * P + 8000u, T0 + 3u * P, &c));
	assert_int_equal(c.missed, 2);
	assert_int_equal(c.late_ns, 8000u);
}

static void test_without_due_times_lateness_is_the_delay_above_the_smallest_seen(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	(void)state;
	cyclegrid_init(&g, P);
	/* The first call (delay 5us + 7919 % 23 * 2.5us) places the grid; an earlier one moves it back. */
	assert_false(cyclegrid_call(&g, T0 + delay(0), 0, &c));
	uint64_t dmin = delay(0);
	for (uint64_t k = 1; k < 2000; k++) {
		assert_true(cyclegrid_call(&g, T0 + k * P + delay(k), 0, &c));
		if (delay(k) < dmin)
			dmin = delay(k);
		assert_int_equal(c.missed, 0);
		if (k >
		    100u) /* once the smallest delay (5us) has been seen, and windows have closed on it */
			assert_int_equal(c.late_ns, delay(k) - 5000u);
	}
	assert_int_equal(dmin, 5000u);
	assert_int_equal(g.estimated, 1999);
}

static void
test_a_call_two_and_a_half_periods_late_counts_two_missed_and_keeps_its_lateness(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	(void)state;
	cyclegrid_init(&g, P);
	for (uint64_t k = 0; k < 10; k++)
		cyclegrid_call(&g, T0 + k * P, 0, &c);
	assert_true(cyclegrid_call(&g, T0 + 10u * P + 5u * P / 2u, 0, &c));
	assert_int_equal(c.missed, 2);
	assert_int_equal(c.late_ns, 5u * P / 2u);
	/* The program kept its grid: the next cycle is on it again, on time. */
	assert_true(cyclegrid_call(&g, T0 + 13u * P, 0, &c));
	assert_int_equal(c.late_ns, 0);
	assert_int_equal(c.missed, 0);
}

static void test_a_loop_that_restarts_its_grid_at_a_late_cycle_is_followed_from_it(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	(void)state;
	cyclegrid_init(&g, P);
	for (uint64_t k = 0; k < 10; k++)
		cyclegrid_call(&g, T0 + k * P, 0, &c);
	/* 400us late, and the program's next = now + period from there. */
	const uint64_t late = T0 + 10u * P + 400000u;
	assert_true(cyclegrid_call(&g, late, 0, &c));
	assert_int_equal(c.late_ns, 400000u);
	for (uint64_t k = 1; k < 10; k++) {
		assert_true(cyclegrid_call(&g, late + k * P + 1000u, 0, &c));
		assert_int_equal(c.late_ns, 1000u);
	}
}

static void test_two_cycles_late_by_the_same_small_amount_are_both_late(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	(void)state;
	cyclegrid_init(&g, P);
	for (uint64_t k = 0; k < 10; k++)
		cyclegrid_call(&g, T0 + k * P, 0, &c);
	assert_true(cyclegrid_call(&g, T0 + 10u * P + 100000u, 0, &c));
	assert_true(cyclegrid_call(&g, T0 + 11u * P + 100000u, 0, &c));
	assert_int_equal(c.late_ns, 100000u);
}

static void
test_a_program_period_a_little_longer_than_the_given_one_does_not_make_lateness_creep(void **state)
{
	struct cyclegrid g;
	struct cyclegrid_call c;
	uint64_t most = 0;
	(void)state;
	/* 0.5us a cycle longer: 5ms over the run, which a fixed grid would report as lateness. */
	cyclegrid_init(&g, P);
	for (uint64_t k = 0; k < 10000; k++) {
		if (cyclegrid_call(&g, T0 + k * (P + 500u) + delay(k), 0, &c) && k > 200u &&
		    c.late_ns > most)
			most = c.late_ns;
	}
	/* Two windows of drift (64 * 0.5us each) above the largest delay, at most: a window's
	 * smallest delay moves the grid at its end, to where the drift was at that call. */
	if (most > 60000u + 2u * CYCLEGRID_WINDOW * 500u)
		fail_msg("lateness crept to %llu ns", (unsigned long long)most);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_with_due_times_are_late_by_exactly_their_delay_from_it),
		cmocka_unit_test(
			test_a_due_time_periods_past_the_last_counts_the_periods_between_missed),
		cmocka_unit_test(
			test_without_due_times_lateness_is_the_delay_above_the_smallest_seen),
		cmocka_unit_test(
			test_a_call_two_and_a_half_periods_late_counts_two_missed_and_keeps_its_lateness),
		cmocka_unit_test(
			test_a_loop_that_restarts_its_grid_at_a_late_cycle_is_followed_from_it),
		cmocka_unit_test(test_two_cycles_late_by_the_same_small_amount_are_both_late),
		cmocka_unit_test(
			test_a_program_period_a_little_longer_than_the_given_one_does_not_make_lateness_creep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
