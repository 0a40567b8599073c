/* The noise probe: what the OS and the hypervisor take from a CPU that only wants to run. */
#ifndef LATSCOPE_PROBE_NOISE_H
#define LATSCOPE_PROBE_NOISE_H

#include <stdint.h>

#include "probe/probe.h"

enum noise_clock { NOISE_TSC, NOISE_MONOTONIC };

struct noise_params {
	int clock;                      /* enum noise_clock */
	uint64_t burst_ns;              /* 0: spin all the time; else spin this long ... */
	uint64_t rest_ns;               /* ... then sleep this long */
};

extern const struct probe_ops noise_probe;

#endif
