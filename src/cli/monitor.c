/*
 * latscope monitor: the timer probe without end, as a service.  It measures
 * in periods of --rotate, each one an ordinary `latscope timer` run (stored
 * with the label monitor=ID, so runs, compare, report and export read it),
 * and serves what it has measured since it started on /metrics.
 *
 * One period ends and the next begins on the main thread: the runner stops
 * its threads, the period is stored, the runner starts again.  The gap
 * between two periods (the store's write and the threads' start) is not
 * measured; the monitor says at the end how long the longest was.  The
 * noise probe, which takes whole CPUs, runs between two periods on its
 * schedule, so never beside the timer probe on its CPUs.
 *
 * Threads: the measuring threads (the runner's), the server's
 * (serve/http.h), a checkpoint's writer.  The main thread folds every window
 * into the /metrics figures (monitor/metrics.h) and publishes them whole; the
 * server's threads copy the last texts and see nothing else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/checkpoint.h"
#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/noise.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "measure/storepath.h"
#include "measure/timer.h"
#include "config.h"
#include "core/array.h"
#include "core/units.h"
#include "monitor/keep.h"
#include "monitor/metrics.h"
#include "monitor/page.h"
#include "probe/runner.h"
#include "report/omtext.h"
#include "report/tprint.h"
#include "serve/addr.h"
#include "serve/http.h"
#include "store/store.h"
#include "sys/atomicfile.h"
#include "sys/cpus.h"
#include "sys/procstat.h"
#include "trace/spikering.h"

#define MONITOR_DEFAULT_LISTEN "127.0.0.1:9464"
#define MONITOR_DEFAULT_ROTATE_NS (UINT64_C(3600) * NS_PER_SEC)
/* Without a new window, /metrics is made again this often (the 5-minute max moves on). */
#define MONITOR_REFRESH_NS (5u * NS_PER_SEC)
#define MONITOR_ID_LABEL "monitor"

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
	bool help;
};

/* The timer's options a monitor takes, with their names, ranges and messages. */
static const char *const from_timer[] = {
	"cpus", "interval", "priority", "policy", "mode", "timer-slack", "threshold", "window", "label", "db", "no-store",
	"checkpoint", "quiet", "live", "no-pm-qos", "no-context", "strict",
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
	  .help = "after each period, write `latscope report --monitor ID` of this monitor to FILE and serve it on "
		  "/report" },
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
		const struct opt *o = opt_find(tc->opts, tc->nopts, from_timer[i]);
		table[ntable] = *o;
		table[ntable].offset += offsetof(struct monitor_cmd, t);
		if (strcmp(o->name, "cpus") == 0)
			table[ntable].help = "CPUs to measure, one thread each (default: every online CPU but the first, or "
					     "the one)";
		if (strcmp(o->name, "checkpoint") == 0)
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
	"                        [--checkpoint DUR] [--trace-spikes DUR] [--per-cpu-histograms] [--report FILE] [-q]";

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

/* The monitor's state while it runs. */
struct monitor {
	struct monitor_cmd *cmd;
	struct mon_metrics *metrics;    /* the timer probe's */
	struct mon_metrics *noise;      /* the noise probe's, when it is scheduled */
	struct metrics_server *server;
	struct proc_table ctx;          /* steal and interrupts of the measured CPUs */
	bool have_ctx;
	char host[256];
	char id[32];                    /* the monitor's start, UTC: the label's value */
	char store[4096];               /* where periods are kept; "" when not */
	uint64_t next_render_ns;
	bool dirty;                     /* a window since the last render */
	unsigned periods;               /* measured */
	unsigned stored;                /* of them, stored (the others are kept in files) */
	int64_t last_run;
	uint64_t period_end_ns;         /* CLOCK_MONOTONIC at the end of the last period's windows */
	uint64_t longest_gap_ns;
	bool warned_publish;
	struct spikes *spikes;          /* --trace-spikes; NULL: off or not available */
	pid_t reporter;                 /* the `latscope report` making --report's file; 0: none */
	bool report_served;
};

