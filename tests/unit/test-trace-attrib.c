#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/array.h"
#include "trace/attrib.h"

/* Synthetic event streams: one per test, built in time order. */
static struct trace_ev evs[256];
static size_t nev;

#define T_PID 100
#define TIMER 0xffff888012345678u
#define D     UINT64_C(1000000)

static struct trace_ev *ev_at(uint64_t ts, unsigned cpu, uint8_t type)
{
	assert_true(nev < ARRAY_SIZE(evs));
	struct trace_ev *e = &evs[nev++];
	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->cpu = (uint8_t)cpu;
	e->type = type;
	return e;
}

static void ev_switch(uint64_t ts, unsigned cpu, int32_t prev, const char *prev_comm, int32_t prev_prio,
		      int32_t next, const char *next_comm, int32_t next_prio)
{
	struct trace_ev *e = ev_at(ts, cpu, TRACE_EV_SCHED_SWITCH);
	e->prev_pid = prev;
	e->prev_prio = prev_prio;
	strcpy(e->prev_comm, prev_comm);
	e->pid = next;
	e->prio = next_prio;
	strcpy(e->comm, next_comm);
}

static void ev_start(uint64_t ts, unsigned cpu, int32_t pid, uint64_t timer, uint64_t expires)
{
	struct trace_ev *e = ev_at(ts, cpu, TRACE_EV_HRTIMER_START);
	e->pid = pid;
	e->timer = timer;
	e->arg = expires;
	e->arg2 = expires;
}

static void ev_entry(uint64_t ts, unsigned cpu, uint64_t timer, uint64_t now)
{
	struct trace_ev *e = ev_at(ts, cpu, TRACE_EV_HRTIMER_ENTRY);
	e->timer = timer;
	e->arg = now;
}

static void ev_exit(uint64_t ts, unsigned cpu, uint64_t timer)
{
	ev_at(ts, cpu, TRACE_EV_HRTIMER_EXIT)->timer = timer;
}

static void ev_waking(uint64_t ts, unsigned cpu, int32_t pid)
{
	ev_at(ts, cpu, TRACE_EV_SCHED_WAKING)->pid = pid;
}

static void ev_irq(uint64_t ts, uint64_t end, unsigned cpu, int32_t irq, const char *name)
{
	struct trace_ev *e = ev_at(ts, cpu, TRACE_EV_IRQ_ENTRY);
	e->pid = irq;
	strcpy(e->comm, name);
	ev_at(end, cpu, TRACE_EV_IRQ_EXIT)->pid = irq;
}

static void ev_softirq(uint64_t ts, uint64_t end, unsigned cpu, int32_t vec)
{
	ev_at(ts, cpu, TRACE_EV_SOFTIRQ_ENTRY)->pid = vec;
	ev_at(end, cpu, TRACE_EV_SOFTIRQ_EXIT)->pid = vec;
}

/* T on cpu sleeps until D; optional pieces of the wakeup path left out. */
static void sleeper(unsigned cpu, bool with_start, bool with_waking, bool with_switch)
{
	ev_switch(800000, cpu, 0, "swapper/1", 120, T_PID, "timer-probe", 49);
	if (with_start)
		ev_start(900000, cpu, T_PID, TIMER, D);
	ev_switch(900500, cpu, T_PID, "timer-probe", 49, 0, "swapper/1", 120);
	ev_entry(D + 3000, cpu, TIMER, D + 2500);
	if (with_waking)
		ev_waking(D + 4000, cpu, T_PID);
	ev_exit(D + 4500, cpu, TIMER);
	if (with_switch)
		ev_switch(D + 7000, cpu, 0, "swapper/1", 120, T_PID, "timer-probe", 49);
}

static int reset(void **state)
{
	(void)state;
	nev = 0;
	return 0;
}

static int64_t sum_parts(const struct trace_timer_sample *s)
{
	int64_t sum = 0;
	for (int p = 0; p < TRACE_PARTS; p++)
		sum += s->part[p];
	return sum;
}

