/*
 * cyclictest's command line and output on latscope's timer probe.  The
 * options become a `latscope timer` run (which is what gets stored, with every
 * statistic), and what cyclictest would print is printed from cyclictest's own
 * counters, kept beside latscope's histogram (report/cyclictest.h).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "measure/timer.h"
#include "config.h"
#include "core/array.h"
#include "core/linhist.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "front/driver.h"
#include "report/cyclictest.h"
#include "report/text.h"
#include "sys/cpus.h"
#include "sys/smi.h"
#include "sys/sysfacts.h"
#include "trace/mark.h"

#define CYC_DEFAULT_INTERVAL_US 1000u
#define CYC_DEFAULT_DISTANCE_US 500u

struct cyc_opts {
	int threads;                    /* 0: as many as CPUs */
	bool threads_given;
	bool affinity_all;              /* -a without a list */
	const char *affinity;           /* -a LIST */
	bool smp;
	uint64_t interval_us;
	uint64_t distance_us;
	bool distance_given, prio_given, policy_given;
	uint64_t aligned_us;            /* -A USEC: thread N's deadlines N * USEC later */
	uint64_t duration_ns;
	uint64_t loops;
	uint64_t hist;                  /* -h/-H: bins; 0: none */
	bool histofall;
	const char *histfile;
	bool nsecs, quiet;
	uint64_t priority;
	int policy;                     /* enum sched_policy_kind */
	uint64_t breaktrace;            /* -b: stop at the first value above it (us, ns with -N); 0: off */
	bool tracemark;                 /* --tracemark: mark the kernel's trace at the break and stop it */
	bool default_system;            /* --default-system or --laptop: no PM QoS hold */
	const char *mainaffinity;       /* --mainaffinity: the main thread's CPUs */
	uint64_t clock;                 /* -c: 0 CLOCK_MONOTONIC, 1 CLOCK_REALTIME */
	bool smi;                       /* --smi: an SMI column, where SMIs can be counted */
};

/* The options, and what the run's hooks keep. */
struct cyc_state {
	struct cyc_opts o;
	char store[4096];               /* the words join_optional made */
	struct cyc_view view;
	bool drawn;
	unsigned notes_shown;
	struct front_file *hist_file, *json_file;
};

static struct cyc_state *state_of(const void *fr)
{
	return ((const struct front_run *)fr)->st;
}

enum {
	K_AFFINITY, K_DURATION, K_HIST, K_HISTOFALL, K_INTERVAL, K_DISTANCE, K_LOOPS, K_PRIORITY, K_POLICY, K_THREADS, K_BREAK,
	K_CLOCK, K_LATENCY, K_ALIGNED,
};

#define FLAG(n, l, field, t) \
	{ .name = (n), .letter = (l), .kind = FRONT_FLAG, .key = offsetof(struct cyc_state, o.field), .to = (t) }
#define SET(n, l, a, k, t) { .name = (n), .letter = (l), .arg = (a), .kind = FRONT_SET, .key = (k), .to = (t) }
#define SET_CPUS(n, l, a, k, t) \
	{ .name = (n), .letter = (l), .arg = (a), .kind = FRONT_SET, .key = (k), .to = (t), .values = OPT_VALUES_CPUS }
#define IGNORED(n, l) { .name = (n), .letter = (l), .kind = FRONT_IGNORE }
#define REFUSED(n, l, a, w) { .name = (n), .letter = (l), .arg = (a), .kind = FRONT_REFUSE, .why = (w) }
#define NO_SPIKES "the stored run keeps the largest samples with their times ('latscope show')"