/*
 * --trace-spikes: a window whose max is above the limit is queued by the
 * window hook and explained on the next tick from the ring (one a tick, so
 * that a burst of spikes does not hold the main thread); what was explained
 * is counted on /metrics and noted in the period's run.
 */
#define SPIKES_QUEUE 32u
#define SPIKES_NOTED 8u                 /* explanations noted per period; the rest are counted */

struct spike_job {
	int cpu;
	pid_t tid;
	uint64_t from_ns, to_ns;        /* the window, CLOCK_MONOTONIC */
};

struct spikes {
	struct spike_ring *ring;
	uint64_t above_ns;
	struct spike_job queue[SPIKES_QUEUE];
	size_t nqueue;
	/* this period's */
	unsigned explained, unexplained, dropped, by_kind[SPIKE_KINDS];
	unsigned nnoted;
	char noted[SPIKES_NOTED][RESULT_NOTE_LEN];
};

static const char *const *spike_kinds(void)
{
	static const char *kinds[SPIKE_KINDS];

	for (size_t k = 0; k < SPIKE_KINDS; k++)
		kinds[k] = spike_kind_name((enum spike_kind)k);
	return kinds;
}

static void spikes_queue(struct spikes *sp, const struct cpu_result *cr, uint64_t from_ns, uint64_t to_ns)
{
	if (sp->nqueue == SPIKES_QUEUE) {
		sp->dropped++;
		return;
	}
	sp->queue[sp->nqueue++] = (struct spike_job){ .cpu = cr->cpu, .tid = cr->tid, .from_ns = from_ns, .to_ns = to_ns };
}

static void spikes_explain_one(struct spikes *sp, struct mon_metrics *metrics, uint64_t origin_ns)
{
	struct spike_cause c;
	struct lat_error err = { { 0 } };

	if (!sp->nqueue)
		return;
	struct spike_job j = sp->queue[0];
	memmove(sp->queue, sp->queue + 1, (sp->nqueue - 1u) * sizeof(sp->queue[0]));
	sp->nqueue--;
	if (spike_ring_explain(sp->ring, (unsigned)j.cpu, j.tid, j.from_ns, j.to_ns, sp->above_ns, &c, &err) < 0) {
		sp->unexplained++;
		return;
	}
	sp->explained++;
	sp->by_kind[c.kind]++;
	mon_metrics_add_cause(metrics, c.kind);
	if (sp->nnoted < SPIKES_NOTED) {
		char lat[32], share[32], at[32];
		fmt_duration(c.latency_ns, lat, sizeof(lat));
		fmt_duration(c.share_ns, share, sizeof(share));
		fmt_duration(c.deadline_ns > origin_ns ? c.deadline_ns - origin_ns : 0, at, sizeof(at));
		snprintf(sp->noted[sp->nnoted++], RESULT_NOTE_LEN, "spike on cpu %d at %s: %s, %s (%s of it)%s", j.cpu,
			 at, lat, c.name, share,
			 c.flags & SPIKE_F_LOST ? "; the trace lost events in it" : "");
	}
}

/* The period's explanations into its run, then a clean slate for the next. */
static void spikes_note(struct spikes *sp, struct result *res)
{
	char dur[32];

	fmt_duration(sp->above_ns, dur, sizeof(dur));
	if (spike_ring_mounted(sp->ring))
		result_info(res, "tracefs was not mounted: latscope mounted it at '%s' for the monitor",
			    spike_ring_mounted(sp->ring));
	result_info(res, "--trace-spikes %s: %u window%s explained (irq %u, softirq %u, task %u, no event %u), %u not "
		    "held by the ring, %u not queued", dur, sp->explained, sp->explained == 1 ? "" : "s",
		    sp->by_kind[SPIKE_IRQ], sp->by_kind[SPIKE_SOFTIRQ], sp->by_kind[SPIKE_TASK], sp->by_kind[SPIKE_NO_EVENT],
		    sp->unexplained, sp->dropped);
	for (unsigned i = 0; i < sp->nnoted; i++)
		result_info(res, "%s", sp->noted[i]);
	sp->explained = sp->unexplained = sp->dropped = sp->nnoted = 0;
	memset(sp->by_kind, 0, sizeof(sp->by_kind));
}

