/*
 * Unit tests for the runner (src/probe/runner.c), driven by a fake probe.
 *
 * The fake's setup, run and teardown record what they were asked (the CPU,
 * the loops, the origin and the end, whether stop was seen) and in which
 * order.  Its run loop is a timer of STEP: sample i is recorded at the
 * synthetic time origin + i * STEP, once the clock has passed it, with a
 * value known in advance, so the windows, the counts and the totals the
 * result must hold are computed exactly here.  Only relations are asserted
 * of the clock.
 *
 * These tests run under ThreadSanitizer too (./check).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "skipwhy.h"

#include "core/cpuset.h"
#include "core/nstime.h"
#include "probe/context.h"
#include "probe/probe.h"
#include "probe/runner.h"
#include "result/result.h"
#include "sys/cpus.h"

#define STEP      (10u * NS_PER_MS)         /* the fake timer's period */
#define WINDOW    (50u * NS_PER_MS)         /* five samples a window */
#define THRESHOLD UINT64_C(1050)
#define MAX_CPUS  CPUSET_MAX
#define RUN_CAP   500u                      /* the fake gives up by itself after 5 s */

/* What the fake was asked, per CPU; each thread writes its own, read after the run. */
struct fake_call {
	unsigned setups, runs, teardowns;
	unsigned setup_seq, run_seq, teardown_seq;      /* order of the calls, over all threads */
	int setup_on, run_on;                           /* sched_getcpu() inside */
	pid_t tid;
	int slack;                                      /* PR_GET_TIMERSLACK inside setup */
	const struct run_params *rp;
	const void *pp;
	uint64_t origin_ns, end_ns, loops;
	uint64_t samples;
	bool stop_seen;
};

/* The fake's own parameters (t->pp). */
struct fake_params {
	int fail_cpu;                   /* setup fails there; -1: nowhere */
	int signal_cpu;                 /* run sends SIGINT to the process there after signal_after samples; -1: no */
	uint64_t signal_after;
	bool note;                      /* setup says it used something else, on every CPU */
};

static struct fake_call calls[MAX_CPUS];
static atomic_uint seq;

/* Sample i's value on cpu: spread around the threshold, different per CPU. */
static uint64_t value_of(unsigned cpu, uint64_t i)
{
	return 1000u + ((uint64_t)cpu * 7u + i * 13u) % 100u;
}

static int fake_setup(struct probe_thread *t)
{
	const struct fake_params *fp = t->pp;
	struct fake_call *c = &calls[t->cpu];

	c->setups++;
	c->setup_seq = atomic_fetch_add(&seq, 1u);
	c->setup_on = sched_getcpu();
	c->tid = gettid();
	c->slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (fp->fail_cpu == (int)t->cpu) {
		snprintf(t->err, sizeof(t->err), "the fake refuses cpu %u", t->cpu);
		return -EIO;
	}
	if (fp->note)
		snprintf(t->note, sizeof(t->note), "the fake used a stand-in");
	return 0;
}

/* Wait until the clock passes at (true), or until a stop wakes the thread
 * (the runner's SIGUSR2 ends the sleep with EINTR). */
static bool wait_until(struct probe_thread *t, uint64_t at)
{
	struct timespec ts = ns_to_ts(at);
	while (!atomic_load(t->stop)) {
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == 0 && mono_ns() >= at)
			return true;
	}
	return false;
}

static void fake_run(struct probe_thread *t)
{
	const struct fake_params *fp = t->pp;
	struct fake_call *c = &calls[t->cpu];

	c->runs++;
	c->run_seq = atomic_fetch_add(&seq, 1u);
	c->run_on = sched_getcpu();
	c->rp = t->rp;
	c->pp = t->pp;
	c->origin_ns = t->origin_ns;
	c->end_ns = t->end_ns;
	c->loops = t->rp->loops;
	for (uint64_t i = 0; i < RUN_CAP; i++) {
		uint64_t at = t->origin_ns + i * STEP;
		if (t->rp->loops && i == t->rp->loops)
			break;
		if (at >= t->end_ns)
			break;
		if (!wait_until(t, at)) {
			c->stop_seen = true;
			break;
		}
		rec_sample(&t->rec, &(struct rec_sample){ .now_ns = at, .v = { value_of(t->cpu, i) }, .nv = 1,
							   .at_ns = at });
		c->samples++;
		if (fp->signal_cpu == (int)t->cpu && c->samples == fp->signal_after)
			kill(getpid(), SIGINT);
	}
}

