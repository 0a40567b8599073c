#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "trace/spikering.h"

/* Synthetic streams: events appended in any order, sorted by time before use. */
static struct trace_ev evs[512];
static size_t nev;

#define CPU    1u
#define T_PID  100
#define T_PRIO 19             /* SCHED_FIFO 80 */
#define TIMER  0xffff888012345678u
#define MS     UINT64_C(1000000)
#define US     UINT64_C(1000)

static struct trace_ev *ev_at(uint64_t ts, uint8_t type)
{
	assert_true(nev < ARRAY_SIZE(evs));
	struct trace_ev *e = &evs[nev++];
	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->cpu = (uint8_t)CPU;
	e->type = type;
	return e;
}

static void ev_switch(uint64_t ts, int32_t prev, const char *prev_comm, int32_t prev_prio, int32_t next,
		      const char *next_comm, int32_t next_prio)
{
	struct trace_ev *e = ev_at(ts, TRACE_EV_SCHED_SWITCH);
	e->prev_pid = prev;
	e->prev_prio = prev_prio;
	strcpy(e->prev_comm, prev_comm);
	e->pid = next;
	e->prio = next_prio;
	strcpy(e->comm, next_comm);
}

static void ev_waking(uint64_t ts, int32_t pid, int32_t prio, const char *comm)
{
	struct trace_ev *e = ev_at(ts, TRACE_EV_SCHED_WAKING);
	e->pid = pid;
	e->prio = prio;
	strcpy(e->comm, comm);
}

static void ev_timer(uint64_t entry, uint64_t exit, uint64_t timer)
{
	struct trace_ev *e = ev_at(entry, TRACE_EV_HRTIMER_ENTRY);
	e->timer = timer;
	e->arg = entry;
	ev_at(exit, TRACE_EV_HRTIMER_EXIT)->timer = timer;
}

static void ev_irq(uint64_t ts, uint64_t end, int32_t irq, const char *name)
{
	struct trace_ev *e = ev_at(ts, TRACE_EV_IRQ_ENTRY);
	e->pid = irq;
	strcpy(e->comm, name);
	ev_at(end, TRACE_EV_IRQ_EXIT)->pid = irq;
}

static void ev_softirq(uint64_t ts, uint64_t end, int32_t vec)
{
	ev_at(ts, TRACE_EV_SOFTIRQ_ENTRY)->pid = vec;
	ev_at(end, TRACE_EV_SOFTIRQ_EXIT)->pid = vec;
}

/*
 * One sleep of T: it arms its timer for D at armed, goes idle, the timer
 * expires at expiry and wakes T, which runs at run (switched in from prev,
 * when traced) and returns from clock_nanosleep 1 us later.
 */
struct sleep {
	uint64_t armed, d, expiry, run;
	int32_t prev;
	const char *prev_comm;
	int32_t prev_prio;
	bool untraced_switch;
};

static void sleep_of_t(const struct sleep *s)
{
	struct trace_ev *e = ev_at(s->armed, TRACE_EV_HRTIMER_START);
	e->pid = T_PID;
	e->timer = TIMER;
	e->arg = s->d;
	e->arg2 = s->d;
	ev_switch(s->armed + 500, T_PID, "timer-probe", T_PRIO, 0, "swapper/1", 120);
	ev_timer(s->expiry, s->expiry + 1500, TIMER);
	ev_waking(s->expiry + 1000, T_PID, T_PRIO, "timer-probe");
	if (!s->untraced_switch)
		ev_switch(s->run, s->prev, s->prev ? s->prev_comm : "swapper/1", s->prev ? s->prev_prio : 120,
			  T_PID, "timer-probe", T_PRIO);
	struct trace_ev *x = ev_at(s->run + 1000, TRACE_EV_SYS_EXIT);
	x->pid = T_PID;
	x->arg = 230;
}

/* A wakeup 5 us late, at D. */
static void clean_sleep(uint64_t d)
{
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 2 * US, .run = d + 5 * US });
}

