/*
 * latscope rtla: `rtla timerlat hist` and `rtla timerlat top` on latscope's
 * timer probe with --trace.  The options are translated into a `latscope
 * timer` run (stored with every statistic); what rtla prints is printed from
 * the result: Usr from every sample, IRQ and Thr from the trace's stages
 * (report/rtla.h).  rteval's measurement module runs this unchanged.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "cli/outputs.h"
#include "cli/storecmd.h"
#include "cli/timer.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "probe/tracerun.h"
#include "report/rtla.h"
#include "report/text.h"
#include "report/tracetext.h"
#include "sys/atomicfile.h"

#define RTLA_MAX_LABELS 16
#define RTLA_DEFAULT_PERIOD_US 1000u
#define RTLA_DEFAULT_PRIO 95u           /* timerlat's threads run at SCHED_FIFO 95 */
#define RTLA_TRACE_FILE "timerlat_trace.txt"

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
	bool verbose;
	const char *db;
	bool no_store;
	const char *labels[RTLA_MAX_LABELS];
	unsigned nlabels;
};

enum {
	O_NO_IRQ = 256, O_NO_THREAD, O_NO_HEADER, O_NO_SUMMARY, O_NO_INDEX, O_WITH_ZEROS, O_TRIGGER, O_FILTER, O_DMA,
	O_NO_AA, O_DUMP_TASKS, O_WARM_UP, O_BUFFER, O_IDLE, O_ON_THRESHOLD, O_ON_END, O_BPF, O_STACK_FORMAT, O_AA_ONLY,
	O_DB, O_NO_STORE, O_LABEL, O_VERBOSE, O_HELP,
};

/* rtla's timerlat hist and top options (top has -q and --aa-only, hist the histogram's). */
static const struct option long_opts[] = {
	{ "auto", required_argument, NULL, 'a' },
	{ "bucket-size", required_argument, NULL, 'b' },
	{ "entries", required_argument, NULL, 'E' },
	{ "help", no_argument, NULL, O_HELP },
	{ "irq", required_argument, NULL, 'i' },
	{ "nano", no_argument, NULL, 'n' },
	{ "period", required_argument, NULL, 'p' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "stack", required_argument, NULL, 's' },
	{ "thread", required_argument, NULL, 'T' },
	{ "trace", optional_argument, NULL, 't' },
	{ "user-threads", no_argument, NULL, 'u' },
	{ "kernel-threads", no_argument, NULL, 'k' },
	{ "user-load", no_argument, NULL, 'U' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "cgroup", optional_argument, NULL, 'C' },
	{ "debug", no_argument, NULL, 'D' },
	{ "duration", required_argument, NULL, 'd' },
	{ "event", required_argument, NULL, 'e' },
	{ "house-keeping", required_argument, NULL, 'H' },
	{ "priority", required_argument, NULL, 'P' },
	{ "no-irq", no_argument, NULL, O_NO_IRQ },
	{ "no-thread", no_argument, NULL, O_NO_THREAD },
	{ "no-header", no_argument, NULL, O_NO_HEADER },
	{ "no-summary", no_argument, NULL, O_NO_SUMMARY },
	{ "no-index", no_argument, NULL, O_NO_INDEX },
	{ "with-zeros", no_argument, NULL, O_WITH_ZEROS },
	{ "trigger", required_argument, NULL, O_TRIGGER },
	{ "filter", required_argument, NULL, O_FILTER },
	{ "dma-latency", required_argument, NULL, O_DMA },
	{ "no-aa", no_argument, NULL, O_NO_AA },
	{ "dump-task", no_argument, NULL, O_DUMP_TASKS },
	{ "dump-tasks", no_argument, NULL, O_DUMP_TASKS },
	{ "warm-up", required_argument, NULL, O_WARM_UP },
	{ "trace-buffer-size", required_argument, NULL, O_BUFFER },
	{ "deepest-idle-state", required_argument, NULL, O_IDLE },
	{ "on-threshold", required_argument, NULL, O_ON_THRESHOLD },
	{ "on-end", required_argument, NULL, O_ON_END },
	{ "bpf-action", required_argument, NULL, O_BPF },
	{ "stack-format", required_argument, NULL, O_STACK_FORMAT },
	{ "aa-only", required_argument, NULL, O_AA_ONLY },
	{ "db", required_argument, NULL, O_DB },
	{ "no-store", no_argument, NULL, O_NO_STORE },
	{ "label", required_argument, NULL, O_LABEL },
	{ "verbose", no_argument, NULL, O_VERBOSE },
	{ NULL, 0, NULL, 0 },
};
static const char short_opts[] = ":a:b:E:hi:np:qs:T:t::ukUc:C::Dd:e:H:P:";

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
	       "      --no-store           do not store the run\n"
	       "      --label=KEY=VALUE    tag the stored run; repeatable\n"
	       "      --verbose            latscope's notes and the stored run's id on standard error\n"
	       "      --help               show this help\n\n"
	       "Refused: -U/--user-load, --on-threshold, --on-end and --bpf-action (rtla's actions).\n"
	       "Exit status: 0 done (also when stopped by Ctrl-C, SIGTERM or SIGHUP), 1 error, 2 bad usage,\n"
	       "3 stopped by -T, -i, -a or --aa-only.  See latscope-rtla(1).\n");
}

