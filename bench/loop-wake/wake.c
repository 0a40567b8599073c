/*
 * bench/loop-wake: what ls_loop_wake (include/latscope/loop.h) costs a
 * program, in ns per call, beside one clock_gettime(CLOCK_MONOTONIC) alone:
 * the price of saying where a cycle starts.  Built and run by bench/loop-wake/run
 * (bench/README.md, "loop-wake"); never by the test suite.
 *
 *   wake [--cpu N] [--reader-cpu N] [--calls N] [--rounds N]
 *
 * Each round times --calls calls (default 2,000,000) of each variant, back to
 * back on one pinned CPU, in an order that rotates every round so that a drift
 * of the machine favours none; the calls of a variant are timed as a whole
 * (two clock reads around them) and divided.  Variants:
 *
 *   clock           clock_gettime(CLOCK_MONOTONIC) alone (the vDSO)
 *   wake            ls_loop_wake on an open loop: the clock, the wake and a due of 0 into the ring,
 *                   a release store of head
 *   wake-due        ls_loop_wake_due: the same with a due time
 *   wake_at         ls_loop_wake_at: the stores alone (the wake, a due of 0, head), with a time given
 *   wake-closed     ls_loop_wake on a closed loop: the clock and a test
 *   wake+reader     ls_loop_wake while latscope's reader (loopring_read) copies the ring without
 *                   pause on --reader-cpu: the worst case, every cache line shared
 *   wake+reader1ms  the same with the reader reading once a millisecond, as a poller would
 *
 * Prints the median, min and max over the rounds of each, in ns per call,
 * and the difference of the medians of wake and clock.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <latscope/loop.h>

#include "probe/loopring.h"

enum { CLOCK, WAKE, WAKE_DUE, WAKE_AT, WAKE_CLOSED, WAKE_READER, WAKE_READER_1MS, VARIANTS };

static const char *const names[VARIANTS] = {
	"clock_gettime(CLOCK_MONOTONIC) alone", "ls_loop_wake", "ls_loop_wake_due",
	"ls_loop_wake_at (the stores alone)",	"ls_loop_wake, closed loop",
	"ls_loop_wake, reader copying nonstop", "ls_loop_wake, reader every 1 ms",
};

static volatile uint64_t sink;
static atomic_int reading; /* 0 stop, 1 nonstop, 2 every ms, -1 pause */
static atomic_ullong reader_got, reader_lost;

struct reader_arg {
	struct loopring *lr;
	int cpu;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "wake: cannot run on CPU %d: %s\n", cpu, strerror(errno));
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *read_ring(void *p)
{
	struct reader_arg *a = p;
	static uint64_t out[LS_LOOP_RING_SIZE];
	uint64_t lost = 0, got = 0;
	int mode;

	pin(a->cpu);
	loopring_skip_to_now(a->lr, 0);
	while ((mode = atomic_load(&reading)) != 0) {
		if (mode < 0) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
			loopring_skip_to_now(a->lr, 0);
			continue;
		}
		got += loopring_read(a->lr, 0, out, LS_LOOP_RING_SIZE, &lost);
		if (mode == 2) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	atomic_store(&reader_got, got);
	atomic_store(&reader_lost, lost);
	return NULL;
}

/* ns per call of one variant over n calls */
static double timed(int v, struct ls_loop *open, struct ls_loop *closed, uint64_t n)
{
	uint64_t acc = 0, t0, t1;
	struct timespec ts;

	switch (v) {
	case WAKE_READER: atomic_store(&reading, 1); break;
	case WAKE_READER_1MS: atomic_store(&reading, 2); break;
	default: atomic_store(&reading, -1); break;
	}
	/* let the reader take up its mode */
	ts = (struct timespec){ 0, 2000000 };
	nanosleep(&ts, NULL);
	t0 = now_ns();
	switch (v) {
	case CLOCK:
		for (uint64_t i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			acc += (uint64_t)ts.tv_nsec;
		}
		break;
	case WAKE:
	case WAKE_READER:
	case WAKE_READER_1MS:
		for (uint64_t i = 0; i < n; i++)
			acc += ls_loop_wake(open);
		break;
	case WAKE_DUE:
		for (uint64_t i = 0; i < n; i++)
			acc += ls_loop_wake_due(open, i);
		break;
	case WAKE_AT:
		for (uint64_t i = 0; i < n; i++)
			acc += ls_loop_wake_at(open, i);
		break;
	case WAKE_CLOSED:
		for (uint64_t i = 0; i < n; i++)
			acc += ls_loop_wake(closed);
		break;
	default: break;
	}
	t1 = now_ns();
	sink += acc;
	return (double)(t1 - t0) / (double)n;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A whole decimal number up to max, or the program ends with status 2. */
static uint64_t number(const char *s, uint64_t max)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || errno != 0 || *end != '\0' || v > max) {
		fprintf(stderr, "wake: '%s': a whole number up to %llu\n", s,
			(unsigned long long)max);
		exit(2);
	}
	return v;
}

