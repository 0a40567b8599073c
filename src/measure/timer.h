/* latscope timer's parameters and command description (for tests). */
#ifndef LATSCOPE_MEASURE_TIMER_H
#define LATSCOPE_MEASURE_TIMER_H

#include <stdbool.h>

#include "measure/measure.h"
#include "measure/runopt.h"
#include "probe/params.h"
#include "probe/timer.h"

struct timer_cmd {
	struct run_params run;
	struct measure_extras out;
	struct timer_params p;
	bool aligned;                   /* --aligned: as the deadlines are anyway; no --distance */
	bool help;
};

/* The rows of timer_command.opts: front ends (src/front/) name them by these. */
enum timer_opt {
	TIMER_OPT_INTERVAL, TIMER_OPT_DISTANCE, TIMER_OPT_ALIGNED, TIMER_OPT_ALIGNED_OFFSET,
	TIMER_OPT_MODE, TIMER_OPT_CLOCK, TIMER_OPT_TIMER_SLACK, TIMER_OPT_CO_CORRECT, TIMER_OPT_RUNTIME,
	TIMER_OPT_DEADLINE, TIMER_OPT_PERIOD, TIMER_OPT_TRACE, TIMER_OPT_TRACE_ABOVE,
	TIMER_OPT_TRACE_BACKEND, TIMER_OPT_UNTIL,
	RUN_OPT_ROWS(TIMER_OPT),
	TIMER_NOPTS
};

extern const struct measure_cmd timer_command;

#endif
