/*
 * The trace ring (trace/ring.h): its pure part with synthetic per-CPU
 * histories, and one real ring on every online CPU, which needs root and
 * tracefs (skipped, saying so, without them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/array.h"
#include "core/nstime.h"
#include "sys/cpus.h"
#include "trace/eventlist.h"
#include "trace/instance.h"
#include "trace/ring.h"

#define MS NS_PER_MS

static struct trace_ev ev_at(uint64_t ts, unsigned cpu, int32_t pid)
{
	return (struct trace_ev){
		.ts = ts, .cpu = (uint8_t)cpu, .pid = pid, .type = TRACE_EV_SCHED_SWITCH
	};
}

static struct trace_ev lost_at(uint64_t ts, unsigned cpu, uint64_t n)
{
	return (struct trace_ev){ .ts = ts, .cpu = (uint8_t)cpu, .arg = n, .type = TRACE_EV_LOST };
}

/* Events at first, first + step, ... on cpu, pids counting from pid0. */
static void fill(struct trace_ring_cpu *c, unsigned cpu, uint64_t first, uint64_t step, size_t n,
		 int32_t pid0, uint64_t now)
{
	struct trace_ev b[64];
	assert_true(n <= ARRAY_SIZE(b));
	for (size_t i = 0; i < n; i++)
		b[i] = ev_at(first + i * step, cpu, pid0 + (int32_t)i);
	assert_int_equal(trace_ring_cpu_add(c, b, n, c->h.lost_seen, 0, now, 1000 * MS), 0);
}

static void free_cpus(struct trace_ring_cpu *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		spike_history_free(&c[i].h);
}

struct got {
	struct trace_ev *ev;
	size_t n;
	uint64_t complete_from, lost;
};

static struct got merge(const struct trace_ring_cpu *const *cpu, size_t ncpu, uint64_t from,
			uint64_t to)
{
	struct got g;
	assert_int_equal(
		trace_ring_merge(cpu, ncpu, from, to, &g.ev, &g.n, &g.complete_from, &g.lost), 0);
	assert_true((g.n == 0) == (g.ev == NULL));
	for (size_t i = 1; i < g.n; i++)
		assert_true(g.ev[i - 1].ts <= g.ev[i].ts);
	return g;
}

static void test_collect_merges_the_cpus_in_time_order_within_the_window(void **state)
{
	(void)state;
	struct trace_ring_cpu c[3] = { 0 };
	fill(&c[0], 0, 1 * MS, 3 * MS, 10, 100, 40 * MS); /* 1, 4, ... 28 ms */
	fill(&c[2], 2, 2 * MS, 5 * MS, 6, 200, 40 * MS);  /* 2, 7, ... 27 ms */
	const struct trace_ring_cpu *v[3] = { &c[0], NULL, &c[2] };
	struct got g = merge(v, 3, 4 * MS, 22 * MS);
	/* cpu 0: 4 7 10 13 16 19 22; cpu 2: 7 12 17 22 */
	assert_int_equal(g.n, 11);
	assert_int_equal(g.ev[0].ts, 4 * MS);
	assert_int_equal(g.ev[g.n - 1].ts, 22 * MS);
	assert_int_equal(g.lost, 0);
	for (size_t i = 0; i < g.n; i++)
		assert_int_not_equal(g.ev[i].cpu, 1);
	free(g.ev);
	free_cpus(c, 3);
}

static void test_equal_times_go_by_cpu_and_each_cpu_keeps_its_order(void **state)
{
	(void)state;
	struct trace_ring_cpu c[2] = { 0 };
	fill(&c[1], 1, 5 * MS, 0, 3, 10, 10 * MS); /* three at 5 ms: pids 10 11 12 */
	fill(&c[0], 0, 5 * MS, 0, 2, 20, 10 * MS); /* two at 5 ms: pids 20 21 */
	const struct trace_ring_cpu *v[2] = { &c[0], &c[1] };
	struct got g = merge(v, 2, 0, UINT64_MAX);
	int32_t want[] = { 20, 21, 10, 11, 12 };
	assert_int_equal(g.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < g.n; i++)
		assert_int_equal(g.ev[i].pid, want[i]);
	free(g.ev);
	free_cpus(c, 2);
}

static void test_a_window_holding_nothing_gives_null(void **state)
{
	(void)state;
	struct trace_ring_cpu c[1] = { 0 };
	fill(&c[0], 0, 10 * MS, MS, 5, 1, 20 * MS);
	const struct trace_ring_cpu *v[1] = { &c[0] };
	struct got g = merge(v, 1, 50 * MS, 60 * MS);
	assert_null(g.ev);
	assert_int_equal(g.n, 0);
	g = merge(v, 1, 12 * MS, 11 * MS); /* reversed: empty, not an error */
	assert_null(g.ev);
	free_cpus(c, 1);
}

