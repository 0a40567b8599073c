/*
 * latscope monitor: the timer probe without end, as a service.  It measures
 * in periods of --rotate, each one an ordinary `latscope timer` run (stored
 * with the label monitor=ID, so runs, compare, report and export read it),
 * and serves what it has measured since it started on /metrics.
 *
 * This file reads the options, checks them as the timer and noise commands
 * would, and hands the engine (monitor/engine.h) its configuration and the
 * way to measure one phase (measure_with); the engine's loop does the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/hostask.h"
#include "cli/monphase.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "measure/storepath.h"
#include "measure/timer.h"
#include "config.h"
#include "core/array.h"
#include "core/quote.h"
#include "core/units.h"
#include "monitor/engine.h"
#include "monitor/label.h"
#include "monitor/signals.h"
#include "report/tprint.h"
#include "serve/addr.h"
#include "serve/webcfg.h"
#include "sys/atomicfile.h"

#define MONITOR_DEFAULT_LISTEN "127.0.0.1:9464"
#define MONITOR_DEFAULT_ROTATE_NS (UINT64_C(3600) * NS_PER_SEC)

struct monitor_cmd {
	struct timer_cmd t;             /* what each period measures */
	const char *listen;
	uint64_t rotate_ns;
	const char *keep;
	uint64_t noise_every_ns, noise_for_ns;
	struct cpuset noise_cpus;
	bool per_cpu_hist;
	uint64_t trace_spikes_ns;
	const char *report;             /* --report FILE; NULL: none */
	const char *web_config;         /* --web-config FILE; NULL: none */
	struct hostask host;            /* --host's secret, read */
	bool help;
};

/* The timer's options a monitor takes, with their names, ranges and messages:
 * rows of its table, named by its enum (a renamed row breaks this build). */
static const enum timer_opt from_timer[] = {
	TIMER_OPT_CPUS, TIMER_OPT_INTERVAL, TIMER_OPT_PRIORITY, TIMER_OPT_POLICY, TIMER_OPT_MODE,
	TIMER_OPT_TIMER_SLACK, TIMER_OPT_THRESHOLD, TIMER_OPT_WINDOW, TIMER_OPT_LABEL, TIMER_OPT_DB,
	TIMER_OPT_DB_TRUST, TIMER_OPT_NO_STORE, TIMER_OPT_CHECKPOINT, TIMER_OPT_QUIET, TIMER_OPT_LIVE, TIMER_OPT_NO_PM_QOS,
	TIMER_OPT_NO_CONTEXT, TIMER_OPT_STRICT, TIMER_OPT_HOST, TIMER_OPT_HOST_SECRET,
};

static const struct opt own_opts[] = {
	{ "listen", 0, OPT_STRING, offsetof(struct monitor_cmd, listen), .metavar = "ADDR:PORT", .flags = OPT_NOT_PARAM,
	  .help = "serve /metrics, / and /healthz on this numeric address (port 0: a free one); none: serve nothing "
		  "(default " MONITOR_DEFAULT_LISTEN ")" },
	{ "rotate", 0, OPT_DURATION, offsetof(struct monitor_cmd, rotate_ns), .min = NS_PER_SEC,
	  .max = 30u * 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC, .flags = OPT_NOT_PARAM,
	  .help = "store the finished period as a run every DUR; a bare number is seconds" },
	{ "keep", 0, OPT_STRING, offsetof(struct monitor_cmd, keep), .metavar = "DUR|N", .flags = OPT_NOT_PARAM,
	  .help = "after each period, remove monitor runs that started more than DUR ago, or all but the newest N of "
		  "each probe (never other runs; default: keep all)" },
	{ "noise-every", 0, OPT_DURATION, offsetof(struct monitor_cmd, noise_every_ns), .min = 10u * NS_PER_SEC,
	  .max = 30u * 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC, .flags = OPT_NOT_PARAM,
	  .help = "run the noise probe every DUR, between two periods (with --noise-for)" },
	{ "noise-for", 0, OPT_DURATION, offsetof(struct monitor_cmd, noise_for_ns), .min = NS_PER_SEC,
	  .max = 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC, .flags = OPT_NOT_PARAM,
	  .help = "how long each noise run lasts (with --noise-every)" },
	{ "noise-cpus", 0, OPT_CPUS, offsetof(struct monitor_cmd, noise_cpus), .metavar = "CPUS", .flags = OPT_NOT_PARAM,
	  .help = "CPUs of the noise probe (default: the timer probe's)" },
	{ "per-cpu-histograms", 0, OPT_FLAG, offsetof(struct monitor_cmd, per_cpu_hist), .flags = OPT_NOT_PARAM,
	  .help = "export one latency histogram per CPU instead of one per host (28 series a CPU)" },
	{ "trace-spikes", 0, OPT_DURATION, offsetof(struct monitor_cmd, trace_spikes_ns), .min = 1,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_US, .flags = OPT_NOT_PARAM,
	  .help = "keep the last seconds of kernel trace events in a ring and explain each window's largest sample "
		  "above DUR, counted on /metrics by cause and noted in the period's run (root); a bare number is "
		  "microseconds" },
	{ "report", 0, OPT_STRING, offsetof(struct monitor_cmd, report), .metavar = "FILE", .flags = OPT_NOT_PARAM,
	  .values = OPT_VALUES_FILE,
	  .help = "after each period, write `latscope report --monitor ID` of this monitor to FILE and serve it on "
		  "/report" },
	{ "web-config", 0, OPT_STRING, offsetof(struct monitor_cmd, web_config), .metavar = "FILE",
	  .flags = OPT_NOT_PARAM, .values = OPT_VALUES_FILE,
	  .help = "serve over TLS and ask for a password as this Prometheus web configuration says (node_exporter's "
		  "--web.config.file format); read once, at the start" },
	{ "help", 'h', OPT_HELP, offsetof(struct monitor_cmd, help), .flags = OPT_NOT_PARAM, .help = "show this help" },
};

