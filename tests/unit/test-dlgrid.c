/* Where a SCHED_DEADLINE thread's periods start (src/probe/dlgrid.c), on injected job readings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/nstime.h"
#include "probe/dlgrid.h"

#define P      NS_PER_MS
#define ORIGIN (UINT64_C(1000) * NS_PER_SEC)
#define TOL    250u     /* ns a reported latency may be off the injected delay, once the estimate settled */

/* The delay injected into job k: 0 for every fourth (the kernel ran it at its period's start), else up to 2.75us. */
static uint64_t delay(uint64_t k)
{
	return k % 4u == 0 ? 0 : 250u + (k * 37u % 11u) * 250u;
}

/* The kernel's period k in CLOCK_MONOTONIC: from s0, each period longer by ppb parts in 10^9. */
static uint64_t start_of(uint64_t s0, int64_t ppb, uint64_t k)
{
	return s0 + k * P + (uint64_t)((int64_t)(k * P) * ppb / 1000000000);
}

static void assert_near(uint64_t got, uint64_t want, uint64_t tol, uint64_t k)
{
	uint64_t diff = got > want ? got - want : want - got;
	if (diff > tol)
		fail_msg("job %llu: latency %llu ns, injected %llu ns", (unsigned long long)k, (unsigned long long)got,
			 (unsigned long long)want);
}

/*
 * Period 0 starts wake ns after the sleep's end (the wakeup's delay), the
 * kernel's periods drift by ppb; the latencies of jobs from settle on must
 * be the injected delays, with nothing missed.
 */
static void run_with(uint64_t (*delay_of)(uint64_t), uint64_t wake, int64_t ppb, uint64_t jobs, uint64_t settle)
{
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t t0 = dlgrid_init(&g, ORIGIN, ORIGIN, P, P, ORIGIN + (jobs + 1u) * P + jobs * P / 1000u);
	assert_int_equal(t0, ORIGIN);
	for (uint64_t k = 0; k < jobs; k++) {
		const bool recorded = dlgrid_job(&g, start_of(t0 + wake, ppb, k) + delay_of(k), &j);
		if (k < settle)
			continue;
		assert_true(recorded);
		assert_int_equal(j.missed, 0);
		assert_near(j.lat_ns, delay_of(k), TOL, k);
	}
}

static void run_steady(uint64_t wake, int64_t ppb, uint64_t jobs, uint64_t settle)
{
	run_with(delay, wake, ppb, jobs, settle);
}

/* delay() with one job in 97 late by 300us and one in 89 by 1.2ms (a period and a bit: the next runs at once). */
static uint64_t delay_with_late_jobs(uint64_t k)
{
	if (k % 97u == 50u)
		return 300u * NS_PER_US;
	if (k % 89u == 40u)
		return 1200u * NS_PER_US;
	if (k % 89u == 41u)
		return 200u * NS_PER_US + 2000u;        /* run as soon as the late one yielded, 2us after its reading */
	return delay(k);
}

static void test_the_first_wakeups_delay_is_not_in_the_later_latencies(void **state)
{
	(void)state;
	run_steady(40u * NS_PER_US, 0, 2000, 2u * DLGRID_WINDOW);
}

static void test_a_scheduler_clock_slower_than_monotonic_does_not_make_the_latency_creep(void **state)
{
	(void)state;
	run_steady(5u * NS_PER_US, 200000, 20000, 8u * DLGRID_WINDOW);
}

static void test_a_scheduler_clock_faster_than_monotonic_does_not_hide_the_latency(void **state)
{
	(void)state;
	run_steady(5u * NS_PER_US, -200000, 20000, 8u * DLGRID_WINDOW);
}

static void test_late_jobs_among_drifting_periods_keep_their_latency_and_move_no_estimate(void **state)
{
	(void)state;
	run_with(delay_with_late_jobs, 5u * NS_PER_US, 100000, 20000, 8u * DLGRID_WINDOW);
}

/* A grid settled on period starts ORIGIN + k * P, fed jobs 0 to k - 1. */
static uint64_t settled(struct dlgrid *g, uint64_t k_end, uint64_t end)
{
	struct dlgrid_job j;
	const uint64_t t0 = dlgrid_init(g, ORIGIN, ORIGIN, P, P, end);
	for (uint64_t k = 0; k < k_end; k++)
		(void)dlgrid_job(g, t0 + k * P + delay(k), &j);
	return t0;
}