static void fake_teardown(struct probe_thread *t)
{
	struct fake_call *c = &calls[t->cpu];
	c->teardowns++;
	c->teardown_seq = atomic_fetch_add(&seq, 1u);
}

static const char *const fake_metrics[] = { "latency" };

static const struct probe_ops fake_ops = {
	.name = "fake",
	.nmetrics = 1,
	.metric_names = fake_metrics,
	.unit_ns = 1,
	.setup = fake_setup,
	.run = fake_run,
	.teardown = fake_teardown,
};

/* A clock whose offset from CLOCK_MONOTONIC moves all the time: the process's
 * CPU time, which the sleeping fake hardly adds to. */
static clockid_t cputime_clock(const void *pp)
{
	(void)pp;
	return CLOCK_PROCESS_CPUTIME_ID;
}

/* One run of the fake and what it gave. */
struct fixture {
	struct run_params rp;
	struct fake_params fp;
	struct result res;
	struct lat_error err;
};

/* A run on every CPU this process may use, touching nothing of the system's. */
static void fixture_init(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	assert_int_equal(cpus_allowed(&fx->rp.cpus), 0);
	fx->rp.policy = POLICY_OTHER;
	fx->rp.window_ns = WINDOW;
	fx->rp.threshold_ns = THRESHOLD;
	fx->rp.no_pm_qos = true;
	fx->rp.no_context = true;
	fx->fp.fail_cpu = -1;
	fx->fp.signal_cpu = -1;
}

static int run_fake(struct fixture *fx)
{
	memset(calls, 0, sizeof(calls));
	atomic_store(&seq, 0u);
	assert_int_equal(result_init(&fx->res, "fake", 1, fake_metrics, &fx->rp.cpus), 0);
	return runner_run(&fake_ops, &fx->rp, &fx->fp, &fx->res, NULL, &fx->err);
}

/* Every call made once, in order, on its own CPU. */
static void assert_called_in_order_on(unsigned cpu, const struct run_params *rp, const void *pp)
{
	const struct fake_call *c = &calls[cpu];
	assert_int_equal(c->setups, 1);
	assert_int_equal(c->runs, 1);
	assert_int_equal(c->teardowns, 1);
	assert_int_equal(c->setup_on, (int)cpu);
	assert_int_equal(c->run_on, (int)cpu);
	assert_true(c->setup_seq < c->run_seq);
	assert_true(c->run_seq < c->teardown_seq);
	assert_ptr_equal(c->rp, rp);
	assert_ptr_equal(c->pp, pp);
}

/*
 * The windows of one CPU against the samples its fake recorded: each
 * window holds exactly the samples whose time falls in it, the windows
 * follow each other without a gap, and they add up to the CPU's totals.
 */
static void assert_windows_add_up(const struct cpu_result *cr, const struct fake_call *c)
{
	uint64_t n = 0, above = 0, min = UINT64_MAX, max = 0, sum = 0;
	uint64_t next_start = 0;

	assert_true(cr->nwin >= 1);
	for (size_t k = 0; k < cr->nwin; k++) {
		const struct rec_window *w = &cr->win[k].w;
		uint64_t first = (w->start_ns + STEP - 1u) / STEP, in = 0;
		assert_int_equal(w->start_ns, next_start);
		assert_int_equal(w->start_ns, w->index * WINDOW);
		assert_true(w->end_ns > w->start_ns);
		for (uint64_t i = first; i < c->samples && i * STEP < w->end_ns; i++) {
			uint64_t v = value_of((unsigned)cr->cpu, i);
			in++;
			sum += v;
			above += v > THRESHOLD;
			min = v < min ? v : min;
			max = v > max ? v : max;
		}
		if (w->m[0].st.n != in)
			fail_msg("cpu %d window %zu [%" PRIu64 ", %" PRIu64 "): %" PRIu64 " samples, want %" PRIu64,
				 cr->cpu, k, w->start_ns, w->end_ns, w->m[0].st.n, in);
		n += in;
		next_start = w->end_ns;
	}
	assert_int_equal(n, c->samples);
	assert_int_equal(cr->st[0].n, c->samples);
	assert_int_equal(cr->st[0].min, min);
	assert_int_equal(cr->st[0].max, max);
	assert_int_equal(cr->above[0], above);
	assert_true(cr->st[0].mean * (double)n > (double)sum - 1e-6 * (double)sum);
	assert_true(cr->st[0].mean * (double)n < (double)sum + 1e-6 * (double)sum);
}

