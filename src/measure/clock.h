/* latscope clock's parameters, command description and report (for tests). */
#ifndef LATSCOPE_MEASURE_CLOCK_H
#define LATSCOPE_MEASURE_CLOCK_H

#include <stdbool.h>

#include "measure/measure.h"
#include "probe/clock.h"
#include "probe/params.h"

struct clock_cmd {
	struct run_params run;
	struct measure_extras out;
	struct clock_params p;
	bool help;
	struct lat_error no_tsc;        /* why the TSC is not measured, when it is not */
	struct clk_board board;         /* p.board during the run: what the threads share */
};

extern const struct measure_cmd clock_command;

/*
 * After the run, what the board's totals and the result's histograms say of
 * each clock: a note per clock (a warning when it went backwards, an info
 * otherwise) and the object params.observed.  -ENOMEM.
 */
int clock_observe(const struct clock_params *p, struct result *res);

#endif
