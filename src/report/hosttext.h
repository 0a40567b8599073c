/* The --host part of a summary: the agent, the clock line-up, the spikes by host cause. */
#ifndef LATSCOPE_REPORT_HOSTTEXT_H
#define LATSCOPE_REPORT_HOSTTEXT_H

#include <stdio.h>

#include "result/result.h"

/* Nothing when the run did not ask a host. */
void text_host(FILE *out, const struct result *res);

#endif
