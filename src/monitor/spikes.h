/*
 * --trace-spikes: a window whose max is above the limit is queued as it
 * arrives and explained later from the trace ring, one at a time, so that a
 * burst of spikes never holds the windows behind it; what was explained is
 * counted on /metrics by cause and noted in the period's run.
 */
#ifndef LATSCOPE_MONITOR_SPIKES_H
#define LATSCOPE_MONITOR_SPIKES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "host/guest.h"
#include "monitor/metrics.h"
#include "result/result.h"
#include "trace/spikering.h"

#define SPIKES_QUEUE 32u
#define SPIKES_NOTED 8u /* explanations noted per period; the rest are counted */
#define SPIKES_HOST_WAIT_NS \
	(15ull * 1000000000ull) /* a host answer not in by then is counted missing */

struct spike_job {
	int cpu;
	pid_t tid;
	uint64_t from_ns, to_ns; /* the window, CLOCK_MONOTONIC */
};

/* An explained spike waiting for its host's answer (--host). */
struct spike_host_job {
	int cpu;
	uint64_t from_ns, to_ns; /* its deadline and when the thread ran, CLOCK_MONOTONIC */
	uint64_t queued_ns;
};

struct spikes {
	struct spike_ring *ring; /* NULL: explanations are not asked of a ring (tests) */
	struct host_guest *host; /* --host; NULL: not asked */
	struct spike_host_job hq[SPIKES_QUEUE];
	size_t nhq;
	unsigned host_by[HOST_CAUSES], host_missing; /* this period's */
	uint64_t above_ns;
	struct spike_job queue[SPIKES_QUEUE];
	size_t nqueue;
	/* this period's */
	unsigned explained, unexplained, dropped, by_kind[SPIKE_KINDS];
	unsigned nnoted;
	char noted[SPIKES_NOTED][RESULT_NOTE_LEN];
};

/* Start the ring on cpus: -errno with err filled (spike_ring_start). */
int spikes_start(const struct cpuset *cpus, uint64_t above_ns, struct spikes **ret,
		 struct lat_error *err);
/* Stop it: spike_ring_stop's return and note; NULL is a no-op returning 1. */
int spikes_stop(struct spikes *sp, struct lat_error *note);

/* The label values of latscope_spike_causes_total, SPIKE_KINDS of them. */
const char *const *spike_kinds(void);

/* A window of cpu (thread tid) whose max was above_ns or less is not queued;
 * one that finds the queue full is counted as dropped. */
void spikes_offer(struct spikes *sp, int cpu, pid_t tid, uint64_t max_ns, uint64_t from_ns,
		  uint64_t to_ns);

/* Explain the oldest queued window, counted in metrics (origin_ns: the
 * period's, for the time noted); false when none was queued. */
bool spikes_explain_one(struct spikes *sp, struct mon_metrics *metrics, uint64_t origin_ns);

/* --host: the host's answer for each explained spike whose interval the host
 * has been asked about by now, counted in metrics by cause; each still
 * missing after SPIKES_HOST_WAIT_NS is counted missing. */
void spikes_host_turn(struct spikes *sp, struct mon_metrics *metrics, uint64_t origin_ns);

/* The period's explanations into its run, then a clean slate for the next. */
void spikes_note(struct spikes *sp, struct result *res);

#endif