static int cmp_ts(const void *pa, const void *pb)
{
	const struct trace_ev *a = pa, *b = pb;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static void sorted(void)
{
	qsort(evs, nev, sizeof(evs[0]), cmp_ts);
	for (size_t i = 1; i < nev; i++)
		assert_true(evs[i - 1].ts < evs[i].ts);   /* the streams use no equal times */
}

static int reset(void **state)
{
	(void)state;
	nev = 0;
	return 0;
}

static int pick(uint64_t held_from, uint64_t from, uint64_t to, uint64_t min, struct spike_cause *c,
		struct lat_error *why)
{
	sorted();
	return spike_pick(evs, nev, held_from, CPU, T_PID, from, to, min, c, why);
}

/* lat-inject (SCHED_FIFO 90) wakes just before D and spins 3 ms. */
static void injected_burst(uint64_t d)
{
	ev_timer(d - 8 * US, d - 6 * US, 0xffff888000000001u);
	ev_waking(d - 7 * US, 200, 9, "lat-inject");
	ev_switch(d - 4 * US, 0, "swapper/1", 120, 200, "lat-inject", 9);
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 2 * US, .run = d + 3000 * US,
				    .prev = 200, .prev_comm = "lat-inject", .prev_prio = 9 });
}

/* ---- the sample ---------------------------------------------------------- */

static void test_the_latest_wakeup_in_the_window_is_picked_and_its_task_named(void **state)
{
	(void)state;
	struct spike_cause c;
	clean_sleep(10 * MS);
	injected_burst(11 * MS);
	clean_sleep(16 * MS);

	assert_int_equal(pick(0, 9 * MS, 17 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.deadline_ns, 11 * MS);
	assert_int_equal(c.latency_ns, 3000 * US);
	assert_int_equal(c.kind, SPIKE_TASK);
	assert_string_equal(c.name, "task lat-inject (pid 200)");
	/* From D to the switch to T, but for the expiry's own 1.5 us callback. */
	assert_int_equal(c.share_ns, 3000 * US - 1500);
	assert_int_equal(c.flags, 0);
}

static void test_a_deadline_outside_the_window_is_not_picked(void **state)
{
	(void)state;
	struct spike_cause c;
	injected_burst(11 * MS);
	sleep_of_t(&(struct sleep){ .armed = 16 * MS - 900 * US, .d = 16 * MS, .expiry = 16 * MS + 2 * US,
				    .run = 16 * MS + 400 * US });

	assert_int_equal(pick(0, 12 * MS, 17 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.deadline_ns, 16 * MS);
	assert_int_equal(c.latency_ns, 400 * US);
}

static void test_a_window_without_a_wakeup_above_the_minimum_gives_enoent_with_a_reason(void **state)
{
	(void)state;
	struct spike_cause c;
	struct lat_error why = { "" };
	clean_sleep(10 * MS);
	clean_sleep(11 * MS);

	assert_int_equal(pick(0, 9 * MS, 12 * MS, 100 * US, &c, &why), -ENOENT);
	assert_non_null(strstr(why.msg, "no wakeup"));
	assert_non_null(strstr(why.msg, "100"));
}

static void test_another_threads_sleep_is_not_taken_for_the_threads(void **state)
{
	(void)state;
	struct spike_cause c;
	injected_burst(11 * MS);
	for (size_t i = 0; i < nev; i++)
		if (evs[i].pid == T_PID)
			evs[i].pid = T_PID + 1;

	assert_int_equal(pick(0, 9 * MS, 15 * MS, 100 * US, &c, NULL), -ENOENT);
}

static void test_an_irq_handler_that_delayed_the_expiry_is_named_with_its_number(void **state)
{
	(void)state;
	struct spike_cause c;
	uint64_t d = 10 * MS;
	ev_irq(d - 1 * US, d + 500 * US, 24, "virtio0");
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 501 * US, .run = d + 505 * US });

	assert_int_equal(pick(0, 9 * MS, 11 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.kind, SPIKE_IRQ);
	assert_string_equal(c.name, "irq 24 virtio0");
	assert_int_equal(c.share_ns, 500 * US);
}

static void test_a_softirq_after_the_wakeup_is_named_by_its_vector(void **state)
{
	(void)state;
	struct spike_cause c;
	uint64_t d = 10 * MS;
	ev_softirq(d + 5 * US, d + 400 * US, 1);
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 2 * US, .run = d + 402 * US });

	assert_int_equal(pick(0, 9 * MS, 11 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.kind, SPIKE_SOFTIRQ);
	assert_string_equal(c.name, "softirq TIMER");
	assert_int_equal(c.share_ns, 395 * US);
}