/*
 * --report: `latscope report --monitor ID` of the periods stored so far, made
 * by a process of its own (reading every period takes seconds: never the
 * main thread's), on the main thread's CPUs, at normal priority.  The file is
 * replaced whole by report; once it is, its text is served on /report.
 */
#define REPORT_SERVE_MAX (64u << 20)

static void report_start(struct monitor *mo)
{
	char *const argv[] = { (char *)"latscope", (char *)"report", (char *)"--monitor", mo->id, (char *)"-o",
			       (char *)mo->cmd->report, (char *)"--db", mo->store, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, stops;
	pid_t pid;

	if (mo->reporter || !mo->last_run)
		return;                 /* one at a time: the next period makes a newer one */
	sigemptyset(&none);
	runner_stop_signals(&stops);
	sigaddset(&stops, SIGUSR1);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &stops);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int r = posix_spawn(&pid, "/proc/self/exe", &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		tprintf(stderr, "latscope monitor: option '--report': cannot start latscope report: %s\n", strerror(r));
	else
		mo->reporter = pid;
}

/* Serve the file once report has written it (its errors went to our stderr). */
static void report_collect(struct monitor *mo, bool wait)
{
	int status;

	if (!mo->reporter)
		return;
	const pid_t w = waitpid(mo->reporter, &status, wait ? 0 : WNOHANG);
	if (w == 0)
		return;
	mo->reporter = 0;
	if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || wait)
		return;
	/* the file report replaced: a regular file, not a link put in its place since */
	int fd = open(mo->cmd->report, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	char *text = NULL;
	ssize_t n = -1;
	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size <= REPORT_SERVE_MAX &&
	    (text = malloc((size_t)sb.st_size + 1u)))
		n = read(fd, text, (size_t)sb.st_size);
	if (fd >= 0)
		close(fd);
	if (text && n == (ssize_t)sb.st_size && metrics_server_publish_report(mo->server, text, (size_t)n) == 0)
		mo->report_served = true;
	free(text);
}

static void read_context(struct monitor *mo)
{
	uint64_t steal[CPUSET_MAX];
	size_t n = mon_metrics_ncpus(mo->metrics);

	if (!mo->have_ctx || n > CPUSET_MAX)
		return;
	if (proc_read_interrupts(&mo->ctx, NULL) < 0 || proc_read_steal(&mo->ctx, steal, NULL) < 0)
		return;
	for (size_t k = 0; k < mo->ctx.ncpus; k++)
		mon_metrics_set_context(mo->metrics, mo->ctx.cpus[k], steal[k], proc_table_total(&mo->ctx, k));
}

/* Make the three texts and hand them to the server. */
static void publish(struct monitor *mo)
{
	const uint64_t now = mono_ns();
	struct mon_page_info info = { .host = mo->host, .monitor_id = mo->id, .store = mo->store[0] ? mo->store : NULL,
				      .periods = mo->stored, .last_run = mo->last_run, .rotate_ns = mo->cmd->rotate_ns,
				      .report = mo->report_served };

	if (!mo->server)
		return;
	read_context(mo);
	const struct mon_metrics *probes[] = { mo->metrics, mo->noise };
	const size_t n = mo->noise ? 2u : 1u;
	char *prom = mon_metrics_render(probes, n, MON_PROMETHEUS, now);
	char *om = mon_metrics_render(probes, n, MON_OPENMETRICS, now);
	char *page = mon_page_render(mo->metrics, &info, now);
	int r = prom && om && page ? metrics_server_publish(mo->server, prom, om, page) : -ENOMEM;
	if (r < 0 && !mo->warned_publish) {
		/* the last texts stay served; said once, not every second */
		tprintf(stderr, "latscope monitor: cannot update /metrics: %s\n", strerror(-r));
		mo->warned_publish = true;
	}
	free(prom);
	free(om);
	free(page);
	mo->dirty = false;
	mo->next_render_ns = now + MONITOR_REFRESH_NS;
}

