/*
 * Unit tests for the clock probe (src/probe/clock.c) and its report
 * (src/measure/clock.c): what it computes from the reads, fed known values.
 * Nothing here measures, but the served-by check: it asks the kernel.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "skipwhy.h"

#include "measure/clock.h"
#include "core/hist.h"
#include "probe/clock.h"
#include "result/result.h"

/* ---- steps on one CPU ---- */

static void test_a_pair_that_reads_the_same_value_counts_as_same_and_not_as_a_step(void **state)
{
	(void)state;
	struct clk_seen s;
	clk_seen_reset(&s);
	assert_int_equal(clk_step(&s, 0, 100, 100), 0);
	assert_int_equal(s.same, 1);
	assert_int_equal(s.min_step, UINT64_MAX);
	assert_int_equal(s.backwards, 0);
}

static void test_the_smallest_step_is_the_smallest_non_zero_difference(void **state)
{
	(void)state;
	struct clk_seen s;
	clk_seen_reset(&s);
	assert_int_equal(clk_step(&s, 0, 1000, 1030), 30);
	assert_int_equal(clk_step(&s, 1030, 1100, 1100), 0);
	assert_int_equal(clk_step(&s, 1100, 1200, 1220), 20);
	assert_int_equal(clk_step(&s, 1220, 1300, 1340), 40);
	assert_int_equal(s.min_step, 20);
	assert_int_equal(s.same, 1);
	assert_int_equal(s.backwards, 0);
}

static void test_a_pair_whose_second_read_is_earlier_gives_no_sample_and_counts_backwards(void **state)
{
	(void)state;
	struct clk_seen s;
	clk_seen_reset(&s);
	assert_int_equal(clk_step(&s, 0, 5000, 4990), CLK_NO_SAMPLE);
	assert_int_equal(s.backwards, 1);
	assert_int_equal(s.back_max, 10);
	assert_int_equal(s.min_step, UINT64_MAX);
	assert_int_equal(s.same, 0);
}

static void test_a_read_earlier_than_the_read_before_it_counts_backwards_by_how_much(void **state)
{
	(void)state;
	struct clk_seen s;
	clk_seen_reset(&s);
	/* the pair is in order, but its first read is 700 ns before the previous pair's last */
	assert_int_equal(clk_step(&s, 10700, 10000, 10020), 20);
	assert_int_equal(s.backwards, 1);
	assert_int_equal(s.back_max, 700);
	/* a smaller one later keeps the largest */
	assert_int_equal(clk_step(&s, 10020, 10010, 10040), 30);
	assert_int_equal(s.backwards, 2);
	assert_int_equal(s.back_max, 700);
	assert_int_equal(s.min_step, 20);
}

/* ---- across CPUs ---- */

static void test_a_read_earlier_than_another_cpus_published_read_counts_as_backwards_across_cpus(void **state)
{
	(void)state;
	struct clk_seen s;
	clk_seen_reset(&s);
	clk_cross(&s, 1000, 1150);              /* in order: 150 ns later */
	clk_cross(&s, 2000, 2090);              /* in order, closer */
	assert_int_equal(s.cross_checks, 2);
	assert_int_equal(s.cross_backwards, 0);
	assert_int_equal(s.cross_margin, 90);
	clk_cross(&s, 3000, 2960);              /* this CPU's clock is 40 ns behind */
	assert_int_equal(s.cross_checks, 3);
	assert_int_equal(s.cross_backwards, 1);
	assert_int_equal(s.cross_margin, -40);
}

static void test_a_slot_nothing_was_published_in_is_not_a_check(void **state)
{
	(void)state;
	struct clk_seen s;
	clk_seen_reset(&s);
	clk_cross(&s, 0, 1234);
	assert_int_equal(s.cross_checks, 0);
	assert_int_equal(s.cross_margin, INT64_MAX);
}

/* ---- totals over the CPUs ---- */

