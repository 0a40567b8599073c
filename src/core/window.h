/* What one window of a run holds: written by the recorder, kept by the result. */
#ifndef LATSCOPE_CORE_WINDOW_H
#define LATSCOPE_CORE_WINDOW_H

#include <stdint.h>

#include "core/stats.h"

#define REC_MAX_METRICS 6
#define REC_TOP 16                  /* largest values kept per CPU, with their time */

/* One of the largest values of a run, and when it happened. */
struct rec_event {
	uint64_t at_ns;                 /* relative to the run's origin */
	uint64_t value;
};

/* One metric's share of a window. */
struct rec_metric {
	struct stats st;
	uint64_t above;                 /* values above the metric's threshold */
	uint64_t above_ns;              /* their sum: time lost to noise, or to late wakeups */
	uint64_t sum;                   /* light metrics only: the sum, until the reader derives mean and m2 */
};

/*
 * What one window holds; the main thread keeps these as the run's windows.
 * What every sample writes comes first, so that after a long sleep the hot
 * loop touches two cache lines of it rather than four.
 */
struct rec_window {
	uint64_t missed;                /* periods that passed without a wakeup */
	struct stats overhead;          /* wakeup to sample recorded */
	struct rec_metric m[REC_MAX_METRICS];
	uint64_t spikes;                /* metric 0's spikes: runs of consecutive samples above the
					 * threshold, counted in the window where they begin */
	uint64_t index;                 /* window number since the run's origin */
	uint64_t start_ns;              /* relative to the run's origin */
	uint64_t end_ns;
};

#endif