static uint64_t sum_occupancy(const struct trace_occupancy *o)
{
	uint64_t sum = o->other_ns;
	for (unsigned i = 0; i < o->ntop; i++)
		sum += o->top[i].ns;
	return sum;
}

static uint64_t kinds_total(const struct trace_occupancy *o)
{
	uint64_t sum = 0;
	for (int k = 0; k < TRACE_OCC_KINDS; k++)
		sum += o->kind_ns[k];
	return sum;
}

/* ---- timer decomposition ---------------------------------------------- */

static void test_a_clean_wakeup_splits_into_parts_that_add_up_exactly(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	sleeper(1, true, true, true);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), 0);
	assert_int_equal(s.flags, 0);
	assert_int_equal(s.part[TRACE_PART_IRQ_DELAY], 2500);    /* expire_entry.now - D */
	assert_int_equal(s.part[TRACE_PART_HANDLER], 1500);
	assert_int_equal(s.part[TRACE_PART_WAKEUP], 3000);
	assert_int_equal(s.part[TRACE_PART_RETURN], 2000);
	assert_int_equal(sum_parts(&s), 9000);
	assert_int_equal(s.switch_ts, D + 7000);
}

static void test_a_sample_without_its_hrtimer_start_is_found_by_the_wakeup_its_expiry_caused(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	sleeper(1, false, true, true);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), 0);
	assert_int_equal(s.flags, TRACE_F_NO_START);
	assert_int_equal(s.part[TRACE_PART_IRQ_DELAY], 2500);
	assert_int_equal(sum_parts(&s), 9000);
}

/* A sleeper with one step of its wakeup missing fails with that step's flag. */
static void expect_unmatched(bool with_waking, bool with_switch, uint32_t flag)
{
	struct trace_timer_sample s;
	sleeper(1, true, with_waking, with_switch);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), -ENOENT);
	assert_true(s.flags & flag);
}

static void test_a_sample_without_its_waking_is_flagged_unmatched(void **state)
{
	(void)state;
	expect_unmatched(false, true, TRACE_F_NO_WAKING);
}

static void test_a_sample_without_its_switch_in_is_flagged_unmatched(void **state)
{
	(void)state;
	expect_unmatched(true, false, TRACE_F_NO_SWITCH);
}

static void test_a_sample_with_no_events_at_all_is_flagged_unmatched(void **state)
{
	(void)state;
	struct trace_timer_sample s;

	assert_int_equal(trace_decompose_timer(evs, 0, 1, T_PID, D, D + 9000, &s), -ENOENT);
	assert_true(s.flags & TRACE_F_NO_EXPIRY);
	assert_true(s.flags & TRACE_F_NO_START);
}

static void test_a_sample_with_another_deadline_is_not_matched_to_this_timer(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	sleeper(1, true, true, true);

	/* Deadline 1 us later than the armed one, with no wakeup of its own. */
	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D + 1000, D + 9000, &s), -ENOENT);
}

static void test_lost_events_inside_the_window_are_flagged(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	sleeper(1, true, true, false);
	ev_at(D + 5000, 1, TRACE_EV_LOST)->arg = 12;
	ev_switch(D + 7000, 1, 0, "swapper/1", 120, T_PID, "timer-probe", 49);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), 0);
	assert_true(s.flags & TRACE_F_LOST);
}

static void test_a_switch_after_the_wake_read_counts_only_within_the_tolerance(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	sleeper(1, true, true, true);

	/* W 1.5 us before the switch: beyond the tolerance, so no switch; 0.5 us: within. */
	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 5500, &s), -ENOENT);
	assert_true(s.flags & TRACE_F_NO_SWITCH);
	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 6500, &s), 0);
	assert_int_equal(s.part[TRACE_PART_RETURN], -500);
	assert_false(s.flags & TRACE_F_SKEW);               /* within TRACE_SKEW_TOL_NS */
}

