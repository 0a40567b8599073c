/*
 * --on-threshold on the runner's main thread: take the samples the measuring
 * threads noted above the trigger (rec_trigger_take) and do the actions (exec,
 * trace and signal at most once per --action-interval each); then say in the result
 * what was seen and done.
 */
#ifndef LATSCOPE_PROBE_TRIGGER_H
#define LATSCOPE_PROBE_TRIGGER_H

#include <stdbool.h>

#include "probe/params.h"
#include "probe/recorder.h"
#include "result/result.h"
#include "trace/spikering.h"

struct trigger_watch;

/* NULL (and nothing to do) when rp has no --on-threshold action; -ENOMEM.
 * ring (may be NULL: trace then says why not) explains for the trace action;
 * the watch does not own it.  why_not: what trace says without a ring. */
int trigger_watch_start(struct trigger_watch **ret, const struct run_params *rp, uint64_t origin_ns,
			struct spike_ring *ring, const char *why_not);

/* cpu's recorder's note, if any, acted on (tid: the thread measuring there):
 * true when it asks the run to stop (once).  Children that ended are reaped. */
bool trigger_watch_poll(struct trigger_watch *tw, struct recorder *rec, unsigned cpu, pid_t tid);

/* After the run: res->on_threshold says the trigger, the first sample above it,
 * how many there were (above) and each action done with its outcome; exec
 * commands still running are left to run (their status stays unknown). */
void trigger_watch_finish(struct trigger_watch *tw, struct result *res, uint64_t above);

void trigger_watch_free(struct trigger_watch *tw);

#endif