/* The parameters of one kind of run, checked as if typed to that command,
 * and where its windows are counted. */
struct phase {
	const struct measure_cmd *mc;
	void *params;
	struct opt_result given;
	struct mon_metrics *metrics;
	bool rotates;                   /* a period of the timer probe, not a noise run */
	struct monitor *mo;
};

static void on_window(void *ctx, const struct result *res, const struct cpu_result *cr, const struct result_window *w)
{
	struct phase *ph = ctx;

	if (mon_metrics_add_window(ph->metrics, cr->cpu, &w->w, &w->hist[0], w->p99[0], res->origin_ns + w->w.end_ns) == 0)
		ph->mo->dirty = true;
	struct spikes *sp = ph->mo->spikes;
	if (sp && ph->rotates && w->w.m[0].st.n && w->w.m[0].st.max > sp->above_ns)
		spikes_queue(sp, cr, res->origin_ns + w->w.start_ns, res->origin_ns + w->w.end_ns);
}

static void on_finished(void *ctx, struct result *res)
{
	struct phase *ph = ctx;
	struct spikes *sp = ph->mo->spikes;

	if (!sp || !ph->rotates)
		return;
	while (sp->nqueue)              /* the period's last windows, before its run is stored */
		spikes_explain_one(sp, ph->metrics, res->origin_ns);
	spikes_note(sp, res);
}

static void on_tick(void *ctx, const struct result *res)
{
	struct phase *ph = ctx;
	struct monitor *mo = ph->mo;

	if (mo->spikes && ph->rotates)
		spikes_explain_one(mo->spikes, ph->metrics, res->origin_ns);
	if (mo->reporter) {
		bool had = mo->report_served;
		report_collect(mo, false);
		mo->dirty |= mo->report_served != had;
	}
	if (mo->dirty || mono_ns() >= mo->next_render_ns)
		publish(mo);
}

static void on_prepared(void *ctx, const struct result *res)
{
	struct monitor *mo = ((struct phase *)ctx)->mo;
	/* the runner has set the origin just after this: the gap ends about here */
	if (mo->period_end_ns) {
		uint64_t gap = mono_ns() - mo->period_end_ns;
		if (gap > mo->longest_gap_ns)
			mo->longest_gap_ns = gap;
	}
	(void)res;
}

/* A stop signal waiting (they are blocked): the monitor ends. */
static bool stop_pending(void)
{
	sigset_t pending, stops;

	runner_stop_signals(&stops);
	if (sigpending(&pending) < 0)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&stops, s) == 1 && sigismember(&pending, s) == 1)
			return true;
	return false;
}

/* A SIGUSR1 that came between two periods: the new one has just begun. */
static void drop_usr1(void)
{
	sigset_t usr1;
	struct timespec zero = { 0, 0 };

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	while (sigtimedwait(&usr1, NULL, &zero) == SIGUSR1)
		;
}

/* --keep after a stored period; what it removed is said on stderr. */
static void prune(struct monitor *mo, const struct keep_rule *k)
{
	struct store *st = NULL;
	struct run_filter f = { 0 };
	struct run_info *runs = NULL;
	struct lat_error err;
	size_t n = 0;

	if (!mo->store[0])
		return;
	if (store_open(mo->store, 0, &st, &err) < 0 || store_list(st, &f, &runs, &n, &err) < 0) {
		tprintf(stderr, "latscope monitor: option '--keep': cannot read the store: %s\n", err.msg);
		store_close(st);
		return;
	}
	int64_t *ids = calloc(n ? n : 1u, sizeof(*ids));
	size_t drop = ids ? keep_select(runs, n, k, realtime_ns(), ids) : 0;
	if (drop && store_rm(st, ids, drop, &err) < 0)
		tprintf(stderr, "latscope monitor: option '--keep': cannot remove old runs: %s\n", err.msg);
	else if (drop && !mo->cmd->t.out.quiet)
		tprintf(stderr, "latscope monitor: --keep %s: removed %zu monitor run%s\n", mo->cmd->keep, drop,
			drop == 1 ? "" : "s");
	free(ids);
	free(runs);
	store_close(st);
}