static struct opt table[OPT_MAX];
static size_t ntable;

/* The timer's rows, moved to where struct timer_cmd sits in ours, then our own. */
static void build_table(void)
{
	const struct measure_cmd *tc = &timer_command;

	if (ntable)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(from_timer); i++) {
		table[ntable] = tc->opts[from_timer[i]];
		table[ntable].offset += offsetof(struct monitor_cmd, t);
		if (from_timer[i] == TIMER_OPT_CPUS)
			table[ntable].help = "CPUs to measure, one thread each (default: every online CPU but the first, or "
					     "the one)";
		if (from_timer[i] == TIMER_OPT_CHECKPOINT)
			table[ntable].help = "write the period so far to the store every DUR, marked partial; 0 or none: "
					     "never; default 10m for periods over 10m";
		ntable++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(own_opts); i++)
		table[ntable++] = own_opts[i];
}

static void defaults(struct monitor_cmd *m)
{
	memset(m, 0, sizeof(*m));
	timer_command.defaults(&m->t);
	m->listen = MONITOR_DEFAULT_LISTEN;
	m->rotate_ns = MONITOR_DEFAULT_ROTATE_NS;
}

static const char synopsis[] =
	"[-a CPUS] [-i INTERVAL] [-p PRIO] [--policy fifo|rr|other|deadline] [--mode MODE] [--timer-slack DUR]\n"
	"                        [--listen ADDR:PORT|none] [--rotate DUR] [--keep DUR|N]\n"
	"                        [--noise-every DUR --noise-for DUR [--noise-cpus CPUS]]\n"
	"                        [--threshold DUR] [--window DUR] [--label K=V]... [--db PATH | --no-store]\n"
	"                        [--checkpoint DUR] [--trace-spikes DUR [--host SPEC [--host-secret FILE]]]\n"
	"                        [--per-cpu-histograms] [--report FILE] [--web-config FILE] [-q]";

/* The table as a spec, for what reads every command's options (latscope completion). */
const struct cmd_spec *cmd_monitor_spec(void)
{
	static struct cmd_spec spec = { .name = "monitor", .synopsis = synopsis, .opts = table,
					.help_offset = offsetof(struct monitor_cmd, help), .pos_name = "argument" };

	build_table();
	spec.nopts = ntable;
	return &spec;
}

static void print_help(void)
{
	struct monitor_cmd d;

	defaults(&d);
	printf("Usage: latscope monitor %s\n\n"
	       "Measure timer latency continuously, as `latscope timer` does, and serve what was measured since the\n"
	       "start on /metrics for Prometheus (text 0.0.4, or OpenMetrics when asked).  Every --rotate the\n"
	       "finished period is stored as a run with the label monitor=ID (ID: the monitor's start, UTC).\n"
	       "SIGUSR1 stores the current period now and starts the next (during a noise run: ends it); SIGINT,\n"
	       "SIGTERM, SIGHUP and SIGQUIT store it and stop.\n\nOptions:\n", synopsis);
	opt_print_help(stdout, table, ntable, &d);
	printf("\nExit status: 0 stopped by a signal, 1 error (also: a period that could not be stored, which is\n"
	       "kept in a file), 2 bad usage.  See latscope-monitor(1).\n");
}

