/* --on-end: what a measuring command does once its result is written. */
#ifndef LATSCOPE_MEASURE_ONEND_H
#define LATSCOPE_MEASURE_ONEND_H

#include <stdint.h>

#include "probe/actions.h"
#include "result/result.h"

/*
 * Do each action in order, waiting for each command: LATSCOPE_RUN_ID is the
 * stored run's id (empty when it was not stored), LATSCOPE_CPU and
 * LATSCOPE_LATENCY_NS the first sample above the trigger (empty when none).
 * A command's nonzero status is told on stderr; EXIT_ERROR when an action
 * could not be done at all, else EXIT_OK.
 */
int on_end_run(const char *name, const struct action_list *l, const struct result *res, int64_t stored_id);

#endif