static void test_totals_convert_the_tscs_cycles_to_ns_and_keep_the_worst_cpu(void **state)
{
	(void)state;
	struct clk_total t;
	struct clk_seen a, b;
	clk_total_reset(&t);
	clk_seen_reset(&a);
	clk_seen_reset(&b);
	a.served = b.served = CLK_SERVED_INSTRUCTION;
	a.backwards = 1;
	a.back_max = 1000;              /* cycles of 500 ps: 500 ns */
	b.backwards = 2;
	b.back_max = 4000;              /* cycles of 250 ps: 1000 ns */
	a.cross_checks = 10;
	a.cross_margin = -200;          /* -100 ns */
	b.cross_checks = 10;
	b.cross_margin = 400;           /* 100 ns */
	clk_total_add(&t, &a, 3, CLK_TSC, 500);
	clk_total_add(&t, &b, 7, CLK_TSC, 250);
	assert_int_equal(t.cpus, 2);
	assert_int_equal(t.served, 1u << CLK_SERVED_INSTRUCTION);
	assert_int_equal(t.backwards, 3);
	assert_int_equal(t.back_max_ns, 1000);
	assert_int_equal(t.back_cpu, 7);
	assert_int_equal(t.cross_checks, 20);
	assert_int_equal(t.cross_margin_ns, -100);
	assert_int_equal(t.margin_cpu, 3);
	assert_int_equal(t.cycle_ps_lo, 250);
	assert_int_equal(t.cycle_ps_hi, 500);
}

static void test_totals_keep_the_range_of_system_call_costs_and_every_verdict(void **state)
{
	(void)state;
	struct clk_total t;
	struct clk_seen a, b, c;
	clk_total_reset(&t);
	clk_seen_reset(&a);
	clk_seen_reset(&b);
	clk_seen_reset(&c);
	a.served = CLK_SERVED_VDSO;
	a.syscall_min_ns = 250;
	a.syscall_p50_ns = 300;
	b.served = CLK_SERVED_SYSCALL;
	b.syscall_min_ns = 240;
	b.syscall_p50_ns = 350;
	c.served = CLK_SERVED_VDSO;         /* not measured: no system call figures */
	clk_total_add(&t, &a, 0, CLK_MONOTONIC, 0);
	clk_total_add(&t, &b, 1, CLK_MONOTONIC, 0);
	clk_total_add(&t, &c, 2, CLK_MONOTONIC, 0);
	assert_int_equal(t.served, 1u << CLK_SERVED_VDSO | 1u << CLK_SERVED_SYSCALL);
	assert_int_equal(t.syscall_min_ns, 240);
	assert_int_equal(t.syscall_p50_lo_ns, 300);
	assert_int_equal(t.syscall_p50_hi_ns, 350);
	assert_int_equal(t.cross_checks, 0);
	assert_int_equal(t.margin_cpu, -1);
}

/* ---- vDSO or system call ---- */

