/* The tail estimate's lines of a summary (result/tail.h), and `show --tail`'s whole fit. */
#ifndef LATSCOPE_REPORT_TAILTEXT_H
#define LATSCOPE_REPORT_TAILTEXT_H

#include <stdio.h>

#include "result/result.h"

/* One line per CPU and all: the once-an-hour and once-a-day levels with their
 * intervals, and whether they can be trusted (and if not, why). */
void text_tail(FILE *out, const struct result *res);

/* Everything of each CPU's fit: threshold and why, the candidates' shapes
 * (the stability table), every level, the fitted against the measured
 * quantiles, how often the run's threshold and above_ns (0: none) are
 * crossed per hour, the tests with their p-values. */
void text_tail_full(FILE *out, const struct result *res, uint64_t above_ns);

#endif
