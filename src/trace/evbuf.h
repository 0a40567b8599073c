/*
 * Per-CPU arrays of trace events with a memory bound.
 *
 * The reader appends in each CPU's time order; an event beyond the bound is
 * counted, not stored, so a long run cannot exhaust memory.  Attribution then
 * reads one CPU's array at a time.
 */
#ifndef LATSCOPE_TRACE_EVBUF_H
#define LATSCOPE_TRACE_EVBUF_H

#include <stddef.h>
#include <stdint.h>

#include "trace/ev.h"

/* Default bound on stored events per CPU (bytes of struct trace_ev). */
#define TRACE_EVBUF_DEFAULT_MAX_BYTES (UINT64_C(64) << 20)

struct trace_cpu_events {
	struct trace_ev *ev;
	size_t n, cap;
	uint64_t lost;            /* events the kernel ring buffer lost (missed + overrun) */
	uint64_t lost_unknown;    /* places where it lost an unknown number */
	uint64_t capped;          /* events dropped here because max_events was reached */
};

struct trace_events {
	unsigned ncpus;
	size_t max_events;        /* per CPU */
	struct trace_cpu_events *cpu;
};

/* ncpus arrays, each holding at most max_bytes / sizeof(struct trace_ev)
 * events (0: TRACE_EVBUF_DEFAULT_MAX_BYTES).  Returns 0 or -ENOMEM/-EINVAL. */
int trace_events_new(unsigned ncpus, uint64_t max_bytes, struct trace_events **ret);
void trace_events_free(struct trace_events *e);

/* Appends ev to the array of ev->cpu.  Returns 0, -E2BIG when that CPU is
 * full (the event is counted in capped), -ERANGE for a CPU out of range,
 * -ENOMEM.  Events must come in time order per CPU. */
int trace_events_append(struct trace_events *e, const struct trace_ev *ev);

/* Everything lost, summed over CPUs: the kernel's losses and our own cap. */
uint64_t trace_events_lost(const struct trace_events *e);

/* Index of the first event with ts >= t in a time-ordered array (n if none). */
size_t trace_ev_lower_bound(const struct trace_ev *ev, size_t n, uint64_t t);

#endif