/* cyclictest's options; the refused ones in the order the help lists them (latscope-cyclictest(1) says the same). */
static const struct front_opt cyc_opts[] = {
	SET_CPUS("affinity", 'a', FRONT_OPT_ARG, K_AFFINITY, FRONT_TO(TIMER_OPT_CPUS)),
	SET("duration", 'D', FRONT_ARG, K_DURATION, FRONT_TO(TIMER_OPT_DURATION)),
	SET("histogram", 'h', FRONT_ARG, K_HIST, 0),
	SET("histofall", 'H', FRONT_ARG, K_HISTOFALL, 0),
	{ .name = "histfile", .arg = FRONT_ARG, .kind = FRONT_TEXT, .key = offsetof(struct cyc_state, o.histfile),
	  .values = OPT_VALUES_FILE },
	SET("interval", 'i', FRONT_ARG, K_INTERVAL, FRONT_TO(TIMER_OPT_INTERVAL)),
	SET("distance", 'd', FRONT_ARG, K_DISTANCE, FRONT_TO(TIMER_OPT_DISTANCE)),
	/* latscope's threads always start together: -A's USEC is the timer's --aligned-offset */
	SET("aligned", 'A', FRONT_OPT_ARG, K_ALIGNED, FRONT_TO(TIMER_OPT_ALIGNED_OFFSET)),
	SET("loops", 'l', FRONT_ARG, K_LOOPS, FRONT_TO(TIMER_OPT_LOOPS)),
	IGNORED("mlockall", 'm'),       /* latscope always locks its memory */
	FLAG("nsecs", 'N', nsecs, 0),
	SET("priority", 'p', FRONT_ARG, K_PRIORITY, FRONT_TO(TIMER_OPT_PRIORITY)),
	SET("policy", 0, FRONT_ARG, K_POLICY, FRONT_TO(TIMER_OPT_POLICY)),
	FLAG("quiet", 'q', quiet, 0),
	SET("threads", 't', FRONT_OPT_ARG, K_THREADS, 0),
	FLAG("smp", 'S', smp, 0),
	FLAG("smi", 0, smi, 0),
	FRONT_JSON_ROW,
	FRONT_DB_ROW,
	FRONT_DB_TRUST_ROW,
	FRONT_NO_STORE_ROW,
	FRONT_LABEL_ROW,
	/* the timer's own row reads it: the same range and the same message */
	{ .name = "checkpoint", .arg = FRONT_ARG, .kind = FRONT_MAP, .to = FRONT_TO(TIMER_OPT_CHECKPOINT) },
	{ .name = "until", .arg = FRONT_ARG, .kind = FRONT_MAP, .to = FRONT_TO(TIMER_OPT_UNTIL) },
	FRONT_HELP_ROW(0),
	SET("breaktrace", 'b', FRONT_ARG, K_BREAK, 0),
	SET("clock", 'c', FRONT_ARG, K_CLOCK, FRONT_TO(TIMER_OPT_CLOCK)),
	FLAG("tracemark", 0, tracemark, 0),
	FLAG("default-system", 0, default_system, FRONT_TO(TIMER_OPT_NO_PM_QOS)),
	FLAG("laptop", 0, default_system, FRONT_TO(TIMER_OPT_NO_PM_QOS)),
	SET("latency", 0, FRONT_ARG, K_LATENCY, 0),
	{ .name = "mainaffinity", .arg = FRONT_ARG, .kind = FRONT_TEXT, .key = offsetof(struct cyc_state, o.mainaffinity),
	  .values = OPT_VALUES_CPUS },
	IGNORED("unbuffered", 'u'),     /* every line is flushed as written */
	IGNORED("refresh_on_max", 'M'), /* the live lines are redrawn a few times a second, max or not */
	IGNORED("dbg_cyclictest", 0),   /* latscope's details are in the stored run */
	FRONT_VERBOSE_ROW("latscope-verbose", 0),
	REFUSED("secaligned", 0, FRONT_OPT_ARG,
		"latscope starts the threads' deadlines together at the run's own start, not on a "
		"full second of the clock (-A offsets them from there, USEC per thread)"),
	REFUSED("fifo", 'F', FRONT_ARG, "no named pipe: the live T: lines, the --json file and 'latscope show' carry "
		"the statistics"),
	REFUSED("oscope", 'o', FRONT_ARG, "no per-sample output: the measuring loop prints nothing"),
	REFUSED("verbose", 'v', FRONT_NO_ARG, "no per-sample output: the measuring loop prints nothing; use -h or --json "
		"(--latscope-verbose is latscope's own notes)"),
	REFUSED("priospread", 0, FRONT_NO_ARG, "latscope runs every thread at one priority"),
	REFUSED("relative", 'r', FRONT_NO_ARG, "latscope's timer waits for absolute deadlines only"),
	REFUSED("resolution", 'R', FRONT_NO_ARG, "use 'latscope clock', which measures each clock's resolution and cost"),
	REFUSED("system", 's', FRONT_NO_ARG, "latscope's timer waits with clock_nanosleep only"),
	REFUSED("posix_timers", 'x', FRONT_NO_ARG, "latscope's timer waits with clock_nanosleep only"),
	REFUSED("spike", 0, FRONT_ARG, NO_SPIKES),
	REFUSED("spike-nodes", 0, FRONT_ARG, NO_SPIKES),
};

/* The timer's rows every run sets from cyclictest's options, given or not. */
static const int cyc_sets[] = {
	TIMER_OPT_CPUS, TIMER_OPT_POLICY, TIMER_OPT_PRIORITY, TIMER_OPT_INTERVAL, TIMER_OPT_DISTANCE, TIMER_OPT_WINDOW,
	TIMER_OPT_LABEL,
};

