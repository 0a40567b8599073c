/*
 * What a daemon gives the monitor's engine (monitor/engine.h): its settings,
 * the function that measures one phase and the one that says a line.  A leaf,
 * so the engine's private state (monitor/state.h) needs no more of it.
 */
#ifndef LATSCOPE_MONITOR_CONFIG_H
#define LATSCOPE_MONITOR_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "monitor/keep.h"
#include "monitor/metrics.h"
#include "monitor/schedule.h"
#include "result/result.h"
#include "serve/webcfg.h"

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
	bool store_trust;               /* --db-trust: write it whoever owns it (store/trust.h) */
	const char *listen;             /* serve /metrics here; "none": serve nothing */
	const struct web_config *web;   /* --web-config: TLS and basic auth; NULL: none */
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
	const char *host;               /* --host: the VM's host agent; NULL: not asked */
	const uint8_t *host_secret;     /* NULL: none */
	size_t host_secret_len;
	bool context;                   /* read steal, interrupts and SMIs of the CPUs for /metrics */
	const char *sysroot;            /* where the SMI counter is looked up (sys/smi.h); NULL: "/" */
	mon_measure_fn *measure;
	void *measure_ctx;
	mon_say_fn *say;
};

#endif