static void test_an_expiry_clock_before_the_deadline_is_flagged_as_clock_skew(void **state)
{
	(void)state;
	struct trace_timer_sample s;

	ev_start(900000, 1, T_PID, TIMER, D);
	ev_entry(D + 3000, 1, TIMER, D - 2000);
	ev_waking(D + 4000, 1, T_PID);
	ev_exit(D + 4500, 1, TIMER);
	ev_switch(D + 7000, 1, 0, "swapper/1", 120, T_PID, "timer-probe", 49);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), 0);
	assert_int_equal(s.part[TRACE_PART_IRQ_DELAY], -2000);
	assert_true(s.flags & TRACE_F_SKEW);
	assert_int_equal(sum_parts(&s), 9000);
}

static void test_events_from_other_cpus_are_ignored(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	struct trace_occupancy o;

	sleeper(1, true, true, false);
	/* CPU 0 switches to a task with T's pid and takes an irq inside the window. */
	ev_switch(D + 5000, 0, 0, "swapper/0", 120, T_PID, "timer-probe", 49);
	ev_irq(D + 5200, D + 6000, 0, 11, "virtio0-input");
	ev_switch(D + 7000, 1, 0, "swapper/1", 120, T_PID, "timer-probe", 49);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), 0);
	assert_int_equal(s.switch_ts, D + 7000);
	assert_int_equal(sum_parts(&s), 9000);

	assert_int_equal(trace_explain(evs, nev, 1, T_PID, D, s.switch_ts, &o), 0);
	for (unsigned i = 0; i < o.ntop; i++)
		assert_int_not_equal(o.top[i].kind, TRACE_OCC_IRQ);
	assert_int_equal(o.kind_ns[TRACE_OCC_IRQ], 0);
}

static void test_an_untraced_switch_in_is_taken_from_the_sleepers_syscall_exit(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	sleeper(1, true, true, false);               /* this guest's kernel: no idle -> T switch */
	struct trace_ev *e = ev_at(D + 7500, 1, TRACE_EV_SYS_EXIT);
	e->pid = T_PID;

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 9000, &s), 0);
	assert_int_equal(s.flags, TRACE_F_SWITCH_INFERRED);
	assert_int_equal(s.part[TRACE_PART_WAKEUP], 3500);
	assert_int_equal(s.part[TRACE_PART_RETURN], 1500);
	assert_int_equal(sum_parts(&s), 9000);
}

/* ---- occupancy ---------------------------------------------------------- */

static void test_a_task_switched_in_from_idle_without_a_trace_event_is_inferred(void **state)
{
	(void)state;
	struct trace_occupancy o;

	/* Idle CPU; a timer wakes lat-inject, which runs 500 us after the
	 * callback ends and is seen only when it switches out. */
	ev_switch(500000, 1, 300, "spinner", 120, 0, "swapper/1", 120);
	ev_entry(D, 1, 0x1234, D);
	struct trace_ev *w = ev_at(D + 1000, 1, TRACE_EV_SCHED_WAKING);
	w->pid = 200;
	w->prio = 9;
	strcpy(w->comm, "lat-inject");
	ev_exit(D + 2000, 1, 0x1234);
	ev_switch(D + 502000, 1, 200, "lat-inject", 9, 0, "swapper/1", 120);

	assert_int_equal(trace_explain(evs, nev, 1, T_PID, D, D + 510000, &o), 0);
	assert_int_equal(o.top[0].kind, TRACE_OCC_TASK);
	assert_string_equal(o.top[0].name, "lat-inject");
	assert_int_equal(o.top[0].prio, 9);
	assert_int_equal(o.top[0].ns, 500000);
	assert_int_equal(sum_occupancy(&o), 510000);
}


