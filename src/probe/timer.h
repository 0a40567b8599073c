/* The timer probe: how late a periodic absolute-deadline wait wakes its thread. */
#ifndef LATSCOPE_PROBE_TIMER_H
#define LATSCOPE_PROBE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/probe.h"

enum timer_mode { TIMER_NANOSLEEP, TIMER_TIMERFD, TIMER_POSIX };

struct timer_params {
	uint64_t interval_ns;
	int mode;                       /* enum timer_mode */
	bool co_correct;                /* also record what each missed deadline would have seen */
};

extern const struct probe_ops timer_probe;

#endif
