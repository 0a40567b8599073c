/* The step detection of a probe's clock against CLOCK_MONOTONIC (src/probe/clockstep.c), on injected readings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/nstime.h"
#include "probe/clockstep.h"

/* A realtime clock about 56 years ahead of monotonic, as on a machine booted today. */
#define REALTIME_AHEAD (UINT64_C(1764600000) * NS_PER_SEC)

/* A reading at monotonic time mono (a bracket of 200 ns around it), the clock offset by off. */
static struct clock_reading at(uint64_t mono, int64_t off)
{
	return (struct clock_reading){ .mono_before = mono - 100u, .clock = mono + (uint64_t)off,
				       .mono_after = mono + 100u };
}

static void test_a_clock_that_keeps_its_offset_from_monotonic_shows_no_step(void **state)
{
	(void)state;
	struct clock_step cs;
	const int64_t off = (int64_t)REALTIME_AHEAD;
	struct clock_reading r = at(10u * NS_PER_SEC, off);

	clock_step_start(&cs, &r);
	for (uint64_t s = 11; s < 100; s++) {
		r = at(s * NS_PER_SEC, off);
		assert_int_equal(clock_step_check(&cs, &r), 0);
	}
	assert_int_equal(cs.steps, 0);
	assert_int_equal(cs.largest, 0);
}

static void test_a_step_forward_is_seen_with_its_size_and_when(void **state)
{
	(void)state;
	struct clock_step cs;
	const int64_t off = (int64_t)REALTIME_AHEAD;
	struct clock_reading r = at(10u * NS_PER_SEC, off);

	clock_step_start(&cs, &r);
	r = at(11u * NS_PER_SEC, off);
	assert_int_equal(clock_step_check(&cs, &r), 0);
	/* settimeofday one second ahead, between the readings at 11 s and 12 s */
	r = at(12u * NS_PER_SEC, off + (int64_t)NS_PER_SEC);
	assert_int_equal(clock_step_check(&cs, &r), (int64_t)NS_PER_SEC);
	/* from then on the new offset is the clock's: no second step */
	r = at(13u * NS_PER_SEC, off + (int64_t)NS_PER_SEC);
	assert_int_equal(clock_step_check(&cs, &r), 0);
	assert_int_equal(cs.steps, 1);
	assert_int_equal(cs.largest, (int64_t)NS_PER_SEC);
	assert_int_equal(cs.largest_at, 2u * NS_PER_SEC);
}

static void test_a_step_back_is_seen_as_negative(void **state)
{
	(void)state;
	struct clock_step cs;
	const int64_t off = (int64_t)REALTIME_AHEAD;
	struct clock_reading r = at(5u * NS_PER_SEC, off);

	clock_step_start(&cs, &r);
	r = at(6u * NS_PER_SEC, off - 300 * (int64_t)NS_PER_MS);
	assert_int_equal(clock_step_check(&cs, &r), -300 * (int64_t)NS_PER_MS);
	assert_int_equal(cs.steps, 1);
	assert_int_equal(cs.largest, -300 * (int64_t)NS_PER_MS);
}

static void test_a_change_within_the_slew_and_the_readings_error_is_not_a_step(void **state)
{
	(void)state;
	struct clock_step cs;
	struct clock_reading r = at(NS_PER_SEC, 0);

	clock_step_start(&cs, &r);
	/* 500 ppm of one second, plus both readings' half brackets and the floor */
	int64_t allowed = (int64_t)(NS_PER_SEC / 2000u + 100u + 100u + CLOCK_STEP_FLOOR_NS);
	r = at(2u * NS_PER_SEC, allowed);
	assert_int_equal(clock_step_check(&cs, &r), 0);
	r = at(3u * NS_PER_SEC, allowed + allowed + 1);
	assert_int_equal(clock_step_check(&cs, &r), allowed + 1);
	assert_int_equal(cs.steps, 1);
}

static void test_a_wide_bracket_widens_what_is_not_a_step(void **state)
{
	(void)state;
	struct clock_step cs;
	struct clock_reading r = at(NS_PER_SEC, 0);

	clock_step_start(&cs, &r);
	/* the main thread was preempted for 1 ms between its reads: 0.5 ms of doubt */
	r = (struct clock_reading){ .mono_before = 2u * NS_PER_SEC - NS_PER_MS, .clock = 2u * NS_PER_SEC + 900u * NS_PER_US,
				    .mono_after = 2u * NS_PER_SEC + NS_PER_MS };
	assert_int_equal(clock_step_check(&cs, &r), 0);
	assert_int_equal(cs.steps, 0);
}

static void test_the_largest_of_several_steps_is_kept_with_its_sign(void **state)
{
	(void)state;
	struct clock_step cs;
	int64_t off = 0;
	struct clock_reading r = at(NS_PER_SEC, off);

	clock_step_start(&cs, &r);
	off += 10 * (int64_t)NS_PER_MS;
	r = at(2u * NS_PER_SEC, off);
	assert_int_equal(clock_step_check(&cs, &r), 10 * (int64_t)NS_PER_MS);
	off -= 2 * (int64_t)NS_PER_SEC;
	r = at(3u * NS_PER_SEC, off);
	assert_int_equal(clock_step_check(&cs, &r), -2 * (int64_t)NS_PER_SEC);
	off += 50 * (int64_t)NS_PER_MS;
	r = at(4u * NS_PER_SEC, off);
	assert_int_equal(clock_step_check(&cs, &r), 50 * (int64_t)NS_PER_MS);
	assert_int_equal(cs.steps, 3);
	assert_int_equal(cs.largest, -2 * (int64_t)NS_PER_SEC);
	assert_int_equal(cs.largest_at, 2u * NS_PER_SEC);
}

static void test_a_clock_read_here_keeps_its_offset_from_monotonic(void **state)
{
	(void)state;
	struct clock_step cs;
	struct clock_reading r;

	clock_read_against_mono(CLOCK_BOOTTIME, &r);
	assert_true(r.mono_after >= r.mono_before && r.clock >= r.mono_before);
	clock_step_start(&cs, &r);
	for (int i = 0; i < 100; i++) {
		clock_read_against_mono(CLOCK_BOOTTIME, &r);
		assert_int_equal(clock_step_check(&cs, &r), 0);
	}
	assert_string_equal(clock_id_name(CLOCK_TAI), "CLOCK_TAI");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_clock_that_keeps_its_offset_from_monotonic_shows_no_step),
		cmocka_unit_test(test_a_step_forward_is_seen_with_its_size_and_when),
		cmocka_unit_test(test_a_step_back_is_seen_as_negative),
		cmocka_unit_test(test_a_change_within_the_slew_and_the_readings_error_is_not_a_step),
		cmocka_unit_test(test_a_wide_bracket_widens_what_is_not_a_step),
		cmocka_unit_test(test_the_largest_of_several_steps_is_kept_with_its_sign),
		cmocka_unit_test(test_a_clock_read_here_keeps_its_offset_from_monotonic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
