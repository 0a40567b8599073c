/*
 * latscope monitor's options checked, its phases set up, and the engine
 * configured from them and run (monitor/setup.h).
 */
#include "monitor/setup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* the build's config.h (LATSCOPE_VERSION): here the bare name is monitor/config.h */
#include "../config.h"
#include "core/quote.h"
#include "measure/exitcode.h"
#include "measure/outputs.h"
#include "measure/storepath.h"
#include "monitor/engine.h"
#include "monitor/label.h"
#include "serve/addr.h"
#include "sys/atomicfile.h"
#include "sys/smi.h"

void mon_options_defaults(struct mon_options *m)
{
	memset(m, 0, sizeof(*m));
	timer_command.defaults(&m->t);
	m->listen = MONITOR_DEFAULT_LISTEN;
	m->rotate_ns = MONITOR_DEFAULT_ROTATE_NS;
}

/* --report's file: not the store, and writable where it is (tried, not assumed). */
static int check_report(const struct mon_options *m, struct lat_error *err)
{
	const struct output out = { "'--report'", m->report };
	struct atomic_file f = { .fd = -1 };
	int r;

	if (outputs_check("monitor", &out, 1, m->t.out.db_path, true) != 0)
		return err_set(err, -EINVAL, "%s", ""); /* outputs_check said why */
	if ((r = atomic_file_open(m->report, &f)) < 0) {
		char q[QUOTE_MAX];
		return err_set(err, -EINVAL, "option '--report': cannot write %s: %s",
			       quote_short(m->report, q), strerror(-r));
	}
	atomic_file_close(&f); /* not committed: nothing is written */
	return 0;
}

/* The options each on its own, and those that need a store or one another. */
static int check_options(struct mon_options *m, const struct mon_given *g, struct mon_setup *s,
			 struct lat_error *err)
{
	struct listen_addr la;
	int r;

	if (monitor_check_labels(&m->t.out.labels, err) < 0 ||
	    listen_addr_parse(m->listen, &la, err) < 0 ||
	    (m->keep && keep_parse(m->keep, &s->keep, err) < 0))
		return -EINVAL;
	if (m->keep && m->t.out.no_store)
		return err_set(err, -EINVAL, "option '--keep' needs a store");
	if (m->report && m->t.out.no_store)
		return err_set(err, -EINVAL, "option '--report' needs a store");
	if (m->report && (r = check_report(m, err)) < 0)
		return r;
	if (m->t.out.host && !m->trace_spikes_ns)
		return err_set(err, -EINVAL,
			       "option '--host' needs '--trace-spikes': the host is asked about "
			       "explained spikes");
	if ((r = hostask_check(&m->host, m->t.out.host, m->t.out.host_secret, err)) < 0)
		return r;
	if (g->noise_every != g->noise_for)
		return err_set(err, -EINVAL,
			       "options '--noise-every' and '--noise-for' go together");
	if (g->noise_cpus && !g->noise_every)
		return err_set(err, -EINVAL,
			       "option '--noise-cpus' needs '--noise-every' and '--noise-for'");
	if (m->rotate_ns < m->t.run.window_ns)
		return err_set(
			err, -EINVAL,
			"option '--rotate': a period is shorter than the window ('--window')");
	if (g->noise_every && m->noise_for_ns >= m->noise_every_ns)
		return err_set(err, -EINVAL,
			       "option '--noise-for': it must be shorter than '--noise-every'");
	return 0;
}

int mon_setup_check(struct mon_options *m, const struct mon_given *g, const char *id,
		    struct mon_setup *s, struct lat_error *err)
{
	int r;

	if ((r = check_options(m, g, s, err)) < 0)
		return r;
	if (!g->cpus && (r = monitor_default_cpus(&m->t.run.cpus, err)) < 0)
		return r;
	if (monitor_add_label(&m->t.out.labels, id) < 0)
		return err_set(err, -EINVAL, "option '--label': at most %d labels with monitor=ID",
			       LABELS_MAX - 1);
	if ((r = monitor_timer_phase(&s->mp.timer, &m->t, m->rotate_ns, g->checkpoint, err)) < 0)
		return r;
	if (!g->noise_every)
		return 0;
	return monitor_noise_phase(&s->mp.noise, &s->nc,
				   g->noise_cpus ? &m->noise_cpus : &m->t.run.cpus, m->noise_for_ns,
				   &m->t.out, err);
}

int mon_setup_run(const struct mon_options *m, struct mon_setup *s, const char *id,
		  const struct web_config *web, mon_say_fn *say, struct lat_error *err)
{
	char host[256], store[4096];
	bool chosen;
	const struct noise_cmd *nc = s->mp.noise.params;
	struct mon_engine *e;

	if (m->t.out.no_store ||
	    store_path_resolve(m->t.out.db_path, store, sizeof(store), &chosen) < 0)
		store[0] = '\0';
	if (gethostname(host, sizeof(host) - 1u) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1u] = '\0';
	/* the series name the user's labels, not the monitor's own one */
	struct labels user = m->t.out.labels;
	user.n--;
	const struct mon_identity tid = { .host = host,
					  .probe = timer_command.ops->name,
					  .version = LATSCOPE_VERSION,
					  .labels = &user,
					  .threshold_ns = m->t.run.threshold_ns,
					  .per_cpu_hist = m->per_cpu_hist };
	struct mon_identity nid = tid;
	nid.probe = noise_command.ops->name;
	nid.threshold_ns = nc ? nc->run.threshold_ns : 0;
	const struct mon_config c = {
		.id = id,
		.store = store[0] ? store : NULL,
		.store_trust = m->t.out.db_trust,
		.listen = m->listen,
		.web = web,
		.cpus = &m->t.run.cpus,
		.noise_cpus = nc ? &nc->run.cpus : NULL,
		.period_id = &tid,
		.noise_id = nc ? &nid : NULL,
		.rotate_ns = m->rotate_ns,
		.noise_every_ns = m->noise_every_ns,
		.noise_for_ns = m->noise_for_ns,
		.keep = m->keep ? &s->keep : NULL,
		.keep_text = m->keep,
		.report = m->report,
		.trace_spikes_ns = m->trace_spikes_ns,
		.host = m->t.out.host,
		.host_secret = m->host.has_secret ? m->host.secret : NULL,
		.host_secret_len = m->host.secret_len,
		.context = !m->t.run.no_context,
		.sysroot = smi_sysroot_env(),
		.measure = monitor_measure_phase,
		.measure_ctx = &s->mp,
		.say = say,
	};
	int r = mon_engine_start(&c, &e, err);
	if (r >= 0)
		r = (r = mon_engine_run(e)) < 0 ? EXIT_ERROR : r;
	mon_engine_free(e);
	return r;
}
