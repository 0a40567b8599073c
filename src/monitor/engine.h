/*
 * The monitor's engine: measure without end in phases, publish what was
 * measured, explain spikes, run the noise schedule, keep the store within
 * --keep, make the report, and stop on a signal; all in one loop
 * (mon_engine_run) that a daemon drives with its own way of measuring.
 *
 * Threads: the loop runs on the caller's thread; each phase is measured on a
 * thread of the engine's (the measure function, the runner's main thread)
 * that only hands its windows and its end over, under the engine's lock; the
 * server's threads copy the last published texts and see nothing else.
 */
#ifndef LATSCOPE_MONITOR_ENGINE_H
#define LATSCOPE_MONITOR_ENGINE_H

#include "core/error.h"
#include "monitor/config.h"

struct mon_engine;

/*
 * Keep this thread (and so the server's) off the measured CPUs, set up the
 * figures, the trace ring (asked for, not needed: without it the engine goes
 * on, and says why) and the server.  -ENOMEM or the server's error, with err
 * filled; *ret is set either way, for mon_engine_free.
 */
int mon_engine_start(const struct mon_config *c, struct mon_engine **ret, struct lat_error *err);

/* The loop, until a stop signal or a phase that could not measure: the last
 * nonzero exit status of a phase, 0, or -errno when the engine itself failed. */
int mon_engine_run(struct mon_engine *e);

/* Everything started, ended, on every path; NULL is a no-op. */
void mon_engine_free(struct mon_engine *e);

#endif