/* The timer options the user gave are given to the timer command too. */
static void mark_given(const struct opt_result *given, struct opt_result *tgiven)
{
	for (size_t i = 0; i < ARRAY_SIZE(from_timer); i++)      /* ours are the first rows of table, in order */
		if (opt_given_at(ntable, given, i))
			opt_mark_at(timer_command.nopts, tgiven, from_timer[i]);
}

/* --report's file: not the store, and writable where it is (tried, not assumed). */
static int check_report(const struct monitor_cmd *m, struct lat_error *err)
{
	const struct output out = { "'--report'", m->report };
	struct atomic_file f = { .fd = -1 };
	int r;

	if (outputs_check("monitor", &out, 1, m->t.out.db_path, true) != 0)
		return err_set(err, -EINVAL, "%s", "");     /* outputs_check said why */
	if ((r = atomic_file_open(m->report, &f)) < 0)
	{
		char q[QUOTE_MAX];
		return err_set(err, -EINVAL, "option '--report': cannot write %s: %s", quote_short(m->report, q),
			       strerror(-r));
	}
	atomic_file_close(&f);          /* not committed: nothing is written */
	return 0;
}

/* Every check of the options, before anything starts: 0 or -EINVAL with err filled. */
static int check(struct monitor_cmd *m, const struct opt_result *given, struct monitor_phases *mp, struct noise_cmd *nc,
		 struct keep_rule *keep, const char *id, struct lat_error *err)
{
	struct listen_addr la;
	int r;

	if (given->npos)
		return err_set(err, -EINVAL, "unexpected argument '%s'", given->pos[0]);
	if (monitor_check_labels(&m->t.out.labels, err) < 0 || listen_addr_parse(m->listen, &la, err) < 0 ||
	    (m->keep && keep_parse(m->keep, keep, err) < 0))
		return -EINVAL;
	if (m->keep && m->t.out.no_store)
		return err_set(err, -EINVAL, "option '--keep' needs a store");
	if (m->report && m->t.out.no_store)
		return err_set(err, -EINVAL, "option '--report' needs a store");
	if (m->report && (r = check_report(m, err)) < 0)
		return r;
	if (m->t.out.host && !m->trace_spikes_ns)
		return err_set(err, -EINVAL, "option '--host' needs '--trace-spikes': the host is asked about explained spikes");
	if ((r = hostask_check(&m->host, m->t.out.host, m->t.out.host_secret, err)) < 0)
		return r;
	bool every = opt_given(table, ntable, given, "noise-every"), dur = opt_given(table, ntable, given, "noise-for");
	if (every != dur)
		return err_set(err, -EINVAL, "options '--noise-every' and '--noise-for' go together");
	if (opt_given(table, ntable, given, "noise-cpus") && !every)
		return err_set(err, -EINVAL, "option '--noise-cpus' needs '--noise-every' and '--noise-for'");
	if (m->rotate_ns < m->t.run.window_ns)
		return err_set(err, -EINVAL, "option '--rotate': a period is shorter than the window ('--window')");
	if (every && m->noise_for_ns >= m->noise_every_ns)
		return err_set(err, -EINVAL, "option '--noise-for': it must be shorter than '--noise-every'");
	if (!opt_given(table, ntable, given, "cpus") && (r = monitor_default_cpus(&m->t.run.cpus, err)) < 0)
		return r;
	if (monitor_add_label(&m->t.out.labels, id) < 0)
		return err_set(err, -EINVAL, "option '--label': at most %d labels with monitor=ID", LABELS_MAX - 1);
	mark_given(given, &mp->timer.given);
	if ((r = monitor_timer_phase(&mp->timer, &m->t, m->rotate_ns, opt_given(table, ntable, given, "checkpoint"),
				     err)) < 0)
		return r;
	if (!every)
		return 0;
	return monitor_noise_phase(&mp->noise, nc, opt_given(table, ntable, given, "noise-cpus") ? &m->noise_cpus
							: &m->t.run.cpus, m->noise_for_ns, &m->t.out, err);
}

