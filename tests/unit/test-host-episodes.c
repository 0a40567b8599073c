/* A vCPU's episodes (src/host/episodes.c) and a guest's matching of its spikes to them (src/host/timeline.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/nstime.h"
#include "host/episodes.h"
#include "host/timeline.h"

#define T0	 (UINT64_C(100) * NS_PER_SEC)
#define MS(x)	 (T0 + (uint64_t)llround((x)*1e6))
#define RUNNABLE (TRACE_SWITCH_STATE_KNOWN | 0x100u)
#define ASLEEP	 (TRACE_SWITCH_STATE_KNOWN | 0x1u)
#define STOPPED	 (TRACE_SWITCH_STATE_KNOWN | 0x4u)

struct task {
	int32_t pid, prio;
	const char *comm;
};

static const struct task vcpu1 = { 4242, 120, "CPU 1/TCG" };
static const struct task hog = { 999, 49, "lat-hog" };
static const struct task idle = { 0, 120, "swapper/1" };

static struct trace_ev ev[64];
static size_t nev;

static int reset(void **state)
{
	(void)state;
	memset(ev, 0, sizeof(ev));
	nev = 0;
	return 0;
}

static void sw(double ms, const struct task *prev, uint64_t state, const struct task *next)
{
	struct trace_ev *e = &ev[nev++];
	*e = (struct trace_ev){ .ts = MS(ms),
				.type = TRACE_EV_SCHED_SWITCH,
				.cpu = 1,
				.pid = next->pid,
				.prio = next->prio,
				.prev_pid = prev->pid,
				.prev_prio = prev->prio,
				.arg = state };
	strcpy(e->comm, next->comm);
	strcpy(e->prev_comm, prev->comm);
}

static void wake(double ms, const struct task *who)
{
	struct trace_ev *e = &ev[nev++];
	*e = (struct trace_ev){ .ts = MS(ms),
				.type = TRACE_EV_SCHED_WAKEUP,
				.cpu = 1,
				.pid = who->pid,
				.prio = who->prio };
	strcpy(e->comm, who->comm);
}

static size_t episodes(double from, double to, double min_ms, struct host_answer *ret, size_t max,
		       size_t *more)
{
	const struct host_episodes_query q = { .tid = vcpu1.pid,
					       .vcpu = 1,
					       .from = MS(from),
					       .to = MS(to),
					       .min_ns = (uint64_t)llround(min_ms * 1e6) };
	size_t n;
	assert_int_equal(host_episodes(ev, nev, &q, ret, max, &n, more), 0);
	return n;
}

/* The guest idles (1 ms halts), then a FIFO hog takes the CPU for 30 ms while the vCPU is runnable. */
static void idle_then_hog(void)
{
	sw(0, &idle, 0, &vcpu1);
	for (int i = 0; i < 5; i++) {
		sw(i * 2 + 0.5, &vcpu1, ASLEEP, &idle);
		wake(i * 2 + 1.5, &vcpu1);
		sw(i * 2 + 1.5, &idle, 0, &vcpu1);
	}
	sw(20, &vcpu1, RUNNABLE, &hog);
	sw(50, &hog, ASLEEP, &vcpu1);
}

static void
test_a_preemption_by_a_hog_is_one_episode_naming_it_and_the_guests_halts_are_none(void **state)
{
	(void)state;
	struct host_answer a[HOST_EPISODES_MAX];
	size_t more;

	idle_then_hog();
	assert_int_equal(episodes(0, 100, 0.5, a, HOST_EPISODES_MAX, &more), 1);
	assert_int_equal(more, 0);
	assert_int_equal(a[0].q.from, MS(20));
	assert_int_equal(a[0].q.to, MS(50));
	assert_int_equal(a[0].state_ns[HOST_ST_PREEMPTED], 30 * NS_PER_MS);
	assert_true(a[0].nran >= 1);
	assert_string_equal(a[0].ran[0].comm, "lat-hog");
	assert_int_equal(a[0].ran[0].id, 999);
	/* Longer than the episode: none.  Beginning outside [from, to): none. */
	assert_int_equal(episodes(0, 100, 31, a, HOST_EPISODES_MAX, &more), 0);
	assert_int_equal(episodes(21, 100, 0.5, a, HOST_EPISODES_MAX, &more), 0);
	assert_int_equal(episodes(0, 20, 0.5, a, HOST_EPISODES_MAX, &more), 0);
}

