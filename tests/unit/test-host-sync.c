/* Lining a guest's clock up with its host's (src/host/sync.c), on synthetic exchanges with a known truth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/nstime.h"
#include "host/sync.h"

#define G0    (UINT64_C(5000) * NS_PER_SEC)     /* the guest's clock at the first exchange */
#define THETA INT64_C(1234500)                   /* host - guest at G0: +1234.5 us */
#define EVERY (250u * NS_PER_MS)                 /* four exchanges a second */

/* The host's clock as a function of the guest's: an offset, a drift, and a step at step_at (0: none). */
struct truth {
	int64_t theta;
	int64_t ppb;
	uint64_t step_at;
	int64_t step;
};

static uint64_t host_at(const struct truth *c, uint64_t g)
{
	int64_t off = c->theta + (int64_t)(g - G0) * c->ppb / 1000000000;
	if (c->step_at && g >= c->step_at)
		off += c->step;
	return g + (uint64_t)off;
}

/* One exchange sent at guest time t1: up and down the one-way delays (guest ns), the host holding it proc ns. */
static int exchange(struct host_sync *s, const struct truth *c, uint64_t t1, uint64_t up, uint64_t proc, uint64_t down)
{
	const uint64_t t2 = host_at(c, t1 + up);
	/* One ns more on the way back: the host's proc ns are a little longer in guest ns when it runs slower. */
	return host_sync_add(s, t1, t2, t2 + proc, t1 + up + proc + down + 1u);
}

/* n exchanges from guest time from, EVERY apart, with delays of 20-40 us varying in both directions. */
static void steady(struct host_sync *s, const struct truth *c, uint64_t from, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		const uint64_t up = (20u + k * 7u % 21u) * NS_PER_US, down = (20u + k * 13u % 21u) * NS_PER_US;
		assert_int_equal(exchange(s, c, from + k * EVERY, up, 5u * NS_PER_US, down), 0);
	}
}

/* A window fed n steady exchanges from G0 under truth c. */
static void start(struct host_sync *s, const struct truth *c, unsigned n)
{
	host_sync_init(s);
	steady(s, c, G0, n);
}

static uint64_t bound_at(const struct host_sync *s, uint64_t g)
{
	uint64_t h, bound;
	assert_int_equal(host_sync_host_of(s, g, &h, &bound), 0);
	return bound;
}

/* Every 100 ms from `from` to `to`: the truth lies within the answer's bound. */
static void assert_covered(const struct host_sync *s, const struct truth *c, uint64_t from, uint64_t to)
{
	for (uint64_t g = from; g <= to; g += 100u * NS_PER_MS) {
		uint64_t h, bound;
		assert_int_equal(host_sync_host_of(s, g, &h, &bound), 0);
		const uint64_t want = host_at(c, g), miss = h > want ? h - want : want - h;
		if (miss > bound)
			fail_msg("at guest %llu ns: host %llu, truth %llu, bound %llu", (unsigned long long)g,
				 (unsigned long long)h, (unsigned long long)want, (unsigned long long)bound);
	}
}

static void test_a_known_offset_and_drift_are_recovered_within_the_stated_bound(void **state)
{
	(void)state;
	const struct truth c = { .theta = THETA, .ppb = 3200 };
	struct host_sync s;
	start(&s, &c, 121);                           /* 30 s */
	struct host_sync_status st;
	assert_int_equal(host_sync_status(&s, &st), 0);
	assert_true(st.drift_ppm - 3.2 <= st.drift_bound_ppm && 3.2 - st.drift_ppm <= st.drift_bound_ppm);
	assert_true(st.drift_bound_ppm < 2.0);
	assert_true(st.bound_ns < 30e3);
	assert_int_equal(st.exchanges, 121);
	assert_int_equal(st.seconds, 31);
	assert_covered(&s, &c, G0 - 5u * NS_PER_SEC, G0 + 35u * NS_PER_SEC);
	char line[128];
	host_sync_describe(&s, line, sizeof(line));
	double off_us, ppm, bound_us;
	unsigned n;
	assert_int_equal(sscanf(line, "offset %lf us, drift %lf ppm, bound %lf us over %u exchanges", &off_us, &ppm,
				&bound_us, &n), 4);
	const double want_us = (double)(host_at(&c, G0 + 30u * NS_PER_SEC) - G0 - 30u * NS_PER_SEC) / 1e3;
	assert_true(off_us - want_us <= bound_us + 0.05 && want_us - off_us <= bound_us + 0.05);
	assert_int_equal(n, 121);
}