static void test_events_are_complete_from_the_latest_held_from(void **state)
{
	(void)state;
	struct trace_ring_cpu c[2] = { { .h = { .held_from = 3 * MS } },
				       { .h = { .held_from = 7 * MS } } };
	fill(&c[0], 0, 4 * MS, MS, 5, 1, 10 * MS);
	fill(&c[1], 1, 8 * MS, MS, 2, 1, 10 * MS);
	const struct trace_ring_cpu *v[2] = { &c[0], &c[1] };
	struct got g = merge(v, 2, 0, UINT64_MAX);
	assert_int_equal(g.complete_from, 7 * MS);
	assert_int_equal(g.n, 7);
	free(g.ev);
	free_cpus(c, 2);
}

static void test_a_lost_marker_is_a_gap_shown_and_counted_inside_the_window(void **state)
{
	(void)state;
	struct trace_ring_cpu c[2] = { 0 };
	struct trace_ev b[] = { ev_at(1 * MS, 1, 1), ev_at(2 * MS, 1, 2), lost_at(5 * MS, 1, 40),
				ev_at(5 * MS, 1, 3), ev_at(6 * MS, 1, 4) };
	assert_int_equal(trace_ring_cpu_add(&c[1], b, ARRAY_SIZE(b), 40, 0, 10 * MS, 1000 * MS), 0);
	assert_int_equal(c[1].ngap, 1);
	assert_int_equal(c[1].h.held_from, 5 * MS);
	fill(&c[0], 0, 5 * MS, MS, 2, 50, 10 * MS);
	const struct trace_ring_cpu *v[2] = { &c[0], &c[1] };

	struct got g = merge(v, 2, 0, UINT64_MAX);
	assert_int_equal(g.lost, 40); /* the marker and the kernel's count: one loss */
	assert_int_equal(g.n, 5);
	/* At 5 ms: the marker first, then cpu 0's event, then cpu 1's. */
	assert_int_equal(g.ev[0].type, TRACE_EV_LOST);
	assert_int_equal(g.ev[0].cpu, 1);
	assert_int_equal(g.ev[0].arg, 40);
	assert_int_equal(g.ev[1].cpu, 0);
	assert_int_equal(g.ev[2].pid, 3);
	free(g.ev);

	g = merge(v, 2, 6 * MS, UINT64_MAX); /* the loss before the window is not counted */
	assert_int_equal(g.lost, 0);
	assert_int_equal(g.n, 2);
	free(g.ev);
	free_cpus(c, 2);
}

static void test_a_kernel_count_without_a_marker_is_a_gap_at_the_reads_first_event(void **state)
{
	(void)state;
	struct trace_ring_cpu c[1] = { 0 };
	fill(&c[0], 0, 1 * MS, MS, 3, 1, 5 * MS);
	struct trace_ev b[] = { ev_at(20 * MS, 0, 9) };
	assert_int_equal(trace_ring_cpu_add(&c[0], b, 1, 17, 0, 25 * MS, 1000 * MS), 0);
	const struct trace_ring_cpu *v[1] = { &c[0] };
	struct got g = merge(v, 1, 0, UINT64_MAX);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.ev[0].type, TRACE_EV_LOST);
	assert_int_equal(g.ev[0].ts, 20 * MS);
	assert_int_equal(g.lost, 17);
	assert_int_equal(g.complete_from, 20 * MS);
	free(g.ev);
	free_cpus(c, 1);
}

static void test_a_marker_of_unknown_size_takes_the_kernels_count_else_counts_one(void **state)
{
	(void)state;
	struct trace_ring_cpu c[1] = { 0 };
	struct trace_ev b[] = { lost_at(3 * MS, 0, 0), ev_at(3 * MS, 0, 1) };
	assert_int_equal(trace_ring_cpu_add(&c[0], b, 2, 12, 0, 5 * MS, 1000 * MS), 0);
	struct trace_ev b2[] = { lost_at(8 * MS, 0, 0), ev_at(8 * MS, 0, 2) };
	assert_int_equal(trace_ring_cpu_add(&c[0], b2, 2, 12, 0, 9 * MS, 1000 * MS), 0);
	const struct trace_ring_cpu *v[1] = { &c[0] };
	struct got g = merge(v, 1, 0, UINT64_MAX);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.ev[0].arg, 12);
	assert_int_equal(g.ev[1].type, TRACE_EV_LOST);
	assert_int_equal(g.ev[1].arg, 0);
	assert_int_equal(g.lost, 13);
	free(g.ev);
	free_cpus(c, 1);
}

