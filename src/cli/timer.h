/* latscope timer's parameters and command description (for tests). */
#ifndef LATSCOPE_CLI_TIMER_H
#define LATSCOPE_CLI_TIMER_H

#include <stdbool.h>

#include "cli/measure.h"
#include "probe/params.h"
#include "probe/timer.h"

struct timer_cmd {
	struct run_params run;
	struct measure_extras out;
	struct timer_params p;
	bool help;
};

extern const struct measure_cmd timer_command;

#endif
