/*
 * A CPU block's tail estimate (result/tail.h) from what the result keeps of
 * it: its leading metric's histogram, the time its windows observed and the
 * maxima of its windows not yet folded (a fold's maximum covers a longer span,
 * and the independence test wants equal ones).  The same for a run just
 * measured, a stored one read back and a merge: nothing else is needed.
 */
#ifndef LATSCOPE_RESULT_TAILRUN_H
#define LATSCOPE_RESULT_TAILRUN_H

#include "core/error.h"
#include "result/result.h"
#include "result/tail.h"

/* The time cr's samples span: the run's observed time once finalized, while
 * measuring its windows' span so far. */
uint64_t cpu_result_observed(const struct result *res, const struct cpu_result *cr);

/* 0 with ret filled (its status says whether there are levels), or -errno
 * with err.  For res->all the levels are raised to every CPU's (tail_floor). */
int cpu_result_tail(const struct result *res, const struct cpu_result *cr, struct tail_fit *ret,
		    struct lat_error *err);

#endif