static void usage_help(void)
{
	printf("Usage: latscope cyclictest [cyclictest options]\n"
	       "       cyclictest [cyclictest options]      (through the installed cyclictest link)\n\n"
	       "Run latscope's timer probe with cyclictest's options and print what cyclictest prints (T: lines,\n"
	       "the -h histogram and its summary, the --json file), so tools that parse cyclictest work\n"
	       "unchanged.  The run is also stored as a latscope timer run with every statistic.\n\n"
	       "Options (as cyclictest's):\n"
	       "  -a, --affinity[=CPUSET]  pin thread N to the Nth CPU of CPUSET (all, or none given: the Nth usable\n"
	       "                           CPU; !LIST: every usable CPU but those)\n"
	       "  -t, --threads[=NUM]      NUM threads, one per CPU (without NUM: one per CPU); default 1\n"
	       "  -S, --smp                one thread on every CPU\n"
	       "      --smi                each thread's SMIs: an SMI column on the T: lines, # SMIs: under -h (from the\n"
	       "                           msr PMU or /dev/cpu/N/msr; where neither counts, an error as in cyclictest)\n"
	       "  -p, --priority=PRIO      real-time priority 1-99 (SCHED_FIFO); 0: SCHED_OTHER (the default)\n"
	       "      --policy=NAME        other, normal, fifo or rr\n"
	       "  -i, --interval=US        period in microseconds (default 1000)\n"
	       "  -d, --distance=US        thread N waits -i + N * US (default 500; 0 with -h or -H)\n"
	       "  -A, --aligned[=USEC]     thread N's deadlines N * USEC after thread 0's (modulo its period); all\n"
	       "                           threads start at one instant with or without -A\n"
	       "  -D, --duration=TIME      run for TIME (s, m, h or d; a bare number is seconds)\n"
	       "  -l, --loops=N            stop after N wakeups per thread\n"
	       "  -h, --histogram=US       print a histogram of 1 us bins up to US after the run\n"
	       "  -H, --histofall=US       the same with a column of all threads\n"
	       "      --histfile=PATH      write the histogram to PATH instead of standard output\n"
	       "  -N, --nsecs              values in nanoseconds (histogram bins too)\n"
	       "  -q, --quiet              print only the summary at the end\n"
	       "  -m, --mlockall           accepted: latscope always locks its memory\n"
	       "  -b, --breaktrace=US      stop at the first value above US; print # Break thread: and # Break value:\n"
	       "      --tracemark          with -b: mark the kernel's trace at the break and stop it (tracing_on 0)\n"
	       "      --default-system     do not hold PM QoS (/dev/cpu_dma_latency); --laptop too\n"
	       "      --latency=0          the PM QoS hold (latscope holds 0 us only)\n"
	       "      --mainaffinity=CPUSET  run latscope's main thread there\n"
	       "  -c, --clock=0|1          CLOCK_MONOTONIC (0, the default) or CLOCK_REALTIME (1)\n"
	       "  -u, --unbuffered         accepted: every line is flushed as it is written\n"
	       "  -M, --refresh_on_max     accepted: the live lines are redrawn on a timer\n"
	       "      --dbg_cyclictest     accepted: latscope's details are in the stored run\n"
	       "      --json=FILE          write cyclictest's JSON result to FILE\n"
	       "latscope's own:\n"
	       "      --db=PATH            store the run here (default: as latscope timer)\n"
	       "      --db-trust           store it even in a store another user owns or may write\n"
	       "      --no-store           do not store the run\n"
	       "      --label=KEY=VALUE    tag the stored run; repeatable\n"
	       "      --checkpoint=DUR     store the run so far every DUR, marked partial (see latscope timer --help)\n"
	       "      --until=EXPR         measure until EXPR is decided, such as 'level(1h) < 100us'; exit 3 above,\n"
	       "                           4 undecided at the end (see latscope timer --help)\n"
	       "      --latscope-verbose   latscope's notes and the stored run's id on stderr (else only cyclictest's)\n"
	       "      --help               show this help\n\n"
	       "Differences: threads are always pinned (without -a, thread N runs on the Nth usable CPU), one\n"
	       "per CPU, and start their deadlines at one instant as with -A (cyclictest without -A starts each\n"
	       "where its thread happened to start); -D and -l together are refused.\n"
	       "cyclictest's other options are refused, saying why:\n ");
	size_t nrefused = 0, i = 0;
	for (size_t r = 0; r < ARRAY_SIZE(cyc_opts); r++)
		nrefused += cyc_opts[r].kind == FRONT_REFUSE;
	for (size_t r = 0; r < ARRAY_SIZE(cyc_opts); r++) {
		if (cyc_opts[r].kind != FRONT_REFUSE)
			continue;
		if (cyc_opts[r].letter)
			printf(" -%c", cyc_opts[r].letter);
		printf(" --%s%s", cyc_opts[r].name, i + 1 < nrefused ? (i % 6 == 5 ? ",\n " : ",") : ".\n\n");
		i++;
	}
	printf("Exit status: 0 done (also when stopped by Ctrl-C, SIGTERM, SIGHUP, SIGQUIT or -b), 1 error, 2 bad usage.\n"
	       "See latscope-cyclictest(1).\n");
}


/* The word after a bare -a or -t that cyclictest takes as its value (it looks
 * at the next argument itself): a number, or for -a a CPU list such as "all" or "!0". */
