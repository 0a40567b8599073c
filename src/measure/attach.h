/* latscope attach's parameters and command description (for tests). */
#ifndef LATSCOPE_MEASURE_ATTACH_H
#define LATSCOPE_MEASURE_ATTACH_H

#include <stdbool.h>

#include "measure/measure.h"
#include "probe/attach.h"
#include "probe/params.h"

struct attach_cmd {
	struct run_params run;
	struct measure_extras out;
	struct attach_params p;
	bool help;
};

extern const struct measure_cmd attach_command;

#endif
