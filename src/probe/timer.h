/* The timer probe: how late a periodic absolute-deadline wait wakes its thread. */
#ifndef LATSCOPE_PROBE_TIMER_H
#define LATSCOPE_PROBE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/probe.h"

#include <time.h>

enum timer_mode { TIMER_NANOSLEEP, TIMER_TIMERFD, TIMER_POSIX };

/* The clock of the deadlines and of the reading on wakeup. */
enum timer_clock { TIMER_CLOCK_MONOTONIC, TIMER_CLOCK_REALTIME, TIMER_CLOCK_TAI, TIMER_CLOCK_BOOTTIME,
		   TIMER_CLOCKS };

extern const clockid_t timer_clock_ids[TIMER_CLOCKS];

struct timer_params {
	uint64_t interval_ns;
	uint64_t distance_ns;           /* the Nth CPU's period is interval + N * distance (cyclictest's -d) */
	uint64_t aligned_offset_ns;     /* the Nth CPU's deadlines N * this later (cyclictest -A) */
	int mode;                       /* enum timer_mode */
	int clock;                      /* enum timer_clock */
	bool co_correct;                /* also record what each missed deadline would have seen */
};

extern const struct probe_ops timer_probe;

/* The period of the thread on cpu: interval, plus distance for each measured CPU below it. */
uint64_t timer_interval_of(const struct timer_params *tp, const struct cpuset *cpus, unsigned cpu);

/*
 * Where the thread on cpu has its first deadline, after the run's origin: N *
 * aligned_offset for the Nth measured CPU, modulo its period (the same grid
 * as N * aligned_offset itself, started within the first period).  0 for
 * every CPU without --aligned-offset: all deadlines on the same instants.
 */
uint64_t timer_phase_of(const struct timer_params *tp, const struct cpuset *cpus, unsigned cpu);

#endif
