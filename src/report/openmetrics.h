/*
 * Results as OpenMetrics text (what Prometheus scrapes and node_exporter's
 * textfile collector reads).
 *
 * Per run, per CPU (cpu="0"...) and merged (cpu="all"), per metric M:
 *
 *   latscope_M_seconds                  histogram on a fixed 1-2-5 ladder, 1us..100s and +Inf
 *   latscope_M_quantile_seconds         summary, quantile="0.5" ... "0.9999"
 *   latscope_M_min_seconds, _max_seconds, _warm_max_seconds    gauges
 *   latscope_missed_periods             gauge
 *   latscope_run_info                   gauge, always 1: kernel, start time...
 *
 * Every sample carries run (the id), host, probe and the run's own labels,
 * renamed label_<key> with characters outside [a-zA-Z0-9_] made '_'.  A
 * figure that does not exist (min of no sample, a warm max without a window
 * after the warm-up) is left out rather than written as NaN.  No timestamps:
 * the textfile collector refuses them.  The output depends on the input only.
 */
#ifndef LATSCOPE_REPORT_OPENMETRICS_H
#define LATSCOPE_REPORT_OPENMETRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "result/result.h"

/*
 * Write n finalized results as one exposition ending in "# EOF".  ids[i] is
 * the run label of results[i]; ids may be NULL to number the runs 1..n.
 * -EINVAL for a NULL result, repeated ids, or metric names that meet once
 * renamed (two of one run) or whose families would ("latency" and
 * "latency_max"), all found before anything is written; -ENOMEM; the errno of
 * a failed write (-EIO when unknown), after which part may have been written.
 * err says why, naming the run and the metrics.
 */
int openmetrics_write(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err);

#endif
