/*
 * One CPU's held trace events: what a ring (trace/ring.h) keeps between
 * reads, gapless from held_from on.  Named for its first user, the spike
 * ring (trace/spikering.h), whose API it stays part of.
 */
#ifndef LATSCOPE_TRACE_HISTORY_H
#define LATSCOPE_TRACE_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "trace/ev.h"

/*
 * What one CPU's array holds: every event from held_from on, without a gap
 * (events before it may have been overwritten or dropped).
 */
struct spike_history {
	struct trace_ev *ev;
	size_t n, cap;
	uint64_t held_from;
	uint64_t lost_seen;      /* the kernel's lost count (overrun + dropped) at the last read */
};

/*
 * Append one read of the CPU (batch, in time order, with TRACE_EV_LOST
 * markers) to h.  lost_total is the kernel's cumulative lost count after
 * that read: when it grew, or a marker came, the events before the gap are
 * dropped and held_from moves to the first event after it.  Then everything
 * before now - keep_ns is dropped.  0 or -ENOMEM (h then holds nothing, from now).
 */
int spike_history_add(struct spike_history *h, const struct trace_ev *batch, size_t n, uint64_t lost_total,
		      uint64_t now, uint64_t keep_ns);
void spike_history_free(struct spike_history *h);

#endif