static void test_a_stopped_vcpu_is_held_until_it_runs_again_though_sigcont_wakes_it(void **state)
{
	(void)state;
	struct host_answer a[2];
	size_t more;

	sw(0, &idle, 0, &vcpu1);
	sw(10, &vcpu1, STOPPED, &idle);
	wake(40, &vcpu1); /* SIGCONT */
	sw(40.01, &idle, 0, &vcpu1);
	assert_int_equal(episodes(0, 100, 25, a, 2, &more), 1);
	assert_int_equal(a[0].q.to - a[0].q.from, 30010000);
}

static void
test_without_prev_state_a_wakeup_shows_the_sleep_and_only_the_wait_after_it_is_held(void **state)
{
	(void)state;
	struct host_answer a[2];
	size_t more;

	sw(0, &idle, 0, &vcpu1);
	sw(10, &vcpu1, 0, &idle); /* a collector that did not fill prev_state */
	wake(30, &vcpu1);
	sw(30.1, &idle, 0, &hog);
	sw(45, &hog, 0, &vcpu1); /* held 15 ms after its wakeup */
	assert_int_equal(episodes(0, 100, 14, a, 2, &more), 1);
	assert_int_equal(episodes(0, 100, 16, a, 2, &more), 0);
}

static void test_past_max_the_least_held_give_way_and_are_counted(void **state)
{
	(void)state;
	struct host_answer a[2];
	size_t more;

	sw(0, &idle, 0, &vcpu1);
	sw(10, &vcpu1, RUNNABLE, &hog); /* 5 ms */
	sw(15, &hog, ASLEEP, &vcpu1);
	sw(20, &vcpu1, RUNNABLE, &hog); /* 9 ms */
	sw(29, &hog, ASLEEP, &vcpu1);
	sw(30, &vcpu1, RUNNABLE, &hog); /* 7 ms */
	sw(37, &hog, ASLEEP, &vcpu1);
	assert_int_equal(episodes(0, 100, 1, a, 2, &more), 2);
	assert_int_equal(more, 1);
	assert_int_equal(a[0].q.from, MS(20));
	assert_int_equal(a[1].q.from, MS(30));
}

static void test_the_timeline_carries_guest_time_by_the_line_up_of_its_moment(void **state)
{
	(void)state;
	struct host_timeline t = { 0 };
	uint64_t h, b;

	assert_int_equal(host_timeline_host_of(&t, 5, &h, &b), -ENOENT);
	assert_int_equal(host_timeline_offset(&t, 1000, 500, 10), 0);
	assert_int_equal(host_timeline_offset(&t, 2000, 700, 30), 0);
	assert_int_equal(host_timeline_offset(&t, 1500, 0, 0),
			 0); /* older than the last: ignored */
	assert_int_equal(t.npt, 2);
	assert_int_equal(host_timeline_host_of(&t, 1500, &h, &b), 0);
	assert_int_equal(h, 1500 + 600);
	assert_int_equal(b, 30);
	assert_int_equal(host_timeline_host_of(&t, 100, &h, &b),
			 0); /* before the first: its offset */
	assert_int_equal(h, 600);
	assert_int_equal(host_timeline_host_of(&t, 9000, &h, &b), 0);
	assert_int_equal(h, 9700);
	host_timeline_free(&t);
}