/* One run of a phase for duration_ns: the measure_with code, and whether a stop signal ended it. */
static int run_phase(struct monitor *mo, struct phase *ph, uint64_t duration_ns, int argc, char **argv,
		     bool *ret_stopped, bool *ret_measured)
{
	struct result res = { 0 };
	struct measure_outcome out = { .res = &res };
	struct measure_hooks mh = { .ctx = ph, .tick = on_tick, .window = on_window, .started = mo->periods > 0 };
	struct measure_cmd front = *ph->mc;
	const size_t size = ph->mc->params_size;
	void *params = malloc(size);

	*ret_stopped = *ret_measured = false;
	if (!params) {
		tprintf(stderr, "latscope monitor: out of memory\n");
		return EXIT_ERROR;
	}
	memcpy(params, ph->params, size);
	measure_run_params(ph->mc, params)->duration_ns = duration_ns;
	if (ph->rotates) {
		mh.prepared = on_prepared;
		mh.finished = on_finished;
	}
	front.name = "monitor";
	int code = measure_with(&front, params, &ph->given, argc, argv, &mh, &out);
	free(params);
	if (!res.cpus)
		return code;            /* nothing measured; measure_with said why */
	*ret_measured = true;
	*ret_stopped = res.interrupted && strncmp(res.stop_reason, "signal ", 7) == 0 &&
		       strcmp(res.stop_reason, "signal SIGUSR1") != 0;
	if (res.failed)
		*ret_stopped = true;    /* a thread could not measure: starting again would not help */
	mo->period_end_ns = ph->rotates ? res.origin_ns + res.elapsed_ns : 0;   /* a noise run is no gap */
	if (ph->rotates) {
		mo->periods++;
		if (out.stored_id > 0) {
			mo->stored++;
			mo->last_run = out.stored_id;
		}
	}
	result_free(&res);
	return code;
}

/* The default CPUs: every usable online one but the first (it keeps the
 * system, the server and the main thread), or the one there is. */
static int default_cpus(struct cpuset *cpus, struct lat_error *err)
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

/* The timer options the user gave are given to the timer command too. */
static void mark_given(const struct opt_result *given, struct opt_result *tgiven)
{
	for (size_t i = 0; i < ARRAY_SIZE(from_timer); i++)
		if (opt_given(table, ntable, given, from_timer[i]))
			opt_mark(timer_command.opts, timer_command.nopts, tgiven, from_timer[i]);
	static const char *const always[] = { "cpus", "duration", "label" };
	for (size_t i = 0; i < ARRAY_SIZE(always); i++)
		opt_mark(timer_command.opts, timer_command.nopts, tgiven, always[i]);
}

static int add_label(struct labels *ls, const char *key, const char *value)
{
	if (ls->n >= LABELS_MAX)
		return -E2BIG;
	snprintf(ls->items[ls->n].key, LABEL_KEY_MAX, "%s", key);
	snprintf(ls->items[ls->n].value, LABEL_VALUE_MAX, "%s", value);
	ls->n++;
	return 0;
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
		return err_set(err, -EINVAL, "option '--report': cannot write '%s': %s", m->report, strerror(-r));
	atomic_file_close(&f);          /* not committed: nothing is written */
	return 0;
}

/* Every check of the options, before anything starts: 0 or -EINVAL with err filled. */
static int check(struct monitor_cmd *m, const struct opt_result *given, struct phase *timer, struct phase *noise,
		 struct noise_cmd *nc, struct keep_rule *keep, const char *id, struct lat_error *err)
{
	struct listen_addr la;
	int r;

