/* latscope noise's parameters and command description (for tests). */
#ifndef LATSCOPE_CLI_NOISE_H
#define LATSCOPE_CLI_NOISE_H

#include <stdbool.h>

#include "cli/measure.h"
#include "probe/noise.h"
#include "probe/params.h"

struct noise_cmd {
	struct run_params run;
	struct measure_extras out;
	struct noise_params p;
	bool help;
};

extern const struct measure_cmd noise_command;

#endif
