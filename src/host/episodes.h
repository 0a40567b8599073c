/*
 * A vCPU thread's episodes: each stretch it spent off its host CPU (switched
 * out to switched in) and each it spent in the host (kvm_exit to kvm_entry)
 * in which the host held it for at least a given length, each explained by
 * host_explain() over its own interval.  Held: in the host, or switched out
 * runnable or stopped, or woken and not yet running; a vCPU asleep because
 * its guest halted is not held (an idle guest's many halts are no episode).  The guest asks for them every second, so the agent needs
 * to hold only the last seconds of events however long the guest runs, and
 * the guest matches its spikes against them after its run (host/guest.h).
 * Pure logic over events in time order, tested with synthetic streams.
 */
#ifndef LATSCOPE_HOST_EPISODES_H
#define LATSCOPE_HOST_EPISODES_H

#include <stddef.h>
#include <stdint.h>

#include "host/explain.h"
#include "trace/ev.h"

#define HOST_EPISODES_MAX 16 /* per answer: 16 of ~2 KiB fit a protocol line */

struct host_episodes_query {
	int32_t tid;
	int32_t vcpu;
	uint64_t from, to; /* episodes that begin in [from, to), host CLOCK_MONOTONIC */
	uint64_t min_ns;
	uint64_t complete_from; /* as host_query's */
};

/*
 * Up to max episodes of q (the most held first) into ret, *ret_n of them, and
 * how many more there were in *ret_more.  An episode still open at the last
 * event ends there.  0, or -EINVAL when to < from or tid <= 0.
 */
int host_episodes(const struct trace_ev *ev, size_t n, const struct host_episodes_query *q,
		  struct host_answer *ret, size_t max, size_t *ret_n, size_t *ret_more);

#endif
