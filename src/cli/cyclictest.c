/*
 * latscope cyclictest: cyclictest's command line and output on latscope's timer
 * probe.  The options are translated into a `latscope timer` run (which is what
 * gets stored, with every statistic), and what cyclictest would print is
 * printed from cyclictest's own counters, kept beside latscope's histogram.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "cli/outputs.h"
#include "cli/storecmd.h"
#include "cli/timer.h"
#include "config.h"
#include "core/array.h"
#include "core/linhist.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "report/cyclictest.h"
#include "report/rtjson.h"
#include "report/text.h"
#include "sys/atomicfile.h"
#include "sys/cpus.h"
#include "sys/sysfacts.h"
#include "trace/mark.h"

#define CYC_MAX_LABELS 16
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
	bool distance_given;
	uint64_t duration_ns;
	uint64_t loops;
	uint64_t hist;                  /* -h/-H: bins; 0: none */
	bool histofall;
	const char *histfile;
	bool nsecs, quiet;
	uint64_t priority;
	int policy;                     /* enum sched_policy_kind */
	const char *json;
	const char *db;
	bool no_store;
	const char *checkpoint;         /* --checkpoint's text, read by the timer's own row */
	uint64_t breaktrace;            /* -b: stop at the first value above it (us, ns with -N); 0: off */
	bool tracemark;                 /* --tracemark: mark the kernel's trace at the break and stop it */
	bool default_system;            /* --default-system or --laptop: no PM QoS hold */
	const char *mainaffinity;       /* --mainaffinity: the main thread's CPUs */
	uint64_t clock;                 /* -c: 0 CLOCK_MONOTONIC, 1 CLOCK_REALTIME */
	bool latscope_verbose;          /* latscope's own notes on stderr */
	const char *labels[CYC_MAX_LABELS];
	unsigned nlabels;
};

enum {
	O_HISTFILE = 256, O_JSON, O_POLICY, O_DB, O_NO_STORE, O_LABEL, O_CHECKPOINT, O_HELP, O_TRACEMARK,
	O_DEFAULT_SYSTEM, O_LAPTOP, O_LATENCY, O_MAINAFFINITY, O_NOOP, O_LATSCOPE_VERBOSE, O_UNSUPPORTED,
};

static const struct option long_opts[] = {
	{ "affinity", optional_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'D' },
	{ "histogram", required_argument, NULL, 'h' },
	{ "histofall", required_argument, NULL, 'H' },
	{ "histfile", required_argument, NULL, O_HISTFILE },
	{ "interval", required_argument, NULL, 'i' },
	{ "distance", required_argument, NULL, 'd' },
	{ "loops", required_argument, NULL, 'l' },
	{ "mlockall", no_argument, NULL, 'm' },
	{ "nsecs", no_argument, NULL, 'N' },
	{ "priority", required_argument, NULL, 'p' },
	{ "policy", required_argument, NULL, O_POLICY },
	{ "quiet", no_argument, NULL, 'q' },
	{ "threads", optional_argument, NULL, 't' },
	{ "smp", no_argument, NULL, 'S' },
	{ "json", required_argument, NULL, O_JSON },
	{ "db", required_argument, NULL, O_DB },
	{ "no-store", no_argument, NULL, O_NO_STORE },
	{ "label", required_argument, NULL, O_LABEL },
	{ "checkpoint", required_argument, NULL, O_CHECKPOINT },
	{ "help", no_argument, NULL, O_HELP },
	{ "breaktrace", required_argument, NULL, 'b' },
	{ "clock", required_argument, NULL, 'c' },
	{ "tracemark", no_argument, NULL, O_TRACEMARK },
	{ "default-system", no_argument, NULL, O_DEFAULT_SYSTEM },
	{ "laptop", no_argument, NULL, O_LAPTOP },
	{ "latency", required_argument, NULL, O_LATENCY },
	{ "mainaffinity", required_argument, NULL, O_MAINAFFINITY },
	{ "unbuffered", no_argument, NULL, 'u' },
	{ "refresh_on_max", no_argument, NULL, 'M' },
	{ "dbg_cyclictest", no_argument, NULL, O_NOOP },
	{ "latscope-verbose", no_argument, NULL, O_LATSCOPE_VERBOSE },
	/* cyclictest's other options: known, so that the error can say why not */
	{ "aligned", optional_argument, NULL, O_UNSUPPORTED },
	{ "fifo", required_argument, NULL, O_UNSUPPORTED },
	{ "oscope", required_argument, NULL, O_UNSUPPORTED },
	{ "priospread", no_argument, NULL, O_UNSUPPORTED },
	{ "relative", no_argument, NULL, O_UNSUPPORTED },
	{ "resolution", no_argument, NULL, O_UNSUPPORTED },
	{ "secaligned", optional_argument, NULL, O_UNSUPPORTED },
	{ "system", no_argument, NULL, O_UNSUPPORTED },
	{ "smi", no_argument, NULL, O_UNSUPPORTED },
	{ "spike", required_argument, NULL, O_UNSUPPORTED },
	{ "spike-nodes", required_argument, NULL, O_UNSUPPORTED },
	{ "verbose", no_argument, NULL, O_UNSUPPORTED },
	{ "posix_timers", no_argument, NULL, O_UNSUPPORTED },
	{ NULL, 0, NULL, 0 },
};

