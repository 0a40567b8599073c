#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/nstime.h"
#include "trace/evbuf.h"
#include "trace/instance.h"

static struct trace_ev at(uint64_t ts, unsigned cpu)
{
	struct trace_ev e;
	memset(&e, 0, sizeof(e));
	e.ts = ts;
	e.cpu = (uint8_t)cpu;
	e.type = TRACE_EV_SCHED_SWITCH;
	return e;
}

static void test_events_land_in_the_array_of_their_cpu_in_order(void **state)
{
	(void)state;
	struct trace_events *e;
	assert_int_equal(trace_events_new(2, 0, &e), 0);
	for (uint64_t t = 1; t <= 10000; t++) {
		struct trace_ev ev = at(t, (unsigned)(t % 2));
		assert_int_equal(trace_events_append(e, &ev), 0);
	}
	assert_int_equal(e->cpu[0].n, 5000);
	assert_int_equal(e->cpu[1].n, 5000);
	assert_int_equal(e->cpu[1].ev[0].ts, 1);
	assert_int_equal(e->cpu[0].ev[4999].ts, 10000);
	assert_int_equal(trace_events_lost(e), 0);
	trace_events_free(e);
}

static void test_events_beyond_the_memory_bound_are_counted_not_stored(void **state)
{
	(void)state;
	struct trace_events *e;
	assert_int_equal(trace_events_new(1, 10 * sizeof(struct trace_ev), &e), 0);
	for (uint64_t t = 0; t < 15; t++) {
		struct trace_ev ev = at(t, 0);
		assert_int_equal(trace_events_append(e, &ev), t < 10 ? 0 : -E2BIG);
	}
	assert_int_equal(e->cpu[0].n, 10);
	assert_int_equal(e->cpu[0].capped, 5);
	assert_int_equal(trace_events_lost(e), 5);
	trace_events_free(e);
}

static void test_an_event_of_an_unknown_cpu_is_rejected(void **state)
{
	(void)state;
	struct trace_events *e;
	assert_int_equal(trace_events_new(2, 0, &e), 0);
	struct trace_ev ev = at(1, 2);
	assert_int_equal(trace_events_append(e, &ev), -ERANGE);
	trace_events_free(e);
	trace_events_free(NULL);
	assert_int_equal(trace_events_new(0, 0, &e), -EINVAL);
}

static void test_lower_bound_finds_the_first_event_at_or_after_a_time(void **state)
{
	(void)state;
	struct trace_ev ev[5];
	uint64_t ts[5] = { 10, 20, 20, 30, 40 };
	for (int i = 0; i < 5; i++)
		ev[i] = at(ts[i], 0);
	assert_int_equal(trace_ev_lower_bound(ev, 5, 0), 0);
	assert_int_equal(trace_ev_lower_bound(ev, 5, 20), 1);
	assert_int_equal(trace_ev_lower_bound(ev, 5, 21), 3);
	assert_int_equal(trace_ev_lower_bound(ev, 5, 41), 5);
	assert_int_equal(trace_ev_lower_bound(ev, 0, 5), 0);
}

static void test_buffer_size_follows_duration_and_rate_within_its_bounds(void **state)
{
	(void)state;
	assert_int_equal(trace_buffer_kb_for(0, 1000), TRACE_BUFFER_KB_MIN);
	assert_int_equal(trace_buffer_kb_for(NS_PER_SEC, 1000), TRACE_BUFFER_KB_MIN);
	/* 60 s x 20000 events/s x 48 B x 1.5 = 84375 KiB: capped. */
	assert_int_equal(trace_buffer_kb_for(60 * NS_PER_SEC, 20000), TRACE_BUFFER_KB_MAX);
	/* 60 s x 5000/s x 48 B x 1.5 = 21093 KiB. */
	assert_int_equal(trace_buffer_kb_for(60 * NS_PER_SEC, 5000), 21093);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_land_in_the_array_of_their_cpu_in_order),
		cmocka_unit_test(test_events_beyond_the_memory_bound_are_counted_not_stored),
		cmocka_unit_test(test_an_event_of_an_unknown_cpu_is_rejected),
		cmocka_unit_test(test_lower_bound_finds_the_first_event_at_or_after_a_time),
		cmocka_unit_test(test_buffer_size_follows_duration_and_rate_within_its_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
