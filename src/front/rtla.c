/*
 * `rtla timerlat hist` and `rtla timerlat top` on latscope's timer probe with
 * --trace.  The options become a `latscope timer` run (stored with every
 * statistic); what rtla prints is printed from the result: Usr from every
 * sample, IRQ and Thr from the trace's stages (report/rtla.h).  rteval's
 * measurement module runs this unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "measure/timer.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "front/driver.h"
#include "probe/tracerun.h"
#include "report/rtla.h"
#include "report/text.h"
#include "report/tracetext.h"

#define RTLA_DEFAULT_PERIOD_US 1000u
#define RTLA_DEFAULT_PRIO 95u           /* timerlat's threads run at SCHED_FIFO 95 */
#define RTLA_TRACE_FILE "timerlat_trace.txt"

enum { RTLA_HIST, RTLA_TOP };

struct rtla_opts {
	bool top;                       /* timerlat top; else hist */
	uint64_t period_us;
	int policy;
	uint64_t priority;
	uint64_t dl_runtime_ns, dl_period_ns;
	bool user, kernel;
	const char *cpus;
	uint64_t duration_ns;
	uint64_t stop_us;               /* -T, -i, -a, --aa-only: the least of them; 0 none */
	bool aa_only;
	const char *trace_file;         /* -t, -a */
	bool no_aa, quiet, nano, with_zeros, no_irq, no_thread, no_summary, no_header, no_index;
	uint64_t entries, bucket;
	bool dma_given;
	bool idle_given;
	uint64_t idle_state;
	uint64_t warmup_s;
	uint64_t buffer_kb;             /* --trace-buffer-size; 0: sized from -d */
	bool event_given;
};

/* The options, and what the run's hooks keep. */
struct rtla_state {
	struct rtla_opts o;
	struct rtla_view view;
	uint64_t started_ns, last_ns;
	unsigned notes_shown;
	bool traced_asked;
	bool said_untraced;             /* the line saying so was printed */
	struct front_file *trace_file;
};

static struct rtla_state *state_of(const void *fr)
{
	return ((const struct front_run *)fr)->st;
}

enum {
	K_AUTO, K_BUCKET, K_ENTRIES, K_IRQ, K_PERIOD, K_STACK, K_THREAD, K_TRACE, K_CPUS, K_DURATION, K_EVENT,
	K_HOUSEKEEPING, K_PRIO, K_TRIGGER, K_FILTER, K_DMA, K_WARMUP, K_BUFFER, K_IDLE, K_STACK_FORMAT, K_AA_ONLY,
};

#define HIST FRONT_MODE(RTLA_HIST)
#define TOP FRONT_MODE(RTLA_TOP)
#define FLAG(n, l, field, m) \
	{ .name = (n), .letter = (l), .kind = FRONT_FLAG, .key = offsetof(struct rtla_state, o.field), .modes = (m) }
#define SET(n, l, k, t, m) { .name = (n), .letter = (l), .arg = FRONT_ARG, .kind = FRONT_SET, .key = (k), .to = (t), .modes = (m) }
#define IGNORED(n, l, a) { .name = (n), .letter = (l), .arg = (a), .kind = FRONT_IGNORE }
#define REFUSED(n, l, a, w) { .name = (n), .letter = (l), .arg = (a), .kind = FRONT_REFUSE, .why = (w) }
#define ACTIONS " (rtla's actions) is not supported: use latscope timer --on-threshold or --on-end"

