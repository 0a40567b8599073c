/* The timer probe: how late a periodic absolute-deadline wait wakes its thread. */
#ifndef LATSCOPE_PROBE_TIMER_H
#define LATSCOPE_PROBE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/probe.h"

enum timer_mode { TIMER_NANOSLEEP, TIMER_TIMERFD, TIMER_POSIX };

struct timer_params {
	uint64_t interval_ns;
	uint64_t distance_ns;           /* the Nth CPU's period is interval + N * distance (cyclictest's -d) */
	int mode;                       /* enum timer_mode */
	bool co_correct;                /* also record what each missed deadline would have seen */
};

extern const struct probe_ops timer_probe;

/* The period of the thread on cpu: interval, plus distance for each measured CPU below it. */
uint64_t timer_interval_of(const struct timer_params *tp, const struct cpuset *cpus, unsigned cpu);

#endif