	if (given->npos)
		return err_set(err, -EINVAL, "unexpected argument '%s'", given->pos[0]);
	const struct labels *ls = &m->t.out.labels;
	for (unsigned i = 0; i < ls->n; i++) {
		if (strcmp(ls->items[i].key, MONITOR_ID_LABEL) == 0)
			return err_set(err, -EINVAL, "option '--label': monitor is the monitor's own label (monitor=ID)");
		/* two keys one name on /metrics would make every scrape fail */
		char a[LABEL_KEY_MAX + 8], b[LABEL_KEY_MAX + 8];
		om_make_name(a, sizeof(a), "label_", ls->items[i].key);
		for (unsigned k = 0; k < i; k++) {
			om_make_name(b, sizeof(b), "label_", ls->items[k].key);
			if (strcmp(a, b) == 0)
				return err_set(err, -EINVAL, "option '--label': '%s' and '%s' are both %s on /metrics",
					       ls->items[k].key, ls->items[i].key, a);
		}
	}
	if (listen_addr_parse(m->listen, &la, err) < 0)
		return -EINVAL;
	if (m->keep && keep_parse(m->keep, keep, err) < 0)
		return -EINVAL;
	if (m->keep && m->t.out.no_store)
		return err_set(err, -EINVAL, "option '--keep' needs a store");
	if (m->report && m->t.out.no_store)
		return err_set(err, -EINVAL, "option '--report' needs a store");
	if (m->report && (r = check_report(m, err)) < 0)
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
	if (!opt_given(table, ntable, given, "cpus") && (r = default_cpus(&m->t.run.cpus, err)) < 0)
		return r;
	if (add_label(&m->t.out.labels, MONITOR_ID_LABEL, id) < 0)
		return err_set(err, -EINVAL, "option '--label': at most %d labels with monitor=ID", LABELS_MAX - 1);
	/* a period over 10 minutes is checkpointed every 10, as a run without -D would be */
	if (!opt_given(table, ntable, given, "checkpoint") && m->rotate_ns > CHECKPOINT_DEFAULT_NS) {
		m->t.out.checkpoint_ns = CHECKPOINT_DEFAULT_NS;
		opt_mark(timer_command.opts, timer_command.nopts, &timer->given, "checkpoint");
	}
	m->t.run.duration_ns = m->rotate_ns;
	m->t.run.period_signal = true;
	timer->mc = &timer_command;
	timer->params = &m->t;
	timer->rotates = true;
	mark_given(given, &timer->given);
	if ((r = measure_check(&timer_command, &m->t, &timer->given, err)) < 0)
		return r;
	if (!every)
		return 0;
	/* The noise probe: its own defaults, the monitor's store, labels and quietness. */
	noise_command.defaults(nc);
	nc->run.cpus = opt_given(table, ntable, given, "noise-cpus") ? m->noise_cpus : m->t.run.cpus;
	nc->run.duration_ns = m->noise_for_ns;
	nc->run.period_signal = true;
	nc->out.db_path = m->t.out.db_path;
	nc->out.no_store = m->t.out.no_store;
	nc->out.labels = m->t.out.labels;
	nc->out.quiet = m->t.out.quiet;
	noise->mc = &noise_command;
	noise->params = nc;
	static const char *const set[] = { "cpus", "duration", "label" };
	for (size_t i = 0; i < ARRAY_SIZE(set); i++)
		opt_mark(noise_command.opts, noise_command.nopts, &noise->given, set[i]);
	if ((r = measure_check(&noise_command, nc, &noise->given, err)) < 0) {
		/* the noise probe's --cpus is the monitor's --noise-cpus */
		char why[sizeof(err->msg)];
		const char *cpus = strstr(err->msg, "option '--cpus'");
		if (cpus)
			snprintf(why, sizeof(why), "option '--noise-cpus'%.400s", cpus + strlen("option '--cpus'"));
		else
			snprintf(why, sizeof(why), "the noise probe: %.400s", err->msg);
		return err_set(err, r, "%s", why);
	}
	return 0;
}

static void monitor_id(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm))
		strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
	else
		snprintf(buf, size, "%lld", (long long)now);
}

/* Keep the main thread, and so the server's threads it starts, off the measured CPUs. */
static void housekeeping(const struct cpuset *measured)
{
	struct cpuset online, rest;

	if (cpus_online(&online) < 0)
		return;
	cpuset_diff(&rest, &online, measured);
	if (cpuset_count(&rest))
		cpus_pin(&rest);
}