/* rtla's timerlat hist and top options (top has -q and --aa-only, hist the histogram's). */
static const struct front_opt rtla_opts[] = {
	SET("auto", 'a', K_AUTO, 0, 0),
	SET("bucket-size", 'b', K_BUCKET, 0, HIST),
	SET("entries", 'E', K_ENTRIES, 0, HIST),
	FRONT_HELP_ROW('h'),
	SET("irq", 'i', K_IRQ, 0, 0),
	FLAG("nano", 'n', nano, 0),
	SET("period", 'p', K_PERIOD, FRONT_TO(TIMER_OPT_INTERVAL), 0),
	FLAG("quiet", 'q', quiet, TOP),
	SET("stack", 's', K_STACK, 0, 0),               /* checked, no effect */
	SET("thread", 'T', K_THREAD, 0, 0),
	{ .name = "trace", .letter = 't', .arg = FRONT_OPT_NEXT, .kind = FRONT_SET, .key = K_TRACE, .values = OPT_VALUES_FILE },
	FLAG("user-threads", 'u', user, 0),
	FLAG("kernel-threads", 'k', kernel, 0),         /* Thr is the same thread's wakeup */
	REFUSED("user-load", 'U', FRONT_NO_ARG, ": latscope runs its own measuring threads; no other workload can attach to them"),
	{ .name = "cpus", .letter = 'c', .arg = FRONT_ARG, .kind = FRONT_SET, .key = K_CPUS, .to = FRONT_TO(TIMER_OPT_CPUS),
	  .values = OPT_VALUES_CPUS },
	IGNORED("cgroup", 'C', FRONT_OPT_NEXT),         /* threads stay in latscope's own cgroup */
	FRONT_VERBOSE_ROW("debug", 'D'),
	SET("duration", 'd', K_DURATION, FRONT_TO(TIMER_OPT_DURATION), 0),
	SET("event", 'e', K_EVENT, 0, 0),               /* checked, no effect */
	SET("house-keeping", 'H', K_HOUSEKEEPING, 0, 0), /* checked, no effect */
	SET("priority", 'P', K_PRIO, FRONT_TO(TIMER_OPT_POLICY), 0),
	FLAG("no-irq", 0, no_irq, HIST),
	FLAG("no-thread", 0, no_thread, HIST),
	FLAG("no-header", 0, no_header, HIST),
	FLAG("no-summary", 0, no_summary, HIST),
	FLAG("no-index", 0, no_index, HIST),
	FLAG("with-zeros", 0, with_zeros, HIST),
	SET("trigger", 0, K_TRIGGER, 0, 0),             /* checked, no effect */
	SET("filter", 0, K_FILTER, 0, 0),               /* checked, no effect */
	SET("dma-latency", 0, K_DMA, 0, 0),
	FLAG("no-aa", 0, no_aa, 0),
	IGNORED("dump-task", 0, FRONT_NO_ARG),
	IGNORED("dump-tasks", 0, FRONT_NO_ARG),
	SET("warm-up", 0, K_WARMUP, FRONT_TO(TIMER_OPT_WARMUP), 0),
	SET("trace-buffer-size", 0, K_BUFFER, 0, 0),
	SET("deepest-idle-state", 0, K_IDLE, FRONT_TO(TIMER_OPT_DEEPEST_IDLE_STATE), 0),
	REFUSED("on-threshold", 0, FRONT_ARG, ACTIONS),
	REFUSED("on-end", 0, FRONT_ARG, ACTIONS),
	REFUSED("bpf-action", 0, FRONT_ARG, ACTIONS),
	SET("stack-format", 0, K_STACK_FORMAT, 0, 0),   /* checked, no effect */
	SET("aa-only", 0, K_AA_ONLY, 0, TOP),
	FRONT_DB_ROW,
	FRONT_DB_TRUST_ROW,
	FRONT_NO_STORE_ROW,
	FRONT_LABEL_ROW,
	FRONT_VERBOSE_ROW("verbose", 0),
};

/* The timer's rows every run sets from rtla's options, given or not. */
static const int rtla_sets[] = {
	TIMER_OPT_POLICY, TIMER_OPT_INTERVAL, TIMER_OPT_WINDOW, TIMER_OPT_LABEL, TIMER_OPT_NO_PM_QOS, TIMER_OPT_WARMUP,
};

static const char *const rtla_modes[] = { [RTLA_HIST] = "timerlat hist", [RTLA_TOP] = "timerlat top", NULL };