/* Why each refused option of cyclictest is refused (latscope-cyclictest(1) says the same). */
static const struct refusal {
	char letter;            /* 0: a long option only */
	const char *name;
	const char *why;
} refusals[] = {
	{ 'A', "aligned", "latscope starts each thread's period on its own; -d spreads them" },
	{ 0, "secaligned", "latscope starts each thread's period on its own; -d spreads them" },
	{ 'F', "fifo", "no named pipe: the live T: lines, the --json file and 'latscope show' carry the statistics" },
	{ 'o', "oscope", "no per-sample output: the measuring loop prints nothing" },
	{ 'v', "verbose", "no per-sample output: the measuring loop prints nothing; use -h or --json (--latscope-verbose is latscope's own notes)" },
	{ 0, "priospread", "latscope runs every thread at one priority" },
	{ 'r', "relative", "latscope's timer waits for absolute deadlines only" },
	{ 'R', "resolution", "use 'latscope clock', which measures each clock's resolution and cost" },
	{ 's', "system", "latscope's timer waits with clock_nanosleep only" },
	{ 'x', "posix_timers", "latscope's timer waits with clock_nanosleep only" },
	{ 0, "smi", "latscope does not read the SMI counter MSR" },
	{ 0, "spike", "the stored run keeps the largest samples with their times ('latscope show')" },
	{ 0, "spike-nodes", "the stored run keeps the largest samples with their times ('latscope show')" },
};
/* Supported letters first; the rest are cyclictest's, refused by name. */
static const char short_opts[] = ":a::D:d:h:H:i:l:mNp:qt::Sb:c:uMA::F:o:rRsvx";

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
	       "  -p, --priority=PRIO      real-time priority 1-99 (SCHED_FIFO); 0: SCHED_OTHER (the default)\n"
	       "      --policy=NAME        other, normal, fifo or rr\n"
	       "  -i, --interval=US        period in microseconds (default 1000)\n"
	       "  -d, --distance=US        thread N waits -i + N * US (default 500; 0 with -h or -H)\n"
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
	       "      --no-store           do not store the run\n"
	       "      --label=KEY=VALUE    tag the stored run; repeatable\n"
	       "      --checkpoint=DUR     store the run so far every DUR, marked partial (see latscope timer --help)\n"
	       "      --latscope-verbose   latscope's notes and the stored run's id on stderr (else only cyclictest's)\n"
	       "      --help               show this help\n\n"
	       "Differences: threads are always pinned (without -a, thread N runs on the Nth usable CPU), one\n"
	       "per CPU; -D and -l together are refused.\n"
	       "cyclictest's other options are refused, saying why:\n ");
	for (size_t i = 0; i < ARRAY_SIZE(refusals); i++) {
		if (refusals[i].letter)
			printf(" -%c", refusals[i].letter);
		printf(" --%s%s", refusals[i].name, i + 1 < ARRAY_SIZE(refusals) ? (i % 6 == 5 ? ",\n " : ",") : ".\n\n");
	}
	printf("Exit status: 0 done (also when stopped by Ctrl-C, SIGTERM, SIGHUP, SIGQUIT or -b), 1 error, 2 bad usage.\n"
	       "See latscope-cyclictest(1).\n");
}

