/*
 * The probe interface, and the one description of a probe: everything that
 * differs between probes is here, in its ops and what they point to.  The
 * runner owns threads, pinning, priorities, windows, signals and system
 * settings; a probe owns only its wait and its samples.  trace/, report/ and
 * cli/ read this description and never compare a probe's name
 * (doc/adding-a-probe.md).
 */
#ifndef LATSCOPE_PROBE_PROBE_H
#define LATSCOPE_PROBE_PROBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

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
	char note[224];                 /* setup: what it used instead of what was asked, for the result's notes */
	int run_rc;                     /* set by run when it had to stop on an error: -errno */
	pid_t measured_tid;             /* setup: the thread whose wakeups it measures when not its own
					 * (attach: the program's); 0: the measuring thread */
};

/* How --trace explains a probe's samples (probe/tracerun.c). */
enum probe_trace_kind {
	PROBE_TRACE_PARTS,              /* each sample split into its parts: irq delay, handler, wakeup, return */
	PROBE_TRACE_GAPS,               /* each value above the threshold explained by what held the CPU */
};

struct probe_trace {
	enum probe_trace_kind kind;
	unsigned events;                /* the TRACE_WANT_* groups its explanation reads (trace/eventlist.h) */
	unsigned events_per_sec;        /* expected on a measured CPU: sizes the ring */
};

struct probe_ops {
	const char *name;
	const char *title;              /* a few words for tables: "timer wakeup latency" */
	const char *about;              /* one line for reports: what is measured and how */
	unsigned nmetrics;              /* the metrics it can record */
	const char *const *metric_names;    /* metric 0 is the one summaries lead with */
	/* Optional: how many of them these parameters record (a prefix); default nmetrics. */
	unsigned (*metrics_for)(const void *pp);
	unsigned min_metrics;           /* the fewest metrics_for gives; 0: nmetrics */
	unsigned unit_ns;               /* how people read its values: 1000 (us) or 1 (ns) */
	bool values_tile_time;          /* metric 0's values add up to the run's time (gaps) */
	bool per_op_costs;              /* each value is an operation whose CPU cost is reported (reads) */
	const struct probe_trace *trace;    /* NULL: --trace cannot explain it */
	unsigned suite_share;           /* its share of `latscope run`'s time; 0: not in the suite */
	/* Optional: the clock these parameters wait on and read (default
	 * CLOCK_MONOTONIC); the runner watches another one for steps. */
	clockid_t (*clock_of)(const void *pp);

	/*
	 * Before the run, on the measuring thread once it is pinned and has its
	 * policy: open what the wait needs.  0 or -errno with t->err filled.
	 */
	int (*setup)(struct probe_thread *t);
	/* The hot loop: from t->origin_ns until t->end_ns, t->rp->loops or *t->stop.
	 * On an error it cannot go on from, it sets t->run_rc and t->err and returns. */
	void (*run)(struct probe_thread *t);
	/* Optional: the hot loop of a thread under SCHED_DEADLINE (--policy
	 * deadline), which waits with sched_yield for its next period; a probe
	 * without one refuses that policy. */
	void (*run_deadline)(struct probe_thread *t);
	/* Undo setup; called on every path after a successful setup. */
	void (*teardown)(struct probe_thread *t);
};

/* Every probe, by name (NULL when unknown): what reports need to know of a stored result's probe. */
const struct probe_ops *probe_find(const char *name);
/* Every probe in turn: the i-th of the registry, NULL past the last. */
const struct probe_ops *probe_at(size_t i);

/* Whether probe's samples are explained by --trace as kind says (false for a
 * probe unknown here or without a trace description). */
bool probe_traced_as(const char *probe, enum probe_trace_kind kind);

/* Whether a result's probe and metrics are what latscope writes: one of its
 * probes, with a list of metrics some run of it records.  0, or -EINVAL with
 * err naming what is not. */
struct lat_error;
struct result;
int probe_check_result(const struct result *res, struct lat_error *err);

/* A result read from a file written before throughput and the CPU per
 * operation were kept (or by a merge): its probe's figures derived again. */
void probe_result_ops(struct result *res);

/* The metrics a run of ops with these parameters records. */
static inline unsigned probe_metrics(const struct probe_ops *ops, const void *pp)
{
	return ops->metrics_for ? ops->metrics_for(pp) : ops->nmetrics;
}

#endif
