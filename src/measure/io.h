/* latscope io's parameters and command description (for tests). */
#ifndef LATSCOPE_MEASURE_IO_H
#define LATSCOPE_MEASURE_IO_H

#include <stdbool.h>

#include "measure/measure.h"
#include "probe/io.h"
#include "probe/params.h"

struct io_cmd {
	struct run_params run;
	struct measure_extras out;
	struct io_params p;
	bool direct, buffered;
	const char *make;
	uint64_t make_size;
	bool help;
};

extern const struct measure_cmd io_command;

/* latscope io: its own entry, for --make, before the measuring command. */
int cmd_io(int argc, char **argv);

#endif