/* The name of the option getopt just refused, for the message. */
static const char *refused_name(int c, int longindex, char **argv, char *buf, size_t size)
{
	if (c == O_UNSUPPORTED && longindex >= 0) {
		snprintf(buf, size, "--%s", long_opts[longindex].name);
		return buf;
	}
	if (c != '?' && c != ':' && c != O_UNSUPPORTED) {
		snprintf(buf, size, "-%c", c);
		return buf;
	}
	if (optopt) {
		snprintf(buf, size, "-%c", optopt);
		return buf;
	}
	return argv[optind - 1];
}

/* Why cyclictest refuses option c (getopt's code; li its long index), or NULL. */
static const char *refusal_reason(int c, int li)
{
	const char *name = c == O_UNSUPPORTED && li >= 0 ? long_opts[li].name : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(refusals); i++)
		if (name ? strcmp(name, refusals[i].name) == 0 : c == refusals[i].letter)
			return refusals[i].why;
	return NULL;
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
	while (isspace((unsigned char)*next))
		next++;
	if (threads)
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
		/* "-t 0": cyclictest takes no value and leaves the 0, ignored: one thread a CPU */
		if (i + 1 < argc && strcmp(argv[i + 1], "0") == 0 &&
		    (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0)) {
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
	if (len >= sizeof(buf) || parse_u64(buf, &v) < 0) {
		storecmd_refuse("cyclictest", "option '%s': '%s' is not a whole number", opt, text);
		return -EINVAL;
	}
	if (v > max) {
		storecmd_refuse("cyclictest", "option '%s': %s is above the largest allowed, %llu", opt, text, (unsigned long long)max);
		return -EINVAL;
	}
	*ret = v;
	return LAT_GO_ON;
}

/* The parser convention (core/error.h): LAT_GO_ON, LAT_DONE after the help,
 * or -EINVAL after the usage error was printed. */
