/*
 * Where a timer sample's parts come from, and the events that explain it:
 * the CPU's whole tracefs trace (trace_decompose_timer over every event), or
 * the BPF collector's records (one a sample, its points split by
 * trace_timer_parts, and the events of the late ones).  tracerun.c and the
 * cross check read both through the same two calls.
 */
#ifndef LATSCOPE_PROBE_TRACESPLIT_H
#define LATSCOPE_PROBE_TRACESPLIT_H

#include <stddef.h>

#include "probe/recorder.h"
#include "probe/tracethread.h"
#include "trace/attrib.h"
#include "trace/bpfcol.h"
#include "trace/evbuf.h"

struct splitter {
	/* Parts of sample s into smp: 0, or < 0 when it is not matched. */
	int (*split)(struct splitter *sp, const struct rec_span *s, struct trace_timer_sample *smp);
	/* After split() matched s: the events explaining it (*n 0: none kept). */
	void (*events)(struct splitter *sp, const struct rec_span *s, const struct trace_ev **ev, size_t *n);
	const struct tracerun_thread *th;
	const struct trace_cpu_events *ce;      /* tracefs */
	const struct bpfcol_cpu *k;             /* BPF */
	size_t next;                            /* k->s[next] is the first record not yet passed */
	struct trace_ev scratch[LS_BPF_EV_CAP + 1u];
};

/* Set sp up for thread th over its CPU's tracefs events ce. */
void splitter_tracefs(struct splitter *sp, const struct tracerun_thread *th, const struct trace_cpu_events *ce);
/* ... or over the collector's records k of its CPU; the spans must come in
 * the order of their deadlines, as the records do. */
void splitter_bpf(struct splitter *sp, const struct tracerun_thread *th, const struct bpfcol_cpu *k);

#endif