/* Jobs first to last - 1 on time again: each is its delay late, nothing missed. */
static void on_the_grid(struct dlgrid *g, uint64_t t0, uint64_t first, uint64_t last)
{
	struct dlgrid_job j;
	for (uint64_t i = first; i < last; i++) {
		assert_true(dlgrid_job(g, t0 + i * P + delay(i), &j));
		assert_int_equal(j.missed, 0);
		assert_near(j.lat_ns, delay(i), TOL, i);
	}
}

/* The job read at now: a sample from from_ns, lat_ns late (give or take TOL), after missed periods. */
static void expect_job(struct dlgrid *g, uint64_t now, uint64_t missed, uint64_t from_ns, uint64_t lat_ns, uint64_t k)
{
	struct dlgrid_job j;
	assert_true(dlgrid_job(g, now, &j));
	assert_int_equal(j.missed, missed);
	assert_int_equal(j.from_ns, from_ns);
	assert_near(j.lat_ns, lat_ns, TOL, k);
}

/* Job k on time, yielding at y. */
static void on_time_yielding_at(struct dlgrid *g, uint64_t t0, uint64_t k, uint64_t y)
{
	struct dlgrid_job j;
	assert_true(dlgrid_job(g, t0 + k * P + delay(k), &j));
	assert_int_equal(j.missed, 0);
	dlgrid_yield(g, y);
}

/* Job k late by 1.5 periods: a sample of that latency, nothing missed. */
static void late_by_one_and_a_half_periods(struct dlgrid *g, uint64_t t0, uint64_t k)
{
	struct dlgrid_job j;
	assert_true(dlgrid_job(g, t0 + k * P + 3u * P / 2u, &j));
	assert_near(j.lat_ns, 3u * P / 2u, TOL, k);
	assert_int_equal(j.missed, 0);
}

static void test_a_job_late_by_a_period_is_followed_at_once_by_the_next_with_nothing_missed(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t k = 500, t0 = settled(&g, k, ORIGIN + 10000u * P);

	/* Before its deadline + a period: the kernel runs job k + 1 as soon as k yields. */
	late_by_one_and_a_half_periods(&g, t0, k);
	assert_true(dlgrid_job(&g, t0 + k * P + 3u * P / 2u + 2000u, &j));
	assert_near(j.lat_ns, P / 2u + 2000u, TOL, k + 1u);
	assert_int_equal(j.missed, 0);
	assert_int_equal(j.from_ns, t0 + (k + 1u) * P);
	on_the_grid(&g, t0, k + 2u, k + 300u);
}

static void test_a_job_late_past_the_next_deadline_restarts_the_grid_counting_the_periods_skipped(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t jobs = 2000, k = 500, t0 = settled(&g, k, ORIGIN + jobs * P);
	uint64_t count = k, missed = 0;

	/* Late by 3.5 periods: the kernel restarts its grid when the job yields, 1us after its reading. */
	const uint64_t late = t0 + k * P + 7u * P / 2u, s0 = late + 1000u;
	assert_true(dlgrid_job(&g, late, &j));
	assert_near(j.lat_ns, 7u * P / 2u, TOL, k);
	assert_int_equal(j.missed, 2);      /* periods k + 1 and k + 2 passed whole, k + 3 overlaps the restart */
	count++, missed += j.missed;
	for (uint64_t i = 0; dlgrid_job(&g, start_of(s0, 0, i) + delay(i), &j); i++) {
		count++, missed += j.missed;
		assert_int_equal(j.missed, 0);
		assert_near(j.lat_ns, delay(i), i < DLGRID_WINDOW ? 1000u + TOL : TOL, k + 1u + i);
	}
	/* Every period of the run is a sample or missed, give or take the one the restart cut. */
	assert_in_range(count + missed, jobs - 1u, jobs);
}

static void test_a_job_on_a_grid_point_a_period_on_was_on_time_and_the_period_before_missed(void **state)
{
	(void)state;
	struct dlgrid g;
	const uint64_t k = 500, t0 = settled(&g, k, ORIGIN + 10000u * P);

	/* The kernel skipped period k (pushed the deadline twice): job k reads at period k + 1's start. */
	expect_job(&g, t0 + (k + 1u) * P + 1000u, 1, t0 + (k + 1u) * P, 1000u, k);
	on_the_grid(&g, t0, k + 2u, k + 300u);
}

static void test_a_job_a_period_late_after_an_overrun_is_followed_a_period_on_and_counts_it_missed(void **state)
{
	(void)state;
	struct dlgrid g;
	const uint64_t k = 500, t0 = settled(&g, k, ORIGIN + 10000u * P);

	/* The next should run at once, but the kernel pushed it a period. */
	late_by_one_and_a_half_periods(&g, t0, k);
	expect_job(&g, t0 + (k + 2u) * P + delay(k + 2u), 1, t0 + (k + 2u) * P, delay(k + 2u), k + 2u);
	on_the_grid(&g, t0, k + 3u, k + 300u);
}