static void assert_totals(struct result *res)
{
	uint64_t samples = 0;
	for (size_t i = 0; i < res->ncpus; i++) {
		const struct cpu_result *cr = &res->cpus[i];
		assert_windows_add_up(cr, &calls[cr->cpu]);
		samples += calls[cr->cpu].samples;
	}
	assert_int_equal(result_finalize(res), 0);
	assert_int_equal(res->all.sum[0].count, samples);
	assert_int_equal(res->all.st[0].n, samples);
}

/* Every thread recorded samples by itself and ended on its own, for reason. */
static void assert_ran_to_its_end(struct fixture *fx, uint64_t samples, const char *reason)
{
	cpuset_foreach(cpu, &fx->rp.cpus) {
		assert_int_equal(calls[cpu].samples, samples);
		assert_false(calls[cpu].stop_seen);
		assert_called_in_order_on((unsigned)cpu, &fx->rp, &fx->fp);
	}
	assert_int_equal(fx->err.msg[0], '\0');
	assert_false(fx->res.interrupted);
	assert_false(fx->res.failed);
	assert_string_equal(fx->res.stop_reason, reason);
	/* the last sample is at (samples - 1) STEP; the run ends after it */
	assert_true(fx->res.elapsed_ns >= (samples - 1u) * STEP);
	assert_totals(&fx->res);
}

static void test_one_pinned_thread_per_cpu_each_set_up_before_it_runs_and_torn_down_after(void **state)
{
	(void)state;
	struct fixture fx;
	size_t n = 0;

	fixture_init(&fx);
	fx.rp.loops = 3;
	assert_int_equal(run_fake(&fx), 0);
	assert_ran_to_its_end(&fx, 3, "loops");
	cpuset_foreach(cpu, &fx.rp.cpus) {
		assert_int_equal(calls[cpu].origin_ns, fx.res.origin_ns);
		assert_int_equal(calls[cpu].end_ns, UINT64_MAX);      /* loops: no end time */
		assert_int_equal(fx.res.cpus[n].cpu, cpu);
		assert_int_equal(fx.res.cpus[n].tid, calls[cpu].tid);
		/* one thread each: no two CPUs share one */
		for (size_t j = 0; j < n; j++)
			assert_int_not_equal(fx.res.cpus[j].tid, calls[cpu].tid);
		n++;
	}
	assert_int_equal(n, fx.res.ncpus);
	result_free(&fx.res);
}

static void test_loops_stop_every_thread_after_n_samples_and_the_windows_add_up_to_the_totals(void **state)
{
	(void)state;
	struct fixture fx;

	fixture_init(&fx);
	fx.rp.loops = 12;               /* windows of 5, 5 and 2 samples */
	assert_int_equal(run_fake(&fx), 0);
	cpuset_foreach(cpu, &fx.rp.cpus)
		assert_int_equal(calls[cpu].loops, 12);
	assert_ran_to_its_end(&fx, 12, "loops");
	result_free(&fx.res);
}

static void test_every_measuring_thread_gets_the_asked_timer_slack_and_1_ns_when_none_is_asked(void **state)
{
	(void)state;
	struct fixture fx;
	static const uint64_t asked[] = { 0, 250u * NS_PER_US, 1 };

	for (size_t k = 0; k < sizeof(asked) / sizeof(asked[0]); k++) {
		fixture_init(&fx);
		fx.rp.loops = 1;
		fx.rp.timer_slack_ns = asked[k];
		assert_int_equal(run_fake(&fx), 0);
		cpuset_foreach(cpu, &fx.rp.cpus)
			assert_int_equal(calls[cpu].slack, asked[k] ? (int)asked[k] : 1);
		assert_true(fx.res.applied.timer_slack);
		result_free(&fx.res);
	}
}

static void test_a_duration_ends_the_run_at_its_end(void **state)
{
	(void)state;
	struct fixture fx;

	fixture_init(&fx);
	fx.rp.duration_ns = 20u * STEP;
	uint64_t before = mono_ns();
	assert_int_equal(run_fake(&fx), 0);
	uint64_t after = mono_ns();
	/* samples at 0 .. 19 STEP, all before the end */
	assert_ran_to_its_end(&fx, 20, "duration");
	cpuset_foreach(cpu, &fx.rp.cpus)
		assert_int_equal(calls[cpu].end_ns, fx.res.origin_ns + fx.rp.duration_ns);
	/* It stopped after its last sample, not when the grace period ran out. */
	assert_true(fx.res.origin_ns > before);
	assert_true(fx.res.origin_ns + fx.res.elapsed_ns <= after);
	assert_true(after - before < fx.rp.duration_ns + 2u * NS_PER_SEC);
	result_free(&fx.res);
}

