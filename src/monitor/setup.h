/*
 * latscope monitor's set-up: its options, checked as the timer and noise
 * commands would check them, turned into the phases it measures
 * (monitor/probes.h) and the engine's configuration, and the engine run.
 * cli/monitor.c only reads the options into struct mon_options and says
 * which were given.
 */
#ifndef LATSCOPE_MONITOR_SETUP_H
#define LATSCOPE_MONITOR_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "measure/hostask.h"
#include "measure/noise.h"
#include "measure/timer.h"
#include "monitor/config.h"
#include "monitor/keep.h"
#include "monitor/probes.h"
#include "serve/webcfg.h"

#define MONITOR_DEFAULT_LISTEN	  "127.0.0.1:9464"
#define MONITOR_DEFAULT_ROTATE_NS (UINT64_C(3600) * NS_PER_SEC)

/* The options, as the monitor's option table fills them. */
struct mon_options {
	struct timer_cmd t; /* what each period measures */
	const char *listen;
	uint64_t rotate_ns;
	const char *keep;
	uint64_t noise_every_ns, noise_for_ns;
	struct cpuset noise_cpus;
	bool per_cpu_hist;
	uint64_t trace_spikes_ns;
	const char *report;	/* --report FILE; NULL: none */
	const char *web_config; /* --web-config FILE; NULL: none */
	struct hostask host;	/* --host's secret, read */
	bool help;
};

/* Those of them whose absence means something of its own. */
struct mon_given {
	bool cpus, checkpoint, noise_every, noise_for, noise_cpus;
};

/* What the checked options came to; mp.timer.given holds, before the check,
 * the timer's options the user gave, as rows of the timer's table. */
struct mon_setup {
	struct monitor_phases mp;
	struct noise_cmd nc;
	struct keep_rule keep;
};

void mon_options_defaults(struct mon_options *m);

/* Every check of the options, before anything starts, and the phases set up
 * (id: the monitor's, labelled on every run): 0, or -EINVAL with err filled;
 * an empty err->msg when the check that failed has printed why. */
int mon_setup_check(struct mon_options *m, const struct mon_given *g, const char *id,
		    struct mon_setup *s, struct lat_error *err);

/* The engine, configured from the checked options, run until it stops: its
 * exit status, or -errno with err filled when it could not start. */
int mon_setup_run(const struct mon_options *m, struct mon_setup *s, const char *id,
		  const struct web_config *web, mon_say_fn *say, struct lat_error *err);

#endif