static int parse_opts(int argc, char **argv, struct cyc_opts *o)
{
	bool prio_given = false, policy_given = false;
	uint64_t v;
	int c, li, code;
	char name[64];

	optind = 0;     /* a full reset: parse_opts may run more than once in a process (tests) */
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, short_opts, long_opts, &li)) != -1) {
		switch (c) {
		case 'a':
			if (optarg)
				o->affinity = optarg;
			else
				o->affinity_all = true;
			break;
		case 't':
			o->threads_given = true;
			o->threads = 0;
			if (optarg && (code = parse_count("-t", optarg, CPUSET_MAX, &v)) != 0)
				return code;
			if (optarg)
				o->threads = (int)v;
			if (optarg && v == 0) {
				storecmd_refuse("cyclictest", "option '%s': %s threads: need at least one", "-t", optarg);
				return -EINVAL;
			}
			break;
		case 'S': o->smp = true; break;
		case 'p':
			if ((code = parse_count("-p", optarg, 99, &o->priority)) != 0)
				return code;
			prio_given = true;
			break;
		case O_POLICY:
			if (parse_policy(optarg, &o->policy) < 0) {
				storecmd_refuse("cyclictest", "option '%s': '%s' is not supported (other, normal, fifo or rr)", "--policy",
					     optarg);
				return -EINVAL;
			}
			policy_given = true;
			break;
		case 'i':
			if ((code = parse_count("-i", optarg, 3600u * 1000000u, &o->interval_us)) != 0)
				return code;
			if (o->interval_us == 0) {
				storecmd_refuse("cyclictest", "option '%s': %s: the interval must be at least 1 us", "-i", optarg);
				return -EINVAL;
			}
			break;
		case 'd':
			if ((code = parse_count("-d", optarg, 3600u * 1000000u, &o->distance_us)) != 0)
				return code;
			o->distance_given = true;
			break;
		case 'D':
			if (parse_duration(optarg, NS_PER_SEC, &o->duration_ns) < 0) {
				storecmd_refuse("cyclictest", "option '%s': '%s' is not a duration (such as 10, 30s, 5m, 2h or 1d)", "-D",
					     optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			if ((code = parse_count("-l", optarg, UINT64_C(1) << 48, &o->loops)) != 0)
				return code;
			break;
		case 'H':
		case 'h':
			o->histofall = o->histofall || c == 'H';
			if ((code = parse_count(c == 'h' ? "-h" : "-H", optarg, UINT64_MAX, &o->hist)) != 0)
				return code;
			if (o->hist > LINHIST_MAX_BINS)
				o->hist = LINHIST_MAX_BINS;     /* cyclictest's own cap */
			break;
		case O_HISTFILE: o->histfile = optarg; break;
		case 'N': o->nsecs = true; break;
		case 'q': o->quiet = true; break;
		case 'm':                       /* latscope always locks its memory */
		case 'u':                       /* every line is flushed as written */
		case 'M':                       /* the live lines are redrawn a few times a second, max or not */
		case O_NOOP:
			break;
		case 'b':
			if ((code = parse_count("-b", optarg, UINT64_C(1) << 40, &o->breaktrace)) != 0)
				return code;
			break;
		case 'c':
			if ((code = parse_count("-c", optarg, UINT64_MAX, &o->clock)) != 0)
				return code;
			if (o->clock > 1) {
				storecmd_refuse("cyclictest", "option '%s': '%s' is not a clock: 0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)",
					     "-c", optarg);
				return -EINVAL;
			}
			break;
		case O_TRACEMARK: o->tracemark = true; break;
		case O_DEFAULT_SYSTEM:
		case O_LAPTOP:
			o->default_system = true;
			break;
		case O_LATENCY:
			if ((code = parse_count("--latency", optarg, INT32_MAX, &v)) != 0)
				return code;
			if (v != 0) {
				storecmd_refuse("cyclictest", "option '%s': '%s': latscope holds /dev/cpu_dma_latency at 0 us only; "
					     "--default-system holds nothing", "--latency", optarg);
				return -EINVAL;
			}
			break;
		case O_MAINAFFINITY: o->mainaffinity = optarg; break;
		case O_LATSCOPE_VERBOSE: o->latscope_verbose = true; break;
		case O_JSON: o->json = optarg; break;
		case O_DB: o->db = optarg; break;
		case O_NO_STORE: o->no_store = true; break;
		case O_CHECKPOINT: o->checkpoint = optarg; break;
		case O_LABEL:
			if (o->nlabels == CYC_MAX_LABELS) {
				storecmd_refuse("cyclictest", "option '--label': more than %d labels", CYC_MAX_LABELS);
				return -EINVAL;
			}
			o->labels[o->nlabels++] = optarg;
			break;
		case O_HELP:
			usage_help();
			return LAT_DONE;
		case ':':
			storecmd_refuse("cyclictest", "option '%s' needs a value", refused_name(c, li, argv, name, sizeof(name)));
			return -EINVAL;
		case '?':
			storecmd_refuse("cyclictest", "unknown option '%s'", refused_name(c, li, argv, name, sizeof(name)));
			return -EINVAL;
		default: {
			const char *why = refusal_reason(c, li);
			storecmd_refuse("cyclictest", "option '%s' of cyclictest is not supported by latscope cyclictest%s%s",
				     refused_name(c, li, argv, name, sizeof(name)), why ? ": " : "", why ? why : "");
			return -EINVAL;
		}
		}
	}
	if (optind < argc) {
		storecmd_refuse("cyclictest", "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (o->duration_ns && o->loops) {
		storecmd_refuse("cyclictest", "options '%s' and '%s' together are not supported: give one", "-D", "-l");
		return -EINVAL;
	}
	if (o->hist && o->distance_given)
		fprintf(stderr, "WARN: distance is ignored and set to 0, if histogram enabled\n");      /* cyclictest's words */
	if (o->histfile && !o->hist) {
		storecmd_refuse("cyclictest", "option '%s' needs '%s'", "--histfile", "-h or -H");
		return -EINVAL;
	}
	/* cyclictest's rules: a priority asks for SCHED_FIFO; a real-time policy, for a priority */
	if (prio_given && o->priority > 0 && o->policy == POLICY_OTHER) {
		if (policy_given)
			fprintf(stderr, "policy and priority don't match: setting policy to SCHED_FIFO\n");
		o->policy = POLICY_FIFO;
	}
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

/* A growing argv for the translated `latscope timer` command. */
struct cyc_live {
	const struct cyc_opts *o;
	struct cyc_view view;
	bool drawn;
	unsigned notes_shown;
};

static void loadavg(char *buf, size_t size)
{
	if (sys_loadavg(NULL, buf, size) < 0)
		snprintf(buf, size, "unknown");
}

/* cyclictest's live lines, drawn over the last ones; nothing with -q. */
static void draw(struct cyc_live *lv, const struct result *res)
{
	char la[128];

	if (lv->o->quiet)
		return;
	loadavg(la, sizeof(la));
	cyc_print_live(stdout, &lv->view, res, la, lv->drawn);
	lv->drawn = true;
}

/* cyclictest's -h histogram, kept for every CPU in its own units (ns with -N, else us). */
static int keep_hist(void *ctx, struct result *res)
{
	const struct cyc_live *lv = ctx;
	return result_keep_lin(res, lv->o->nsecs ? 1u : NS_PER_US, (uint32_t)lv->o->hist);
}

static void on_prepared(void *ctx, const struct result *res)
{
	struct cyc_live *lv = ctx;

	/* latscope's notes are its own: cyclictest's readers (cnf-tests reads
	 * stdout and stderr as one) see them only when asked; the run keeps them */
	if (lv->o->latscope_verbose) {
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
	struct cyc_live *lv = ctx;

	draw(lv, res);
	fflush(stdout);
}

/* cyclictest says node 0 where the kernel has no NUMA. */
static int cpu_node(int cpu)
{
	unsigned node;
	return cpu >= 0 && sys_cpu_node(NULL, (unsigned)cpu, &node) == 0 && node <= INT_MAX ? (int)node : 0;
}

static char *join_cmdline(int argc, char **argv)
{
	size_t len = strlen("cyclictest") + 1u;
	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1u;
	char *s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, "cyclictest");
	for (int i = 1; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* Histogram and JSON, into files opened before the run. */
static int write_outputs(const struct cyc_opts *o, const struct cyc_view *view, const struct result *res,
			 struct atomic_file *hist_sink, struct atomic_file *json_sink, const struct cyc_run *run)
{
	int code = EXIT_OK, r;

	if (o->hist && !o->histfile && cyc_print_hist(stdout, view, res) < 0)
		code = EXIT_ERROR;
	if (o->hist && o->histfile) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		r = m ? cyc_print_hist(m, view, res) : -ENOMEM;
		if (m && fclose(m) != 0 && r == 0)
			r = -ENOMEM;
		if (r == 0 && ((r = atomic_file_write(hist_sink, buf, len)) < 0 || (r = atomic_file_commit(hist_sink)) < 0))
			fprintf(stderr, "latscope cyclictest: cannot write '%s': %s\n", o->histfile, strerror(-r));
		free(buf);
		if (r < 0)
			code = EXIT_ERROR;
	}
	if (o->json) {
		json_t *doc = cyc_json(res, run);
		char *text = doc ? rtjson_dump(doc) : NULL;
		json_decref(doc);
		r = text ? atomic_file_write(json_sink, text, strlen(text)) : -ENOMEM;
		if (r == 0 && (r = atomic_file_write(json_sink, "\n", 1)) == 0)
			r = atomic_file_commit(json_sink);
		if (r < 0) {
			fprintf(stderr, "latscope cyclictest: cannot write '%s': %s\n", o->json, strerror(-r));
			code = EXIT_ERROR;
		}
		free(text);
	}
	return code;
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
static void mark_trace(const struct cyc_opts *o, uint64_t broke_ns)
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
	if (r < 0 && o->latscope_verbose)
		fprintf(stderr, "latscope cyclictest: --tracemark: %s\n", err.msg);
}

/* 0, or the exit status after the usage error. */
static int open_sink(const char *opt, const char *path, struct atomic_file *sink)
{
	int r = atomic_file_open(path, sink);
	return r < 0 ? storecmd_refuse("cyclictest", "option '%s': cannot write '%s': %s", opt, path, strerror(-r)) : 0;
}

static int run(int argc, char **argv, struct cyc_opts *o)
{
	struct cpuset cpus;
	struct atomic_file hist_sink = { .fd = -1 }, json_sink = { .fd = -1 };
	struct result res = { 0 };
	struct measure_outcome out = { .res = &res };
	int code;

	if ((code = choose_cpus(o, &cpus)) != 0 || (code = pin_main(o)) != 0)
		return code;
	/* cyclictest's default: one above the threads, counted once they are known */
	if (o->policy != POLICY_OTHER && o->priority == 0) {
		o->priority = (uint64_t)cpuset_count(&cpus) + 1u;
		fprintf(stderr, "defaulting realtime priority to %llu\n", (unsigned long long)o->priority);
	}
	const struct output outs[] = { { "'--histfile'", o->histfile }, { "'--json'", o->json } };
	if ((code = outputs_check("cyclictest", outs, 2, o->db, !o->no_store)) != 0)
		return code;
	if (o->histfile && (code = open_sink("--histfile", o->histfile, &hist_sink)) != 0)
		return code;
	if (o->json && (code = open_sink("--json", o->json, &json_sink)) != 0) {
		atomic_file_close(&hist_sink);
		return code;
	}

	/* The timer command's parameters, set as cyclictest's options ask and checked
	 * by measure_with as if they had been typed to latscope timer. */
	struct timer_cmd *tc = calloc(1, sizeof(*tc));
	struct opt_result given = { 0 };
	const struct measure_cmd *mc = &timer_command;
	if (!tc) {
		atomic_file_close(&hist_sink);
		atomic_file_close(&json_sink);
		return EXIT_ERROR;
	}
	mc->defaults(tc);
	tc->run.cpus = cpus;
	tc->run.policy = o->policy;
	tc->run.priority = o->priority;
	tc->p.interval_ns = o->interval_us * NS_PER_US;
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
	tc->out.db_path = o->db;
	tc->out.no_store = o->no_store;
	for (unsigned i = 0; i < o->nlabels; i++)
		if (parse_label(o->labels[i], &tc->out.labels.items[tc->out.labels.n++]) < 0) {
			free(tc);
			atomic_file_close(&hist_sink);
			atomic_file_close(&json_sink);
			return storecmd_refuse("cyclictest", "option '--label': '%s' is not KEY=VALUE", o->labels[i]);
		}
	if (o->checkpoint) {
		/* the timer's own row reads it: the same range and the same message */
		char *ck_argv[] = { (char *)"cyclictest", (char *)"--checkpoint", (char *)o->checkpoint, NULL };
		struct lat_error cerr;
		if (opt_parse(mc->opts, mc->nopts, 3, ck_argv, tc, &given, &cerr) < 0) {
			free(tc);
			atomic_file_close(&hist_sink);
			atomic_file_close(&json_sink);
			return storecmd_refuse("cyclictest", "%s", cerr.msg);
		}
	}
	static const char *const set[] = { "cpus", "policy", "priority", "interval", "distance", "window", "label" };
	for (size_t i = 0; i < ARRAY_SIZE(set); i++)
		opt_mark(mc->opts, mc->nopts, &given, set[i]);
	if (o->clock)
		opt_mark(mc->opts, mc->nopts, &given, "clock");
	if (o->default_system)
		opt_mark(mc->opts, mc->nopts, &given, "no-pm-qos");
	opt_mark(mc->opts, mc->nopts, &given, o->loops ? "loops" : "duration");

	struct cyc_live lv = {
		.o = o,
		.view = { .nsecs = o->nsecs, .histofall = o->histofall, .interval_us = o->interval_us,
			  .distance_us = cpuset_count(&cpus) > 1 ? distance_us : 0,
			  .priority = (unsigned)o->priority,
			  .policy = o->policy == POLICY_OTHER ? "other/other" : policy_choices[o->policy] },
	};
	struct measure_hooks mh = { .silent = true, .prepared = on_prepared, .tick = on_tick, .shape = keep_hist,
				    .ctx = &lv };
	struct measure_cmd front = timer_command;
	front.name = "cyclictest";

	code = measure_with(&front, tc, &given, argc, argv, &mh, &out);
	free(tc);
	if (!res.cpus) {
		/* measure_run said why */
		atomic_file_close(&hist_sink);
		atomic_file_close(&json_sink);
		return code;
	}
	/* -b's stop is cyclictest's normal end */
	int broke_cpu = -1;
	uint64_t broke_ns = 0;
	if (code == EXIT_THRESHOLD && result_threshold_stopped(&res)) {
		code = EXIT_OK;
		break_sample(&res, &broke_cpu, &broke_ns);
		if (o->tracemark)
			mark_trace(o, broke_ns);
	}
	/* what went wrong while measuring (a thread that stopped early), which measure_run kept silent */
	if (o->latscope_verbose || code != EXIT_OK)
		text_notes(stderr, "cyclictest", &res, lv.notes_shown, false);
	draw(&lv, &res);
	if (o->quiet && !o->hist)
		cyc_print_stats(stdout, &lv.view, &res);

	int nodes[CPUSET_MAX];
	for (size_t i = 0; i < res.ncpus && i < CPUSET_MAX; i++)
		nodes[i] = cpu_node(res.cpus[i].cpu);
	char *cmdline = join_cmdline(argc, argv);
	struct cyc_run run = { .cmdline = cmdline ? cmdline : "cyclictest", .version = "latscope " LATSCOPE_VERSION,
			       .start_realtime_ns = res.start_realtime_ns,
			       .end_realtime_ns = res.start_realtime_ns + res.elapsed_ns,
			       .return_code = code, .stored_id = out.stored_id, .node = nodes };
	int wcode = write_outputs(o, &lv.view, &res, &hist_sink, &json_sink, &run);
	free(cmdline);
	if (o->breaktrace)
		cyc_print_break(stdout, &lv.view, &res, broke_cpu, broke_ns);
	fflush(stdout);
	if (out.stored_id > 0 && o->latscope_verbose)
		fprintf(stderr, "latscope cyclictest: stored as latscope run %lld (latscope show %lld)\n",
			(long long)out.stored_id, (long long)out.stored_id);
	atomic_file_close(&hist_sink);
	atomic_file_close(&json_sink);
	result_free(&res);
	return code != EXIT_OK ? code : wcode;
}

int cmd_cyclictest(int argc, char **argv)
{
	struct cyc_opts o = { .interval_us = CYC_DEFAULT_INTERVAL_US, .distance_us = CYC_DEFAULT_DISTANCE_US,
			      .policy = POLICY_OTHER };
	char store[4096];
	char **args;
	int n = join_optional(argc, argv, &args, store, sizeof(store));
	int code;

	if (n == -ENOMEM) {
		fprintf(stderr, "latscope cyclictest: out of memory\n");
		return EXIT_ERROR;
	}
	if (n < 0)
		return storecmd_refuse("cyclictest", "the command line is too long");
	code = parse_opts(n, args, &o);
	if (code == LAT_GO_ON)
		code = run(argc, argv, &o);     /* the command line as typed, for the JSON */
	else
		code = storecmd_exit(code);
	free(args);
	return code;
}