static void test_delays_all_slower_one_way_still_leave_the_truth_inside_the_bound(void **state)
{
	(void)state;
	const struct truth c = { .theta = -THETA, .ppb = -5000 };
	struct host_sync s;
	host_sync_init(&s);
	for (unsigned k = 0; k < 80; k++)
		assert_int_equal(exchange(&s, &c, G0 + k * EVERY, 10u * NS_PER_US, 2u * NS_PER_US, 300u * NS_PER_US), 0);
	uint64_t h, bound;
	assert_int_equal(host_sync_host_of(&s, G0 + 10u * NS_PER_SEC, &h, &bound), 0);
	assert_true(bound >= 145u * NS_PER_US);         /* the midpoints are 145 us off: the bound must say so */
	assert_covered(&s, &c, G0, G0 + 25u * NS_PER_SEC);
}

static void test_one_slow_exchange_among_fast_ones_changes_no_answer(void **state)
{
	(void)state;
	const struct truth c = { .theta = THETA, .ppb = 1000 };
	struct host_sync fast, mixed;
	start(&fast, &c, 40);
	start(&mixed, &c, 40);
	/* 5 ms out, 100 us back: its midpoint is 2.45 ms off. */
	assert_int_equal(exchange(&mixed, &c, G0 + 5u * NS_PER_SEC + 100u * NS_PER_MS, 5u * NS_PER_MS, 5u * NS_PER_US,
				  100u * NS_PER_US), 0);
	for (uint64_t g = G0; g < G0 + 12u * NS_PER_SEC; g += 333u * NS_PER_MS) {
		uint64_t h1, b1, h2, b2;
		assert_int_equal(host_sync_host_of(&fast, g, &h1, &b1), 0);
		assert_int_equal(host_sync_host_of(&mixed, g, &h2, &b2), 0);
		assert_int_equal(h1, h2);
		assert_int_equal(b1, b2);
	}
	struct host_sync_status st;
	assert_int_equal(host_sync_status(&mixed, &st), 0);
	assert_int_equal(st.exchanges, 41);             /* counted, not used */
	assert_int_equal(st.steps, 0);
}

static void test_a_clock_step_restarts_the_window_and_answers_wait_for_it(void **state)
{
	(void)state;
	const uint64_t at = G0 + 10u * NS_PER_SEC + 100u * NS_PER_MS;
	const struct truth c = { .theta = THETA, .ppb = 2000, .step_at = at, .step = 5 * (int64_t)NS_PER_MS };
	struct host_sync s;
	start(&s, &c, 40);                            /* the last at 9.75 s */
	uint64_t h, bound;
	steady(&s, &c, at, 1);
	assert_int_equal(host_sync_host_of(&s, at, &h, &bound), -EAGAIN);
	struct host_sync_status st;
	assert_int_equal(host_sync_status(&s, &st), -EAGAIN);
	steady(&s, &c, at + EVERY, 12);                  /* three seconds more */
	assert_int_equal(host_sync_status(&s, &st), 0);
	assert_int_equal(st.steps, 1);
	assert_int_equal(st.exchanges, 13);             /* only those after the step */
	assert_covered(&s, &c, at, at + 4u * NS_PER_SEC);
}