static void test_a_late_expiry_on_an_idle_cpu_is_no_event(void **state)
{
	(void)state;
	struct spike_cause c;
	uint64_t d = 10 * MS;
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 2 * MS, .run = d + 2 * MS + 4 * US });

	assert_int_equal(pick(0, 9 * MS, 11 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.kind, SPIKE_NO_EVENT);
	assert_string_equal(c.name, "no event");
	assert_true(c.share_ns >= 2 * MS);
	assert_int_equal(c.latency_ns, 2 * MS + 4 * US);
}

static void test_a_lower_priority_task_running_before_a_late_expiry_is_no_event(void **state)
{
	(void)state;
	struct spike_cause c;
	uint64_t d = 10 * MS;
	/* A SCHED_OTHER task cannot hold back the timer interrupt: the vCPU was not running. */
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 1500 * US, .run = d + 1510 * US,
				    .prev = 33, .prev_comm = "kworker/1:2", .prev_prio = 120 });
	ev_switch(d - 100 * US, 0, "swapper/1", 120, 33, "kworker/1:2", 120);

	assert_int_equal(pick(0, 9 * MS, 11 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.kind, SPIKE_NO_EVENT);
	assert_int_equal(c.share_ns, 1500 * US);
}

static void test_a_lower_priority_task_after_the_wakeup_is_named_with_its_pid(void **state)
{
	(void)state;
	struct spike_cause c;
	uint64_t d = 10 * MS;
	/* T of SCHED_OTHER too (prio 120): the kworker runs on until it yields. */
	struct sleep s = { .armed = d - 900 * US, .d = d, .expiry = d + 2 * US, .run = d + 800 * US,
			   .prev = 33, .prev_comm = "kworker/1:2", .prev_prio = 120 };
	sleep_of_t(&s);
	ev_switch(d + 10 * US, 0, "swapper/1", 120, 33, "kworker/1:2", 120);

	assert_int_equal(pick(0, 9 * MS, 11 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.kind, SPIKE_TASK);
	assert_string_equal(c.name, "task kworker/1:2 (pid 33)");
	assert_int_equal(c.share_ns, 790 * US);
}

static void test_an_untraced_switch_is_replaced_by_the_threads_syscall_exit(void **state)
{
	(void)state;
	struct spike_cause c;
	uint64_t d = 10 * MS;
	sleep_of_t(&(struct sleep){ .armed = d - 900 * US, .d = d, .expiry = d + 700 * US, .run = d + 703 * US,
				    .untraced_switch = true });

	assert_int_equal(pick(0, 9 * MS, 11 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.latency_ns, 704 * US);
	assert_int_equal(c.kind, SPIKE_NO_EVENT);
}

static void test_lost_events_inside_the_sample_are_flagged(void **state)
{
	(void)state;
	struct spike_cause c;
	injected_burst(11 * MS);
	ev_at(11 * MS + 1000 * US, TRACE_EV_LOST)->arg = 12;

	assert_int_equal(pick(0, 9 * MS, 15 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.flags & SPIKE_F_LOST, SPIKE_F_LOST);
}

static void test_a_window_that_ended_before_the_ring_holds_events_gives_enoent(void **state)
{
	(void)state;
	struct spike_cause c;
	struct lat_error why = { "" };
	injected_burst(11 * MS);
	injected_burst(21 * MS);

	assert_int_equal(pick(16 * MS, 9 * MS, 15 * MS, 100 * US, &c, &why), -ENOENT);
	assert_non_null(strstr(why.msg, "overwritten"));
}

static void test_a_window_whose_start_was_overwritten_is_explained_from_the_rest_and_flagged(void **state)
{
	(void)state;
	struct spike_cause c;
	injected_burst(11 * MS);
	sleep_of_t(&(struct sleep){ .armed = 21 * MS - 900 * US, .d = 21 * MS, .expiry = 21 * MS + 2 * US,
				    .run = 21 * MS + 400 * US });

	/* The 3 ms one lies before held_from: only the rest can be taken. */
	assert_int_equal(pick(16 * MS, 9 * MS, 25 * MS, 100 * US, &c, NULL), 0);
	assert_int_equal(c.deadline_ns, 21 * MS);
	assert_int_equal(c.flags & SPIKE_F_PARTIAL, SPIKE_F_PARTIAL);
}

static void test_a_reversed_window_is_refused(void **state)
{
	(void)state;
	struct spike_cause c;
	injected_burst(11 * MS);
	assert_int_equal(pick(0, 15 * MS, 9 * MS, 100 * US, &c, NULL), -EINVAL);
}

static void test_kinds_have_their_metric_names(void **state)
{
	(void)state;
	assert_string_equal(spike_kind_name(SPIKE_IRQ), "irq");
	assert_string_equal(spike_kind_name(SPIKE_SOFTIRQ), "softirq");
	assert_string_equal(spike_kind_name(SPIKE_TASK), "task");
	assert_string_equal(spike_kind_name(SPIKE_NO_EVENT), "no_event");
	assert_string_equal(spike_kind_name(SPIKE_KINDS), "?");
}

/* ---- the history of one CPU ---------------------------------------------- */

static struct trace_ev batch[64];

static size_t make_batch(uint64_t first, uint64_t step, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		memset(&batch[i], 0, sizeof(batch[i]));
		batch[i].ts = first + i * step;
		batch[i].type = TRACE_EV_SCHED_SWITCH;
		batch[i].cpu = (uint8_t)CPU;
	}
	return n;
}

static void test_history_joins_reads_without_a_gap(void **state)
{
	(void)state;
	struct spike_history h = { .held_from = 1 * MS };
	assert_int_equal(spike_history_add(&h, batch, make_batch(2 * MS, MS, 10), 0, 12 * MS, 100 * MS), 0);
	assert_int_equal(spike_history_add(&h, batch, make_batch(12 * MS, MS, 10), 0, 22 * MS, 100 * MS), 0);
	assert_int_equal(h.n, 20);
	assert_int_equal(h.held_from, 1 * MS);
	for (size_t i = 1; i < h.n; i++)
		assert_true(h.ev[i - 1].ts < h.ev[i].ts);
	spike_history_free(&h);
}

static void test_an_empty_read_without_a_batch_adds_nothing(void **state)
{
	(void)state;
	struct spike_history h = { .held_from = 0 };
	/* the first read of a quiet ring: nothing, and no array to copy from */
	assert_int_equal(spike_history_add(&h, NULL, 0, 0, 1 * MS, 5 * MS), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(spike_history_add(&h, batch, make_batch(2 * MS, MS, 3), 0, 5 * MS, 100 * MS), 0);
	assert_int_equal(spike_history_add(&h, NULL, 0, 0, 6 * MS, 100 * MS), 0);
	assert_int_equal(h.n, 3);
	spike_history_free(&h);
}

static void test_history_keeps_only_the_last_keep_ns(void **state)
{
	(void)state;
	struct spike_history h = { .held_from = 0 };
	assert_int_equal(spike_history_add(&h, batch, make_batch(1 * MS, MS, 20), 0, 21 * MS, 5 * MS), 0);
	assert_int_equal(h.held_from, 16 * MS);
	assert_int_equal(h.ev[0].ts, 16 * MS);
	assert_int_equal(h.n, 5);
	spike_history_free(&h);
}

static void test_history_drops_what_came_before_an_overrun(void **state)
{
	(void)state;
	struct spike_history h = { .held_from = 0 };
	assert_int_equal(spike_history_add(&h, batch, make_batch(1 * MS, MS, 10), 0, 11 * MS, 100 * MS), 0);
	/* The kernel overwrote 40 events between the reads: the old ones end before a gap. */
	assert_int_equal(spike_history_add(&h, batch, make_batch(60 * MS, MS, 10), 40, 70 * MS, 100 * MS), 0);
	assert_int_equal(h.held_from, 60 * MS);
	assert_int_equal(h.n, 10);
	assert_int_equal(h.ev[0].ts, 60 * MS);
	assert_int_equal(h.lost_seen, 40);
	/* The same count again is no new loss. */
	assert_int_equal(spike_history_add(&h, batch, make_batch(70 * MS, MS, 10), 40, 80 * MS, 100 * MS), 0);
	assert_int_equal(h.held_from, 60 * MS);
	assert_int_equal(h.n, 20);
	spike_history_free(&h);
}

static void test_history_drops_what_came_before_a_lost_marker(void **state)
{
	(void)state;
	struct spike_history h = { .held_from = 0 };
	size_t n = make_batch(1 * MS, MS, 10);
	batch[4].type = TRACE_EV_LOST;     /* at 5 ms */
	assert_int_equal(spike_history_add(&h, batch, n, 0, 11 * MS, 100 * MS), 0);
	assert_int_equal(h.held_from, 5 * MS);
	assert_int_equal(h.n, 5);
	assert_int_equal(h.ev[0].ts, 6 * MS);
	spike_history_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_the_latest_wakeup_in_the_window_is_picked_and_its_task_named, reset),
		cmocka_unit_test_setup(test_a_deadline_outside_the_window_is_not_picked, reset),
		cmocka_unit_test_setup(test_a_window_without_a_wakeup_above_the_minimum_gives_enoent_with_a_reason, reset),
		cmocka_unit_test_setup(test_another_threads_sleep_is_not_taken_for_the_threads, reset),
		cmocka_unit_test_setup(test_an_irq_handler_that_delayed_the_expiry_is_named_with_its_number, reset),
		cmocka_unit_test_setup(test_a_softirq_after_the_wakeup_is_named_by_its_vector, reset),
		cmocka_unit_test_setup(test_a_late_expiry_on_an_idle_cpu_is_no_event, reset),
		cmocka_unit_test_setup(test_a_lower_priority_task_running_before_a_late_expiry_is_no_event, reset),
		cmocka_unit_test_setup(test_a_lower_priority_task_after_the_wakeup_is_named_with_its_pid, reset),
		cmocka_unit_test_setup(test_an_untraced_switch_is_replaced_by_the_threads_syscall_exit, reset),
		cmocka_unit_test_setup(test_lost_events_inside_the_sample_are_flagged, reset),
		cmocka_unit_test_setup(test_a_window_that_ended_before_the_ring_holds_events_gives_enoent, reset),
		cmocka_unit_test_setup(test_a_window_whose_start_was_overwritten_is_explained_from_the_rest_and_flagged, reset),
		cmocka_unit_test_setup(test_a_reversed_window_is_refused, reset),
		cmocka_unit_test(test_kinds_have_their_metric_names),
		cmocka_unit_test(test_history_joins_reads_without_a_gap),
		cmocka_unit_test(test_an_empty_read_without_a_batch_adds_nothing),
		cmocka_unit_test(test_history_keeps_only_the_last_keep_ns),
		cmocka_unit_test(test_history_drops_what_came_before_an_overrun),
		cmocka_unit_test(test_history_drops_what_came_before_a_lost_marker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
