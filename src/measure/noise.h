/* latscope noise's parameters and command description (for tests). */
#ifndef LATSCOPE_MEASURE_NOISE_H
#define LATSCOPE_MEASURE_NOISE_H

#include <stdbool.h>

#include "measure/measure.h"
#include "measure/runopt.h"
#include "probe/noise.h"
#include "probe/params.h"
#include "trace/hwlat.h"

struct noise_cmd {
	struct run_params run;
	struct measure_extras out;
	struct noise_params p;
	bool hwlat;                     /* --hwlat: the kernel's hwlat tracer beside the run */
	struct hwlat_run *hw;           /* from open to close */
	bool help;
};

/* The rows of noise_command.opts: front ends (src/front/) name them by these. */
enum noise_opt {
	NOISE_OPT_CLOCK, NOISE_OPT_BURST, NOISE_OPT_REST, NOISE_OPT_TRACE, NOISE_OPT_TRACE_BACKEND, NOISE_OPT_HWLAT,
	NOISE_OPT_UNTIL,
	RUN_OPT_ROWS(NOISE_OPT),
	NOISE_NOPTS
};

extern const struct measure_cmd noise_command;

#endif
