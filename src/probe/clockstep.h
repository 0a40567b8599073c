/*
 * Steps of a clock against CLOCK_MONOTONIC.  A probe that waits on another
 * clock (timer --clock realtime) sees a step of that clock (NTP, PTP,
 * settimeofday, a resume for boottime) as latency; the runner's main thread
 * reads both clocks at each window's end, never the measuring threads, and
 * this tells the steps from a slew.  Pure logic over readings given to it, so
 * a test can inject them.
 */
#ifndef LATSCOPE_PROBE_CLOCKSTEP_H
#define LATSCOPE_PROBE_CLOCKSTEP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* NTP slews a clock by at most 500 ppm: a faster change of its offset from
 * CLOCK_MONOTONIC is a step. */
#define CLOCK_STEP_SLEW_PPM 500u
/* Below this a change is rounding, whatever the interval. */
#define CLOCK_STEP_FLOOR_NS 1000u

/* One reading: the clock read between two CLOCK_MONOTONIC reads. */
struct clock_reading {
	uint64_t mono_before;
	uint64_t clock;
	uint64_t mono_after;
};

struct clock_step {
	uint64_t origin;                /* CLOCK_MONOTONIC at the first reading */
	uint64_t last_mono;             /* the last reading's middle */
	int64_t last_offset;            /* clock - monotonic then */
	uint64_t last_error;            /* half its bracket: how far off that offset may be */
	unsigned steps;
	int64_t largest;                /* the step of the largest size, signed; 0: none */
	uint64_t largest_at;            /* when it was seen, from the first reading */
};

/* Start from a first reading. */
void clock_step_start(struct clock_step *cs, const struct clock_reading *r);

/* Compare a later reading with the one before: the step it shows (the
 * change of the offset, signed), or 0 when the change is within the slew and
 * the readings' error.  Counted in cs. */
int64_t clock_step_check(struct clock_step *cs, const struct clock_reading *r);

/* Read mono, id, mono now. */
void clock_read_against_mono(clockid_t id, struct clock_reading *ret);

/* "CLOCK_REALTIME", ... for messages. */
const char *clock_id_name(clockid_t id);

#endif
