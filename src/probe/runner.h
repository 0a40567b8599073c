/*
 * The runner: prepares the system, starts one pinned thread per CPU, collects
 * windows while they run, stops on duration, loops or a stop signal, and
 * restores everything it changed on every path.
 */
#ifndef LATSCOPE_PROBE_RUNNER_H
#define LATSCOPE_PROBE_RUNNER_H

#include <signal.h>

#include "core/error.h"
#include "probe/probe.h"
#include "result/result.h"

struct runner_hooks {
	/* After preparation, before the first sample: res->notes says what was not applied. */
	void (*prepared)(void *ctx, const struct result *res);
	/* A window of one CPU has been added to res. */
	void (*window)(void *ctx, const struct result *res, const struct cpu_result *cr,
		       const struct result_window *w);
	/* Now and then while measuring (a few times a second at most), on the main
	 * thread between two drains: res may be finalized there (a checkpoint), as
	 * the runner reads only the CPUs' rows and appends to their windows.
	 * true ends the run as a stop signal would, for the reason the hook put
	 * in res->stop_reason. */
	bool (*tick)(void *ctx, struct result *res);
	void *ctx;
};

/*
 * The signals that end a run, never the process: SIGINT, SIGTERM, SIGHUP (a
 * dropped SSH session) and SIGQUIT; SIGHUP not when the caller ignores it (nohup).
 * Block them before anything is measured; the runner waits for them.
 */
void runner_stop_signals(sigset_t *ret);

/*
 * Run ops under rp on rp->cpus; res must have been result_init'ed with one
 * cpu_result per CPU of rp->cpus.  Returns 0 (also when stopped by a signal,
 * see res->interrupted) or -errno with err->msg filled.
 */
int runner_run(const struct probe_ops *ops, const struct run_params *rp, const void *pp,
	       struct result *res, const struct runner_hooks *hooks, struct lat_error *err);

#endif
