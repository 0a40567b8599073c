/*
 * The phases latscope monitor measures, the timer probe's periods and the
 * noise probe's runs, each set up, checked and measured as its own command
 * would (measure_with): the engine (monitor/engine.h) is handed
 * monitor_measure_phase and knows nothing of the measuring commands.
 */
#ifndef LATSCOPE_MONITOR_PROBES_H
#define LATSCOPE_MONITOR_PROBES_H

#include "measure/measure.h"
#include "measure/noise.h"
#include "measure/timer.h"
#include "monitor/engine.h"

/* The parameters of one kind of phase, and the options named as if typed to its command. */
struct monitor_phase {
	const struct measure_cmd *mc;
	void *params;
	struct opt_result given;
};

struct monitor_phases {
	struct monitor_phase timer, noise;
	int argc; /* the command line the runs record */
	char **argv;
};

/* The default CPUs of the periods: every usable online one but the first
 * (it keeps the system, the server and the engine's loop), or the one there
 * is.  -errno with err filled. */
int monitor_default_cpus(struct cpuset *cpus, struct lat_error *err);

/* The periods: the timer command's parameters t (with the options the user
 * gave marked in ph->given) for rotate_ns each, checked as `latscope timer`
 * would; -EINVAL with err filled. */
int monitor_timer_phase(struct monitor_phase *ph, struct timer_cmd *t, uint64_t rotate_ns,
			bool checkpoint_given, struct lat_error *err);

/* The noise run: its own defaults, on cpus for for_ns, with the store,
 * labels and quietness of out, checked as `latscope noise` would; -EINVAL
 * with err in the monitor's words. */
int monitor_noise_phase(struct monitor_phase *ph, struct noise_cmd *nc, const struct cpuset *cpus,
			uint64_t for_ns, const struct measure_extras *out, struct lat_error *err);

/* mon_measure_fn, ctx a struct monitor_phases. */
void monitor_measure_phase(void *ctx, enum mon_phase which, uint64_t duration_ns, bool started,
			   const struct mon_hooks *h, struct mon_measured *ret);

#endif