/* The usage error, then -EINVAL for the parser to return. */
#define refuse(...) (storecmd_refuse("rtla", __VA_ARGS__), -EINVAL)

/* A whole number in [min, max]; rtla's own bounds are given by the caller. */
static int number(const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	if (parse_u64(text, &v) < 0)
		return refuse("option '%s': '%s' is not a whole number", opt, text);
	if (v < min || v > max) {
		storecmd_refuse("rtla", "option '%s': '%s' is outside %llu-%llu", opt, text, (unsigned long long)min,
				(unsigned long long)max);
		return -EINVAL;
	}
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

/* rtla's optional arguments: -tFILE, -t=FILE, --trace=FILE, or "-t FILE" when
 * the next word is not an option. */
static const char *optional_arg(int argc, char **argv)
{
	if (optarg)
		return optarg[0] == '=' ? optarg + 1 : optarg;
	if (optind < argc && argv[optind][0] != '-' && argv[optind][0] != '\0')
		return argv[optind++];
	return NULL;
}

static const char *opt_name(int c, int li, char **argv, char *buf, size_t size)
{
	if (li >= 0)
		snprintf(buf, size, "--%s", long_opts[li].name);
	else if (c != '?' && c != ':')
		snprintf(buf, size, "-%c", c);
	else if (optopt > 0 && optopt < 256)
		snprintf(buf, size, "-%c", optopt);
	else
		snprintf(buf, size, "%s", argv[optind - 1]);
	return buf;
}

static void set_stop(struct rtla_opts *o, uint64_t us)
{
	if (us && (!o->stop_us || us < o->stop_us))
		o->stop_us = us;
}

/* The option letters only hist or only top takes. */
static bool for_this_tool(const struct rtla_opts *o, int c)
{
	const bool hist_only = c == 'E' || c == 'b' || c == O_NO_IRQ || c == O_NO_THREAD || c == O_NO_HEADER ||
			       c == O_NO_SUMMARY || c == O_NO_INDEX || c == O_WITH_ZEROS;
	const bool top_only = c == 'q' || c == O_AA_ONLY;
	return o->top ? !hist_only : !top_only;
}

/* LAT_GO_ON, LAT_DONE after --help, or -EINVAL after the usage error was printed. */
static int parse_opts(int argc, char **argv, struct rtla_opts *o)
{
	char name[64];
	uint64_t v;
	int c, li;

	optind = 0;
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, short_opts, long_opts, &li)) != -1) {
		if (c != ':' && c != '?' && !for_this_tool(o, c)) {
			storecmd_refuse("rtla", "option '%s' is not an option of timerlat %s",
					opt_name(c, li, argv, name, sizeof(name)), o->top ? "top" : "hist");
			return -EINVAL;
		}
		switch (c) {
		case 'a':
		case 'T':
		case 'i':
		case O_AA_ONLY:
			if (number(opt_name(c, li, argv, name, sizeof(name)), optarg, 0, 3600u * 1000000u, &v) < 0)
				return -EINVAL;
			if (v == 0)
				break;          /* rtla's 0: no stop */
			set_stop(o, v);
			if (c == 'a' && !o->trace_file)
				o->trace_file = RTLA_TRACE_FILE;
			o->aa_only = o->aa_only || c == O_AA_ONLY;
			break;
		case 'p': {
			/* microseconds; rtla's own example writes "-p 1ms" */
			uint64_t ns;
			if (parse_duration(optarg, NS_PER_US, &ns) < 0 || ns < NS_PER_US || ns > NS_PER_SEC || ns % NS_PER_US)
				return refuse("option '%s': '%s' is not a period of 1us to 1s in whole microseconds", "-p",
					      optarg);
			o->period_us = ns / NS_PER_US;
			break;
		}
		case 'P':
			if (parse_prio(optarg, o) < 0)
				return refuse("option '%s': '%s' is not o:NICE, r:PRIO, f:PRIO (1-99) or d:RUNTIME:PERIOD", "-P",
					      optarg);
			break;
		case 'c':
			if (cpuset_parse(optarg, &(struct cpuset){ 0 }) < 0)
				return refuse("option '%s': '%s' is not a CPU list", "-c", optarg);
			o->cpus = optarg;
			break;
		case 'H':
			if (cpuset_parse(optarg, &(struct cpuset){ 0 }) < 0)
				return refuse("option '%s': '%s' is not a CPU list", "-H", optarg);
			break;
		case 'd':
			if (parse_duration(optarg, NS_PER_SEC, &o->duration_ns) < 0 || o->duration_ns < NS_PER_SEC)
				return refuse("option '%s': '%s' is not a duration of a second or more (such as 10, 30s, 5m, 2h "
					      "or 1d)", "-d", optarg);
			break;
		case 't': {
			const char *f = optional_arg(argc, argv);
			o->trace_file = f && f[0] ? f : RTLA_TRACE_FILE;
			break;
		}
		case 'C':
			optional_arg(argc, argv);       /* threads stay in latscope's own cgroup */
			break;
		case 'u': o->user = true; break;
		case 'k': o->kernel = true; break;
		case 'n': o->nano = true; break;
		case 'q': o->quiet = true; break;
		case 'D': o->verbose = true; break;
		case 's':
			if (number("-s", optarg, 0, UINT32_MAX, &v) < 0)
				return -EINVAL;
			break;
		case 'e':
			if (!optarg[0])
				return refuse("option '%s': '%s' is not SYSTEM[:EVENT]", "-e", optarg);
			o->event_given = true;
			break;
		case O_TRIGGER:
		case O_FILTER:
			if (!o->event_given)
				return refuse("option '%s' needs a previous '%s'", c == O_TRIGGER ? "--trigger" : "--filter", "-e");
			break;
		case 'E':
			if (number("-E", optarg, 10, 9999999u, &o->entries) < 0)
				return -EINVAL;
			break;
		case 'b':
			if (number("-b", optarg, 1, 999999u, &o->bucket) < 0)
				return -EINVAL;
			break;
		case O_NO_IRQ: o->no_irq = true; break;
		case O_NO_THREAD: o->no_thread = true; break;
		case O_NO_HEADER: o->no_header = true; break;
		case O_NO_SUMMARY: o->no_summary = true; break;
		case O_NO_INDEX: o->no_index = true; break;
		case O_WITH_ZEROS: o->with_zeros = true; break;
		case O_NO_AA: o->no_aa = true; break;
		case O_DUMP_TASKS: break;
		case O_STACK_FORMAT:
			if (strcmp(optarg, "truncate") != 0 && strcmp(optarg, "skip") != 0 && strcmp(optarg, "full") != 0)
				return refuse("option '%s': '%s' is not truncate, skip or full", "--stack-format", optarg);
			break;
		case O_DMA:
			if (number("--dma-latency", optarg, 0, 10000u, &v) < 0)
				return -EINVAL;
			o->dma_given = true;
			break;
		case O_IDLE:
			/* rtla's -1 disables every state: latscope keeps state 0 (polling), the least it can */
			if (strcmp(optarg, "-1") != 0 &&
			    number("--deepest-idle-state", optarg, 0, CPUIDLE_STATES_MAX - 1u, &o->idle_state) < 0)
				return -EINVAL;
			o->idle_given = true;
			break;
		case O_WARM_UP:
			if (number("--warm-up", optarg, 0, 1000000u, &o->warmup_s) < 0)
				return -EINVAL;
			break;
		case O_BUFFER:
			if (number("--trace-buffer-size", optarg, 1, UINT32_MAX, &o->buffer_kb) < 0)
				return -EINVAL;
			break;
		case 'U':
			return refuse("option '%s': latscope runs its own measuring threads; no other workload can %s", "-U",
				      "attach to them");
		case O_ON_THRESHOLD:
		case O_ON_END:
		case O_BPF:
			return refuse("option '%s' (rtla's actions) is not supported: use %s", opt_name(c, li, argv, name,
				      sizeof(name)), "latscope timer --on-threshold or --on-end");
		case O_DB: o->db = optarg; break;
		case O_NO_STORE: o->no_store = true; break;
		case O_VERBOSE: o->verbose = true; break;
		case O_LABEL:
			if (o->nlabels == RTLA_MAX_LABELS) {
				storecmd_refuse("rtla", "option '--label': more than %d labels", RTLA_MAX_LABELS);
				return -EINVAL;
			}
			o->labels[o->nlabels++] = optarg;
			break;
		case 'h':
		case O_HELP:
			usage_help();
			return LAT_DONE;
		case ':':
			return refuse("option '%s' needs a value", opt_name(c, li, argv, name, sizeof(name)));
		default:
			return refuse("unknown option '%s'", opt_name(c, li, argv, name, sizeof(name)));
		}
	}
	/* rtla ignores words that are not options; rteval passes an empty one when it sets no period */
	for (int i = optind; i < argc; i++)
		if (argv[i][0])
			return refuse("unexpected argument '%s'", argv[i]);
	if (o->user && o->kernel)
		return refuse("options '%s' and '%s' together: give one", "-u", "-k");
	if (o->no_irq && o->no_thread)
		return refuse("options '%s' and '%s' together leave nothing to print", "--no-irq", "--no-thread");
	if (o->no_index && !o->with_zeros)
		return refuse("option '%s' needs '%s' (rows without an index must all be printed)", "--no-index",
			      "--with-zeros");
	if (o->policy == POLICY_DEADLINE && o->period_us && o->period_us * NS_PER_US != o->dl_period_ns)
		return refuse("option '%s': the deadline period must be %s's: latscope's deadline threads wake once a "
			      "period (give -p the same, or leave it out)", "-P", "-p");
	return LAT_GO_ON;
}

