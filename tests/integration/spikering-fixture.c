/*
 * spikering-fixture: trace/spikering.h on a real kernel.
 *
 * explain CPU SECONDS KEEP_S: a SCHED_FIFO 80 thread on CPU sleeps to 1 ms
 * deadlines (clock_nanosleep TIMER_ABSTIME) for SECONDS while a ring of
 * KEEP_S seconds records; 0.5 s after each 1 s window from the second to the
 * one before the last ends, the main thread (on another CPU) explains it and
 * prints a "window" line with the thread's own max of that window beside it,
 * how long the call took and the worst sample whose deadline fell during it.
 * At the end: "old" (the first window, by then older than KEEP_S), "none" (a
 * window with a minimum of 10 s) and "samples" (p50, p99 over the run).
 *
 * record CPU SECONDS: only the ring (5 s) on CPU, for SECONDS, for the bench;
 * prints "ready" once it records.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/nstime.h"
#include "core/parse.h"
#include "trace/spikering.h"

#define INTERVAL_NS NS_PER_MS

struct meas {
	unsigned cpu;
	uint64_t start, n_max;
	uint64_t *lat;                 /* by sample index: deadline = start + i * INTERVAL_NS */
	_Atomic uint64_t done;
	_Atomic pid_t tid;
};

static int die(const char *what, const char *why)
{
	fprintf(stderr, "spikering-fixture: %s: %s\n", what, why);
	return 1;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = ns_to_ts(t);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int pin(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *measure(void *arg)
{
	struct meas *m = arg;
	struct sched_param sp = { .sched_priority = 80 };

	pin(m->cpu);
	sched_setscheduler(0, SCHED_FIFO, &sp);
	atomic_store(&m->tid, gettid());
	for (uint64_t i = 0; i < m->n_max; i++) {
		uint64_t d = m->start + i * INTERVAL_NS;
		sleep_until(d);
		uint64_t w = mono_ns();
		m->lat[i] = w > d ? w - d : 0;
		atomic_store(&m->done, i + 1);
	}
	return NULL;
}

/* The largest latency of samples with deadlines in [from, to), and its deadline. */
static uint64_t max_in(const struct meas *m, uint64_t from, uint64_t to, uint64_t *ret_d)
{
	uint64_t best = 0, done = atomic_load(&m->done);
	*ret_d = 0;
	for (uint64_t i = 0; i < done; i++) {
		uint64_t d = m->start + i * INTERVAL_NS;
		if (d >= from && d < to && m->lat[i] >= best) {
			best = m->lat[i];
			*ret_d = d;
		}
	}
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void print_cause(const char *what, int rc, const struct spike_cause *c, const struct lat_error *why)
{
	if (rc == 0)
		printf("%s rc 0 kind %s share_ns %llu latency_ns %llu deadline_ns %llu flags %u name %s\n", what,
		       spike_kind_name(c->kind), (unsigned long long)c->share_ns, (unsigned long long)c->latency_ns,
		       (unsigned long long)c->deadline_ns, c->flags, c->name);
	else
		printf("%s rc %d why %s\n", what, rc, why->msg);
}

static int explain_mode(unsigned cpu, uint64_t secs, uint64_t keep_s)
{
	struct cpuset cs;
	struct spike_ring *r = NULL;
	struct lat_error err = { "" };
	struct meas m = { .cpu = cpu, .n_max = secs * (NS_PER_SEC / INTERVAL_NS) };

	pin(cpu == 0 ? 1 : 0);
	cpuset_clear(&cs);
	cpuset_add(&cs, cpu);
	int rc = spike_ring_start(&cs, keep_s * NS_PER_SEC, &r, &err);
	if (rc < 0)
		return die("spike_ring_start", err.msg);
	m.lat = calloc(m.n_max, sizeof(*m.lat));
	if (!m.lat)
		return die("calloc", strerror(ENOMEM));
	const char *san = getenv("LATSCOPE_SANITIZED");
	if (!san || !*san)
		mlockall(MCL_CURRENT);     /* not under ASan: its shadow memory cannot be locked */
	m.start = mono_ns() + 100 * NS_PER_MS;
	pthread_t th;
	if ((rc = pthread_create(&th, NULL, measure, &m)) != 0)
		return die("pthread_create", strerror(rc));
	while (!atomic_load(&m.tid))
		sleep_until(mono_ns() + NS_PER_MS);
	pid_t tid = atomic_load(&m.tid);
	printf("started tid %d\n", (int)tid);

	for (uint64_t w = 1; w + 1 < secs; w++) {
		uint64_t from = m.start + w * NS_PER_SEC, to = from + NS_PER_SEC;
		struct spike_cause c;
		uint64_t own_d, during_d;
		sleep_until(to + NS_PER_SEC / 2);
		uint64_t own = max_in(&m, from, to, &own_d);
		uint64_t t0 = mono_ns();
		rc = spike_ring_explain(r, cpu, tid, from, to - 1, 100 * NS_PER_US, &c, &err);
		uint64_t t1 = mono_ns();
		sleep_until(t1 + 20 * NS_PER_MS);      /* the samples due during the call are in */
		uint64_t during = max_in(&m, t0, t1, &during_d);
		printf("own %llu own_max_ns %llu own_deadline_ns %llu explain_ns %llu during_max_ns %llu\n",
		       (unsigned long long)w, (unsigned long long)own, (unsigned long long)own_d,
		       (unsigned long long)(t1 - t0), (unsigned long long)during);
		print_cause("window", rc, &c, &err);
	}
	pthread_join(th, NULL);

	struct spike_cause c;
	rc = spike_ring_explain(r, cpu, tid, m.start, m.start + NS_PER_SEC - 1, 100 * NS_PER_US, &c, &err);
	print_cause("old", rc, &c, &err);
	uint64_t last = m.start + (secs - 1) * NS_PER_SEC;
	rc = spike_ring_explain(r, cpu, tid, last, last + NS_PER_SEC - 1, 10 * NS_PER_SEC, &c, &err);
	print_cause("none", rc, &c, &err);
	spike_ring_stop(r, NULL);

	qsort(m.lat, m.n_max, sizeof(*m.lat), cmp_u64);
	printf("samples %llu p50_ns %llu p99_ns %llu\n", (unsigned long long)m.n_max,
	       (unsigned long long)m.lat[m.n_max / 2], (unsigned long long)m.lat[m.n_max * 99 / 100]);
	free(m.lat);
	return 0;
}

static int record_mode(unsigned cpu, uint64_t secs)
{
	struct cpuset cs;
	struct spike_ring *r = NULL;
	struct lat_error err = { "" };

	pin(cpu == 0 ? 1 : 0);
	cpuset_clear(&cs);
	cpuset_add(&cs, cpu);
	if (spike_ring_start(&cs, 0, &r, &err) < 0)
		return die("spike_ring_start", err.msg);
	printf("ready\n");
	fflush(stdout);
	sleep_until(mono_ns() + secs * NS_PER_SEC);
	spike_ring_stop(r, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t cpu, secs, keep;

	if (argc < 4 || parse_u64(argv[2], &cpu) < 0 || cpu >= CPU_SETSIZE || parse_u64(argv[3], &secs) < 0)
		return die("usage", "spikering-fixture explain CPU SECONDS KEEP_S | record CPU SECONDS");
	if (strcmp(argv[1], "explain") == 0 && argc == 5 && parse_u64(argv[4], &keep) == 0 && secs >= 4 && keep)
		return explain_mode((unsigned)cpu, secs, keep);
	if (strcmp(argv[1], "record") == 0 && argc == 4)
		return record_mode((unsigned)cpu, secs);
	return die("usage", "spikering-fixture explain CPU SECONDS KEEP_S | record CPU SECONDS");
}