static void usage_help(void)
{
	printf("Usage: latscope rtla timerlat hist|top [rtla timerlat options]\n"
	       "       rtla timerlat hist|top [options]      (through the installed rtla link)\n\n"
	       "Run latscope's timer probe, with its kernel-trace decomposition, under rtla timerlat's options and\n"
	       "print what rtla prints (the hist histogram, the top table, the -T auto-analysis), so tools that\n"
	       "run rtla (rteval, cnf-tests) work unchanged.  The run is also stored as a latscope timer run.\n"
	       "IRQ is the timer interrupt's delay, Thr that plus the handler and the wakeup up to the thread\n"
	       "running, Usr the whole latency up to the thread's clock read (see latscope-rtla(1)).\n\n"
	       "Options (as rtla's):\n"
	       "  -p, --period=US          timer period in microseconds (or with a unit; default 1000, at most 1s)\n"
	       "  -P, --priority=o:N|r:N|f:N|d:RUNTIME:PERIOD   scheduling of the threads (default f:95)\n"
	       "  -c, --cpus=LIST          CPUs to measure (default: every usable online CPU)\n"
	       "  -d, --duration=TIME      run for TIME (s, m, h or d; default until Ctrl-C)\n"
	       "  -u, --user-threads       show the Usr columns (latscope always measures a user thread)\n"
	       "  -k, --kernel-threads     accepted: Thr is the same thread's wakeup, no kernel thread runs\n"
	       "  -T, --thread=US          stop at the first sample above US and analyse it (see DIFFERENCES)\n"
	       "  -i, --irq=US             the same, for the IRQ latency\n"
	       "  -a, --auto=US            -T and -i US, and -t\n"
	       "  -t, --trace[=FILE]       on a stop, write latscope's trace explanation to FILE (" RTLA_TRACE_FILE ")\n"
	       "      --no-aa              no auto-analysis on a stop\n"
	       "  -n, --nano               values in nanoseconds\n"
	       "  -E, --entries=N          histogram buckets, 10-9999999 (hist; default 256)\n"
	       "  -b, --bucket-size=N      bucket width in the time unit, 1-999999 (hist; default 1)\n"
	       "      --no-irq, --no-thread, --no-header, --no-summary, --no-index, --with-zeros   (hist)\n"
	       "  -q, --quiet              only the final table (top)\n"
	       "      --aa-only=US         stop above US and print only the analysis (top)\n"
	       "      --dma-latency=US     hold /dev/cpu_dma_latency while measuring (latscope holds 0)\n"
	       "      --deepest-idle-state=N   disable deeper idle states on the measured CPUs (-1: all but state 0)\n"
	       "      --warm-up=S          leave the first S seconds out of the stored warm max\n"
	       "      --trace-buffer-size=KB   the trace's ring per CPU (default: sized from -d; 4 MiB without)\n"
	       "  -C, --cgroup[=NAME], -H, --house-keeping=LIST, -s, --stack=US, -e, --event=SYS[:EVENT],\n"
	       "      --filter=F, --trigger=T, --dump-tasks, --stack-format=F   accepted, no effect (latscope-rtla(1))\n"
	       "  -D, --debug              as --verbose\n"
	       "latscope's own:\n"
	       "      --db=PATH            store the run here (default: as latscope timer)\n"
	       "      --db-trust           store it even in a store another user owns or may write\n"
	       "      --no-store           do not store the run\n"
	       "      --label=KEY=VALUE    tag the stored run; repeatable\n"
	       "      --verbose            latscope's notes and the stored run's id on standard error\n"
	       "      --help               show this help\n\n"
	       "Refused: -U/--user-load, --on-threshold, --on-end and --bpf-action (rtla's actions).\n"
	       "Exit status: 0 done (also when stopped by Ctrl-C, SIGTERM or SIGHUP), 1 error, 2 bad usage,\n"
	       "3 stopped by -T, -i, -a or --aa-only.  See latscope-rtla(1).\n");
}

