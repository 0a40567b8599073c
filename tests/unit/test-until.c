/*
 * Unit tests for --until's stopping rule (src/result/until.c): the two forms
 * and what a bad one is told, and the decisions on runs whose answer is
 * known: none above the latency for long enough (below by the count alone),
 * many above it (above by the count), an exponential tail whose once-an-hour
 * level the fit places far under the limit (below by the fit), and a short
 * run that can tell neither (open, with how much longer).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cpuset.h"
#include "core/nstime.h"
#include "result/result.h"
#include "result/until.h"

#include "rng.h"

static const char *const names[] = { "latency" };

/* ---- parsing ---- */

static struct until parse_ok(const char *text)
{
	struct until u;
	struct lat_error err = { { 0 } };
	if (until_parse(text, &u, &err) != 0)
		fail_msg("'%s' refused: %s", text, err.msg);
	return u;
}

static void parse_bad(const char *text, const char *says)
{
	struct until u = { .x_ns = 12345 };
	struct lat_error err = { { 0 } };
	assert_int_equal(until_parse(text, &u, &err), -EINVAL);
	if (!strstr(err.msg, says))
		fail_msg("'%s': '%s' does not say '%s'", text, err.msg, says);
	assert_int_equal(u.x_ns, 12345); /* untouched */
}

static void test_until_reads_a_level_rule_and_writes_it_back(void **state)
{
	(void)state;
	struct until u = parse_ok("level(1h) < 100us");
	assert_int_equal(u.kind, UNTIL_LEVEL);
	assert_int_equal(u.period, TAIL_HOUR);
	assert_int_equal(u.x_ns, 100000);
	assert_true(fabs(u.per_hour - 1.0) < 1e-12);
	assert_string_equal(u.text, "level(1h) < 100us");
	u = parse_ok("  level( 1day )<2.5ms ");
	assert_int_equal(u.x_ns, 2500000);
	assert_true(fabs(u.per_hour - 1.0 / 24.0) < 1e-12);
	/* a bare limit is microseconds, as every latency option's */
	assert_int_equal(parse_ok("level(1min) < 250").x_ns, 250000);
}

static void test_until_reads_a_rate_rule_in_any_unit_as_per_hour(void **state)
{
	(void)state;
	struct until u = parse_ok("rate(>100us) < 1/h");
	assert_int_equal(u.kind, UNTIL_RATE);
	assert_int_equal(u.x_ns, 100000);
	assert_true(fabs(u.per_hour - 1.0) < 1e-12);
	assert_string_equal(u.text, "rate(>100us) < 1/h");
	assert_true(fabs(parse_ok("rate(> 1ms) < 2/min").per_hour - 120.0) < 1e-9);
	assert_true(fabs(parse_ok("rate(>1ms)<0.5/day").per_hour - 0.5 / 24.0) < 1e-12);
	assert_true(fabs(parse_ok("rate(>1ms) < 3/s").per_hour - 10800.0) < 1e-9);
}

static void test_until_names_what_is_wrong_with_a_bad_rule(void **state)
{
	(void)state;
	parse_bad("", "expected level(P) < DUR or rate(>DUR) < N/U");
	parse_bad("max < 100us", "expected level(P) < DUR");
	parse_bad("level(1h) > 100us", "expected level(P) < DUR");
	parse_bad("level(1h < 100us", "expected level(P) < DUR");
	parse_bad("level(2h) < 100us",
		  "the period of level(P) is one of 1s, 1min, 1h, 1day or 1year");
	parse_bad("level(1h) < 0", "the limit is a latency above 0");
	parse_bad("level(1h) < fast", "the limit is a latency above 0");
	parse_bad("rate(100us) < 1/h", "rate(>DUR) names the latency after '>'");
	parse_bad("rate(>100us) < 1", "the rate limit is N/U");
	parse_bad("rate(>100us) < 1ms/h", "the rate limit is N/U");
	parse_bad("rate(>100us) < 0/h", "the rate limit is N/U");
	parse_bad("rate(>100us) < 1/week",
		  "the rate limit's unit is one of s, min, h, day or year");
}

/* ---- decisions ---- */

/* One CPU's run in the making: windows of win_ns, as the runner adds them. */
static void start(struct result *res)
{
	struct cpuset set;
	assert_int_equal(cpuset_parse("0", &set), 0);
	assert_int_equal(result_init(res, "timer", 1, names, &set), 0);
}

/* A window holding n samples: each v, or (v 0) exponential of mean mean_ns. */
static void add_window(struct result *res, uint64_t index, uint64_t win_ns, unsigned n, uint64_t v,
		       double mean_ns)
{
	struct rec_window w;
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	memset(&w, 0, sizeof(w));
	w.index = index;
	w.start_ns = index * win_ns;
	w.end_ns = (index + 1u) * win_ns;
	stats_reset(&w.overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		stats_reset(&w.m[m].st);
	hist_reset(h);
	for (unsigned k = 0; k < n; k++) {
		uint64_t s = v ? v : (uint64_t)llround(1000.0 - mean_ns * log(rng_unit_open0()));
		stats_add(&w.m[0].st, s);
		hist_record(h, s);
	}
	assert_int_equal(result_add_window(res, &res->cpus[0], &w, h), 0);
	free(h);
}

static struct until_state judge(const char *rule, const struct result *res)
{
	struct until u = parse_ok(rule);
	struct until_state s;
	struct lat_error err;
	assert_int_equal(until_judge(&u, res, &s, &err), 0);
	return s;
}

static void test_until_none_above_for_long_enough_is_below_by_the_count_alone(void **state)
{
	(void)state;
	struct result res;
	start(&res);
	/* 3 hours without a sample above 1 ms: the exact bound, 3.69 a run, is still over 1/h */
	for (uint64_t i = 0; i < 3; i++)
		add_window(&res, i, 3600u * NS_PER_SEC, 1000, 20000, 0);
	struct until_state s = judge("rate(>1ms) < 1/h", &res);
	assert_int_equal(s.decision, UNTIL_OPEN);
	assert_true(s.at.counted);
	/* the count's bound falls as one over the time: about 0.7 h more */
	assert_true(s.more_s > 0.5 * 3600.0 && s.more_s < 1.0 * 3600.0);
	add_window(&res, 3, 3600u * NS_PER_SEC, 1000, 20000, 0);
	s = judge("rate(>1ms) < 1/h", &res);
	assert_int_equal(s.decision, UNTIL_BELOW);
	assert_true(s.at.counted && s.at.is_rate);
	assert_true(s.at.value.hi < 1.0 && s.at.value.est == 0.0);
	/* a level is the same question: the count decides it too */
	assert_int_equal(judge("level(1h) < 1ms", &res).decision, UNTIL_BELOW);
	json_t *j = until_to_json(&(struct until){ 0 }, &s);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "decision")), "below");
	assert_true(json_is_null(json_object_get(j, "more_s")));
	json_decref(j);
	result_free(&res);
}

