/* The wake probe: how long one thread takes to wake another, on one CPU or across two. */
#ifndef LATSCOPE_PROBE_WAKE_H
#define LATSCOPE_PROBE_WAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/probe.h"

enum wake_via { WAKE_FUTEX, WAKE_EVENTFD, WAKE_PIPE, WAKE_COND };

struct wake_params {
	unsigned sleeper_cpu;           /* the waker is the runner's thread, on the run's one CPU */
	int via;                        /* enum wake_via */
	bool pingpong;                  /* the sleeper answers through a second channel */
	uint64_t interval_ns;           /* between wakeups; 0: back to back (pingpong only) */
};

/* Metrics latency and wake_call; with --pingpong also roundtrip. */
extern const struct probe_ops wake_probe;

#endif
