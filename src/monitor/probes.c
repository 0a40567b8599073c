#include "monitor/probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/checkpoint.h"
#include "measure/exitcode.h"
#include "core/array.h"
#include "report/tprint.h"

int monitor_default_cpus(struct cpuset *cpus, struct lat_error *err)
{
	int r = measure_check_cpus(cpus, false, err);

	if (r < 0)
		return r;
	int first = cpuset_next(cpus, 0);
	if (cpuset_count(cpus) > 1 && first >= 0) {
		struct cpuset one;
		cpuset_clear(&one);
		cpuset_add(&one, (unsigned)first);
		cpuset_diff(cpus, cpus, &one);
	}
	return 0;
}

/* What every phase has set as if typed: its CPUs, its length and the monitor's label
 * (the rows cpus, duration, label of the phase's command). */
static void mark_set(struct monitor_phase *ph, size_t cpus, size_t duration, size_t label)
{
	opt_mark_at(ph->mc->nopts, &ph->given, cpus);
	opt_mark_at(ph->mc->nopts, &ph->given, duration);
	opt_mark_at(ph->mc->nopts, &ph->given, label);
}

int monitor_timer_phase(struct monitor_phase *ph, struct timer_cmd *t, uint64_t rotate_ns,
			bool checkpoint_given, struct lat_error *err)
{
	ph->mc = &timer_command;
	ph->params = t;
	/* a period over 10 minutes is checkpointed every 10, as a run without -D would be */
	if (!checkpoint_given && rotate_ns > CHECKPOINT_DEFAULT_NS) {
		t->out.checkpoint_ns = CHECKPOINT_DEFAULT_NS;
		opt_mark_at(timer_command.nopts, &ph->given, TIMER_OPT_CHECKPOINT);
	}
	t->run.duration_ns = rotate_ns;
	t->run.period_signal = true;
	mark_set(ph, TIMER_OPT_CPUS, TIMER_OPT_DURATION, TIMER_OPT_LABEL);
	return measure_check(&timer_command, t, &ph->given, err);
}

int monitor_noise_phase(struct monitor_phase *ph, struct noise_cmd *nc, const struct cpuset *cpus,
			uint64_t for_ns, const struct measure_extras *out, struct lat_error *err)
{
	int r;

	noise_command.defaults(nc);
	nc->run.cpus = *cpus;
	nc->run.duration_ns = for_ns;
	nc->run.period_signal = true;
	nc->out.db_path = out->db_path;
	nc->out.db_trust = out->db_trust;
	nc->out.no_store = out->no_store;
	nc->out.labels = out->labels;
	nc->out.quiet = out->quiet;
	ph->mc = &noise_command;
	ph->params = nc;
	mark_set(ph, NOISE_OPT_CPUS, NOISE_OPT_DURATION, NOISE_OPT_LABEL);
	if ((r = measure_check(&noise_command, nc, &ph->given, err)) < 0) {
		/* the noise probe's --cpus is the monitor's --noise-cpus */
		char why[sizeof(err->msg)];
		const char *opt = strstr(err->msg, "option '--cpus'");
		if (opt)
			snprintf(why, sizeof(why), "option '--noise-cpus'%.400s",
				 opt + strlen("option '--cpus'"));
		else
			snprintf(why, sizeof(why), "the noise probe: %.400s", err->msg);
		return err_set(err, r, "%s", why);
	}
	return 0;
}

void monitor_measure_phase(void *ctx, enum mon_phase which, uint64_t duration_ns, bool started,
			   const struct mon_hooks *h, struct mon_measured *ret)
{
	struct monitor_phases *mp = ctx;
	const struct monitor_phase *ph = which == MON_PERIOD ? &mp->timer : &mp->noise;
	struct result res = { 0 };
	struct measure_outcome out = { .res = &res };
	const struct measure_hooks mh = { .ctx = h->ctx,
					  .tick = h->tick,
					  .window = h->window,
					  .prepared = h->prepared,
					  .finished = h->finished,
					  .started = started };
	struct measure_cmd front = *ph->mc;
	void *params = malloc(ph->mc->params_size);

	*ret = (struct mon_measured){ .code = EXIT_ERROR };
	if (!params) {
		tprintf(stderr, "latscope monitor: out of memory\n");
		return;
	}
	memcpy(params, ph->params, ph->mc->params_size);
	measure_run_params(ph->mc, params)->duration_ns = duration_ns;
	front.name = "monitor";
	ret->code = measure_with(&front, params, &ph->given, mp->argc, mp->argv, &mh, &out);
	free(params);
	if (!res.cpus)
		return; /* nothing measured; measure_with said why */
	ret->measured = true;
	/* a thread that could not measure: starting again would not help */
	ret->stopped =
		res.failed || (res.interrupted && strncmp(res.stop_reason, "signal ", 7) == 0 &&
			       strcmp(res.stop_reason, "signal SIGUSR1") != 0);
	ret->stored_id = out.stored_id;
	ret->end_ns = res.origin_ns + res.elapsed_ns;
	result_free(&res);
}
