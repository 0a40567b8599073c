/*
 * The probe interface: what a measurement needs to provide to run under the
 * common runner.  The runner owns threads, pinning, priorities, windows,
 * signals and system settings; a probe owns only its wait and its samples.
 */
#ifndef LATSCOPE_PROBE_PROBE_H
#define LATSCOPE_PROBE_PROBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "probe/params.h"
#include "probe/recorder.h"

struct probe_thread {
	const struct run_params *rp;
	const void *pp;                 /* the probe's own parameters */
	unsigned cpu;
	struct recorder rec;
	void *priv;                     /* the probe's per-thread state */
	uint64_t origin_ns;             /* CLOCK_MONOTONIC: the run's time zero */
	uint64_t end_ns;                /* CLOCK_MONOTONIC: stop at or before; UINT64_MAX for none */
	const atomic_bool *stop;        /* set by the runner on a signal */
	char err[160];                  /* setup or run failure, for the user */
	int run_rc;                     /* set by run when it had to stop on an error: -errno */
};

struct probe_ops {
	const char *name;
	unsigned nmetrics;
	const char *const *metric_names;    /* metric 0 is the one summaries lead with */
	unsigned unit_ns;               /* how people read its values: 1000 (us) or 1 (ns) */
	bool values_tile_time;          /* metric 0's values add up to the run's time (gaps) */
	bool per_op_costs;              /* each value is an operation whose CPU cost is reported (reads) */

	/*
	 * Before the run, on the measuring thread once it is pinned and has its
	 * policy: open what the wait needs.  0 or -errno with t->err filled.
	 */
	int (*setup)(struct probe_thread *t);
	/* The hot loop: from t->origin_ns until t->end_ns, t->rp->loops or *t->stop.
	 * On an error it cannot go on from, it sets t->run_rc and t->err and returns. */
	void (*run)(struct probe_thread *t);
	/* Undo setup; called on every path after a successful setup. */
	void (*teardown)(struct probe_thread *t);
};

/* Every probe, by name (NULL when unknown): what reports need to know of a stored result's probe. */
const struct probe_ops *probe_find(const char *name);

#endif