static bool takes_next(const char *opt, const char *next)
{
	/* "-a", or a cluster of flags ending in it ("-qa", "-mt") */
	size_t len = strlen(opt);
	bool cluster = len >= 2 && opt[0] == '-' && opt[1] != '-' && strspn(opt + 1, "mNqSuM") == len - 2;
	bool affinity = strcmp(opt, "--affinity") == 0 || (cluster && opt[len - 1] == 'a');
	bool threads = strcmp(opt, "--threads") == 0 || (cluster && opt[len - 1] == 't');
	bool aligned = strcmp(opt, "--aligned") == 0 || (cluster && opt[len - 1] == 'A');
	while (isspace((unsigned char)*next))
		next++;
	if (threads || aligned)
		return isdigit((unsigned char)*next) && atoi(next) != 0;
	return affinity && (isdigit((unsigned char)*next) || *next == '!' || strcmp(next, "all") == 0);
}

/* cyclictest reads "-a 2" and "-t 4" as "-a2" and "-t4": join them so getopt
 * does too.  Empty arguments, which cyclictest ignores, are dropped (rteval
 * passes one when it sets no interval). */
static int join_optional(int argc, char **argv, char ***ret, char *store, size_t storesize)
{
	char **out = calloc((size_t)argc + 1u, sizeof(*out));
	size_t used = 0;
	int n = 0;

	if (!out)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i > 0 && a[0] == '\0')
			continue;
		/* "-t 0", "-A 0": cyclictest takes no value and leaves the 0, ignored: one
		 * thread a CPU, no offset */
		if (i + 1 < argc && strcmp(argv[i + 1], "0") == 0 &&
		    (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0 || strcmp(a, "-A") == 0 ||
		     strcmp(a, "--aligned") == 0)) {
			out[n++] = argv[i++];
			continue;
		}
		if (i + 1 < argc && takes_next(a, argv[i + 1])) {
			int len = snprintf(store + used, storesize - used, "%s%s%s", a, a[1] == '-' ? "=" : "", argv[i + 1]);
			if (len < 0 || (size_t)len >= storesize - used) {
				free(out);
				return -E2BIG;
			}
			out[n++] = store + used;
			used += (size_t)len + 1u;
			i++;
			continue;
		}
		out[n++] = argv[i];
	}
	*ret = out;
	return n;
}

/* latscope's policy names (policy_choices), and cyclictest's "normal" for
 * other; not deadline, which cyclictest 2.x does not take either (rt-tests
 * has cyclicdeadline for it; latscope timer --policy deadline). */
static int parse_policy(const char *name, int *ret)
{
	if (strcmp(name, "normal") == 0)
		name = policy_choices[POLICY_OTHER];
	for (int i = 0; policy_choices[i]; i++)
		if (i != POLICY_DEADLINE && strcmp(name, policy_choices[i]) == 0) {
			*ret = i;
			return 0;
		}
	return -EINVAL;
}

/* A whole number as cyclictest reads one: blanks around it allowed (rteval
 * passes '-h 3500' as one argument, which getopt splits into -h and " 3500"). */
static int parse_count(const char *opt, const char *text, uint64_t max, uint64_t *ret)
{
	char buf[32];
	const char *b = text;
	size_t len;
	uint64_t v;

	while (isspace((unsigned char)*b))
		b++;
	len = strlen(b);
	while (len > 0 && isspace((unsigned char)b[len - 1]))
		len--;
	if (len < sizeof(buf))
		snprintf(buf, sizeof(buf), "%.*s", (int)len, b);
	if (len >= sizeof(buf) || parse_u64(buf, &v) < 0)
		return front_refuse(&cyclictest_front, "option '%s': '%s' is not a whole number", opt, text);
	if (v > max)
		return front_refuse(&cyclictest_front, "option '%s': %s is above the largest allowed, %llu", opt, text,
				    (unsigned long long)max);
	*ret = v;
	return LAT_GO_ON;
}