static void test_a_job_whose_recording_outlasted_its_period_misses_the_periods_until_the_next_reading(void **state)
{
	(void)state;
	struct dlgrid g;
	const uint64_t k = 500, t0 = settled(&g, k, ORIGIN + 10000u * P);

	/* Job k on time, stalled or throttled until just before period k + 1's start; the next reads at k + 3's. */
	on_time_yielding_at(&g, t0, k, t0 + (k + 1u) * P - 2000u);
	expect_job(&g, t0 + (k + 3u) * P + 3000u, 2, t0 + (k + 3u) * P, 3000u, k + 3u);
	on_the_grid(&g, t0, k + 4u, k + 300u);
}

static void test_a_job_yielding_past_the_next_periods_start_has_the_next_run_at_once_and_late(void **state)
{
	(void)state;
	struct dlgrid g;
	const uint64_t k = 500, t0 = settled(&g, k, ORIGIN + 10000u * P);

	/* Job k read on time, yielded just before period k + 2's start: the kernel runs k + 1 at once, that late. */
	on_time_yielding_at(&g, t0, k, t0 + (k + 2u) * P - 5000u);
	expect_job(&g, t0 + (k + 2u) * P - 3000u, 0, t0 + (k + 1u) * P, P - 3000u, k + 1u);
	on_the_grid(&g, t0, k + 2u, k + 300u);
}

static void test_a_job_read_and_yielding_just_before_the_estimated_start_changes_nothing(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t k = 500, t0 = settled(&g, k, ORIGIN + 10000u * P);

	/* The estimate a little behind the kernel's starts: a job reads before it and yields before it too. */
	assert_true(dlgrid_job(&g, t0 + k * P - 3000u, &j));
	assert_int_equal(j.lat_ns, 0);
	dlgrid_yield(&g, t0 + k * P - 1000u);
	assert_true(dlgrid_job(&g, t0 + (k + 1u) * P + 2000u, &j));
	assert_int_equal(j.missed, 0);
	assert_int_equal(j.from_ns, t0 + (k + 1u) * P);
}

static void test_a_job_read_before_and_yielding_after_the_next_deadline_restarts_the_grid_at_the_yield(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t jobs = 2000, k = 500, t0 = settled(&g, k, ORIGIN + jobs * P);
	uint64_t count = k, missed = 0;

	/* Read 1.9 periods late (no restart yet), recorded until 2.1 periods: the kernel restarts at the yield. */
	assert_true(dlgrid_job(&g, t0 + k * P + 19u * P / 10u, &j));
	assert_near(j.lat_ns, 19u * P / 10u, TOL, k);
	count++, missed += j.missed;
	const uint64_t s0 = t0 + k * P + 21u * P / 10u;
	dlgrid_yield(&g, s0);
	for (uint64_t i = 0; dlgrid_job(&g, start_of(s0, 0, i) + delay(i), &j); i++) {
		count++, missed += j.missed;
		if (i == 0)
			assert_int_equal(j.missed, 1);  /* period k + 1 passed whole */
		else
			assert_int_equal(j.missed, 0);
		assert_near(j.lat_ns, delay(i), i < DLGRID_WINDOW ? 1000u + TOL : TOL, k + 1u + i);
	}
	assert_in_range(count + missed, jobs - 1u, jobs);
}

static void test_a_late_job_the_kernel_restarted_its_grid_at_keeps_its_latency_and_no_later_job_inherits_it(
	void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t jobs = 2000, k = 500, t0 = settled(&g, k, ORIGIN + jobs * P);
	uint64_t count = k, missed = 0;

	/* Job k 0.7 periods late, and the kernel's periods start from its reading on. */
	const uint64_t s0 = t0 + k * P + 7u * P / 10u;
	assert_true(dlgrid_job(&g, s0, &j));
	assert_near(j.lat_ns, 7u * P / 10u, TOL, k);
	count++, missed += j.missed;
	for (uint64_t i = 1; dlgrid_job(&g, start_of(s0, 0, i) + delay(i), &j); i++) {
		count++, missed += j.missed;
		assert_int_equal(j.missed, 0);
		assert_near(j.lat_ns, delay(i), i < DLGRID_WINDOW ? 1000u + TOL : TOL, k + i);
	}
	assert_in_range(count + missed, jobs - 1u, jobs);
}