struct rtla_live {
	const struct rtla_opts *o;
	struct rtla_view view;
	uint64_t started_ns, last_ns;
	unsigned notes_shown;
	bool traced_asked;
	bool said_untraced;             /* the line saying so was printed */
};

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

static void say_untraced(struct rtla_live *lv, const char *why)
{
	fprintf(stderr, "latscope rtla: tracing is unavailable (%.*s): IRQ and Thr are not measured, only Usr\n",
		(int)strcspn(why, ";"), why);
	lv->said_untraced = true;
}

static void on_prepared(void *ctx, const struct result *res)
{
	struct rtla_live *lv = ctx;
	const char *why = lv->traced_asked ? untraced_reason(res) : "SCHED_DEADLINE's threads wait on no timer";

	if (lv->o->verbose)
		text_notes(stderr, "rtla", res, 0, false);
	lv->notes_shown = res->nnotes;
	if (why)
		say_untraced(lv, why);
	lv->started_ns = lv->last_ns = now_ns();
}

/* top's screen, once a second as rtla refreshes it; the trace's columns come at the end. */
static void on_tick(void *ctx, const struct result *res)
{
	struct rtla_live *lv = ctx;
	uint64_t t = now_ns();

	if (!lv->o->top || lv->o->quiet || lv->o->aa_only || t - lv->last_ns < NS_PER_SEC)
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
	const struct rtla_live *lv = ctx;
	const uint64_t unit = lv->o->nano ? 1u : NS_PER_US;
	return lv->o->top ? result_keep_lin(res, unit, 0) : result_keep_lin(res, unit * lv->o->bucket,
									       (uint32_t)lv->o->entries);
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

static int write_trace_file(const char *path, struct atomic_file *sink, const struct result *res)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int r = m ? 0 : -ENOMEM;

	if (m) {
		text_trace(m, res);
		if (fclose(m) != 0)
			r = -ENOMEM;
	}
	if (r == 0 && (r = atomic_file_write(sink, buf, len)) == 0)
		r = atomic_file_commit(sink);
	if (r < 0)
		fprintf(stderr, "latscope rtla: cannot write '%s': %s\n", path, strerror(-r));
	free(buf);
	return r;
}