static void test_events_past_a_reads_bound_are_a_gap_at_the_read(void **state)
{
	(void)state;
	struct trace_ring_cpu c[1] = { 0 };
	struct trace_ev b[] = { ev_at(1 * MS, 0, 1), ev_at(2 * MS, 0, 2) };
	assert_int_equal(trace_ring_cpu_add(&c[0], b, 2, 0, 500, 4 * MS, 1000 * MS), 0);
	assert_int_equal(c[0].h.n, 0);
	assert_int_equal(c[0].h.held_from, 4 * MS);
	const struct trace_ring_cpu *v[1] = { &c[0] };
	struct got g = merge(v, 1, 0, UINT64_MAX);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.ev[0].ts, 4 * MS);
	assert_int_equal(g.lost, 500);
	free(g.ev);
	free_cpus(c, 1);
}

static void test_gaps_older_than_keep_are_forgotten_and_the_newest_kept(void **state)
{
	(void)state;
	struct trace_ring_cpu c[1] = { 0 };
	for (uint64_t i = 0; i < 2 * TRACE_RING_GAPS; i++) {
		struct trace_ev b[] = { lost_at((i + 1) * MS, 0, 1), ev_at((i + 1) * MS, 0, 1) };
		assert_int_equal(trace_ring_cpu_add(&c[0], b, 2, 0, 0, (i + 1) * MS, 1000 * MS), 0);
	}
	assert_int_equal(c[0].ngap, TRACE_RING_GAPS);
	assert_int_equal(c[0].gap[TRACE_RING_GAPS - 1].ts, 2 * TRACE_RING_GAPS * MS);
	struct trace_ev b[] = { ev_at(2000 * MS, 0, 1) };
	assert_int_equal(trace_ring_cpu_add(&c[0], b, 1, 0, 0, 2000 * MS, 1000 * MS), 0);
	assert_int_equal(c[0].ngap, 0);
	free_cpus(c, 1);
}

/* ---- which groups record ------------------------------------------------ */

/* A kernel whose events are all there but those of system ctx (or "sys:name"). */
#define BUT(what) ((void *)(uintptr_t)(what)) /* read only */
static bool exists_but(const char *sys, const char *name, void *ctx)
{
	char full[96];
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	return strcmp(sys, ctx) != 0 && strcmp(full, ctx) != 0;
}

static void test_a_kernel_without_kvm_records_the_other_groups_without_it(void **state)
{
	(void)state;
	unsigned had = 0;
	const struct trace_event_name *missing = NULL;
	unsigned want = TRACE_WANT_SCHED | TRACE_WANT_MIGRATE | TRACE_WANT_KVM;
	assert_int_equal(trace_events_available(want, exists_but, BUT("kvm"), &had, &missing), 0);
	assert_int_equal(had, TRACE_WANT_SCHED | TRACE_WANT_MIGRATE);
	assert_int_equal(trace_events_available(want, exists_but, BUT("none"), &had, &missing), 0);
	assert_int_equal(had, want);
}

static void test_a_group_missing_one_optional_event_is_left_out_whole(void **state)
{
	(void)state;
	unsigned had = 0;
	const struct trace_event_name *missing = NULL;
	assert_int_equal(trace_events_available(TRACE_WANT_KVM | TRACE_WANT_IRQ, exists_but,
						BUT("kvm:kvm_entry"), &had, &missing),
			 0);
	assert_int_equal(had, TRACE_WANT_IRQ);
	assert_int_equal(
		trace_events_available(TRACE_WANT_KVM, exists_but, BUT("kvm"), &had, &missing), 0);
	assert_int_equal(had, 0); /* the caller says nothing is left */
}

static void test_a_missing_required_event_is_named(void **state)
{
	(void)state;
	unsigned had = 0;
	const struct trace_event_name *missing = NULL;
	unsigned want = TRACE_WANT_MIGRATE | TRACE_WANT_KVM;
	assert_int_equal(trace_events_available(want, exists_but, BUT("sched:sched_migrate_task"),
						&had, &missing),
			 -ENOENT);
	assert_non_null(missing);
	assert_string_equal(missing->name, "sched_migrate_task");
}

/* ---- a real ring ---------------------------------------------------------- */

static const char *cannot_trace(void)
{
	if (!trace_supported())
		return "this build has no tracefs support (built without libtracefs)";
	if (geteuid() != 0)
		return "this machine: the tests do not run as root";
	return NULL;
}

struct hopper {
	struct cpuset cpus;
	pid_t tid;
	int err;
};