/* The engine's lines, as the monitor's; the informative ones not with -q. */
static bool quiet;

static void say(enum mon_say level, const char *line)
{
	if (level == MON_WARN || !quiet)
		tprintf(stderr, "latscope monitor: %s\n", line);
}

/* The engine's configuration from the checked options, and its run. */
static int monitor(struct monitor_cmd *m, struct monitor_phases *mp, const struct keep_rule *keep, const char *id,
		   const struct web_config *web)
{
	char host[256], store[4096];
	bool chosen;
	const struct noise_cmd *nc = mp->noise.params;
	struct lat_error err = { { 0 } };
	struct mon_engine *e;

	if (m->t.out.no_store || store_path_resolve(m->t.out.db_path, store, sizeof(store), &chosen) < 0)
		store[0] = '\0';
	if (gethostname(host, sizeof(host) - 1u) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1u] = '\0';
	/* the series name the user's labels, not the monitor's own one */
	struct labels user = m->t.out.labels;
	user.n--;
	const struct mon_identity tid = { .host = host, .probe = timer_command.ops->name, .version = LATSCOPE_VERSION,
					  .labels = &user, .threshold_ns = m->t.run.threshold_ns,
					  .per_cpu_hist = m->per_cpu_hist };
	struct mon_identity nid = tid;
	nid.probe = noise_command.ops->name;
	nid.threshold_ns = nc ? nc->run.threshold_ns : 0;
	const struct mon_config c = {
		.id = id, .store = store[0] ? store : NULL, .store_trust = m->t.out.db_trust, .listen = m->listen, .web = web,
		.cpus = &m->t.run.cpus,
		.noise_cpus = nc ? &nc->run.cpus : NULL, .period_id = &tid, .noise_id = nc ? &nid : NULL,
		.rotate_ns = m->rotate_ns, .noise_every_ns = m->noise_every_ns, .noise_for_ns = m->noise_for_ns,
		.keep = m->keep ? keep : NULL, .keep_text = m->keep, .report = m->report,
		.trace_spikes_ns = m->trace_spikes_ns, .host = m->t.out.host,
		.host_secret = m->host.has_secret ? m->host.secret : NULL, .host_secret_len = m->host.secret_len,
		.context = !m->t.run.no_context,
		.sysroot = getenv("LATSCOPE_SYSROOT"),
		.measure = monitor_measure_phase, .measure_ctx = mp, .say = say,
	};
	quiet = m->t.out.quiet;
	int code = mon_engine_start(&c, &e, &err);
	if (code < 0)
		tprintf(stderr, "latscope monitor: %s\n", err.msg);
	else
		code = mon_engine_run(e);
	mon_engine_free(e);
	return code < 0 ? EXIT_ERROR : code;
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor_cmd *m = calloc(1, sizeof(*m));
	struct noise_cmd *nc = calloc(1, sizeof(*nc));
	struct monitor_phases mp = { .argc = argc, .argv = argv };
	struct opt_result given;
	struct lat_error err = { { 0 } };
	struct keep_rule keep = { 0 };
	struct web_config *web = NULL;
	char id[32];
	int code = EXIT_ERROR;

	/* Stop signals and SIGUSR1 wait for the engine, from the start: a
	 * SIGUSR1 while the options are read must not kill the monitor. */
	mon_signals_block();
	build_table();
	if (!m || !nc) {
		tprintf(stderr, "latscope monitor: out of memory\n");
		goto out;
	}
	defaults(m);
	if (opt_parse(table, ntable, argc, argv, m, &given, &err) < 0) {
		code = storecmd_usage("monitor", err.msg);
		goto out;
	}
	if (m->help) {
		print_help();
		code = EXIT_OK;
		goto out;
	}
	monitor_id_now(id, sizeof(id));
	if (check(m, &given, &mp, nc, &keep, id, &err) < 0)
		/* an empty reason: the check that failed has said it (outputs_check) */
		code = err.msg[0] ? storecmd_usage("monitor", err.msg) : EXIT_USAGE;
	else if (m->web_config && web_config_load(m->web_config, &web, &err) < 0) {
		/* one line, as node_exporter refuses it: the file is wrong, not the usage */
		tprintf(stderr, "latscope monitor: option '--web-config': %s\n", err.msg);
		code = EXIT_USAGE;
	} else {
		code = monitor(m, &mp, &keep, id, web);
	}
out:
	web_config_free(web);
	free(nc);
	free(m);
	return code;
}