/* The value of one of cyclictest's counting options; LAT_GO_ON or -EINVAL (said). */
static int set_count(struct cyc_opts *o, int key, const char *arg)
{
	uint64_t v;
	int code;

	switch (key) {
	case K_THREADS:
		o->threads_given = true;
		o->threads = 0;
		if (arg && (code = parse_count("-t", arg, CPUSET_MAX, &v)) != 0)
			return code;
		if (arg)
			o->threads = (int)v;
		if (arg && v == 0)
			return front_refuse(&cyclictest_front, "option '%s': %s threads: need at least one", "-t", arg);
		return LAT_GO_ON;
	case K_PRIORITY:
		o->prio_given = true;
		return parse_count("-p", arg, 99, &o->priority);
	case K_INTERVAL:
		if ((code = parse_count("-i", arg, 3600u * 1000000u, &o->interval_us)) != 0)
			return code;
		if (o->interval_us == 0)
			return front_refuse(&cyclictest_front, "option '%s': %s: the interval must be at least 1 us", "-i", arg);
		return LAT_GO_ON;
	case K_DISTANCE:
		o->distance_given = true;
		return parse_count("-d", arg, 3600u * 1000000u, &o->distance_us);
	case K_ALIGNED:
		o->aligned_us = 0;
		return arg ? parse_count("-A", arg, 3600u * 1000000u, &o->aligned_us) : LAT_GO_ON;
	case K_LOOPS:
		return parse_count("-l", arg, UINT64_C(1) << 48, &o->loops);
	case K_HIST:
	case K_HISTOFALL:
		o->histofall = o->histofall || key == K_HISTOFALL;
		if ((code = parse_count(key == K_HISTOFALL ? "-H" : "-h", arg, UINT64_MAX, &o->hist)) != 0)
			return code;
		if (o->hist > LINHIST_MAX_BINS)
			o->hist = LINHIST_MAX_BINS;     /* cyclictest's own cap */
		return LAT_GO_ON;
	case K_BREAK:
		return parse_count("-b", arg, UINT64_C(1) << 40, &o->breaktrace);
	}
	return LAT_GO_ON;
}

static int cyc_set(struct front_run *fr, const struct front_opt *row, const char *as, const char *arg)
{
	(void)as;        /* cyclictest names its options by letter */
	struct cyc_opts *o = &state_of(fr)->o;
	uint64_t v;
	int code;

	switch (row->key) {
	case K_AFFINITY:
		if (arg)
			o->affinity = arg;
		else
			o->affinity_all = true;
		return LAT_GO_ON;
	case K_POLICY:
		o->policy_given = true;
		if (parse_policy(arg, &o->policy) < 0)
			return front_refuse(&cyclictest_front, "option '%s': '%s' is not supported (other, normal, fifo or rr)",
					    "--policy", arg);
		return LAT_GO_ON;
	case K_DURATION:
		if (parse_duration(arg, NS_PER_SEC, &o->duration_ns) < 0)
			return front_refuse(&cyclictest_front, "option '%s': '%s' is not a duration (such as 10, 30s, 5m, 2h or "
					    "1d)", "-D", arg);
		return LAT_GO_ON;
	case K_CLOCK:
		if ((code = parse_count("-c", arg, UINT64_MAX, &o->clock)) != 0)
			return code;
		if (o->clock > 1)
			return front_refuse(&cyclictest_front, "option '%s': '%s' is not a clock: 0 (CLOCK_MONOTONIC) or 1 "
					    "(CLOCK_REALTIME)", "-c", arg);
		return LAT_GO_ON;
	case K_LATENCY:
		if ((code = parse_count("--latency", arg, INT32_MAX, &v)) != 0)
			return code;
		if (v != 0)
			return front_refuse(&cyclictest_front, "option '%s': '%s': latscope holds /dev/cpu_dma_latency at 0 us "
					    "only; --default-system holds nothing", "--latency", arg);
		return LAT_GO_ON;
	default:
		return set_count(o, (int)row->key, arg);
	}
}

/* cyclictest's rules between options, once all are read. */
static int cyc_check(struct front_run *fr)
{
	struct cyc_opts *o = &state_of(fr)->o;

	if (o->duration_ns && o->loops)
		return front_refuse(&cyclictest_front, "options '%s' and '%s' together are not supported: give one", "-D",
				    "-l");
	if (o->hist && o->distance_given)
		fprintf(stderr, "WARN: distance is ignored and set to 0, if histogram enabled\n");      /* cyclictest's words */
	if (o->histfile && !o->hist)
		return front_refuse(&cyclictest_front, "option '%s' needs '%s'", "--histfile", "-h or -H");
	/* a priority asks for SCHED_FIFO; a real-time policy, for a priority */
	if (o->prio_given && o->priority > 0 && o->policy == POLICY_OTHER) {
		if (o->policy_given)
			fprintf(stderr, "policy and priority don't match: setting policy to SCHED_FIFO\n");
		o->policy = POLICY_FIFO;
	}
	return LAT_GO_ON;
}

static int cyc_args(struct front_run *fr, int argc, char **argv, int *ret_argc, char ***ret_argv)
{
	struct cyc_state *s = state_of(fr);
	int n = join_optional(argc, argv, ret_argv, s->store, sizeof(s->store));

	if (n == -ENOMEM)
		return -ENOMEM;
	if (n < 0)
		return front_refuse(&cyclictest_front, "the command line is too long");
	*ret_argc = n;
	return LAT_GO_ON;
}

