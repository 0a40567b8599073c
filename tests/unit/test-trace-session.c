/*
 * The trace session on the real kernel: skipped without root or tracefs.
 * Measures, so run it under `flock /tmp/latscope-cpu.lock`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/array.h"
#include "core/nstime.h"
#include "probe/timer.h"
#include "trace/attrib.h"
#include "trace/events.h"
#include "trace/instance.h"
#include "trace/names.h"
#include "trace/remove.h"

#define WAKEUPS 100
#define PERIOD_NS NS_PER_MS

struct sleeper {
	int cpu;
	pid_t tid;
	uint64_t deadline[WAKEUPS];
	uint64_t wake[WAKEUPS];
	int err;
};

/* Why this test cannot trace, or NULL.  Only the first two are this machine's or build's:
 * tracefs unmounted is something ./check provides, so its reason must not claim the machine. */
static const char *cannot_trace(void)
{
	if (!trace_supported())
		return "this build has no tracefs support (built without libtracefs)";
	if (geteuid() != 0)
		return "this machine: the tests do not run as root";
	if (access("/sys/kernel/tracing/instances", W_OK) != 0)
		return "tracefs is not mounted writable at /sys/kernel/tracing (./check mounts it as root)";
	return NULL;
}

static void *sleep_loop(void *arg)
{
	struct sleeper *s = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((size_t)s->cpu, &set);
	struct sched_param sp = { .sched_priority = 50 };
	s->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (!s->err)
		s->err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	s->tid = gettid();
	if (s->err)
		return NULL;

	uint64_t next = mono_ns() + 5 * PERIOD_NS;
	for (int i = 0; i < WAKEUPS; i++) {
		struct timespec ts = ns_to_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		s->wake[i] = mono_ns();
		s->deadline[i] = next;
		next += PERIOD_NS;
	}
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Freed by the teardown too, so a failed assertion leaves no instance behind. */
static struct trace_session *ts;

static int free_session(void **state)
{
	(void)state;
	trace_session_free(ts);
	ts = NULL;
	return 0;
}

static void test_a_session_asking_for_no_events_is_refused(void **state)
{
	(void)state;
	struct trace_opts o = { .buffer_kb = 64 };
	struct trace_session *s = NULL;
	struct lat_error err = { "" };

	cpuset_clear(&o.cpus);
	cpuset_add(&o.cpus, 0);
	assert_int_equal(trace_session_start(&o, &s, &err), trace_supported() ? -EINVAL : -ENOTSUP);
	assert_null(s);
}

static void test_a_traced_sleep_loop_is_decomposed_and_the_instance_is_removed(void **state)
{
	(void)state;
	const char *why = cannot_trace();
	if (why)
		skip_because(why);

	int cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	struct trace_opts o = { .buffer_kb = 4096, .events = timer_probe.trace->events };
	cpuset_clear(&o.cpus);
	cpuset_add(&o.cpus, (unsigned)cpu);

	struct lat_error err = { "" };
	assert_int_equal(trace_remove_stale_instances(NULL), 0);
	int r = trace_session_start(&o, &ts, &err);
	if (r < 0)
		fail_msg("trace_session_start: %s", err.msg);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", trace_session_dir(ts));
	assert_int_equal(access(dir, F_OK), 0);

	struct sleeper *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->cpu = cpu;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, sleep_loop, s), 0);
	pthread_join(th, NULL);
	assert_int_equal(s->err, 0);

	assert_int_equal(trace_session_stop(ts), 0);
	struct trace_events *ev;
	assert_int_equal(trace_events_new((unsigned)cpu + 1, 0, &ev), 0);
	r = trace_session_read(ts, ev, &err);
	if (r < 0)
		fail_msg("trace_session_read: %s", err.msg);

	const struct trace_cpu_events *c = &ev->cpu[cpu];
	int matched = 0, skewed = 0, inferred = 0;
	int64_t parts[TRACE_PARTS][WAKEUPS];
	for (int i = 0; i < WAKEUPS; i++) {
		struct trace_timer_sample sm;
		r = trace_decompose_timer(c->ev, c->n, (unsigned)cpu, s->tid, s->deadline[i], s->wake[i], &sm);
		if (r < 0) {
			printf("# sample %d unmatched: flags 0x%x\n", i, sm.flags);
			continue;
		}
		int64_t sum = 0;
		for (int p = 0; p < TRACE_PARTS; p++) {
			sum += sm.part[p];
			parts[p][matched] = sm.part[p];
		}
		assert_int_equal(sum, (int64_t)(s->wake[i] - s->deadline[i]));
		if (sm.flags & TRACE_F_SWITCH_INFERRED)
			inferred++;
		if (sm.flags & TRACE_F_SKEW)
			skewed++;
		else
			matched++;
	}

	/* The measured facts, for the record. */
	printf("# %zu events on cpu %d for %d wakeups (%.1f per wakeup), lost %llu, capped %llu\n",
	       c->n, cpu, WAKEUPS, (double)c->n / WAKEUPS,
	       (unsigned long long)c->lost, (unsigned long long)c->capped);
	printf("# matched %d, skewed %d, switch-in from the syscall exit %d\n", matched, skewed, inferred);
	for (int p = 0; p < TRACE_PARTS && matched > 0; p++) {
		qsort(parts[p], (size_t)matched, sizeof(int64_t), cmp_i64);
		printf("# %-18s min %7lld  median %7lld  max %7lld ns\n", trace_part_name((enum trace_part)p),
		       (long long)parts[p][0], (long long)parts[p][matched / 2],
		       (long long)parts[p][matched - 1]);
	}
	assert_true(matched >= WAKEUPS * 99 / 100);
	assert_int_equal(skewed, 0);

	assert_int_equal(trace_session_destroy(ts), 0);
	assert_int_equal(trace_session_destroy(ts), 0);          /* twice is harmless */
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	trace_session_free(ts);
	ts = NULL;
	trace_events_free(ev);
	free(s);
}