/* What rtla prints after the run: the histogram or the table, then a stop's analysis. */
static int print_outputs(const struct rtla_opts *o, struct rtla_live *lv, const struct result *res,
			 struct atomic_file *trace_sink)
{
	int code = EXIT_OK;

	int r = rtla_view_fill(&lv->view, res);
	if (r < 0) {
		fprintf(stderr, "latscope rtla: cannot print the result: %s\n", strerror(-r));
		return EXIT_ERROR;
	}
	/* rtla clears the screen before its last table too, unless -q */
	if (!o->aa_only && (o->top ? rtla_print_top(stdout, &lv->view, !o->quiet) : rtla_print_hist(stdout, &lv->view)) < 0)
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
		if (write_trace_file(o->trace_file, trace_sink, res) < 0)
			code = EXIT_ERROR;
	}
	return code;
}

static int run(int argc, char **argv, struct rtla_opts *o)
{
	struct result res = { 0 };
	struct measure_outcome out = { .res = &res };
	struct atomic_file trace_sink = { .fd = -1 };
	int code;

	const struct output outs[] = { { "'--trace'", o->trace_file } };
	if ((code = outputs_check("rtla", outs, 1, o->db, !o->no_store)) != 0)
		return code;
	if (o->trace_file && o->stop_us && (code = atomic_file_open(o->trace_file, &trace_sink)) < 0)
		return storecmd_refuse("rtla", "option '-t': cannot write '%s': %s", o->trace_file, strerror(-code));

	struct timer_cmd *tc = calloc(1, sizeof(*tc));
	struct opt_result given = { 0 };
	const struct measure_cmd *mc = &timer_command;
	if (!tc) {
		atomic_file_close(&trace_sink);
		return EXIT_ERROR;
	}
	mc->defaults(tc);
	if (o->cpus)
		cpuset_parse(o->cpus, &tc->run.cpus);
	tc->run.policy = o->policy;
	tc->run.priority = o->priority;
	tc->p.interval_ns = (o->period_us ? o->period_us : RTLA_DEFAULT_PERIOD_US) * NS_PER_US;
	if (o->policy == POLICY_DEADLINE) {
		tc->run.dl.runtime_ns = o->dl_runtime_ns;
		tc->run.dl.period_ns = o->dl_period_ns;
		tc->p.interval_ns = o->dl_period_ns;
	}
	/* the decomposition: SCHED_DEADLINE's threads wait on no timer to trace */
	tc->run.trace = o->policy != POLICY_DEADLINE;
	/* rtla's own switch to its tracefs collection; else BPF where it can be used */
	const char *no_bpf = getenv("RTLA_NO_BPF");
	tc->run.trace_backend = no_bpf && strcmp(no_bpf, "1") == 0 ? TRACE_BACKEND_TRACEFS : TRACE_BACKEND_AUTO;
	tc->run.duration_ns = o->duration_ns;
	tc->run.no_pm_qos = !o->dma_given;       /* rtla leaves /dev/cpu_dma_latency alone unless asked */
	tc->run.limit_idle = o->idle_given;
	tc->run.deepest_idle_state = o->idle_state;
	tc->run.warmup = o->warmup_s;
	tc->run.trace_buffer_kb = (unsigned)o->buffer_kb;
	tc->out.db_path = o->db;
	tc->out.no_store = o->no_store;
	if (o->stop_us) {
		tc->out.on_threshold.items[tc->out.on_threshold.n++] = "stop";
		tc->run.trigger_ns = o->stop_us * NS_PER_US;
		if (tc->run.trace)
			tc->run.trace_above_ns = tc->run.trigger_ns;
	}
	for (unsigned i = 0; i < o->nlabels; i++)
		if (parse_label(o->labels[i], &tc->out.labels.items[tc->out.labels.n++]) < 0) {
			free(tc);
			atomic_file_close(&trace_sink);
			return storecmd_refuse("rtla", "option '--label': '%s' is not KEY=VALUE", o->labels[i]);
		}
	static const char *const set[] = { "policy", "interval", "window", "label", "no-pm-qos", "warmup" };
	for (size_t i = 0; i < ARRAY_SIZE(set); i++)
		opt_mark(mc->opts, mc->nopts, &given, set[i]);
	if (o->policy != POLICY_DEADLINE)
		opt_mark(mc->opts, mc->nopts, &given, "priority");
	if (o->cpus)
		opt_mark(mc->opts, mc->nopts, &given, "cpus");
	if (o->duration_ns)
		opt_mark(mc->opts, mc->nopts, &given, "duration");
	if (tc->run.trace)
		opt_mark(mc->opts, mc->nopts, &given, "trace");
	if (o->stop_us) {
		opt_mark(mc->opts, mc->nopts, &given, "on-threshold");
		opt_mark(mc->opts, mc->nopts, &given, "trigger");
		if (tc->run.trace)
			opt_mark(mc->opts, mc->nopts, &given, "trace-above");
	}
	if (o->idle_given)
		opt_mark(mc->opts, mc->nopts, &given, "deepest-idle-state");
	if (o->policy == POLICY_DEADLINE) {
		opt_mark(mc->opts, mc->nopts, &given, "runtime");
		opt_mark(mc->opts, mc->nopts, &given, "period");
	}

	struct rtla_live lv = {
		.o = o,
		.traced_asked = tc->run.trace,
		.view = { .nano = o->nano, .no_irq = o->no_irq, .no_thread = o->no_thread, .no_summary = o->no_summary,
			  .no_header = o->no_header, .no_index = o->no_index, .with_zeros = o->with_zeros,
			  .user = o->user, .entries = o->top ? 0 : (uint32_t)o->entries, .bucket = (uint32_t)o->bucket },
	};
	struct measure_hooks mh = { .silent = true, .prepared = on_prepared, .tick = on_tick, .shape = keep_hist,
				    .ctx = &lv };
	struct measure_cmd front = timer_command;
	front.name = "rtla";

	code = measure_with(&front, tc, &given, argc, argv, &mh, &out);
	free(tc);
	if (!res.cpus) {
		atomic_file_close(&trace_sink);
		return code;
	}
	if (o->verbose)
		text_notes(stderr, "rtla", &res, lv.notes_shown, false);
	/* traced, but the trace could not be read at the end */
	if (lv.traced_asked && !res.trace && !lv.said_untraced)
		say_untraced(&lv, "the trace could not be read; latscope rtla --verbose says why");
	int pcode = print_outputs(o, &lv, &res, &trace_sink);
	fflush(stdout);
	if (out.stored_id > 0 && o->verbose)
		fprintf(stderr, "latscope rtla: stored as latscope run %lld (latscope show %lld)\n",
			(long long)out.stored_id, (long long)out.stored_id);
	rtla_view_free(&lv.view);
	atomic_file_close(&trace_sink);
	result_free(&res);
	return pcode != EXIT_OK ? pcode : code;
}