/* The CPUs of the threads, thread N on the Nth CPU, as cyclictest places them. */
/* 0, or the exit status after the usage error. */
static int choose_cpus(const struct cyc_opts *o, struct cpuset *ret)
{
	/* cyclictest's CPU strings: "all", "!LIST" (every CPU but those), or a list */
	const bool all = o->affinity && strcmp(o->affinity, "all") == 0;
	const bool but = o->affinity && o->affinity[0] == '!';
	const bool listed = o->affinity && !o->smp && !all && !but;
	struct cpuset from, left_out;
	struct lat_error err;
	char list[80];
	unsigned want, have;
	int r;

	/* cyclictest's words */
	if (o->smp && o->threads_given)
		fprintf(stderr, "WARN: -t ignored due to smp mode\n");
	if (o->smp && (o->affinity || o->affinity_all))
		fprintf(stderr, "WARN: -a ignored due to smp mode\n");
	if ((listed && (cpuset_parse(o->affinity, &from) < 0 || cpuset_count(&from) == 0)) ||
	    (but && !o->smp && cpuset_parse(o->affinity + 1, &left_out) < 0))
		return storecmd_refuse("cyclictest", "option '%s': '%s' is not a CPU list", "-a", o->affinity);
	/* the listed CPUs, checked; or every usable online one */
	if ((r = measure_check_cpus(&from, listed, &err)) < 0) {
		if (r != -EINVAL) {
			fprintf(stderr, "latscope cyclictest: %s\n", err.msg);
			return EXIT_ERROR;
		}
		return storecmd_refuse("cyclictest", "option '-a': %s", strchr(err.msg, ':') ? strchr(err.msg, ':') + 2 : err.msg);
	}
	if (but && !o->smp) {
		struct cpuset usable = from;
		cpuset_diff(&from, &usable, &left_out);
		if (cpuset_count(&from) == 0)
			return storecmd_refuse("cyclictest", "option '%s': '%s' leaves no CPU to measure", "-a", o->affinity);
	}
	have = cpuset_count(&from);
	want = o->smp || (o->threads_given && o->threads == 0) ? have : o->threads_given ? (unsigned)o->threads : 1u;
	if (want > have) {
		cpuset_format(&from, list, sizeof(list));
		return storecmd_refuse("cyclictest", "%u threads: latscope runs one thread per CPU, and the CPUs to use are %s (%u CPUs)", want,
			     list, have);
	}
	cpuset_clear(ret);
	int cpu = -1;
	for (unsigned i = 0; i < want; i++) {
		cpu = cpuset_next(&from, (unsigned)(cpu + 1));
		cpuset_add(ret, (unsigned)cpu);
	}
	return 0;
}

static void loadavg(char *buf, size_t size)
{
	if (sys_loadavg(NULL, buf, size) < 0)
		snprintf(buf, size, "unknown");
}

/* cyclictest's live lines, drawn over the last ones; nothing with -q. */
static void draw(struct cyc_state *lv, const struct result *res)
{
	char la[128];

	if (lv->o.quiet)
		return;
	loadavg(la, sizeof(la));
	cyc_print_live(stdout, &lv->view, res, la, lv->drawn);
	lv->drawn = true;
}

/* cyclictest's -h histogram, kept for every CPU in its own units (ns with -N, else us). */
static int keep_hist(void *ctx, struct result *res)
{
	const struct cyc_state *lv = state_of(ctx);
	return result_keep_lin(res, lv->o.nsecs ? 1u : NS_PER_US, (uint32_t)lv->o.hist);
}

static void on_prepared(void *ctx, const struct result *res)
{
	struct cyc_state *lv = state_of(ctx);

	/* latscope's notes are its own: cyclictest's readers (cnf-tests reads
	 * stdout and stderr as one) see them only when asked; the run keeps them */
	if (((const struct front_run *)ctx)->verbose) {
		text_notes(stderr, "cyclictest", res, 0, false);
		lv->notes_shown = res->nnotes;
	}
	/* P: is the priority the threads run at, not the one asked for */
	if (!res->applied.rt_policy) {
		lv->view.priority = 0;
		lv->view.policy = "other/other";
	}
	if (res->applied.pm_qos)
		printf("# /dev/cpu_dma_latency set to 0us\n");
	draw(lv, res);
	fflush(stdout);
}

static void on_tick(void *ctx, const struct result *res)
{
	struct cyc_state *lv = state_of(ctx);

	draw(lv, res);
	fflush(stdout);
}

/* cyclictest says node 0 where the kernel has no NUMA. */
static int cpu_node(int cpu)
{
	unsigned node;
	return cpu >= 0 && sys_cpu_node(NULL, (unsigned)cpu, &node) == 0 && node <= INT_MAX ? (int)node : 0;
}

/* The sample that made -b stop the run: its CPU and latency. */
static void break_sample(const struct result *res, int *cpu, uint64_t *ns)
{
	const json_t *first = res->on_threshold ? json_object_get(res->on_threshold, "first") : NULL;
	json_int_t c = json_integer_value(json_object_get(first, "cpu"));
	json_int_t v = json_integer_value(json_object_get(first, "latency_ns"));

	if (first && c >= 0 && c <= INT_MAX && v >= 0) {
		*cpu = (int)c;
		*ns = (uint64_t)v;
	}
}

