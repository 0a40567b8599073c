/*
 * Reading a session's per-CPU ring buffers into trace_events.
 *
 * Reading consumes what it reads (trace_pipe_raw), so a second call appends
 * only newer events: a caller may read once after the run or in slices.
 */
#ifndef LATSCOPE_TRACE_EVENTS_H
#define LATSCOPE_TRACE_EVENTS_H

#include <stddef.h>

#include "core/error.h"
#include "trace/evbuf.h"
#include "trace/instance.h"

/*
 * Append every recorded event of the session's CPUs to e, in time order per
 * CPU, with a TRACE_EV_LOST marker where the kernel reports missed events.
 * Afterwards e->cpu[c].lost holds the kernel's count of lost events on CPU c
 * (ring buffer overrun plus dropped), so a caller can say "the trace buffer
 * overflowed: N events lost".  Events beyond e's bound are counted in
 * e->cpu[c].capped.  Returns 0 or a negative errno with err set.
 */
int trace_session_read(struct trace_session *s, struct trace_events *e, struct lat_error *err);

#endif
