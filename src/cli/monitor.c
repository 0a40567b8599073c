/*
 * latscope monitor: the timer probe without end, as a service.  It measures
 * in periods of --rotate, each one an ordinary `latscope timer` run (stored
 * with the label monitor=ID, so runs, compare, report and export read it),
 * and serves what it has measured since it started on /metrics.
 *
 * This file reads the options and says which were given; the monitor's set-up
 * (monitor/setup.h) checks them as the timer and noise commands would and
 * runs the engine (monitor/engine.h), whose loop does the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/array.h"
#include "core/units.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "measure/timer.h"
#include "monitor/label.h"
#include "monitor/setup.h"
#include "monitor/signals.h"
#include "report/tprint.h"
#include "serve/webcfg.h"

/* The timer's options a monitor takes, with their names, ranges and messages:
 * rows of its table, named by its enum (a renamed row breaks this build). */
static const enum timer_opt from_timer[] = {
	TIMER_OPT_CPUS, TIMER_OPT_INTERVAL, TIMER_OPT_PRIORITY, TIMER_OPT_POLICY, TIMER_OPT_MODE,
	TIMER_OPT_TIMER_SLACK, TIMER_OPT_THRESHOLD, TIMER_OPT_WINDOW, TIMER_OPT_LABEL, TIMER_OPT_DB,
	TIMER_OPT_DB_TRUST, TIMER_OPT_NO_STORE, TIMER_OPT_CHECKPOINT, TIMER_OPT_QUIET, TIMER_OPT_LIVE, TIMER_OPT_NO_PM_QOS,
	TIMER_OPT_NO_CONTEXT, TIMER_OPT_STRICT, TIMER_OPT_HOST, TIMER_OPT_HOST_SECRET,
};

/* The monitor's own rows, after the timer's in its table. */
enum monitor_opt {
	MONITOR_OPT_LISTEN,
	MONITOR_OPT_ROTATE,
	MONITOR_OPT_KEEP,
	MONITOR_OPT_NOISE_EVERY,
	MONITOR_OPT_NOISE_FOR,
	MONITOR_OPT_NOISE_CPUS,
	MONITOR_OPT_PER_CPU_HISTOGRAMS,
	MONITOR_OPT_TRACE_SPIKES,
	MONITOR_OPT_REPORT,
	MONITOR_OPT_WEB_CONFIG,
	MONITOR_OPT_HELP,
	MONITOR_NOPTS
};

static const struct opt own_opts[] = {
	[MONITOR_OPT_LISTEN] = { "listen", 0, OPT_STRING, offsetof(struct mon_options, listen),
				 .metavar = "ADDR:PORT", .flags = OPT_NOT_PARAM,
				 .help = "serve /metrics, / and /healthz on this numeric address "
					 "(port 0: a free one); none: serve nothing "
					 "(default " MONITOR_DEFAULT_LISTEN ")" },
	[MONITOR_OPT_ROTATE] = { "rotate", 0, OPT_DURATION, offsetof(struct mon_options, rotate_ns),
				 .min = NS_PER_SEC, .max = 30u * 24u * 3600u * NS_PER_SEC,
				 .unit = NS_PER_SEC, .flags = OPT_NOT_PARAM,
				 .help = "store the finished period as a run every DUR; a bare "
					 "number is seconds" },
	[MONITOR_OPT_KEEP] = { "keep", 0, OPT_STRING, offsetof(struct mon_options, keep),
			       .metavar = "DUR|N", .flags = OPT_NOT_PARAM,
			       .help = "after each period, remove monitor runs that started more "
				       "than DUR ago, or all but the newest N of "
				       "each probe (never other runs; default: keep all)" },
	[MONITOR_OPT_NOISE_EVERY] = { "noise-every", 0, OPT_DURATION,
				      offsetof(struct mon_options, noise_every_ns),
				      .min = 10u * NS_PER_SEC,
				      .max = 30u * 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC,
				      .flags = OPT_NOT_PARAM,
				      .help = "run the noise probe every DUR, between two periods "
					      "(with --noise-for)" },
	[MONITOR_OPT_NOISE_FOR] = { "noise-for", 0, OPT_DURATION,
				    offsetof(struct mon_options, noise_for_ns), .min = NS_PER_SEC,
				    .max = 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC,
				    .flags = OPT_NOT_PARAM,
				    .help = "how long each noise run lasts (with --noise-every)" },
	[MONITOR_OPT_NOISE_CPUS] = { "noise-cpus", 0, OPT_CPUS,
				     offsetof(struct mon_options, noise_cpus), .metavar = "CPUS",
				     .flags = OPT_NOT_PARAM,
				     .help = "CPUs of the noise probe (default: the timer "
					     "probe's)" },
	[MONITOR_OPT_PER_CPU_HISTOGRAMS] = { "per-cpu-histograms", 0, OPT_FLAG,
					     offsetof(struct mon_options, per_cpu_hist),
					     .flags = OPT_NOT_PARAM,
					     .help = "export one latency histogram per CPU instead "
						     "of one per host (28 series a CPU)" },
	[MONITOR_OPT_TRACE_SPIKES] = { "trace-spikes", 0, OPT_DURATION,
				       offsetof(struct mon_options, trace_spikes_ns), .min = 1,
				       .max = 3600u * NS_PER_SEC, .unit = NS_PER_US,
				       .flags = OPT_NOT_PARAM,
				       .help = "keep the last seconds of kernel trace events in a "
					       "ring and explain each window's largest sample "
					       "above DUR, counted on /metrics by cause and noted "
					       "in the period's run (root); a bare number is "
					       "microseconds" },
	[MONITOR_OPT_REPORT] = { "report", 0, OPT_STRING, offsetof(struct mon_options, report),
				 .metavar = "FILE", .flags = OPT_NOT_PARAM,
				 .values = OPT_VALUES_FILE,
				 .help = "after each period, write `latscope report --monitor ID` "
					 "of this monitor to FILE and serve it on "
					 "/report" },
	[MONITOR_OPT_WEB_CONFIG] = { "web-config", 0, OPT_STRING,
				     offsetof(struct mon_options, web_config), .metavar = "FILE",
				     .flags = OPT_NOT_PARAM, .values = OPT_VALUES_FILE,
				     .help = "serve over TLS and ask for a password as this "
					     "Prometheus web configuration says (node_exporter's "
					     "--web.config.file format); read once, at the start" },
	[MONITOR_OPT_HELP] = { "help", 'h', OPT_HELP, offsetof(struct mon_options, help),
			       .flags = OPT_NOT_PARAM, .help = "show this help" },
};

