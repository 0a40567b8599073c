/* latscope wake's parameters and command description (for tests). */
#ifndef LATSCOPE_MEASURE_WAKE_H
#define LATSCOPE_MEASURE_WAKE_H

#include <stdbool.h>

#include "measure/measure.h"
#include "probe/params.h"
#include "probe/wake.h"

struct wake_cmd {
	struct run_params run;
	struct measure_extras out;
	struct wake_params p;
	const char *pair;               /* --cpus A,B; after validation, pair_text */
	char pair_text[32];             /* the pair as the result's params keep it */
	bool help;
};

extern const struct measure_cmd wake_command;

#endif
