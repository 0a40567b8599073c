/* The files a command writes, checked before it starts: two that are one file
 * would overwrite each other, and one that is the store would replace it. */
#ifndef LATSCOPE_MEASURE_OUTPUTS_H
#define LATSCOPE_MEASURE_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>

#define OUTPUTS_MAX 4

struct output {
	const char *what;               /* the option, as "'--json'" */
	const char *path;               /* NULL: not written this time */
};

/*
 * EXIT_USAGE, said with the hint, when two of outs (at most OUTPUTS_MAX - 1),
 * or one of them and the store db_opt chooses (when the command uses_store),
 * are one file (sys/samefile.h); 0 to go on.
 */
int outputs_check(const char *cmd, const struct output *outs, size_t n, const char *db_opt, bool uses_store);

#endif
