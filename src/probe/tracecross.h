/*
 * --trace-backend both: the same samples split by both backends, compared
 * part by part, and each spike's main occupant after the expiry as each one
 * names it: the check that the BPF collector splits as the established
 * tracefs pairing does, on the user's own kernel.
 */
#ifndef LATSCOPE_PROBE_TRACECROSS_H
#define LATSCOPE_PROBE_TRACECROSS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/tracethread.h"
#include "trace/bpfcol.h"
#include "trace/evbuf.h"

/* The result's trace.cross_check (doc/result-schema.md) for the n threads,
 * from the collector's records and tracefs's events ev; spikes are the
 * samples above above_ns.  NULL when out of memory. */
json_t *trace_cross_check(const struct tracerun_thread *threads, size_t n, const struct bpf_collector *bpf,
			  const struct trace_events *ev, uint64_t above_ns);

#endif