static void test_a_higher_priority_task_holding_the_cpu_is_ranked_first_with_its_time(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	struct trace_occupancy o;

	ev_switch(800000, 1, 0, "swapper/1", 120, T_PID, "timer-probe", 49);
	ev_start(900000, 1, T_PID, TIMER, D);
	ev_switch(900500, 1, T_PID, "timer-probe", 49, 0, "swapper/1", 120);
	ev_switch(950000, 1, 0, "swapper/1", 120, 200, "lat-inject", 9);
	ev_entry(D + 2000, 1, TIMER, D + 1500);
	ev_waking(D + 3000, 1, T_PID);
	ev_exit(D + 3500, 1, TIMER);
	ev_switch(D + 501500, 1, 200, "lat-inject", 9, T_PID, "timer-probe", 49);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 503000, &s), 0);
	assert_int_equal(s.part[TRACE_PART_WAKEUP], 498500);

	assert_int_equal(trace_explain(evs, nev, 1, T_PID, D, s.switch_ts, &o), 0);
	assert_true(o.ntop >= 2);
	assert_int_equal(o.top[0].kind, TRACE_OCC_TASK);
	assert_string_equal(o.top[0].name, "lat-inject");
	assert_int_equal(o.top[0].id, 200);
	assert_int_equal(o.top[0].prio, 9);
	assert_int_equal(o.top[0].ns, 500000);
	assert_int_equal(o.top[1].kind, TRACE_OCC_TIMER_CB);
	assert_int_equal(o.top[1].ns, 1500);
	assert_int_equal(sum_occupancy(&o), 501500);
	assert_int_equal(kinds_total(&o), 501500);
}

static void test_an_irq_and_a_softirq_are_named_with_their_time(void **state)
{
	(void)state;
	struct trace_occupancy o;
	uint64_t t0 = 1000000;

	ev_switch(500000, 0, 0, "swapper/0", 120, 300, "spinner", 120);
	ev_irq(t0 + 1000, t0 + 6000, 0, 11, "virtio0-input");
	ev_softirq(t0 + 6500, t0 + 16500, 0, 3);

	assert_int_equal(trace_explain(evs, nev, 0, 300, t0, t0 + 50000, &o), 0);
	assert_int_equal(o.ntop, 4);
	assert_int_equal(o.top[0].kind, TRACE_OCC_NO_EVENT);          /* 33.5 us after the softirq */
	assert_int_equal(o.top[0].ns, 33500);
	assert_int_equal(o.top[1].kind, TRACE_OCC_SOFTIRQ);
	assert_string_equal(o.top[1].name, "NET_RX");
	assert_int_equal(o.top[1].id, 3);
	assert_int_equal(o.top[1].ns, 10000);
	assert_int_equal(o.top[2].kind, TRACE_OCC_IRQ);
	assert_string_equal(o.top[2].name, "virtio0-input");
	assert_int_equal(o.top[2].id, 11);
	assert_int_equal(o.top[2].ns, 5000);
	assert_int_equal(o.top[2].count, 1);
	assert_int_equal(o.top[3].kind, TRACE_OCC_UNTRACED);          /* irq entry and exit paths */
	assert_int_equal(o.top[3].ns, 1500);
	assert_int_equal(o.top[3].count, 2);
	assert_int_equal(sum_occupancy(&o), 50000);
}

static void test_a_silent_gap_is_reported_as_no_event_time(void **state)
{
	(void)state;
	struct trace_occupancy o;

	ev_switch(500000, 0, 0, "swapper/0", 120, 300, "spinner", 120);

	assert_int_equal(trace_explain(evs, nev, 0, 300, 2000000, 2300000, &o), 0);
	assert_int_equal(o.ntop, 1);
	assert_int_equal(o.top[0].kind, TRACE_OCC_NO_EVENT);
	assert_int_equal(o.top[0].ns, 300000);
	assert_int_equal(o.kind_ns[TRACE_OCC_NO_EVENT], 300000);
}

static void test_a_late_timer_interrupt_on_an_idle_cpu_is_no_event_time(void **state)
{
	(void)state;
	struct trace_timer_sample s;
	struct trace_occupancy o;

	ev_switch(800000, 1, 0, "swapper/1", 120, T_PID, "timer-probe", 49);
	ev_start(900000, 1, T_PID, TIMER, D);
	ev_switch(900500, 1, T_PID, "timer-probe", 49, 0, "swapper/1", 120);
	ev_entry(D + 300000, 1, TIMER, D + 299800);         /* vCPU descheduled for 300 us */
	ev_waking(D + 301000, 1, T_PID);
	ev_exit(D + 301500, 1, TIMER);
	ev_switch(D + 304000, 1, 0, "swapper/1", 120, T_PID, "timer-probe", 49);

	assert_int_equal(trace_decompose_timer(evs, nev, 1, T_PID, D, D + 306000, &s), 0);
	assert_int_equal(s.part[TRACE_PART_IRQ_DELAY], 299800);
	assert_int_equal(trace_explain(evs, nev, 1, T_PID, D, s.switch_ts, &o), 0);
	assert_int_equal(o.top[0].kind, TRACE_OCC_NO_EVENT);
	assert_int_equal(o.top[0].ns, 300000);
	assert_int_equal(sum_occupancy(&o), 304000);
}

