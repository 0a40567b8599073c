/*
 * lat-inject: a known delay for known-answer tests.  On one CPU, at a real-time
 * priority above the measuring thread, busy-spin for BUSY out of every PERIOD
 * (absolute schedule, so a late start does not shift later bursts).  A deadline
 * that falls in a burst wakes at the burst's end, so the share of samples whose
 * latency exceeds T is about (BUSY - T) / PERIOD.
 *
 * With BUSY and PERIOD written exp:MEAN, the bursts come at random instead: the
 * gap from one burst's end to the next's start and each burst's length are
 * exponential with those means, drawn from the seed LAT_INJECT_SEED (default
 * 1), so a deadline that falls in a burst waits an exponential time (the
 * length left is memoryless): a tail of known shape.
 *
 * usage: lat-inject CPU PRIO BUSY PERIOD DURATION [LOG]   (durations with units)
 * Prints "ready" once pinned and prioritised, then at the end
 * "bursts N busy_ns_mean M".  LOG, when given, gets each burst's start and
 * end (CLOCK_MONOTONIC ns, "START END" a line), written after the last one.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/nstime.h"
#include "core/parse.h"

static uint64_t seed = 1;

/* Exponential of mean mean_ns, from a splitmix64 stream of the seed. */
static uint64_t exponential(uint64_t mean_ns)
{
	uint64_t z = (seed += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	double u = ((double)(z >> 11) + 1.0) * 0x1.0p-53;
	return (uint64_t)(-(double)mean_ns * log(u));
}

/* "exp:MEAN" sets *random; else a plain duration. */
static int duration_arg(const char *text, bool *random, uint64_t *ret)
{
	*random = strncmp(text, "exp:", 4) == 0;
	return parse_duration(text + (*random ? 4 : 0), NS_PER_US, ret);
}

static int die(const char *what, const char *why)
{
	fprintf(stderr, "lat-inject: %s: %s\n", what, why);
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t cpu, prio, busy, period, duration;
	bool rand_busy, rand_gap;

	if (argc != 6 && argc != 7)
		return die("usage", "lat-inject CPU PRIO BUSY PERIOD DURATION [LOG]");
	if (parse_u64(argv[1], &cpu) < 0 || cpu >= CPU_SETSIZE)
		return die("CPU", argv[1]);
	if (parse_u64(argv[2], &prio) < 0 || prio < 1 || prio > 99)
		return die("PRIO", argv[2]);
	if (duration_arg(argv[3], &rand_busy, &busy) < 0 || busy == 0)
		return die("BUSY", argv[3]);
	if (duration_arg(argv[4], &rand_gap, &period) < 0 || (!rand_gap && period <= busy) || period == 0 ||
	    rand_busy != rand_gap)
		return die("PERIOD", argv[4]);
	const char *env = getenv("LAT_INJECT_SEED");
	if (env && parse_u64(env, &seed) < 0)
		return die("LAT_INJECT_SEED", env);
	if (parse_duration(argv[5], NS_PER_SEC, &duration) < 0)
		return die("DURATION", argv[5]);

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return die("sched_setaffinity", strerror(errno));
	struct sched_param sp = { .sched_priority = (int)prio };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		return die("sched_setscheduler", strerror(errno));
	/* Room for every burst's times, taken before the bursts so they allocate nothing. */
	uint64_t nlog = argc == 7 ? duration / period * (rand_gap ? 4 : 1) + 64 : 0, *log = nlog ? calloc(nlog * 2, sizeof(*log)) : NULL;
	if (nlog && !log)
		return die("LOG", "out of memory");
	mlockall(MCL_CURRENT);

	printf("ready\n");
	fflush(stdout);

	uint64_t start = mono_ns() + NS_PER_MS, end = start + duration, bursts = 0, spun = 0, at = start;
	for (uint64_t k = 0;; k++) {
		if (rand_gap)
			at += exponential(period);
		else
			at = start + k * period;
		if (at >= end)
			break;
		const uint64_t len = rand_busy ? exponential(busy) : busy;
		struct timespec ts = ns_to_ts(at);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		uint64_t t0 = mono_ns(), now = t0;
		/* Until at + BUSY, not t0 + BUSY: the CPU is taken from the measured thread when
		 * this timer's interrupt arrives, so the wake path is part of the burst. */
		while (now < at + len)
			now = mono_ns();
		spun += now - t0;
		if (bursts < nlog) {
			log[2 * bursts] = t0;
			log[2 * bursts + 1] = now;
		}
		bursts++;
		if (rand_gap)
			at = now;       /* the next gap runs from this burst's end */
	}
	if (nlog) {
		FILE *f = fopen(argv[6], "w");
		if (!f)
			return die(argv[6], strerror(errno));
		for (uint64_t i = 0; i < bursts && i < nlog; i++)
			fprintf(f, "%llu %llu\n", (unsigned long long)log[2 * i], (unsigned long long)log[2 * i + 1]);
		fclose(f);
		free(log);
	}
	printf("bursts %llu busy_ns_mean %llu\n", (unsigned long long)bursts,
	       (unsigned long long)(bursts ? spun / bursts : 0));
	return 0;
}