static void test_the_cpu_time_clock_is_served_by_a_system_call_and_monotonic_is_judged(void **state)
{
	(void)state;
	/* No vDSO serves a CPU-time clock: it is a known answer. */
	const clockid_t ids[] = { CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC };
	int served[3] = { -1, -1, -1 };
	int r = clk_served_by(ids, 3, served);
	if (r == -ENOTSUP || r == -EINVAL || r == -EACCES || r == -EPERM)
		/* the run says so and judges by timing */
		skip_because("this machine or this build allows no seccomp filter to tell a vDSO clock from a system call");
	assert_int_equal(r, 0);
	assert_int_equal(served[0], CLK_SERVED_SYSCALL);
	assert_int_equal(served[1], CLK_SERVED_SYSCALL);
	assert_true(served[2] == CLK_SERVED_VDSO || served[2] == CLK_SERVED_SYSCALL);
	/* The filter bound the helper thread alone: this thread still makes the call. */
	struct timespec ts;
	assert_int_equal(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
}

static void test_the_timing_guess_takes_a_read_at_most_half_a_system_call_for_the_vdso(void **state)
{
	(void)state;
	assert_int_equal(clk_served_by_timing(30, 300), CLK_SERVED_VDSO);
	assert_int_equal(clk_served_by_timing(150, 300), CLK_SERVED_VDSO);
	assert_int_equal(clk_served_by_timing(151, 300), CLK_SERVED_SYSCALL);
	assert_int_equal(clk_served_by_timing(320, 300), CLK_SERVED_SYSCALL);
	assert_int_equal(clk_served_by_timing(30, 0), CLK_SERVED_UNKNOWN);
}

/* ---- the description ---- */

static void test_a_run_without_the_tsc_records_the_five_clocks_before_it(void **state)
{
	(void)state;
	struct clock_params with = { .tsc = true }, without = { .tsc = false };
	assert_int_equal(probe_metrics(&clock_probe, &with), 6);
	assert_int_equal(probe_metrics(&clock_probe, &without), 5);
	assert_string_equal(clock_probe.metric_names[0], "monotonic");
	assert_string_equal(clock_probe.metric_names[5], "tsc");
	assert_int_equal(clock_probe.suite_share, 0);
	assert_int_equal(clock_probe.unit_ns, 1);
}

/* ---- the report ---- */

/* A result of two CPUs (0 and 1) and five clocks: cpu 0's steps are 0 (twice)
 * and 20..40, cpu 1's 25 and 30; every clock the same. */
static void make_result(struct result *res)
{
	struct cpuset cpus;
	struct rec_window w;
	struct hist *h = test_calloc(CLK_KINDS, sizeof(*h));
	static const uint64_t steps[2][5] = { { 0, 0, 20, 30, 40 }, { 25, 30, 30, 30, 30 } };

	cpuset_clear(&cpus);
	cpuset_add(&cpus, 0);
	cpuset_add(&cpus, 1);
	assert_int_equal(result_init(res, "clock", 5, clk_names, &cpus), 0);
	res->params = json_object();
	for (size_t i = 0; i < 2; i++) {
		memset(&w, 0, sizeof(w));
		w.end_ns = 1000000;
		stats_reset(&w.overhead);
		for (unsigned k = 0; k < 5; k++) {
			stats_reset(&w.m[k].st);
			hist_reset(&h[k]);
			for (unsigned j = 0; j < 5; j++) {
				stats_add(&w.m[k].st, steps[i][j]);
				hist_record(&h[k], steps[i][j]);
			}
		}
		assert_int_equal(result_add_window(res, &res->cpus[i], &w, h), 0);
	}
	assert_int_equal(result_finalize(res), 0);
	test_free(h);
}

static struct clk_board *make_board(void)
{
	struct clk_board *b = test_calloc(1, sizeof(*b));
	for (unsigned k = 0; k < CLK_KINDS; k++) {
		struct clk_total *t = &b->total[k];
		clk_total_reset(t);
		t->cpus = 2;
		t->served = 1u << CLK_SERVED_VDSO;
		t->cross_checks = 500;
		t->cross_margin_ns = 120;
		t->margin_cpu = 1;
		t->syscall_min_ns = 280;
		t->syscall_p50_lo_ns = 300;
		t->syscall_p50_hi_ns = 310;
	}
	return b;
}

static const json_t *observed_clock(const struct result *res, const char *name)
{
	const json_t *o = json_object_get(json_object_get(json_object_get(res->params, "observed"), "clocks"), name);
	assert_non_null(o);
	return o;
}

static void test_observe_says_an_ordered_clock_as_an_info_with_its_figures(void **state)
{
	(void)state;
	struct result res;
	struct clk_board *b = make_board();
	struct clock_params p = { .tsc = false, .board = b };

	make_result(&res);
	assert_int_equal(clock_observe(&p, &res), 0);
	assert_int_equal(res.nnotes, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_true(res.note_is_info[i]);
	assert_non_null(strstr(res.notes[0], "monotonic: vDSO, no system call"));
	assert_non_null(strstr(res.notes[0], "a system call 300-310 ns"));
	assert_non_null(strstr(res.notes[0], "smallest step 20-25 ns"));
	assert_non_null(strstr(res.notes[0], "in 500 checks across CPUs (closest 120 ns)"));
	const json_t *m = observed_clock(&res, "monotonic");
	assert_string_equal(json_string_value(json_object_get(m, "served_by")), "vdso");
	assert_string_equal(json_string_value(json_object_get(m, "served_by_method")), "seccomp");
	assert_int_equal(json_integer_value(json_object_get(m, "cross_margin_ns")), 120);
	const json_t *cpus = json_object_get(m, "cpus");
	assert_int_equal(json_array_size(cpus), 2);
	/* cpu 0 read the same value twice: its smallest step is the smallest non-zero one */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cpus, 0), "min_step_ns")), 20);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cpus, 0), "same_reads")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cpus, 1), "min_step_ns")), 25);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(cpus, 1), "same_reads")), 0);
	assert_null(json_object_get(json_object_get(json_object_get(res.params, "observed"), "clocks"), "tsc"));
	result_free(&res);
	test_free(b);
}