static int last_allowed_cpu(int except)
{
	cpu_set_t set;
	int last = -1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && c != except)
			last = c;
	return last;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "reader-cpu", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	int cpu = -1, reader_cpu = -1, rounds = 21, c;
	uint64_t calls = 2000000;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'c': cpu = (int)number(optarg, CPU_SETSIZE - 1); break;
		case 'r': reader_cpu = (int)number(optarg, CPU_SETSIZE - 1); break;
		case 'n': calls = number(optarg, UINT64_C(1) << 40); break;
		case 'R': rounds = (int)number(optarg, 1000); break;
		default: return 2;
		}
	}
	if (cpu < 0)
		cpu = last_allowed_cpu(-1);
	if (reader_cpu < 0)
		reader_cpu = last_allowed_cpu(cpu);
	if (reader_cpu < 0)
		reader_cpu = cpu;
	if (calls == 0 || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "wake: --calls and --rounds must be positive\n");
		return 2;
	}
	pin(cpu);

	char name[64];
	struct ls_loop open = LS_LOOP_INIT, closed = LS_LOOP_INIT;
	struct lat_error err;
	struct loopring *lr;
	snprintf(name, sizeof(name), "bench-wake-%ld", (long)getpid());
	int r = ls_loop_open(&open, name, 0);
	if (r < 0) {
		fprintf(stderr, "wake: cannot open loop %s: %s\n", name, strerror(-r));
		return 1;
	}
	if (loopring_open(name, &lr, &err) < 0) {
		fprintf(stderr, "wake: %s\n", err.msg);
		return 1;
	}
	struct reader_arg ra = { lr, reader_cpu };
	pthread_t reader;
	atomic_store(&reading, -1);
	if (pthread_create(&reader, NULL, read_ring, &ra) != 0) {
		fprintf(stderr, "wake: cannot start the reader\n");
		return 1;
	}

	double *ns = calloc((size_t)rounds * VARIANTS, sizeof(*ns));
	if (!ns)
		return 1;
	for (int v = 0; v < VARIANTS; v++) /* warm up: page faults, caches, the vDSO */
		timed(v, &open, &closed, calls / 10 + 1);
	for (int round = 0; round < rounds; round++)
		for (int k = 0; k < VARIANTS; k++) {
			int v = (k + round) % VARIANTS;
			ns[v * rounds + round] = timed(v, &open, &closed, calls);
		}
	atomic_store(&reading, 0);
	pthread_join(reader, NULL);

	printf("CPU %d, reader on CPU %d, %d rounds of %llu calls each; clocksource ", cpu,
	       reader_cpu, rounds, (unsigned long long)calls);
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	char cs[64] = "?\n";
	if (f) {
		if (!fgets(cs, sizeof(cs), f))
			strcpy(cs, "?\n");
		fclose(f);
	}
	printf("%s", cs);
	printf("%-40s %8s %8s %8s\n", "ns per call", "median", "min", "max");
	double med[VARIANTS];
	for (int v = 0; v < VARIANTS; v++) {
		double *x = ns + v * rounds;
		qsort(x, (size_t)rounds, sizeof(*x), by_double);
		med[v] = x[rounds / 2];
		printf("%-40s %8.2f %8.2f %8.2f\n", names[v], med[v], x[0], x[rounds - 1]);
	}
	printf("ls_loop_wake minus the clock alone: %.2f ns (medians)\n", med[WAKE] - med[CLOCK]);
	printf("reader: %llu wakes read, %llu counted lost (the nonstop and 1 ms variants)\n",
	       (unsigned long long)atomic_load(&reader_got),
	       (unsigned long long)atomic_load(&reader_lost));
	free(ns);
	loopring_close(lr);
	ls_loop_close(&open);
	return 0;
}