static void test_a_clock_that_steps_against_monotonic_is_noted_with_its_steps_and_direction(void **state)
{
	(void)state;
	struct fixture fx;

	fixture_init(&fx);
	fx.rp.duration_ns = 4u * WINDOW;
	struct probe_ops stepping_ops = fake_ops;
	stepping_ops.clock_of = cputime_clock;
	memset(calls, 0, sizeof(calls));
	assert_int_equal(result_init(&fx.res, "fake", 1, fake_metrics, &fx.rp.cpus), 0);
	assert_int_equal(runner_run(&stepping_ops, &fx.rp, &fx.fp, &fx.res, NULL, &fx.err), 0);
	const char *note = NULL;
	for (size_t i = 0; i < fx.res.nnotes; i++)
		if (strstr(fx.res.notes[i], "stepped during the run"))
			note = fx.res.notes[i];
	assert_non_null(note);
	/* CPU time falls behind monotonic at every window's end: steps back */
	assert_non_null(strstr(note, "the largest back"));
	assert_null(strstr(note, "(1 step "));
	result_free(&fx.res);
}

static void test_a_setup_failing_on_one_cpu_tears_the_others_down_and_the_error_names_the_cpu(void **state)
{
	(void)state;
	struct fixture fx;
	char want[96];
	int last = -1;

	fixture_init(&fx);
	if (cpuset_count(&fx.rp.cpus) < 2)
		skip_because("this machine allows this process 1 CPU; the test needs 2");
	fx.rp.loops = 3;
	cpuset_foreach(cpu, &fx.rp.cpus)
		last = cpu;
	fx.fp.fail_cpu = last;
	assert_int_equal(run_fake(&fx), -EIO);
	snprintf(want, sizeof(want), "fake setup failed on cpu %d: the fake refuses cpu %d", last, last);
	assert_string_equal(fx.err.msg, want);
	cpuset_foreach(cpu, &fx.rp.cpus) {
		const struct fake_call *c = &calls[cpu];
		assert_int_equal(c->setups, 1);
		assert_int_equal(c->runs, 0);           /* nobody measures */
		/* teardown undoes a setup that worked, everywhere, and only that */
		assert_int_equal(c->teardowns, cpu == last ? 0 : 1);
		if (cpu != last)
			assert_true(c->setup_seq < c->teardown_seq);
	}
	result_free(&fx.res);
}

static void test_a_sigint_during_the_run_stops_it_with_the_signal_as_the_reason(void **state)
{
	(void)state;
	struct fixture fx;
	sigset_t pending;

	fixture_init(&fx);              /* neither loops nor duration: until a signal */
	int first = cpuset_next(&fx.rp.cpus, 0);
	fx.fp.signal_cpu = first;
	fx.fp.signal_after = 7;
	assert_int_equal(run_fake(&fx), 0);
	assert_true(fx.res.interrupted);
	assert_false(fx.res.failed);
	assert_string_equal(fx.res.stop_reason, "signal SIGINT");
	cpuset_foreach(cpu, &fx.rp.cpus) {
		assert_true(calls[cpu].stop_seen);     /* stopped by the runner, not by RUN_CAP */
		assert_true(calls[cpu].samples < RUN_CAP);
		assert_called_in_order_on((unsigned)cpu, &fx.rp, &fx.fp);
	}
	assert_true(calls[first].samples >= 7);
	assert_totals(&fx.res);
	/* The signal was the runner's to take: none is left pending for this process. */
	assert_int_equal(sigpending(&pending), 0);
	assert_false(sigismember(&pending, SIGINT));
	result_free(&fx.res);
}

/* ---- context attached as windows arrive (probe/context.h) ---- */

static void one_window(struct result *res, size_t k, uint64_t idx)
{
	static struct hist h[REC_MAX_METRICS];
	struct rec_window w;
	memset(&w, 0, sizeof(w));
	stats_reset(&w.overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++) {
		stats_reset(&w.m[m].st);
		hist_reset(&h[m]);
	}
	w.index = idx;
	w.start_ns = idx * 10u * NS_PER_MS;
	w.end_ns = (idx + 1u) * 10u * NS_PER_MS;
	stats_add(&w.m[0].st, 5);
	hist_record(&h[0], 5);
	assert_int_equal(result_add_window(res, &res->cpus[k], &w, h), 0);
}

