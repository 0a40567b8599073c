#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/array.h"
#include "probe/tracesplit.h"

/* The BPF collector's records of one CPU, as bpfcol.c keeps them. */
static struct ls_bpf_sample recs[8];
static struct bpfcol_detail details[2];
static struct bpfcol_cpu k;
static struct tracerun_thread th = { .cpu = 1, .tid = 100 };
static struct splitter sp;

#define D UINT64_C(1000000000)

static int reset(void **state)
{
	(void)state;
	memset(recs, 0, sizeof(recs));
	memset(details, 0, sizeof(details));
	k = (struct bpfcol_cpu){ .s = recs, .d = details };
	splitter_bpf(&sp, &th, &k);
	return 0;
}

/* A sample of deadline d: expiry at d + irq, waking h later, switch w later. */
static struct ls_bpf_sample *rec(uint64_t d, uint64_t irq, uint64_t h, uint64_t w)
{
	assert_true(k.n < ARRAY_SIZE(recs));
	struct ls_bpf_sample *r = &recs[k.n++];
	*r = (struct ls_bpf_sample){ .kind = LS_REC_SAMPLE, .cpu = th.cpu, .tid = th.tid, .deadline = d,
				     .expiry_now = d + irq, .expiry_ts = d + irq, .waking_ts = d + irq + h,
				     .switch_ts = w ? d + irq + h + w : 0 };
	return r;
}

static void test_a_record_splits_its_sample_into_parts_that_add_up_to_the_latency(void **state)
{
	(void)state;
	rec(D, 5000, 800, 3000);
	struct rec_span s = { D, D + 5000 + 800 + 3000 + 1200 };
	struct trace_timer_sample smp;
	assert_int_equal(sp.split(&sp, &s, &smp), 0);
	assert_int_equal(smp.part[TRACE_PART_IRQ_DELAY], 5000);
	assert_int_equal(smp.part[TRACE_PART_HANDLER], 800);
	assert_int_equal(smp.part[TRACE_PART_WAKEUP], 3000);
	assert_int_equal(smp.part[TRACE_PART_RETURN], 1200);
	assert_int_equal(smp.flags, 0);
}

static void test_spans_find_their_records_by_deadline_and_a_span_without_one_is_unmatched(void **state)
{
	(void)state;
	rec(D, 1000, 100, 100);
	rec(D + 2000000, 1000, 100, 100);       /* none for D + 1 ms: the ring lost it */
	struct rec_span s[3] = { { D, D + 3000 }, { D + 1000000, D + 1003000 }, { D + 2000000, D + 2003000 } };
	struct trace_timer_sample smp;
	assert_int_equal(sp.split(&sp, &s[0], &smp), 0);
	assert_int_equal(sp.split(&sp, &s[1], &smp), -ENOENT);
	assert_int_equal(sp.split(&sp, &s[2], &smp), 0);
	assert_int_equal(smp.part[TRACE_PART_RETURN], 3000 - 1200);
}

static void test_a_thread_woken_before_it_left_the_cpu_runs_on_from_its_waking(void **state)
{
	(void)state;
	rec(D, 2000, 500, 0);                   /* no switch came */
	struct rec_span s = { D, D + 4000 };
	struct trace_timer_sample smp;
	assert_int_equal(sp.split(&sp, &s, &smp), 0);
	assert_true(smp.flags & TRACE_F_SWITCH_INFERRED);
	assert_int_equal(smp.part[TRACE_PART_WAKEUP], 0);
	assert_int_equal(smp.part[TRACE_PART_RETURN], 4000 - 2500);
}

static void test_a_record_without_its_expiry_or_waking_is_unmatched_and_says_which(void **state)
{
	(void)state;
	struct ls_bpf_sample *r = rec(D, 1000, 100, 100);
	r->waking_ts = 0;
	rec(D + 1000000, 1000, 100, 100)->expiry_ts = 0;
	struct rec_span s[2] = { { D, D + 3000 }, { D + 1000000, D + 1003000 } };
	struct trace_timer_sample smp;
	assert_int_equal(sp.split(&sp, &s[0], &smp), -ENOENT);
	assert_int_equal(smp.flags, TRACE_F_NO_WAKING);
	assert_int_equal(sp.split(&sp, &s[1], &smp), -ENOENT);
	assert_int_equal(smp.flags, TRACE_F_NO_EXPIRY);
}