_Static_assert(ARRAY_SIZE(own_opts) == MONITOR_NOPTS,
	       "enum monitor_opt names every row of own_opts");
_Static_assert(ARRAY_SIZE(from_timer) + MONITOR_NOPTS <= OPT_MAX,
	       "the monitor's rows fit one table");

/* Where an own row sits in the table. */
#define OWN_ROW(r) (ARRAY_SIZE(from_timer) + (size_t)(r))

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
		table[ntable].offset += offsetof(struct mon_options, t);
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
	static struct cmd_spec spec = { .name = "monitor",
					.synopsis = synopsis,
					.opts = table,
					.help_offset = offsetof(struct mon_options, help),
					.pos_name = "argument" };

	build_table();
	spec.nopts = ntable;
	return &spec;
}

static void print_help(void)
{
	struct mon_options d;

	mon_options_defaults(&d);
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

/* The options given whose absence means something (the timer's, read from tgiven). */
static void given_of(const struct opt_result *given, const struct opt_result *tgiven,
		     struct mon_given *g)
{
	g->cpus = opt_given_at(timer_command.nopts, tgiven, TIMER_OPT_CPUS);
	g->checkpoint = opt_given_at(timer_command.nopts, tgiven, TIMER_OPT_CHECKPOINT);
	g->noise_every = opt_given_at(ntable, given, OWN_ROW(MONITOR_OPT_NOISE_EVERY));
	g->noise_for = opt_given_at(ntable, given, OWN_ROW(MONITOR_OPT_NOISE_FOR));
	g->noise_cpus = opt_given_at(ntable, given, OWN_ROW(MONITOR_OPT_NOISE_CPUS));
}

/* The engine's lines, as the monitor's; the informative ones not with -q. */
static bool quiet;

static void say(enum mon_say level, const char *line)
{
	if (level == MON_WARN || !quiet)
		tprintf(stderr, "latscope monitor: %s\n", line);
}

int cmd_monitor(int argc, char **argv)
{
	struct mon_options *m = calloc(1, sizeof(*m));
	struct mon_setup *s = calloc(1, sizeof(*s));
	struct opt_result given;
	struct mon_given g;
	struct lat_error err = { { 0 } };
	struct web_config *web = NULL;
	char id[32];
	int code = EXIT_ERROR;

	/* Stop signals and SIGUSR1 wait for the engine, from the start: a
	 * SIGUSR1 while the options are read must not kill the monitor. */
	mon_signals_block();
	build_table();
	if (!m || !s) {
		tprintf(stderr, "latscope monitor: out of memory\n");
		goto out;
	}
	mon_options_defaults(m);
	if (opt_parse(table, ntable, argc, argv, m, &given, &err) < 0) {
		code = storecmd_usage("monitor", err.msg);
		goto out;
	}
	if (m->help) {
		print_help();
		code = EXIT_OK;
		goto out;
	}
	s->mp.argc = argc;
	s->mp.argv = argv;
	mark_given(&given, &s->mp.timer.given);
	given_of(&given, &s->mp.timer.given, &g);
	monitor_id_now(id, sizeof(id));
	if (given.npos)
		err_set(&err, -EINVAL, "unexpected argument '%s'", given.pos[0]);
	if (given.npos || mon_setup_check(m, &g, id, s, &err) < 0)
		/* an empty reason: the check that failed has said it (outputs_check) */
		code = err.msg[0] ? storecmd_usage("monitor", err.msg) : EXIT_USAGE;
	else if (m->web_config && web_config_load(m->web_config, &web, &err) < 0) {
		/* one line, as node_exporter refuses it: the file is wrong, not the usage */
		tprintf(stderr, "latscope monitor: option '--web-config': %s\n", err.msg);
		code = EXIT_USAGE;
	} else {
		quiet = m->t.out.quiet;
		if ((code = mon_setup_run(m, s, id, web, say, &err)) < 0) {
			tprintf(stderr, "latscope monitor: %s\n", err.msg);
			code = EXIT_ERROR;
		}
	}
out:
	web_config_free(web);
	free(s);
	free(m);
	return code;
}