static void test_the_task_running_before_the_first_switch_is_taken_from_that_switch(void **state)
{
	(void)state;
	struct trace_occupancy o;

	ev_switch(2100000, 0, 400, "kworker/0:1", 120, 300, "spinner", 120);

	assert_int_equal(trace_explain(evs, nev, 0, 300, 2000000, 2150000, &o), 0);
	assert_int_equal(o.top[0].kind, TRACE_OCC_TASK);
	assert_string_equal(o.top[0].name, "kworker/0:1");
	assert_int_equal(o.top[0].ns, 100000);
	assert_int_equal(o.top[1].kind, TRACE_OCC_NO_EVENT);
	assert_int_equal(o.top[1].ns, 50000);
}

static void test_an_empty_window_and_a_reversed_one_are_handled(void **state)
{
	(void)state;
	struct trace_occupancy o;

	assert_int_equal(trace_explain(evs, 0, 0, -1, 5, 5, &o), 0);
	assert_int_equal(o.ntop, 0);
	assert_int_equal(trace_explain(evs, 0, 0, -1, 6, 5, &o), -EINVAL);
}

static void test_softirq_vectors_have_the_kernel_names(void **state)
{
	(void)state;
	assert_string_equal(trace_softirq_name(0), "HI");
	assert_string_equal(trace_softirq_name(9), "RCU");
	assert_string_equal(trace_softirq_name(10), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_a_clean_wakeup_splits_into_parts_that_add_up_exactly, reset),
		cmocka_unit_test_setup(test_a_sample_without_its_hrtimer_start_is_found_by_the_wakeup_its_expiry_caused, reset),
		cmocka_unit_test_setup(test_a_sample_without_its_waking_is_flagged_unmatched, reset),
		cmocka_unit_test_setup(test_a_sample_without_its_switch_in_is_flagged_unmatched, reset),
		cmocka_unit_test_setup(test_a_sample_with_no_events_at_all_is_flagged_unmatched, reset),
		cmocka_unit_test_setup(test_a_sample_with_another_deadline_is_not_matched_to_this_timer, reset),
		cmocka_unit_test_setup(test_lost_events_inside_the_window_are_flagged, reset),
		cmocka_unit_test_setup(test_a_switch_after_the_wake_read_counts_only_within_the_tolerance, reset),
		cmocka_unit_test_setup(test_an_expiry_clock_before_the_deadline_is_flagged_as_clock_skew, reset),
		cmocka_unit_test_setup(test_events_from_other_cpus_are_ignored, reset),
		cmocka_unit_test_setup(test_an_untraced_switch_in_is_taken_from_the_sleepers_syscall_exit, reset),
		cmocka_unit_test_setup(test_a_higher_priority_task_holding_the_cpu_is_ranked_first_with_its_time, reset),
		cmocka_unit_test_setup(test_a_task_switched_in_from_idle_without_a_trace_event_is_inferred, reset),
		cmocka_unit_test_setup(test_an_irq_and_a_softirq_are_named_with_their_time, reset),
		cmocka_unit_test_setup(test_a_silent_gap_is_reported_as_no_event_time, reset),
		cmocka_unit_test_setup(test_a_late_timer_interrupt_on_an_idle_cpu_is_no_event_time, reset),
		cmocka_unit_test_setup(test_the_task_running_before_the_first_switch_is_taken_from_that_switch, reset),
		cmocka_unit_test_setup(test_an_empty_window_and_a_reversed_one_are_handled, reset),
		cmocka_unit_test_setup(test_softirq_vectors_have_the_kernel_names, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
