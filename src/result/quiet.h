/*
 * Time no kernel event covers (a spike's or a noise gap's "no event", events
 * above the threshold with nothing beside them in their window) told apart by
 * what the window counted: an SMI (firmware stopped the CPU), steal (the
 * hypervisor ran something else), or neither (the hardware, or firmware no
 * counter here sees).  Without an SMI source, the last is only "not counted".
 */
#ifndef LATSCOPE_RESULT_QUIET_H
#define LATSCOPE_RESULT_QUIET_H

#include "result/result.h"

enum quiet_cause { QUIET_SMI, QUIET_STEAL, QUIET_NEITHER, QUIET_UNCOUNTED, QUIET_CAUSES };

/* The cause ctx (a window's own, not a fold's) can tell; QUIET_UNCOUNTED for an invalid one. */
int quiet_cause_of(const struct result *res, const struct win_context *ctx);
/* "smi", "steal", "neither", "smis_not_counted": its name in JSON; NULL out of range. */
const char *quiet_cause_name(int cause);
/* What it points at, for a line of text: "with an SMI counted in their window (firmware stopped the CPU)". */
const char *quiet_cause_text(int cause);

#endif
