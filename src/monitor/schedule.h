/*
 * The monitor's phases: periods of the timer probe, each --rotate long, and
 * every --noise-every a noise run of --noise-for between two periods (the
 * noise probe takes whole CPUs, so never beside the timer probe).  A period
 * ends early when the noise run is due.  Pure: times are passed in.
 */
#ifndef LATSCOPE_MONITOR_SCHEDULE_H
#define LATSCOPE_MONITOR_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

enum mon_phase { MON_PERIOD, MON_NOISE };

struct mon_schedule {
	uint64_t rotate_ns;
	uint64_t every_ns, for_ns;      /* 0: no noise runs */
	uint64_t next_noise_ns;         /* CLOCK_MONOTONIC; UINT64_MAX: none */
	bool after_period;              /* the last phase was a period */
};

void mon_schedule_init(struct mon_schedule *s, uint64_t rotate_ns, uint64_t every_ns, uint64_t for_ns,
		       uint64_t now_ns);

/* The phase to measure at now_ns, and for how long. */
enum mon_phase mon_schedule_next(struct mon_schedule *s, uint64_t now_ns, uint64_t *ret_duration_ns);

/* A noise run ended at now_ns: the next is due on the grid of every_ns, after now_ns. */
void mon_schedule_noise_done(struct mon_schedule *s, uint64_t now_ns);

#endif
