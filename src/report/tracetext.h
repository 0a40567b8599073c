/* The --trace part of a summary: where the time went, and the spikes explained. */
#ifndef LATSCOPE_REPORT_TRACETEXT_H
#define LATSCOPE_REPORT_TRACETEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "result/result.h"

/* One explained spike of the trace (timer: a sample split into parts; noise:
 * a gap and what held the CPU), one or more lines each starting with indent. */
void text_trace_spike(FILE *out, const json_t *spike, bool timer, const char *indent);

/* A noise trace CPU's causes over all events, after prefix: "task x (pid 1, prio 9)
 * 5.0us in 3 stretches, ..."; nothing, and false, when it has none. */
bool text_trace_causes(FILE *out, const json_t *cpu, const char *prefix);

/* Nothing when the result holds no trace. */
void text_trace(FILE *out, const struct result *res);

#endif