static void test_a_cpu_that_lags_gets_each_windows_context_when_its_windows_come_or_none(void **state)
{
	(void)state;
	static const char *const names[] = { "latency" };
	struct cpuset set;
	struct result res;
	struct run_context *c;
	pid_t tids[2] = { (pid_t)syscall(SYS_gettid), (pid_t)syscall(SYS_gettid) };

	assert_int_equal(cpuset_parse("0,1", &set), 0);
	assert_int_equal(result_init(&res, "timer", 1, names, &set), 0);
	assert_int_equal(context_start(&c, &set, tids, NULL), 0);
	/* cpu1's thread is stalled after window 9 while cpu0 goes on to 399, past what may wait */
	for (uint64_t i = 0; i < 10; i++)
		one_window(&res, 1, i);
	for (uint64_t i = 0; i < 400; i++) {
		one_window(&res, 0, i);
		assert_int_equal(context_sample(c, i), 0);
		assert_int_equal(context_apply(c, &res), 0);
	}
	for (uint64_t i = 10; i < 400; i++) {
		one_window(&res, 1, i);
		assert_int_equal(context_apply(c, &res), 0);
	}
	assert_int_equal(context_finish(c, &res, 400), 0);
	/* What waited longer than 256 samples for cpu1 is dropped, never put on window 9: the
	 * windows 10..143 have none, every other window its own. */
	for (size_t k = 0; k < 2; k++) {
		const struct cpu_result *cr = &res.cpus[k];
		for (size_t w = 0; w < cr->nwin; w++) {
			uint64_t lo = cr->win[w].w.index, hi = lo + cr->win[w].span;     /* older windows are folded */
			bool none = k == 1 && lo >= 10 && hi <= 400 - 256, some = k == 0 || hi <= 10 || lo >= 400 - 256;
			if ((none && cr->win[w].ctx.valid) || (some && !cr->win[w].ctx.valid)) {
				print_error("cpu %zu's window [%" PRIu64 ", %" PRIu64 "): context %d\n", k, lo, hi,
					    cr->win[w].ctx.valid);
				fail();
			}
		}
	}
	bool noted = false;
	for (unsigned i = 0; i < res.nnotes; i++)
		noted |= strstr(res.notes[i], "134 CPU-windows is missing") != NULL;
	assert_true(noted);
	context_free(c);
	result_free(&res);
}

static void test_what_setup_used_instead_is_noted_once_with_the_cpus_that_say_it(void **state)
{
	(void)state;
	struct fixture fx;
	char cpus[128], want[256];
	unsigned found = 0;

	fixture_init(&fx);
	fx.rp.loops = 1;
	fx.fp.note = true;
	assert_int_equal(run_fake(&fx), 0);
	cpuset_format(&fx.rp.cpus, cpus, sizeof(cpus));
	snprintf(want, sizeof(want), "the fake used a stand-in (cpu %s)", cpus);
	for (unsigned i = 0; i < fx.res.nnotes; i++)
		found += strcmp(fx.res.notes[i], want) == 0;
	assert_int_equal(found, 1);
	result_free(&fx.res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_pinned_thread_per_cpu_each_set_up_before_it_runs_and_torn_down_after),
		cmocka_unit_test(test_a_cpu_that_lags_gets_each_windows_context_when_its_windows_come_or_none),
		cmocka_unit_test(test_loops_stop_every_thread_after_n_samples_and_the_windows_add_up_to_the_totals),
		cmocka_unit_test(test_every_measuring_thread_gets_the_asked_timer_slack_and_1_ns_when_none_is_asked),
		cmocka_unit_test(test_a_duration_ends_the_run_at_its_end),
		cmocka_unit_test(test_a_clock_that_steps_against_monotonic_is_noted_with_its_steps_and_direction),
		cmocka_unit_test(test_a_setup_failing_on_one_cpu_tears_the_others_down_and_the_error_names_the_cpu),
		cmocka_unit_test(test_a_sigint_during_the_run_stops_it_with_the_signal_as_the_reason),
		cmocka_unit_test(test_what_setup_used_instead_is_noted_once_with_the_cpus_that_say_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