/* --tracemark: cyclictest's line in the kernel's trace, and that trace stopped.
 * Written by the main thread once the run stopped (the measuring loop makes no
 * such call): the trace holds a few ms more than cyclictest's. */
static void mark_trace(const struct cyc_opts *o, bool verbose, uint64_t broke_ns)
{
	char text[96];
	struct lat_error err;
	FILE *mounts = fopen("/proc/self/mounts", "re");
	uint64_t unit = o->nsecs ? 1u : NS_PER_US;

	snprintf(text, sizeof(text), "hit latency threshold (%llu > %llu)", (unsigned long long)(broke_ns / unit),
		 (unsigned long long)o->breaktrace);
	int r = mounts ? trace_mark_and_stop(mounts, text, &err) : err_set(&err, -errno, "cannot read /proc/self/mounts");
	if (mounts)
		fclose(mounts);
	if (r < 0 && verbose)
		fprintf(stderr, "latscope cyclictest: --tracemark: %s\n", err.msg);
}

/* --mainaffinity: the main thread (and so what it starts before the
 * measuring threads pin themselves) on those CPUs.  0 or an exit status. */
static int pin_main(const struct cyc_opts *o)
{
	struct cpuset set;
	int r;

	if (!o->mainaffinity)
		return 0;
	if (cpuset_parse(o->mainaffinity, &set) < 0 || cpuset_count(&set) == 0)
		return storecmd_refuse("cyclictest", "option '%s': '%s' is not a CPU list", "--mainaffinity", o->mainaffinity);
	if ((r = cpus_pin(&set)) < 0)
		return storecmd_refuse("cyclictest", "option '%s': cannot run on CPUs %s: %s", "--mainaffinity", o->mainaffinity,
				       strerror(-r));
	return 0;
}

/* --smi where nothing counts SMIs: cyclictest's error ("not supported on this
 * processor") in latscope's words, rather than a column of 0s.  0 or the exit status. */
static int check_smi(const struct cyc_opts *o, const struct cpuset *cpus)
{
	struct smi_counter *c;
	struct lat_error err;

	if (!o->smi)
		return 0;
	if (smi_open(&c, cpus, &(struct smi_env){ .sysroot = smi_sysroot_env() }, &err) < 0) {
		fprintf(stderr, "latscope cyclictest: option '--smi': SMIs are not available here (%s)\n", err.msg);
		return EXIT_ERROR;
	}
	smi_close(c);   /* the run opens its own beside the windows */
	return 0;
}

/* The timer's parameters, set as cyclictest's options ask and checked by
 * measure_with as if they had been typed to latscope timer.  0 or the exit status. */
static int cyc_translate(struct front_run *fr)
{
	struct cyc_state *s = state_of(fr);
	struct cyc_opts *o = &s->o;
	struct timer_cmd *tc = fr->params;
	struct cpuset cpus;
	int code;

	if ((code = choose_cpus(o, &cpus)) != 0 || (code = check_smi(o, &cpus)) != 0 || (code = pin_main(o)) != 0)
		return code;
	/* cyclictest's default: one above the threads, counted once they are known */
	if (o->policy != POLICY_OTHER && o->priority == 0) {
		o->priority = (uint64_t)cpuset_count(&cpus) + 1u;
		fprintf(stderr, "defaulting realtime priority to %llu\n", (unsigned long long)o->priority);
	}
	s->hist_file = front_add_file(fr, "'--histfile'", "--histfile", o->histfile);
	s->json_file = front_add_file(fr, "'--json'", "--json", fr->json);
	tc->run.cpus = cpus;
	tc->run.policy = o->policy;
	tc->run.priority = o->priority;
	tc->p.interval_ns = o->interval_us * NS_PER_US;
	tc->p.aligned_offset_ns = o->aligned_us * NS_PER_US;
	/* cyclictest spreads the threads' periods unless it keeps a histogram */
	const uint64_t distance_us = o->hist ? 0 : o->distance_us;
	if (distance_us && cpuset_count(&cpus) > 1)
		tc->p.distance_ns = distance_us * NS_PER_US;
	/* a window holds at least the longest period */
	uint64_t longest_us = o->interval_us + (cpuset_count(&cpus) - 1u) * distance_us;
	uint64_t window_s = (longest_us + 999999u) / 1000000u;
	tc->run.window_ns = (window_s ? window_s : 1u) * NS_PER_SEC;
	tc->run.duration_ns = o->duration_ns;
	tc->run.loops = o->loops;
	tc->run.no_pm_qos = o->default_system;
	tc->p.clock = o->clock == 1 ? TIMER_CLOCK_REALTIME : TIMER_CLOCK_MONOTONIC;
	if (o->breaktrace) {
		/* cyclictest breaks on a value above the limit in its units, truncated:
		 * in ns, at the first sample of at least one unit more */
		tc->out.on_threshold.items[tc->out.on_threshold.n++] = "stop";
		tc->run.trigger_ns = o->nsecs ? o->breaktrace : o->breaktrace * NS_PER_US + (NS_PER_US - 1u);
	}
	if (!o->loops)
		front_mark(fr, TIMER_OPT_DURATION);     /* without -l or -D: until stopped */
	s->view = (struct cyc_view){ .nsecs = o->nsecs, .histofall = o->histofall, .interval_us = o->interval_us,
				     .distance_us = cpuset_count(&cpus) > 1 ? distance_us : 0,
				     .priority = (unsigned)o->priority, .smi = o->smi,
				     .policy = o->policy == POLICY_OTHER ? "other/other" : policy_choices[o->policy] };
	return 0;
}