static void test_no_answer_comes_before_three_seconds_of_exchanges(void **state)
{
	(void)state;
	const struct truth c = { .theta = THETA };
	struct host_sync s;
	host_sync_init(&s);
	uint64_t h = 7, bound = 7;
	assert_int_equal(host_sync_host_of(&s, G0, &h, &bound), -EAGAIN);
	steady(&s, &c, G0, 8);                           /* two seconds */
	assert_int_equal(host_sync_host_of(&s, G0, &h, &bound), -EAGAIN);
	assert_int_equal(h, 7);
	assert_int_equal(bound, 7);
	char line[128];
	host_sync_describe(&s, line, sizeof(line));
	assert_string_equal(line, "not lined up yet (2 of 3 seconds)");
	steady(&s, &c, G0 + 2u * NS_PER_SEC, 1);
	assert_int_equal(host_sync_host_of(&s, G0, &h, &bound), 0);
}

static void test_an_exchange_that_runs_backwards_is_refused_and_ignored(void **state)
{
	(void)state;
	struct host_sync s;
	host_sync_init(&s);
	assert_int_equal(host_sync_add(&s, G0, G0 + 10u, G0 + 20u, G0 - 1u), -EINVAL);       /* t4 < t1 */
	assert_int_equal(host_sync_add(&s, G0, G0 + 20u, G0 + 10u, G0 + 100u), -EINVAL);     /* t3 < t2 */
	assert_int_equal(host_sync_add(&s, G0, G0 + 10u, G0 + 500u, G0 + 100u), -EINVAL);    /* held longer than waited */
	assert_int_equal(s.n, 0);
}

static void test_the_bound_grows_with_the_distance_from_the_samples(void **state)
{
	(void)state;
	const struct truth c = { .theta = THETA, .ppb = 3200 };
	struct host_sync s;
	start(&s, &c, 81);                            /* 20 s */
	const uint64_t last = G0 + 20u * NS_PER_SEC;
	const uint64_t in = bound_at(&s, last), ahead1 = bound_at(&s, last + NS_PER_SEC),
		       ahead10 = bound_at(&s, last + 10u * NS_PER_SEC), ahead60 = bound_at(&s, last + 60u * NS_PER_SEC);
	assert_true(in < ahead1);
	assert_true(ahead1 < ahead10);
	assert_true(ahead10 < ahead60);
	assert_true(bound_at(&s, G0) < bound_at(&s, G0 - 30u * NS_PER_SEC));
	assert_covered(&s, &c, last, last + 60u * NS_PER_SEC);
}

static void test_the_window_keeps_the_last_minute_only(void **state)
{
	(void)state;
	const struct truth c = { .theta = THETA, .ppb = 100 };
	struct host_sync s;
	start(&s, &c, 4u * 200u);                     /* 200 s */
	struct host_sync_status st;
	assert_int_equal(host_sync_status(&s, &st), 0);
	assert_int_equal(st.seconds, HOST_SYNC_WINDOW_S + 1u);
	assert_int_equal(st.exchanges, 4u * (HOST_SYNC_WINDOW_S + 1u));
	assert_covered(&s, &c, G0 + 150u * NS_PER_SEC, G0 + 205u * NS_PER_SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_known_offset_and_drift_are_recovered_within_the_stated_bound),
		cmocka_unit_test(test_delays_all_slower_one_way_still_leave_the_truth_inside_the_bound),
		cmocka_unit_test(test_one_slow_exchange_among_fast_ones_changes_no_answer),
		cmocka_unit_test(test_a_clock_step_restarts_the_window_and_answers_wait_for_it),
		cmocka_unit_test(test_no_answer_comes_before_three_seconds_of_exchanges),
		cmocka_unit_test(test_an_exchange_that_runs_backwards_is_refused_and_ignored),
		cmocka_unit_test(test_the_bound_grows_with_the_distance_from_the_samples),
		cmocka_unit_test(test_the_window_keeps_the_last_minute_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
