/* The monitor's phases: periods of --rotate, cut short for the noise run when it is due. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/nstime.h"
#include "monitor/schedule.h"

#define S NS_PER_SEC

/* The phase at now is phase, for dur. */
static void expect(struct mon_schedule *s, uint64_t now, enum mon_phase phase, uint64_t dur)
{
	uint64_t got;

	assert_int_equal(mon_schedule_next(s, now, &got), phase);
	assert_int_equal(got, dur);
}

/* Periods of a minute, a noise run of 10 s every 100 s from 0. */
static struct mon_schedule noise_every_100s(bool after_period)
{
	struct mon_schedule s;

	mon_schedule_init(&s, 60 * S, 100 * S, 10 * S, 0);
	s.after_period = after_period;
	return s;
}

static void test_without_noise_every_phase_is_a_period_of_rotate(void **state)
{
	struct mon_schedule s;

	(void)state;
	mon_schedule_init(&s, 60 * S, 0, 0, 1000 * S);
	for (unsigned i = 0; i < 3; i++)
		expect(&s, (1000u + 60u * i) * S, MON_PERIOD, 60 * S);
}

static void test_a_period_ends_when_the_noise_run_is_due_then_the_noise_runs(void **state)
{
	struct mon_schedule s = noise_every_100s(false);

	(void)state;
	expect(&s, 0, MON_PERIOD, 60 * S);
	expect(&s, 60 * S, MON_PERIOD, 40 * S);
	expect(&s, 100 * S - NS_PER_MS, MON_NOISE, 10 * S);
}

static void test_a_noise_run_is_never_followed_by_another(void **state)
{
	struct mon_schedule s = noise_every_100s(true);

	(void)state;
	expect(&s, 100 * S, MON_NOISE, 10 * S);
	/* not yet told that it ended: still due, yet a period comes first */
	expect(&s, 110 * S, MON_PERIOD, 60 * S);
}

static void test_a_period_before_a_noise_run_is_never_shorter_than_a_second(void **state)
{
	struct mon_schedule s = noise_every_100s(true);

	(void)state;
	expect(&s, 99 * S + S / 2u, MON_PERIOD, S);
}

static void test_the_next_noise_run_is_due_on_the_grid_after_its_end(void **state)
{
	struct mon_schedule s = noise_every_100s(false);

	(void)state;
	mon_schedule_noise_done(&s, 50 * S);             /* before it was due */
	assert_int_equal(s.next_noise_ns, 200 * S);
	mon_schedule_noise_done(&s, 200 * S);            /* on time */
	assert_int_equal(s.next_noise_ns, 300 * S);
	mon_schedule_noise_done(&s, 555 * S);            /* runs skipped: the grid holds */
	assert_int_equal(s.next_noise_ns, 600 * S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_noise_every_phase_is_a_period_of_rotate),
		cmocka_unit_test(test_a_period_ends_when_the_noise_run_is_due_then_the_noise_runs),
		cmocka_unit_test(test_a_noise_run_is_never_followed_by_another),
		cmocka_unit_test(test_a_period_before_a_noise_run_is_never_shorter_than_a_second),
		cmocka_unit_test(test_the_next_noise_run_is_due_on_the_grid_after_its_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
