/*
 * A measured or merged run that the store could not take (locked past the
 * busy timeout, full, read-only, failing) is never thrown away: it is kept in
 * a file that `latscope import` stores later.  The places, in order:
 * $XDG_STATE_HOME/latscope/unstored/ (default ~/.local/state/..., made 0700),
 * as START-PROBE.json; then the --json file's directory and the current
 * directory, as latscope-unstored-START-PROBE.json.  The file is 0600 and
 * never replaces another.
 */
#ifndef LATSCOPE_MEASURE_UNSTORED_H
#define LATSCOPE_MEASURE_UNSTORED_H

#include <stdbool.h>

#include "result/result.h"

/* Keep text (res's JSON) and say where in one line, or that every place
 * failed and why.  Returns EXIT_ERROR: the run was not stored. */
int unstored_keep(const char *cmd, const char *text, const struct result *res, bool merged, const char *json_path,
		  const char *db_opt);

#endif