static void
test_a_spike_matches_the_episode_it_overlaps_most_and_a_loose_line_up_answers_nothing(void **state)
{
	(void)state;
	struct host_timeline t = { 0 };
	struct host_answer a[HOST_EPISODES_MAX];
	struct host_match m;
	size_t more;

	idle_then_hog();
	assert_int_equal(episodes(0, 100, 0.5, a, HOST_EPISODES_MAX, &more), 1);
	assert_int_equal(host_timeline_episode(&t, 1, &a[0]), 0);
	/* The guest's clock is 50 s behind the host's, lined up to 100 us. */
	const uint64_t off = 50 * NS_PER_SEC;
	assert_int_equal(host_timeline_offset(&t, MS(0) - off, (int64_t)off, 100000), 0);
	assert_int_equal(host_timeline_offset(&t, MS(100) - off, (int64_t)off, 100000), 0);
	assert_int_equal(host_timeline_match(&t, 1, MS(21) - off, MS(49) - off, &m), 0);
	assert_true(m.supported);
	assert_non_null(m.ep);
	assert_int_equal(m.ep->a.q.from, MS(20));
	assert_int_equal(m.overlap_ns, MS(49) + 100000 - (MS(21) - 100000));
	/* Another vCPU, or another time: nothing. */
	assert_int_equal(host_timeline_match(&t, 0, MS(21) - off, MS(49) - off, &m), 0);
	assert_null(m.ep);
	assert_int_equal(host_timeline_match(&t, 1, MS(60) - off, MS(70) - off, &m), 0);
	assert_null(m.ep);
	/* A spike of 50 us cannot be placed with a bound of 100 us. */
	assert_int_equal(host_timeline_match(&t, 1, MS(30) - off, MS(30.05) - off, &m), 0);
	assert_false(m.supported);
	host_timeline_free(&t);
}

static void test_a_full_timeline_keeps_the_most_held_episodes(void **state)
{
	(void)state;
	struct host_timeline t = { 0 };
	struct host_answer a = { .q = { .tid = 1 } };

	for (unsigned i = 0; i < HOST_TIMELINE_EPISODES; i++) {
		a.state_ns[HOST_ST_PREEMPTED] = 1000 + i;
		assert_int_equal(host_timeline_episode(&t, 0, &a), 0);
	}
	a.state_ns[HOST_ST_PREEMPTED] = 5;
	assert_int_equal(host_timeline_episode(&t, 0, &a), 0);
	a.state_ns[HOST_ST_PREEMPTED] = 1 << 30;
	assert_int_equal(host_timeline_episode(&t, 0, &a), 0);
	assert_int_equal(t.nep, HOST_TIMELINE_EPISODES);
	assert_int_equal(t.dropped, 2);
	uint64_t least = UINT64_MAX, most = 0;
	for (size_t i = 0; i < t.nep; i++) {
		least = t.ep[i].held_ns < least ? t.ep[i].held_ns : least;
		most = t.ep[i].held_ns > most ? t.ep[i].held_ns : most;
	}
	assert_int_equal(least, 1001);
	assert_int_equal(most, 1u << 30);
	host_timeline_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(
			test_a_preemption_by_a_hog_is_one_episode_naming_it_and_the_guests_halts_are_none,
			reset),
		cmocka_unit_test_setup(
			test_a_stopped_vcpu_is_held_until_it_runs_again_though_sigcont_wakes_it,
			reset),
		cmocka_unit_test_setup(
			test_without_prev_state_a_wakeup_shows_the_sleep_and_only_the_wait_after_it_is_held,
			reset),
		cmocka_unit_test_setup(test_past_max_the_least_held_give_way_and_are_counted,
				       reset),
		cmocka_unit_test_setup(
			test_the_timeline_carries_guest_time_by_the_line_up_of_its_moment, reset),
		cmocka_unit_test_setup(
			test_a_spike_matches_the_episode_it_overlaps_most_and_a_loose_line_up_answers_nothing,
			reset),
		cmocka_unit_test_setup(test_a_full_timeline_keeps_the_most_held_episodes, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