int cmd_rtla(int argc, char **argv)
{
	struct rtla_opts o = { .policy = POLICY_FIFO, .priority = RTLA_DEFAULT_PRIO, .entries = 256, .bucket = 1 };
	int code;

	if (argc < 2)
		return storecmd_usage("rtla", "missing the tool: timerlat");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage_help();
		return EXIT_OK;
	}
	if (strcmp(argv[1], "timerlat") != 0)
		return storecmd_refuse("rtla", "'%s' is not supported: latscope stands in for rtla timerlat (hist and top)",
				       argv[1]);
	/* "rtla timerlat [top] ..." and "rtla timerlat hist ...", as rtla reads them */
	int skip = 2;
	if (argc > 2 && strcmp(argv[2], "hist") == 0)
		skip = 3;
	else if (argc > 2 && strcmp(argv[2], "top") == 0) {
		o.top = true;
		skip = 3;
	} else if (argc > 2 && argv[2][0] && argv[2][0] != '-')
		return storecmd_refuse("rtla", "'timerlat %s' is not supported: hist or top", argv[2]);
	else
		o.top = true;   /* rtla's default mode */
	char **args = calloc((size_t)argc + 1u, sizeof(*args));
	if (!args)
		return EXIT_ERROR;
	args[0] = argv[0];
	for (int i = skip; i < argc; i++)
		args[i - skip + 1] = argv[i];
	code = parse_opts(argc - skip + 1, args, &o);
	if (code == LAT_GO_ON)
		code = run(argc, argv, &o);
	else
		code = storecmd_exit(code);
	free(args);
	return code;
}