static void test_period_zero_is_a_sample_and_every_period_of_the_run_is_a_sample_or_missed(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	/* The thread could sleep only 2.5 periods after the origin: period 0 is the origin's period 3. */
	const uint64_t t0 = dlgrid_init(&g, ORIGIN, ORIGIN + 5u * P / 2u, P, P, ORIGIN + 1000u * P);
	uint64_t count = 0, missed = 0, k = 0;

	assert_int_equal(t0, ORIGIN + 3u * P);
	for (; dlgrid_job(&g, t0 + 30000u + k * P + delay(k), &j); k++) {
		if (k == 0) {
			assert_int_equal(j.from_ns, t0);
			assert_int_equal(j.lat_ns, 30000u + delay(0));
		}
		count++, missed += j.missed;
	}
	assert_int_equal(count, 997);
	assert_int_equal(count + missed, 1000);
}

static void test_a_job_on_a_grid_point_past_the_end_counts_the_periods_before_it_missed(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t jobs = 600, t0 = settled(&g, jobs - 1u, ORIGIN + jobs * P);

	/* The kernel skipped period 599, the run's last: its job reads at the end, and records nothing. */
	assert_false(dlgrid_job(&g, t0 + jobs * P + 1000u, &j));
	assert_int_equal(j.missed, 1);
}

static void test_a_sleep_that_ended_periods_late_counts_the_periods_it_covered_missed(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t t0 = dlgrid_init(&g, ORIGIN, ORIGIN, P, P, ORIGIN + 1000u * P);
	uint64_t count = 0, missed = 0, k = 0;

	/* Woken 2.5 periods after the sleep's end: period 0 is that late, periods 1 and 2 had no job. */
	const uint64_t s0 = t0 + 5u * P / 2u;
	for (; dlgrid_job(&g, start_of(s0, 0, k) + delay(k), &j); k++) {
		if (k == 0) {
			assert_int_equal(j.lat_ns, 5u * P / 2u);
			assert_int_equal(j.missed, 2);
		}
		count++, missed += j.missed;
	}
	assert_int_equal(count + missed, 1000);
}

static void test_a_restart_near_the_end_counts_no_period_past_it(void **state)
{
	(void)state;
	struct dlgrid g;
	struct dlgrid_job j;
	const uint64_t jobs = 600, t0 = settled(&g, jobs - 2u, ORIGIN + jobs * P);

	/* Job 598 late by 5.5 periods: only period 599 was still in the run. */
	assert_true(dlgrid_job(&g, t0 + (jobs - 2u) * P + 11u * P / 2u, &j));
	assert_int_equal(j.missed, 1);
	assert_false(dlgrid_job(&g, t0 + (jobs + 3u) * P + 1000u, &j));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_first_wakeups_delay_is_not_in_the_later_latencies),
		cmocka_unit_test(test_a_scheduler_clock_slower_than_monotonic_does_not_make_the_latency_creep),
		cmocka_unit_test(test_a_scheduler_clock_faster_than_monotonic_does_not_hide_the_latency),
		cmocka_unit_test(test_late_jobs_among_drifting_periods_keep_their_latency_and_move_no_estimate),
		cmocka_unit_test(test_a_job_late_by_a_period_is_followed_at_once_by_the_next_with_nothing_missed),
		cmocka_unit_test(test_a_job_late_past_the_next_deadline_restarts_the_grid_counting_the_periods_skipped),
		cmocka_unit_test(test_a_job_on_a_grid_point_a_period_on_was_on_time_and_the_period_before_missed),
		cmocka_unit_test(test_a_job_a_period_late_after_an_overrun_is_followed_a_period_on_and_counts_it_missed),
		cmocka_unit_test(test_a_job_whose_recording_outlasted_its_period_misses_the_periods_until_the_next_reading),
		cmocka_unit_test(test_a_job_yielding_past_the_next_periods_start_has_the_next_run_at_once_and_late),
		cmocka_unit_test(test_a_job_read_and_yielding_just_before_the_estimated_start_changes_nothing),
		cmocka_unit_test(test_a_job_read_before_and_yielding_after_the_next_deadline_restarts_the_grid_at_the_yield),
		cmocka_unit_test(test_a_late_job_the_kernel_restarted_its_grid_at_keeps_its_latency_and_no_later_job_inherits_it),
		cmocka_unit_test(test_period_zero_is_a_sample_and_every_period_of_the_run_is_a_sample_or_missed),
		cmocka_unit_test(test_a_job_on_a_grid_point_past_the_end_counts_the_periods_before_it_missed),
		cmocka_unit_test(test_a_sleep_that_ended_periods_late_counts_the_periods_it_covered_missed),
		cmocka_unit_test(test_a_restart_near_the_end_counts_no_period_past_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