/* Sleeps (a switch out in state S), and moves across the CPUs (migrations). */
static void *hop(void *arg)
{
	struct hopper *h = arg;
	h->tid = gettid();
	for (int i = 0; i < 40; i++) {
		unsigned n = cpuset_count(&h->cpus), k = (unsigned)i % n;
		int cpu = cpuset_next(&h->cpus, 0);
		while (k-- > 0)
			cpu = cpuset_next(&h->cpus, (unsigned)cpu + 1);
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((size_t)cpu, &set);
		if ((h->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) != 0)
			return NULL;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 1000000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_a_ring_on_every_cpu_sees_switch_states_and_migrations(void **state)
{
	(void)state;
	const char *why = cannot_trace();
	if (why) {
		skip_because(why);
		return;
	}
	struct cpuset cpus;
	assert_int_equal(cpus_online(&cpus), 0);
	struct trace_ring *r = NULL;
	struct lat_error err = { 0 };
	unsigned want = TRACE_WANT_SCHED | TRACE_WANT_MIGRATE | TRACE_WANT_KVM;
	int rc = trace_ring_start(&cpus, 5 * NS_PER_SEC, want, &r, &err);
	if (rc == -ENODEV || rc == -EACCES) {
		skip_because("this machine cannot mount or write tracefs");
		return;
	}
	assert_int_equal(rc, 0);
	unsigned got = trace_ring_events(r);
	assert_int_equal(got & ~TRACE_WANT_KVM, TRACE_WANT_SCHED | TRACE_WANT_MIGRATE);
	bool kvm = access("/sys/kernel/tracing/events/kvm/kvm_exit", F_OK) == 0 ||
		   access("/sys/kernel/debug/tracing/events/kvm/kvm_exit", F_OK) == 0;
	assert_int_equal(!!(got & TRACE_WANT_KVM), kvm);

	uint64_t t0 = mono_ns();
	struct hopper h = { .cpus = cpus };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, hop, &h), 0);
	pthread_join(th, NULL);
	assert_int_equal(h.err, 0);
	assert_int_equal(trace_ring_read(r, &err), 0);

	struct trace_ev *ev = NULL;
	size_t n = 0;
	uint64_t complete_from = 0, lost = 0;
	assert_int_equal(trace_ring_collect(r, t0, mono_ns(), &ev, &n, &complete_from, &lost, &err),
			 0);
	size_t sleeps = 0, moves = 0, unknown = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			assert_true(ev[i - 1].ts <= ev[i].ts);
		if (ev[i].type == TRACE_EV_SCHED_SWITCH) {
			unknown += !(ev[i].arg & TRACE_SWITCH_STATE_KNOWN);
			sleeps += ev[i].prev_pid == h.tid &&
				  (ev[i].arg & TRACE_SWITCH_STATE_MASK) == 0x1;
		}
		if (ev[i].type == TRACE_EV_SCHED_MIGRATE && ev[i].pid == h.tid) {
			assert_int_not_equal(ev[i].arg, ev[i].arg2);
			assert_true(cpuset_has(&cpus, (unsigned)ev[i].arg));
			moves++;
		}
	}
	free(ev);
	assert_int_equal(unknown, 0);
	assert_true(sleeps >= 10);
	if (cpuset_count(&cpus) > 1)
		assert_true(moves >= 10);
	assert_int_equal(trace_ring_stop(r, NULL) <= 1, 1);
	if (cpuset_count(&cpus) < 2)
		skip_because("this machine has one CPU: no migration to see");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collect_merges_the_cpus_in_time_order_within_the_window),
		cmocka_unit_test(test_equal_times_go_by_cpu_and_each_cpu_keeps_its_order),
		cmocka_unit_test(test_a_window_holding_nothing_gives_null),
		cmocka_unit_test(test_events_are_complete_from_the_latest_held_from),
		cmocka_unit_test(test_a_lost_marker_is_a_gap_shown_and_counted_inside_the_window),
		cmocka_unit_test(
			test_a_kernel_count_without_a_marker_is_a_gap_at_the_reads_first_event),
		cmocka_unit_test(
			test_a_marker_of_unknown_size_takes_the_kernels_count_else_counts_one),
		cmocka_unit_test(test_events_past_a_reads_bound_are_a_gap_at_the_read),
		cmocka_unit_test(test_gaps_older_than_keep_are_forgotten_and_the_newest_kept),
		cmocka_unit_test(test_a_kernel_without_kvm_records_the_other_groups_without_it),
		cmocka_unit_test(test_a_group_missing_one_optional_event_is_left_out_whole),
		cmocka_unit_test(test_a_missing_required_event_is_named),
		cmocka_unit_test(test_a_ring_on_every_cpu_sees_switch_states_and_migrations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