static void test_an_instance_left_by_a_killed_process_is_removed_and_a_live_ones_kept(void **state)
{
	(void)state;
	const char *why = cannot_trace();
	if (why)
		skip_because(why);

	pid_t dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);

	char stale[256], live[256], name[64];
	assert_int_equal(trace_instance_name(trace_pidns(), dead, name, sizeof(name)), 0);
	snprintf(stale, sizeof(stale), "/sys/kernel/tracing/instances/%s", name);
	assert_int_equal(trace_instance_name(trace_pidns(), getppid(), name, sizeof(name)), 0);
	snprintf(live, sizeof(live), "/sys/kernel/tracing/instances/%s", name);
	assert_int_equal(mkdir(stale, 0700), 0);
	bool made_live = mkdir(live, 0700) == 0;

	unsigned removed = 0;
	assert_int_equal(trace_remove_stale_instances(&removed), 0);
	assert_true(removed >= 1);
	assert_int_equal(access(stale, F_OK), -1);
	if (made_live) {
		assert_int_equal(access(live, F_OK), 0);
		rmdir(live);
	}
}

static void test_instance_names_carry_the_pid_namespace_and_parse_back(void **state)
{
	(void)state;
	char name[64];
	unsigned long ns;
	long pid;

	assert_int_equal(trace_instance_name(4026531836ul, 1234, name, sizeof(name)), 0);
	assert_string_equal(name, "latscope-4026531836-1234");
	assert_int_equal(trace_instance_parse(name, &ns, &pid), 0);
	assert_true(ns == 4026531836ul && pid == 1234);
	assert_int_equal(trace_instance_parse("latscope-77", &ns, &pid), 0);     /* the older form */
	assert_true(ns == TRACE_PIDNS_UNKNOWN && pid == 77);
	const char *bad[] = { "latscope-", "latscope-0", "latscope-12x", "latscope--3", "latscope-1-", "latscope-1-2-3",
			      "latscope-01", "other-12", "latscope-99999999999999999999", "latscope-1-9999999999" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(trace_instance_parse(bad[i], &ns, &pid), -EINVAL);
	assert_int_equal(trace_instance_name(1, 1, name, 8), -ENAMETOOLONG);
}

static void test_only_the_owners_pid_namespace_judges_an_instance(void **state)
{
	(void)state;
	assert_true(trace_instance_judgeable(4026532000ul, 4026532000ul));
	assert_false(trace_instance_judgeable(TRACE_PIDNS_INIT, 4026532000ul));     /* the host's, seen from a container */
	assert_false(trace_instance_judgeable(4026532000ul, TRACE_PIDNS_INIT));     /* a container's, seen from the host */
	assert_true(trace_instance_judgeable(TRACE_PIDNS_UNKNOWN, TRACE_PIDNS_INIT));
	assert_false(trace_instance_judgeable(TRACE_PIDNS_UNKNOWN, 4026532000ul));
	assert_false(trace_instance_judgeable(4026532000ul, TRACE_PIDNS_UNKNOWN));
}

static void test_destroying_a_null_session_is_harmless(void **state)
{
	(void)state;
	assert_int_equal(trace_session_destroy(NULL), 0);
	trace_session_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_a_traced_sleep_loop_is_decomposed_and_the_instance_is_removed, free_session),
		cmocka_unit_test(test_an_instance_left_by_a_killed_process_is_removed_and_a_live_ones_kept),
		cmocka_unit_test(test_instance_names_carry_the_pid_namespace_and_parse_back),
		cmocka_unit_test(test_only_the_owners_pid_namespace_judges_an_instance),
		cmocka_unit_test(test_destroying_a_null_session_is_harmless),
		cmocka_unit_test(test_a_session_asking_for_no_events_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