/* A whole number in [min, max]; rtla's own bounds are given by the caller. */
static int number(const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	if (parse_u64(text, &v) < 0)
		return front_refuse(&rtla_front, "option '%s': '%s' is not a whole number", opt, text);
	if (v < min || v > max)
		return front_refuse(&rtla_front, "option '%s': '%s' is outside %llu-%llu", opt, text, (unsigned long long)min,
				    (unsigned long long)max);
	*ret = v;
	return 0;
}

/* rtla's duration units for -P d: ns (bare), us, ms, s. */
static int dl_duration(const char *text, uint64_t *ret)
{
	return parse_duration(text, 1u, ret) < 0 || *ret == 0 ? -EINVAL : 0;
}

static int parse_prio(const char *text, struct rtla_opts *o)
{
	uint64_t v;
	if (strlen(text) < 3 || text[1] != ':')
		return -EINVAL;
	const char *rest = text + 2;
	switch (text[0]) {
	case 'o':
		/* SCHED_OTHER: rtla sets the nice value; latscope runs at the default nice */
		if (parse_i64(rest, &(int64_t){ 0 }) < 0)
			return -EINVAL;
		o->policy = POLICY_OTHER;
		o->priority = 0;
		return 0;
	case 'r':
	case 'f':
		if (parse_u64(rest, &v) < 0 || v < 1 || v > 99)
			return -EINVAL;
		o->policy = text[0] == 'f' ? POLICY_FIFO : POLICY_RR;
		o->priority = v;
		return 0;
	case 'd': {
		char runtime[64];
		const char *colon = strchr(rest, ':');
		if (!colon || (size_t)(colon - rest) >= sizeof(runtime))
			return -EINVAL;
		memcpy(runtime, rest, (size_t)(colon - rest));
		runtime[colon - rest] = '\0';
		if (dl_duration(runtime, &o->dl_runtime_ns) < 0 || dl_duration(colon + 1, &o->dl_period_ns) < 0)
			return -EINVAL;
		o->policy = POLICY_DEADLINE;
		o->priority = 0;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

static void set_stop(struct rtla_opts *o, uint64_t us)
{
	if (us && (!o->stop_us || us < o->stop_us))
		o->stop_us = us;
}

/* -T, -i, -a and --aa-only: a stop above US (rtla's 0: none). */
static int set_stop_opt(struct rtla_opts *o, int key, const char *as, const char *arg)
{
	uint64_t v;

	if (number(as, arg, 0, 3600u * 1000000u, &v) < 0)
		return -EINVAL;
	if (v == 0)
		return LAT_GO_ON;
	set_stop(o, v);
	if (key == K_AUTO && !o->trace_file)
		o->trace_file = RTLA_TRACE_FILE;
	o->aa_only = o->aa_only || key == K_AA_ONLY;
	return LAT_GO_ON;
}

/* The options rtla takes and latscope checks, to no effect. */
static int set_checked(struct rtla_opts *o, int key, const char *arg)
{
	uint64_t v;

	switch (key) {
	case K_HOUSEKEEPING:
		if (cpuset_parse(arg, &(struct cpuset){ 0 }) < 0)
			return front_refuse(&rtla_front, "option '%s': '%s' is not a CPU list", "-H", arg);
		return LAT_GO_ON;
	case K_STACK:
		return number("-s", arg, 0, UINT32_MAX, &v);
	case K_EVENT:
		if (!arg[0])
			return front_refuse(&rtla_front, "option '%s': '%s' is not SYSTEM[:EVENT]", "-e", arg);
		o->event_given = true;
		return LAT_GO_ON;
	case K_TRIGGER:
	case K_FILTER:
		if (!o->event_given)
			return front_refuse(&rtla_front, "option '%s' needs a previous '%s'",
					    key == K_TRIGGER ? "--trigger" : "--filter", "-e");
		return LAT_GO_ON;
	case K_STACK_FORMAT:
		if (strcmp(arg, "truncate") != 0 && strcmp(arg, "skip") != 0 && strcmp(arg, "full") != 0)
			return front_refuse(&rtla_front, "option '%s': '%s' is not truncate, skip or full", "--stack-format",
					    arg);
		return LAT_GO_ON;
	}
	return LAT_GO_ON;
}

/* The numbers of the histogram and the system settings. */
static int set_number(struct rtla_opts *o, int key, const char *arg)
{
	uint64_t v;

	switch (key) {
	case K_ENTRIES:
		return number("-E", arg, 10, 9999999u, &o->entries);
	case K_BUCKET:
		return number("-b", arg, 1, 999999u, &o->bucket);
	case K_DMA:
		o->dma_given = true;
		return number("--dma-latency", arg, 0, 10000u, &v);
	case K_IDLE:
		/* rtla's -1 disables every state: latscope keeps state 0 (polling), the least it can */
		o->idle_given = true;
		return strcmp(arg, "-1") == 0 ? LAT_GO_ON
					      : number("--deepest-idle-state", arg, 0, CPUIDLE_STATES_MAX - 1u, &o->idle_state);
	case K_WARMUP:
		return number("--warm-up", arg, 0, 1000000u, &o->warmup_s);
	case K_BUFFER:
		return number("--trace-buffer-size", arg, 1, UINT32_MAX, &o->buffer_kb);
	}
	return set_checked(o, key, arg);
}

static int rtla_set(struct front_run *fr, const struct front_opt *row, const char *as, const char *arg)
{
	struct rtla_opts *o = &state_of(fr)->o;
	const int key = (int)row->key;
	uint64_t ns;

	switch (key) {
	case K_AUTO:
	case K_THREAD:
	case K_IRQ:
	case K_AA_ONLY:
		return set_stop_opt(o, key, as, arg);
	case K_PERIOD:
		/* microseconds; rtla's own example writes "-p 1ms" */
		if (parse_duration(arg, NS_PER_US, &ns) < 0 || ns < NS_PER_US || ns > NS_PER_SEC || ns % NS_PER_US)
			return front_refuse(&rtla_front, "option '%s': '%s' is not a period of 1us to 1s in whole microseconds",
					    "-p", arg);
		o->period_us = ns / NS_PER_US;
		return LAT_GO_ON;
	case K_PRIO:
		if (parse_prio(arg, o) < 0)
			return front_refuse(&rtla_front, "option '%s': '%s' is not o:NICE, r:PRIO, f:PRIO (1-99) or "
					    "d:RUNTIME:PERIOD", "-P", arg);
		return LAT_GO_ON;
	case K_CPUS:
		if (cpuset_parse(arg, &(struct cpuset){ 0 }) < 0)
			return front_refuse(&rtla_front, "option '%s': '%s' is not a CPU list", "-c", arg);
		o->cpus = arg;
		return LAT_GO_ON;
	case K_DURATION:
		if (parse_duration(arg, NS_PER_SEC, &o->duration_ns) < 0 || o->duration_ns < NS_PER_SEC)
			return front_refuse(&rtla_front, "option '%s': '%s' is not a duration of a second or more (such as 10, "
					    "30s, 5m, 2h or 1d)", "-d", arg);
		return LAT_GO_ON;
	case K_TRACE:
		o->trace_file = arg && arg[0] ? arg : RTLA_TRACE_FILE;
		return LAT_GO_ON;
	}
	return set_number(o, key, arg);
}

static int rtla_check(struct front_run *fr)
{
	const struct rtla_opts *o = &state_of(fr)->o;

	if (o->user && o->kernel)
		return front_refuse(&rtla_front, "options '%s' and '%s' together: give one", "-u", "-k");
	if (o->no_irq && o->no_thread)
		return front_refuse(&rtla_front, "options '%s' and '%s' together leave nothing to print", "--no-irq",
				    "--no-thread");
	if (o->no_index && !o->with_zeros)
		return front_refuse(&rtla_front, "option '%s' needs '%s' (rows without an index must all be printed)",
				    "--no-index", "--with-zeros");
	if (o->policy == POLICY_DEADLINE && o->period_us && o->period_us * NS_PER_US != o->dl_period_ns)
		return front_refuse(&rtla_front, "option '%s': the deadline period must be %s's: latscope's deadline threads "
				    "wake once a period (give -p the same, or leave it out)", "-P", "-p");
	return LAT_GO_ON;
}

/* "rtla timerlat [top] ..." and "rtla timerlat hist ...", as rtla reads them: argv from the options on. */
static int rtla_args(struct front_run *fr, int argc, char **argv, int *ret_argc, char ***ret_argv)
{
	int skip = 3;

	if (argc < 2) {
		storecmd_usage("rtla", "missing the tool: timerlat");
		return -EINVAL;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage_help();
		return LAT_DONE;
	}
	if (strcmp(argv[1], "timerlat") != 0)
		return front_refuse(&rtla_front, "'%s' is not supported: latscope stands in for rtla timerlat (hist and top)",
				    argv[1]);
	fr->mode = RTLA_TOP;    /* rtla's default mode */
	if (argc > 2 && strcmp(argv[2], "hist") == 0)
		fr->mode = RTLA_HIST;
	else if (argc > 2 && strcmp(argv[2], "top") == 0)
		fr->mode = RTLA_TOP;
	else if (argc > 2 && argv[2][0] && argv[2][0] != '-')
		return front_refuse(&rtla_front, "'timerlat %s' is not supported: hist or top", argv[2]);
	else
		skip = 2;
	state_of(fr)->o.top = fr->mode == RTLA_TOP;
	char **args = calloc((size_t)argc + 1u, sizeof(*args));
	if (!args)
		return -ENOMEM;
	args[0] = argv[0];
	for (int i = skip; i < argc; i++)
		args[i - skip + 1] = argv[i];
	*ret_argc = argc - skip + 1;
	*ret_argv = args;
	return LAT_GO_ON;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_to_ns(&ts);
}
/* Why the trace is off, from the runner's note (one line), or NULL while it is on. */
static const char *untraced_reason(const struct result *res)
{
	static const char prefix[] = TRACERUN_NOT_TRACED;
	for (unsigned i = 0; i < res->nnotes; i++)
		if (strncmp(res->notes[i], prefix, sizeof(prefix) - 1u) == 0)
			return res->notes[i] + sizeof(prefix) - 1u;
	return NULL;
}
static void say_untraced(struct rtla_state *lv, const char *why)
{
	fprintf(stderr, "latscope rtla: tracing is unavailable (%.*s): IRQ and Thr are not measured, only Usr\n",
		(int)strcspn(why, ";"), why);
	lv->said_untraced = true;
}
static void on_prepared(void *ctx, const struct result *res)
{
	struct rtla_state *lv = state_of(ctx);
	const char *why = lv->traced_asked ? untraced_reason(res) : "SCHED_DEADLINE's threads wait on no timer";

	if (((const struct front_run *)ctx)->verbose)
		text_notes(stderr, "rtla", res, 0, false);
	lv->notes_shown = res->nnotes;
	if (why)
		say_untraced(lv, why);
	lv->started_ns = lv->last_ns = now_ns();
}
/* top's screen, once a second as rtla refreshes it; the trace's columns come at the end. */
static void on_tick(void *ctx, const struct result *res)
{
	struct rtla_state *lv = state_of(ctx);
	uint64_t t = now_ns();

	if (!lv->o.top || lv->o.quiet || lv->o.aa_only || t - lv->last_ns < NS_PER_SEC)
		return;
	lv->last_ns = t;
	if (rtla_view_live(&lv->view, res) == 0) {
		lv->view.elapsed_ns = t - lv->started_ns;
		rtla_print_top(stdout, &lv->view, true);
		fflush(stdout);
	}
}
static int keep_hist(void *ctx, struct result *res)
{
	const struct rtla_state *lv = state_of(ctx);
	const uint64_t unit = lv->o.nano ? 1u : NS_PER_US;
	return lv->o.top ? result_keep_lin(res, unit, 0) : result_keep_lin(res, unit * lv->o.bucket,
									       (uint32_t)lv->o.entries);
}
/* The sample -T stopped at: its CPU and its deadline from the origin (trigger.c's "first"). */
static bool stop_sample(const struct result *res, int *cpu, int64_t *at_ns)
{
	const json_t *first = res->on_threshold ? json_object_get(res->on_threshold, "first") : NULL;
	if (!json_is_object(first))
		return false;
	*cpu = (int)json_integer_value(json_object_get(first, "cpu"));
	*at_ns = (int64_t)json_integer_value(json_object_get(first, "deadline_ns"));
	return true;
}

/* The timer's parameters as rtla's options ask.  0. */
static int rtla_translate(struct front_run *fr)
{
	struct rtla_state *s = state_of(fr);
	const struct rtla_opts *o = &s->o;
	struct timer_cmd *tc = fr->params;

	s->trace_file = front_add_file(fr, "'--trace'", "-t", o->trace_file);
	s->trace_file->check_only = !o->stop_us;        /* written at a stop only */
	if (o->cpus)
		cpuset_parse(o->cpus, &tc->run.cpus);
	tc->run.policy = o->policy;
	tc->run.priority = o->priority;
	tc->p.interval_ns = (o->period_us ? o->period_us : RTLA_DEFAULT_PERIOD_US) * NS_PER_US;
	if (o->policy == POLICY_DEADLINE) {
		tc->run.dl.runtime_ns = o->dl_runtime_ns;
		tc->run.dl.period_ns = o->dl_period_ns;
		tc->p.interval_ns = o->dl_period_ns;
		front_mark(fr, TIMER_OPT_RUNTIME);
		front_mark(fr, TIMER_OPT_PERIOD);
	} else {
		front_mark(fr, TIMER_OPT_PRIORITY);
	}
	/* the decomposition: SCHED_DEADLINE's threads wait on no timer to trace */
	tc->run.trace = o->policy != POLICY_DEADLINE;
	if (tc->run.trace)
		front_mark(fr, TIMER_OPT_TRACE);
	/* rtla's own switch to its tracefs collection; else BPF where it can be used */
	const char *no_bpf = getenv("RTLA_NO_BPF");
	tc->run.trace_backend = no_bpf && strcmp(no_bpf, "1") == 0 ? TRACE_BACKEND_TRACEFS : TRACE_BACKEND_AUTO;
	tc->run.duration_ns = o->duration_ns;
	tc->run.no_pm_qos = !o->dma_given;       /* rtla leaves /dev/cpu_dma_latency alone unless asked */
	tc->run.limit_idle = o->idle_given;
	tc->run.deepest_idle_state = o->idle_state;
	tc->run.warmup = o->warmup_s;
	tc->run.trace_buffer_kb = (unsigned)o->buffer_kb;
	if (o->stop_us) {
		tc->out.on_threshold.items[tc->out.on_threshold.n++] = "stop";
		tc->run.trigger_ns = o->stop_us * NS_PER_US;
		front_mark(fr, TIMER_OPT_ON_THRESHOLD);
		front_mark(fr, TIMER_OPT_TRIGGER);
		if (tc->run.trace) {
			tc->run.trace_above_ns = tc->run.trigger_ns;
			front_mark(fr, TIMER_OPT_TRACE_ABOVE);
		}
	}
	s->traced_asked = tc->run.trace;
	s->view = (struct rtla_view){ .nano = o->nano, .no_irq = o->no_irq, .no_thread = o->no_thread,
				      .no_summary = o->no_summary, .no_header = o->no_header, .no_index = o->no_index,
				      .with_zeros = o->with_zeros, .user = o->user,
				      .entries = o->top ? 0 : (uint32_t)o->entries, .bucket = (uint32_t)o->bucket };
	return 0;
}

static int print_trace(FILE *out, const void *res)
{
	text_trace(out, res);
	return 0;
}

/* What rtla prints after the run: the histogram or the table, then a stop's analysis. */
static int print_outputs(struct front_run *fr)
{
	struct rtla_state *lv = state_of(fr);
	const struct rtla_opts *o = &lv->o;
	const struct result *res = &fr->res;
	int code = EXIT_OK;

	int r = rtla_view_fill(&lv->view, res);
	if (r < 0) {
		fprintf(stderr, "latscope rtla: cannot print the result: %s\n", strerror(-r));
		return EXIT_ERROR;
	}
	/* rtla clears the screen before its last table too, unless -q */
	/* -EIO: standard output failed, which main judges (a closed pipe: quietly) */
	if (!o->aa_only &&
	    (r = o->top ? rtla_print_top(stdout, &lv->view, !o->quiet)
			: rtla_print_hist(stdout, &lv->view)) < 0 &&
	    r != -EIO)
		code = EXIT_ERROR;
	if (!result_threshold_stopped(res))
		return code;
	printf("rtla timerlat hit stop tracing\n");
	int cpu;
	int64_t at_ns;
	if (!o->no_aa && stop_sample(res, &cpu, &at_ns) && rtla_print_analysis(stdout, res, cpu, at_ns) == -ENOENT)
		fprintf(stderr, "latscope rtla: no auto-analysis: the trace did not explain the sample that stopped "
			"the run\n");
	if (o->trace_file && !res->trace) {
		fprintf(stderr, "latscope rtla: no trace to save to '%s': tracing was unavailable\n", o->trace_file);
	} else if (o->trace_file) {
		printf("  Saving trace to %s\n", o->trace_file);
		fflush(stdout);
		if (front_put(fr, lv->trace_file, print_trace, res) < 0)
			code = EXIT_ERROR;
	}
	return code;
}

static int rtla_write(struct front_run *fr, int code)
{
	struct rtla_state *s = state_of(fr);

	if (fr->verbose)
		text_notes(stderr, "rtla", &fr->res, s->notes_shown, false);
	/* traced, but the trace could not be read at the end */
	if (s->traced_asked && !fr->res.trace && !s->said_untraced)
		say_untraced(s,
			     "the trace could not be read; run it again with --verbose to see why");
	int pcode = print_outputs(fr);
	return pcode != EXIT_OK ? pcode : code;
}

static void rtla_done(struct front_run *fr)
{
	rtla_view_free(&state_of(fr)->view);
}

static void rtla_defaults(void *st)
{
	struct rtla_opts *o = &((struct rtla_state *)st)->o;
	*o = (struct rtla_opts){ .policy = POLICY_FIFO, .priority = RTLA_DEFAULT_PRIO, .entries = 256, .bucket = 1 };
}

const struct front_end rtla_front = {
	.name = "rtla",
	.mc = &timer_command,
	.opts = rtla_opts,
	.nopts = ARRAY_SIZE(rtla_opts),
	.sets = rtla_sets,
	.nsets = ARRAY_SIZE(rtla_sets),
	.refused = "",
	.mode_names = rtla_modes,
	.empty_args_ok = true,          /* rteval passes an empty word when it sets no period */
	.state_size = sizeof(struct rtla_state),
	.defaults = rtla_defaults,
	.help = usage_help,
	.args = rtla_args,
	.set = rtla_set,
	.check = rtla_check,
	.translate = rtla_translate,
	.prepared = on_prepared,
	.tick = on_tick,
	.shape = keep_hist,
	.write = rtla_write,
	.done = rtla_done,
};

int cmd_rtla(int argc, char **argv)
{
	return front_run(&rtla_front, argc, argv);
}