static void test_observe_warns_of_a_clock_that_went_backwards_and_where(void **state)
{
	(void)state;
	struct result res;
	struct clk_board *b = make_board();
	struct clock_params p = { .tsc = false, .board = b };

	b->total[CLK_BOOTTIME].backwards = 3;
	b->total[CLK_BOOTTIME].back_max_ns = 15;
	b->total[CLK_BOOTTIME].back_cpu = 1;
	b->total[CLK_REALTIME].cross_backwards = 2;
	b->total[CLK_REALTIME].cross_margin_ns = -40;
	b->total[CLK_REALTIME].margin_cpu = 0;
	make_result(&res);
	assert_int_equal(clock_observe(&p, &res), 0);
	assert_int_equal(res.nnotes, 5);
	assert_true(res.note_is_info[CLK_MONOTONIC]);
	assert_false(res.note_is_info[CLK_BOOTTIME]);
	assert_non_null(strstr(res.notes[CLK_BOOTTIME], "boottime went backwards: 3 reads earlier than the read before "
							"(by up to 15 ns on cpu 1)"));
	assert_false(res.note_is_info[CLK_REALTIME]);
	assert_non_null(strstr(res.notes[CLK_REALTIME], "2 of 500 checks across CPUs earlier than another CPU's "
							"(by up to 40 ns on cpu 0) (setting the time does that)"));
	const json_t *rt = observed_clock(&res, "realtime");
	assert_int_equal(json_integer_value(json_object_get(rt, "cross_backwards")), 2);
	assert_int_equal(json_integer_value(json_object_get(rt, "cross_margin_ns")), -40);
	result_free(&res);
	test_free(b);
}

static void test_observe_judges_by_timing_where_seccomp_could_not_tell(void **state)
{
	(void)state;
	struct result res;
	struct clk_board *b = make_board();
	struct clock_params p = { .tsc = false, .board = b };

	b->total[CLK_TAI].served = 1u << CLK_SERVED_UNKNOWN;      /* reads of p50 30 ns against 300 */
	b->total[CLK_BOOTTIME].served = 1u << CLK_SERVED_VDSO | 1u << CLK_SERVED_SYSCALL;
	make_result(&res);
	assert_int_equal(clock_observe(&p, &res), 0);
	assert_non_null(strstr(res.notes[CLK_TAI], "tai: vDSO (judged by timing)"));
	assert_string_equal(json_string_value(json_object_get(observed_clock(&res, "tai"), "served_by_method")), "timing");
	assert_non_null(strstr(res.notes[CLK_BOOTTIME], "vDSO on some CPUs, a system call on others"));
	assert_string_equal(json_string_value(json_object_get(observed_clock(&res, "boottime"), "served_by")), "mixed");
	result_free(&res);
	test_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_pair_that_reads_the_same_value_counts_as_same_and_not_as_a_step),
		cmocka_unit_test(test_the_smallest_step_is_the_smallest_non_zero_difference),
		cmocka_unit_test(test_a_pair_whose_second_read_is_earlier_gives_no_sample_and_counts_backwards),
		cmocka_unit_test(test_a_read_earlier_than_the_read_before_it_counts_backwards_by_how_much),
		cmocka_unit_test(test_a_read_earlier_than_another_cpus_published_read_counts_as_backwards_across_cpus),
		cmocka_unit_test(test_a_slot_nothing_was_published_in_is_not_a_check),
		cmocka_unit_test(test_totals_convert_the_tscs_cycles_to_ns_and_keep_the_worst_cpu),
		cmocka_unit_test(test_totals_keep_the_range_of_system_call_costs_and_every_verdict),
		cmocka_unit_test(test_the_cpu_time_clock_is_served_by_a_system_call_and_monotonic_is_judged),
		cmocka_unit_test(test_the_timing_guess_takes_a_read_at_most_half_a_system_call_for_the_vdso),
		cmocka_unit_test(test_a_run_without_the_tsc_records_the_five_clocks_before_it),
		cmocka_unit_test(test_observe_says_an_ordered_clock_as_an_info_with_its_figures),
		cmocka_unit_test(test_observe_warns_of_a_clock_that_went_backwards_and_where),
		cmocka_unit_test(test_observe_judges_by_timing_where_seccomp_could_not_tell),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
