/* latscope io's parameters and command description (for tests). */
#ifndef LATSCOPE_CLI_IO_H
#define LATSCOPE_CLI_IO_H

#include <stdbool.h>

#include "cli/measure.h"
#include "probe/io.h"
#include "probe/params.h"

struct io_cmd {
	struct run_params run;
	struct measure_extras out;
	struct io_params p;
	bool direct, buffered;
	uint64_t count;
	const char *make;
	uint64_t make_size;
	bool help;
};

extern const struct measure_cmd io_command;

#endif
