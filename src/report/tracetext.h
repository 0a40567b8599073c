/* The --trace part of a summary: where the time went, and the spikes explained. */
#ifndef LATSCOPE_REPORT_TRACETEXT_H
#define LATSCOPE_REPORT_TRACETEXT_H

#include <stdio.h>

#include "result/result.h"

/* Nothing when the result holds no trace. */
void text_trace(FILE *out, const struct result *res);

#endif