/* Tracing is asked for, not needed: without it the monitor goes on, and says why. */
static int start_spikes(struct monitor *mo, uint64_t above_ns)
{
	struct lat_error err = { { 0 } };
	struct spikes *sp = calloc(1, sizeof(*sp));
	int r = sp ? spike_ring_start(&mo->cmd->t.run.cpus, 0, &sp->ring, &err) : -ENOMEM;

	if (r < 0) {
		tprintf(stderr, "latscope monitor: --trace-spikes: not traced: %s; measuring without explanations\n",
			sp ? err.msg : "out of memory");
		free(sp);
		return r;
	}
	sp->above_ns = above_ns;
	mo->spikes = sp;
	if (spike_ring_mounted(sp->ring))
		tprintf(stderr, "latscope monitor: --trace-spikes: tracefs was not mounted: latscope mounted it at '%s' "
			"for the monitor\n", spike_ring_mounted(sp->ring));
	return 0;
}

static int serve(struct monitor *mo, struct lat_error *err)
{
	char where[80];
	int r = metrics_server_start(mo->cmd->listen, &mo->server, err);

	if (r < 0 || !mo->server)
		return r;
	struct listen_addr la;
	if (listen_addr_parse(mo->cmd->listen, &la, NULL) == 0) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)&la.sa;
		struct sockaddr_in *in4 = (struct sockaddr_in *)(void *)&la.sa;
		if (la.sa.ss_family == AF_INET6)
			in6->sin6_port = htons((uint16_t)metrics_server_port(mo->server));
		else
			in4->sin_port = htons((uint16_t)metrics_server_port(mo->server));
		listen_addr_format(&la.sa, where, sizeof(where));
	} else {
		snprintf(where, sizeof(where), "%s", mo->cmd->listen);
	}
	/* texts first: a client that read the address never gets the 503 of before */
	mon_metrics_set_up(mo->metrics, true);
	publish(mo);
	/* on stderr whatever -q says: the one line a service's log must have */
	tprintf(stderr, "latscope monitor: serving http://%s/metrics\n", where);
	return 0;
}