static void test_a_late_samples_events_come_back_with_each_switchs_prev_from_the_switch_before(void **state)
{
	(void)state;
	rec(D, 1000, 100, 500000);
	struct ls_bpf_detail *d = &details[0].d;
	k.nd = 1;
	d->deadline = D;
	d->n = 3;
	d->ev[0] = (struct ls_bpf_ev){ .ts = D - 90000, .type = LS_EV_HRTIMER_START, .pid = 100, .arg = D };
	d->ev[1] = (struct ls_bpf_ev){ .ts = D - 89000, .type = LS_EV_SCHED_SWITCH, .pid = 7, .prio = 9, .prev_pid = 100 };
	strcpy(d->ev[1].comm, "hog");
	d->ev[2] = (struct ls_bpf_ev){ .ts = D + 501100, .type = LS_EV_SCHED_SWITCH, .pid = 100, .prev_pid = 7 };
	strcpy(d->ev[2].comm, "latscope");
	struct rec_span s = { D, D + 502000 };
	const struct trace_ev *ev;
	size_t n;
	sp.events(&sp, &s, &ev, &n);
	assert_int_equal(n, 3);
	assert_int_equal(ev[1].type, TRACE_EV_SCHED_SWITCH);
	assert_int_equal(ev[1].cpu, th.cpu);
	assert_string_equal(ev[1].comm, "hog");
	assert_string_equal(ev[1].prev_comm, "");
	assert_string_equal(ev[2].prev_comm, "hog");
	/* and what held the CPU is named from them as from tracefs's events */
	struct trace_occupancy occ;
	assert_int_equal(trace_explain(ev, n, th.cpu, th.tid, D, D + 501100, &occ), 0);
	assert_true(occ.ntop >= 1);
	assert_string_equal(occ.top[0].name, "hog");
}

static void test_events_past_the_collectors_cap_end_in_a_lost_marker(void **state)
{
	(void)state;
	struct ls_bpf_detail *d = &details[0].d;
	k.nd = 1;
	d->deadline = D;
	d->n = 1;
	d->overflow = 12;
	d->ev[0] = (struct ls_bpf_ev){ .ts = D - 1000, .type = LS_EV_HRTIMER_START, .pid = 100 };
	struct rec_span s = { D, D + 5000 };
	const struct trace_ev *ev;
	size_t n;
	sp.events(&sp, &s, &ev, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ev[1].type, TRACE_EV_LOST);
	assert_int_equal(ev[1].arg, 12);
	assert_true(ev[1].ts > ev[0].ts);
}

static void test_a_sample_without_kept_events_has_none_to_explain_it(void **state)
{
	(void)state;
	struct rec_span s = { D, D + 5000 };
	const struct trace_ev *ev;
	size_t n = 99;
	sp.events(&sp, &s, &ev, &n);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_a_record_splits_its_sample_into_parts_that_add_up_to_the_latency, reset),
		cmocka_unit_test_setup(test_spans_find_their_records_by_deadline_and_a_span_without_one_is_unmatched,
				       reset),
		cmocka_unit_test_setup(test_a_thread_woken_before_it_left_the_cpu_runs_on_from_its_waking, reset),
		cmocka_unit_test_setup(test_a_record_without_its_expiry_or_waking_is_unmatched_and_says_which, reset),
		cmocka_unit_test_setup(test_a_late_samples_events_come_back_with_each_switchs_prev_from_the_switch_before,
				       reset),
		cmocka_unit_test_setup(test_events_past_the_collectors_cap_end_in_a_lost_marker, reset),
		cmocka_unit_test_setup(test_a_sample_without_kept_events_has_none_to_explain_it, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
