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

#include <stdbool.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "monitor/keep.h"
#include "monitor/metrics.h"
#include "monitor/schedule.h"
#include "result/result.h"

/* What one phase came to. */
struct mon_measured {
	int code;                       /* the measuring command's exit status: 0 measured and kept */
	bool measured;                  /* false: nothing measured (the measure function said why) */
	bool stopped;                   /* a stop signal ended it, or a thread could not measure */
	int64_t stored_id;              /* the run it was stored as; 0: not stored */
	uint64_t end_ns;                /* CLOCK_MONOTONIC at the end of its windows */
};

/* What the measure function passes on to its runner (as runner_hooks); ctx the engine's. */
struct mon_hooks {
	void (*prepared)(void *ctx, const struct result *res);  /* NULL for a noise run */
	void (*window)(void *ctx, const struct result *res, const struct cpu_result *cr,
		       const struct result_window *w);
	void (*tick)(void *ctx, const struct result *res);
	void (*finished)(void *ctx, struct result *res);        /* NULL for a noise run */
	void *ctx;
};

/* Measure one phase for duration_ns (started: a phase was measured before). */
typedef void mon_measure_fn(void *ctx, enum mon_phase phase, uint64_t duration_ns, bool started,
			    const struct mon_hooks *hooks, struct mon_measured *ret);

/* One line the engine has to say; MON_INFO lines are for a user who did not ask for quiet. */
enum mon_say { MON_WARN, MON_INFO };
typedef void mon_say_fn(enum mon_say level, const char *line);

struct mon_config {
	const char *id;                 /* the monitor's start, UTC: the label's value (monitor=ID) */
	const char *store;              /* where the periods are stored; NULL: not stored */
	const char *listen;             /* serve /metrics here; "none": serve nothing */
	const struct cpuset *cpus;      /* the timer probe's */
	const struct cpuset *noise_cpus;
	const struct mon_identity *period_id;   /* the series of each probe */
	const struct mon_identity *noise_id;    /* NULL: no noise runs */
	uint64_t rotate_ns;
	uint64_t noise_every_ns, noise_for_ns;
	const struct keep_rule *keep;   /* NULL: keep every run */
	const char *keep_text;          /* as given, for what is said */
	const char *report;             /* --report FILE; NULL: none */
	uint64_t trace_spikes_ns;       /* 0: no explanations */
	bool context;                   /* read steal and interrupts of the CPUs for /metrics */
	mon_measure_fn *measure;
	void *measure_ctx;
	mon_say_fn *say;
};

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