static void test_until_many_above_is_above_by_the_count_whatever_the_fit(void **state)
{
	(void)state;
	struct result res;
	start(&res);
	/* 2 s with a sample of 5 ms in each of 10 windows: 18000/h, far over once a minute */
	for (uint64_t i = 0; i < 10; i++) {
		add_window(&res, 2 * i, 100u * NS_PER_MS, 100, 20000, 0);
		add_window(&res, 2 * i + 1, 100u * NS_PER_MS, 1, 5000000, 0);
	}
	struct until_state s = judge("level(1min) < 1ms", &res);
	assert_int_equal(s.decision, UNTIL_ABOVE);
	assert_true(s.at.counted);
	assert_true(s.at.value.lo > 60.0);
	assert_int_equal(judge("rate(>1ms) < 100/h", &res).decision, UNTIL_ABOVE);
	/* a limit above every sample: the count cannot say above, and 2 s cannot say below */
	s = judge("rate(>10ms) < 1/h", &res);
	assert_int_equal(s.decision, UNTIL_OPEN);
	assert_true(isfinite(s.more_s) && s.more_s > 3600.0);
	result_free(&res);
}

/* 200 windows of 1 s, 1000 exponential samples of mean 10 us each (1 us added):
 * the once-an-hour level is 1 us + 10 us ln(3.6e6), about 152 us. */
static void exponential_run(struct result *res, uint64_t seed)
{
	rng_seed(seed);
	start(res);
	for (uint64_t i = 0; i < 200; i++)
		add_window(res, i, NS_PER_SEC, 1000, 0, 10000.0);
}

static void test_until_a_reliable_fit_decides_a_level_the_count_cannot(void **state)
{
	(void)state;
	struct result res;
	exponential_run(&res, 7);
	/* 200 s without a sample above 1 ms: the count's bound is 66/h, no answer for once an hour */
	struct until_state s = judge("level(1h) < 1ms", &res);
	assert_int_equal(s.decision, UNTIL_BELOW);
	assert_false(s.at.counted);
	assert_false(s.at.is_rate);
	assert_true(s.at.value.lo < 152000.0 && s.at.value.hi > 152000.0);
	assert_true(s.at.value.hi < 1000000.0);
	/* 100 us: over 1000 samples above it in 200 s, above by the count */
	s = judge("level(1h) < 100us", &res);
	assert_int_equal(s.decision, UNTIL_ABOVE);
	/* at the level itself: open, with how much longer to narrow the interval */
	s = judge("level(1h) < 152us", &res);
	assert_int_equal(s.decision, UNTIL_OPEN);
	assert_string_equal(s.at.why, "its interval still holds the limit");
	char text[256];
	struct until u = parse_ok("level(1h) < 152us");
	until_describe(&u, &s.at, text, sizeof(text));
	assert_non_null(strstr(text, "cpu 0: level(1h) "));
	result_free(&res);
}

static void test_until_an_unreliable_fit_never_decides(void **state)
{
	(void)state;
	struct result res;
	/* 10 windows: too few to test the fit's assumptions */
	rng_seed(3);
	start(&res);
	for (uint64_t i = 0; i < 10; i++)
		add_window(&res, i, NS_PER_SEC, 1000, 0, 10000.0);
	struct until_state s = judge("level(1h) < 1ms", &res);
	assert_int_equal(s.decision, UNTIL_OPEN);
	assert_non_null(strstr(s.at.why, "the fit is not reliable: too few windows"));
	result_free(&res);
}

static void test_until_a_cpu_without_samples_keeps_the_rule_open(void **state)
{
	(void)state;
	struct result res;
	start(&res);
	struct until_state s = judge("level(1h) < 1ms", &res);
	assert_int_equal(s.decision, UNTIL_OPEN);
	assert_string_equal(s.at.why, "no samples yet");
	assert_true(isnan(s.more_s));
	result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_until_reads_a_level_rule_and_writes_it_back),
		cmocka_unit_test(test_until_reads_a_rate_rule_in_any_unit_as_per_hour),
		cmocka_unit_test(test_until_names_what_is_wrong_with_a_bad_rule),
		cmocka_unit_test(test_until_none_above_for_long_enough_is_below_by_the_count_alone),
		cmocka_unit_test(test_until_many_above_is_above_by_the_count_whatever_the_fit),
		cmocka_unit_test(test_until_a_reliable_fit_decides_a_level_the_count_cannot),
		cmocka_unit_test(test_until_an_unreliable_fit_never_decides),
		cmocka_unit_test(test_until_a_cpu_without_samples_keeps_the_rule_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