static int print_hist(FILE *out, const void *fr)
{
	return cyc_print_hist(out, &state_of(fr)->view, &((const struct front_run *)fr)->res);
}

/* The histogram and the JSON, into the files opened before the run. */
static int write_outputs(struct front_run *fr, int code)
{
	struct cyc_state *s = state_of(fr);
	const struct result *res = &fr->res;
	int wcode = EXIT_OK, r;

	/* -EIO: standard output failed, which main judges (a closed pipe: quietly) */
	if (s->o.hist && !s->o.histfile && (r = cyc_print_hist(stdout, &s->view, res)) < 0 &&
	    r != -EIO)
		wcode = EXIT_ERROR;
	if (s->o.hist && s->o.histfile && front_put(fr, s->hist_file, print_hist, fr) < 0)
		wcode = EXIT_ERROR;
	if (!fr->json)
		return wcode;
	int nodes[CPUSET_MAX];
	for (size_t i = 0; i < res->ncpus && i < CPUSET_MAX; i++)
		nodes[i] = cpu_node(res->cpus[i].cpu);
	char *cmdline = front_cmdline(fr);
	struct cyc_run run = { .cmdline = cmdline ? cmdline : "cyclictest", .version = "latscope " LATSCOPE_VERSION,
			       .start_realtime_ns = res->start_realtime_ns,
			       .end_realtime_ns = res->start_realtime_ns + res->elapsed_ns,
			       .return_code = code, .stored_id = fr->stored_id, .node = nodes };
	if (front_put_json(fr, s->json_file, fr->json, cyc_json(res, &run)) != EXIT_OK)
		wcode = EXIT_ERROR;
	free(cmdline);
	return wcode;
}

/* What cyclictest prints at its end, and its files. */
static int cyc_write(struct front_run *fr, int code)
{
	struct cyc_state *s = state_of(fr);
	const struct result *res = &fr->res;

	/* -b's stop is cyclictest's normal end */
	int broke_cpu = -1;
	uint64_t broke_ns = 0;
	if (code == EXIT_THRESHOLD && result_threshold_stopped(res)) {
		code = EXIT_OK;
		break_sample(res, &broke_cpu, &broke_ns);
		if (s->o.tracemark)
			mark_trace(&s->o, fr->verbose, broke_ns);
	}
	/* what went wrong while measuring (a thread that stopped early), which measure_run kept silent */
	if (fr->verbose || code != EXIT_OK)
		text_notes(stderr, "cyclictest", res, s->notes_shown, false);
	draw(s, res);
	if (s->o.quiet && !s->o.hist)
		cyc_print_stats(stdout, &s->view, res);
	int wcode = write_outputs(fr, code);
	if (s->o.breaktrace)
		cyc_print_break(stdout, &s->view, res, broke_cpu, broke_ns);
	return code != EXIT_OK ? code : wcode;
}

static void cyc_defaults(void *st)
{
	struct cyc_opts *o = &((struct cyc_state *)st)->o;
	o->interval_us = CYC_DEFAULT_INTERVAL_US;
	o->distance_us = CYC_DEFAULT_DISTANCE_US;
	o->policy = POLICY_OTHER;
}

const struct front_end cyclictest_front = {
	.name = "cyclictest",
	.mc = &timer_command,
	.opts = cyc_opts,
	.nopts = ARRAY_SIZE(cyc_opts),
	.sets = cyc_sets,
	.nsets = ARRAY_SIZE(cyc_sets),
	.refused = " of cyclictest is not supported by latscope cyclictest: ",
	.state_size = sizeof(struct cyc_state),
	.defaults = cyc_defaults,
	.help = usage_help,
	.args = cyc_args,
	.set = cyc_set,
	.check = cyc_check,
	.translate = cyc_translate,
	.prepared = on_prepared,
	.tick = on_tick,
	.shape = keep_hist,
	.write = cyc_write,
};

int cmd_cyclictest(int argc, char **argv)
{
	return front_run(&cyclictest_front, argc, argv);
}