static int monitor_loop(struct monitor *mo, struct phase *timer, struct phase *noise, const struct keep_rule *keep,
			int argc, char **argv)
{
	const struct monitor_cmd *m = mo->cmd;
	uint64_t next_noise = noise->mc ? mono_ns() + m->noise_every_ns : UINT64_MAX;
	int code = EXIT_OK;

	for (;;) {
		bool stopped, measured;
		if (stop_pending())
			break;
		drop_usr1();
		/* a period ends when it is due, or when the noise probe is */
		uint64_t now = mono_ns(), dur = m->rotate_ns;
		if (next_noise != UINT64_MAX && next_noise > now && next_noise - now < dur)
			dur = next_noise - now;
		if (dur < NS_PER_SEC)
			dur = NS_PER_SEC;
		int c = run_phase(mo, timer, dur, argc, argv, &stopped, &measured);
		if (!measured)
			return c;               /* could not measure at all: nothing to go on with */
		if (c != EXIT_OK)
			code = c;               /* kept in a file; the next period may be stored */
		if (m->keep)
			prune(mo, keep);
		if (m->report)
			report_start(mo);
		publish(mo);
		if (stopped)
			break;
		if (mono_ns() + NS_PER_SEC / 10u < next_noise || stop_pending())
			continue;
		drop_usr1();
		c = run_phase(mo, noise, m->noise_for_ns, argc, argv, &stopped, &measured);
		next_noise = checkpoint_next(next_noise, m->noise_every_ns, mono_ns());
		if (c != EXIT_OK)
			code = c;               /* not stored, kept in a file; or nothing measured */
		if (!measured || stopped)
			break;
	}
	return code;
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor_cmd *m = calloc(1, sizeof(*m));
	struct noise_cmd *nc = calloc(1, sizeof(*nc));
	struct phase timer = { 0 }, noise = { 0 };
	struct opt_result given;
	struct lat_error err = { { 0 } };
	struct keep_rule keep = { 0 };
	struct monitor mo = { .cmd = m };
	int code = EXIT_ERROR;

	/* Stop signals and SIGUSR1 wait for the main thread, from the start: a
	 * SIGUSR1 while the options are read must not kill the monitor. */
	sigset_t sigs;
	runner_stop_signals(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
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
	monitor_id(mo.id, sizeof(mo.id));
	if (check(m, &given, &timer, &noise, nc, &keep, mo.id, &err) < 0) {
		/* an empty reason: the check that failed has said it (outputs_check) */
		code = err.msg[0] ? storecmd_usage("monitor", err.msg) : EXIT_USAGE;
		goto out;
	}
	bool chosen;
	if (!m->t.out.no_store && store_path_resolve(m->t.out.db_path, mo.store, sizeof(mo.store), &chosen) < 0)
		mo.store[0] = '\0';
	if (gethostname(mo.host, sizeof(mo.host) - 1u) < 0)
		snprintf(mo.host, sizeof(mo.host), "unknown");

	housekeeping(&m->t.run.cpus);

	struct mon_identity id = { .host = mo.host, .probe = timer_command.ops->name, .version = LATSCOPE_VERSION,
				   .labels = &m->t.out.labels, .threshold_ns = m->t.run.threshold_ns,
				   .per_cpu_hist = m->per_cpu_hist };
	/* the series name the user's labels, not the monitor's own one */
	struct labels user = m->t.out.labels;
	user.n--;
	id.labels = &user;
	struct mon_identity nid = id;
	nid.probe = noise_command.ops->name;
	nid.threshold_ns = nc->run.threshold_ns;
	if (mon_metrics_new(&m->t.run.cpus, &id, &mo.metrics) < 0 ||
	    (noise.mc && mon_metrics_new(&nc->run.cpus, &nid, &mo.noise) < 0)) {
		tprintf(stderr, "latscope monitor: out of memory\n");
		goto out;
	}
	timer.metrics = mo.metrics;
	timer.mo = noise.mo = &mo;
	noise.metrics = mo.noise;
	mo.have_ctx = !m->t.run.no_context && proc_table_init(&mo.ctx, &m->t.run.cpus) == 0;
	/* the ring forks its guard: before the server's threads exist */
	if (m->trace_spikes_ns && start_spikes(&mo, m->trace_spikes_ns) == 0)
		mon_metrics_set_cause_kinds(mo.metrics, spike_kinds(), SPIKE_KINDS);
	if (serve(&mo, &err) < 0) {
		tprintf(stderr, "latscope monitor: %s\n", err.msg);
		goto out;
	}
	if (!mo.server)
		mon_metrics_set_up(mo.metrics, true);
	char every[32], gap[32];
	fmt_duration(m->rotate_ns, every, sizeof(every));
	if (!m->t.out.quiet)
		tprintf(stderr, "latscope monitor: monitor=%s, a period every %s%s%s\n", mo.id, every,
			mo.store[0] ? ", stored in " : ", not stored", mo.store[0] ? mo.store : "");
	code = monitor_loop(&mo, &timer, &noise, &keep, argc, argv);
	mon_metrics_set_up(mo.metrics, false);
	publish(&mo);
	fmt_duration(mo.longest_gap_ns, gap, sizeof(gap));
	if (!m->t.out.quiet && mo.periods > 1)
		tprintf(stderr, "latscope monitor: %u periods; the longest gap between two was %s\n", mo.periods, gap);
out:
	if (mo.reporter) {
		kill(mo.reporter, SIGTERM);     /* a newer one would have followed; nothing left behind */
		report_collect(&mo, true);
	}
	metrics_server_stop(mo.server);
	if (mo.have_ctx)
		proc_table_free(&mo.ctx);
	mon_metrics_free(mo.metrics);
	mon_metrics_free(mo.noise);
	if (mo.spikes) {
		/* the tracefs instance, and a mount of latscope's, go on every path */
		int ur = spike_ring_stop(mo.spikes->ring, &err);
		if (ur < 0 || (ur == 0 && !m->t.out.quiet))
			tprintf(stderr, "latscope monitor: --trace-spikes: %s\n", err.msg);
		free(mo.spikes);
	}
	free(nc);
	free(m);
	return code;
}
