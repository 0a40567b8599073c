/*
 * latscope oslat: oslat's command line and output on latscope's noise probe.
 * The options become a `latscope noise` run (which is what gets stored, with
 * every statistic), and oslat's table is printed from a linear histogram of
 * 1 us bins the noise loop keeps beside latscope's own (result_keep_lin).
 * Like oslat, a pre-heat of one second comes first; its figures give --bias
 * and are not stored.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "cli/noise.h"
#include "cli/outputs.h"
#include "cli/storecmd.h"
#include "config.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "probe/cycles.h"
#include "report/oslat.h"
#include "report/rtjson.h"
#include "report/text.h"
#include "sys/atomicfile.h"
#include "sys/cpus.h"

#define PREHEAT_NS NS_PER_SEC

struct oslat_opts {
	uint64_t runtime_s;
	unsigned rtprio;                /* 0: the default policy */
	const char *cpu_list;           /* NULL: all */
	unsigned main_cpu;
	uint64_t bucket_size;
	bool bias, quiet, single_preheat, zero_omit, verbose;
	const char *json;
	const char *db;
	bool no_store;
	struct labels labels;
};

enum {
	O_JSON = 256, O_DB, O_NO_STORE, O_LABEL, O_VERBOSE, O_UNSUPPORTED,
};

static const struct option long_opts[] = {
	{ "bucket-size", required_argument, NULL, 'b' },
	{ "bias", no_argument, NULL, 'B' },
	{ "cpu-list", required_argument, NULL, 'c' },
	{ "cpu-main-thread", required_argument, NULL, 'C' },
	{ "duration", required_argument, NULL, 'D' },
	{ "json", required_argument, NULL, O_JSON },
	{ "rtprio", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "workload-mem", required_argument, NULL, 'm' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "single-preheat", no_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'v' },
	{ "workload", required_argument, NULL, 'w' },
	{ "zero-omit", no_argument, NULL, 'z' },
	{ "db", required_argument, NULL, O_DB },
	{ "no-store", no_argument, NULL, O_NO_STORE },
	{ "label", required_argument, NULL, O_LABEL },
	{ "verbose", no_argument, NULL, O_VERBOSE },
	/* known, so that the error can say why they are refused */
	{ "trace-threshold", required_argument, NULL, 'T' },
	{ "bucket-width", required_argument, NULL, 'W' },
	{ NULL, 0, NULL, 0 },
};
static const char short_opts[] = ":b:Bc:C:D:f:hm:qsvw:zT:W:";

static void usage_help(void)
{
	printf("Usage:\n"
	       "oslat <options>                  (through the installed oslat link)\n"
	       "latscope oslat <options>\n\n"
	       "Run latscope's noise probe with oslat's options and print what oslat prints (its header, the\n"
	       "per-core table of 1 us buckets, the --json file), so tools that read oslat work unchanged.  The\n"
	       "run is also stored as a latscope noise run with every statistic.\n\n"
	       "Available options (as oslat 2.4's):\n\n"
	       "-b, --bucket-size      Specify the number of the buckets (5-1024; default 32)\n"
	       "-B, --bias             Add a bias to all the buckets using the estimated minimum\n"
	       "-c, --cpu-list         Specify CPUs to run on, e.g. '1,3,5,7-15' (default: all)\n"
	       "-C, --cpu-main-thread  Specify which CPU the main thread runs on.  Default is cpu0.\n"
	       "-D, --duration         Specify test duration, e.g., 60, 20m, 2H (whole seconds;\n"
	       "                       m/M: minutes, h/H: hours, d/D: days; default 1)\n"
	       "    --json=FILENAME    write final results into FILENAME, JSON formatted ('-': stdout)\n"
	       "-f, --rtprio           Using SCHED_FIFO priority (1-99)\n"
	       "-m, --workload-mem     Size of the memory for a workload (e.g., 4K, 1M): checked, unused\n"
	       "-q  --quiet            print a summary only on exit\n"
	       "-s, --single-preheat   Use a single thread when measuring latency at preheat stage\n"
	       "-v, --version          Display the version of the software.\n"
	       "-w, --workload         Specify a kind of workload: no (the only one latscope runs)\n"
	       "-z, --zero-omit        Don't display buckets in the output histogram if all zeros.\n"
	       "latscope's own:\n"
	       "    --db=PATH          store the run here (default: as latscope noise)\n"
	       "    --no-store         do not store the run\n"
	       "    --label=KEY=VALUE  tag the stored run; repeatable\n"
	       "    --verbose          say on standard error what latscope noted and where the run is stored\n"
	       "-h, --help             show this help\n\n"
	       "Refused: -w memmove (the loop only reads the clock), -T/--trace-threshold (use latscope noise\n"
	       "--trigger US --on-threshold stop,trace), -W/--bucket-width (oslat 2.5's).\n\n"
	       "Exit status: 0 done (also when stopped by Ctrl-C, SIGTERM or SIGHUP), 1 error (such as\n"
	       "SCHED_FIFO refused), 2 bad usage.  See latscope-oslat(1).\n");
}

/* The option as typed, for the message. */
static const char *typed(int c, int li, char *buf, size_t size)
{
	if (li >= 0)
		snprintf(buf, size, "--%s", long_opts[li].name);
	else
		snprintf(buf, size, "-%c", c == '?' || c == ':' ? optopt : c);
	return buf;
}

/* oslat's suffixes (m, h, d in either case) and whole seconds, at least one. */
static int parse_runtime(const char *text, uint64_t *ret_s)
{
	char folded[64];
	size_t len = strlen(text);
	uint64_t ns;

	if (len == 0 || len >= sizeof(folded))
		return -EINVAL;
	memcpy(folded, text, len + 1u);
	if (strchr("MHD", folded[len - 1u]))
		folded[len - 1u] = (char)(folded[len - 1u] - 'A' + 'a');
	if (parse_duration(folded, NS_PER_SEC, &ns) < 0 || ns % NS_PER_SEC || ns == 0 ||
	    ns > 30u * 24u * 3600u * NS_PER_SEC)
		return -EINVAL;
	*ret_s = ns / NS_PER_SEC;
	return 0;
}

/* oslat's sizes: a number with B, K, M or G (either case), or none. */
static int parse_mem(const char *text, uint64_t *ret)
{
	char digits[32];
	size_t len = strlen(text), shift = 0;
	const char *units = "bkmg", *u;

	if (len == 0 || len >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, text, len + 1u);
	char last = digits[len - 1u];
	if (last >= 'A' && last <= 'Z')
		last = (char)(last - 'A' + 'a');
	if ((u = strchr(units, last)) && last) {
		shift = (size_t)(u - units) * 10u;
		digits[len - 1u] = '\0';
	}
	uint64_t v;
	if (parse_u64(digits, &v) < 0 || v > (UINT64_C(1) << 40) >> shift)
		return -EINVAL;
	*ret = v << shift;
	return 0;
}

static int bad(const char *opt, const char *what, const char *value)
{
	return storecmd_refuse("oslat", "option '%s': '%s' %s", opt, value, what);
}

/* LAT_GO_ON, LAT_DONE after help or version, or the exit status of a usage error. */
static int parse_opts(int argc, char **argv, struct oslat_opts *o)
{
	struct cpuset allowed, probe;
	uint64_t v, mem;
	int c, li;
	char name[64];

	optind = 0;     /* a full reset: the parser may run more than once in a process (tests) */
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, short_opts, long_opts, &li)) != -1) {
		const char *opt = typed(c, li, name, sizeof(name));
		switch (c) {
		case 'b':
			if (parse_u64(optarg, &v) < 0 || v < OSLAT_BUCKETS_MIN || v > OSLAT_BUCKETS_MAX)
				return bad(opt, "is not a number of buckets from 5 to 1024", optarg);
			o->bucket_size = v;
			break;
		case 'B': o->bias = true; break;
		case 'c':
			if (strcmp(optarg, "all") != 0 && (cpuset_parse(optarg, &probe) < 0 || cpuset_count(&probe) == 0))
				return bad(opt, "is not a CPU list (such as 1,3,5,7-15 or all)", optarg);
			o->cpu_list = optarg;
			break;
		case 'C':
			if (parse_u64(optarg, &v) < 0 || v >= CPUSET_MAX)
				return bad(opt, "is not a CPU number", optarg);
			if (cpus_allowed(&allowed) == 0 && !cpuset_has(&allowed, (unsigned)v))
				return storecmd_refuse("oslat", "option '%s': CPU %s is not one this process may run on", opt,
						       optarg);
			o->main_cpu = (unsigned)v;
			break;
		case 'D':
			if (parse_runtime(optarg, &o->runtime_s) < 0)
				return bad(opt, "is not a whole number of seconds (such as 60, 20m, 2H or 1d)", optarg);
			break;
		case 'f':
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 99)
				return bad(opt, "is not a SCHED_FIFO priority (1-99)", optarg);
			o->rtprio = (unsigned)v;
			break;
		case 'm':
			if (parse_mem(optarg, &mem) < 0)
				return bad(opt, "is not a memory size (such as 4K or 1M)", optarg);
			break;
		case 'w':
			if (strcmp(optarg, "memmove") == 0)
				return storecmd_refuse("oslat", "option '%s': workload 'memmove' is not supported: latscope's "
						       "loop only reads the clock", opt);
			if (strcmp(optarg, "no") != 0)
				return bad(opt, "is not a workload (no)", optarg);
			break;
		case 'q': o->quiet = true; break;
		case 's': o->single_preheat = true; break;
		case 'z': o->zero_omit = true; break;
		case 'T':
			return storecmd_refuse("oslat", "option '%s' is not supported: use latscope noise --trigger US "
					       "--on-threshold stop,trace", opt);
		case 'W':
			return storecmd_refuse("oslat", "option '%s' is not supported: latscope oslat follows oslat 2.4, "
					       "whose buckets are 1 us wide", opt);
		case O_JSON: o->json = optarg; break;
		case O_DB: o->db = optarg; break;
		case O_NO_STORE: o->no_store = true; break;
		case O_VERBOSE: o->verbose = true; break;
		case O_LABEL:
			if (o->labels.n == LABELS_MAX)
				return storecmd_refuse("oslat", "option '%s': more than %d labels", opt, LABELS_MAX);
			if (parse_label(optarg, &o->labels.items[o->labels.n]) < 0)
				return bad(opt, "is not KEY=VALUE", optarg);
			o->labels.n++;
			break;
		case 'h':
			printf("oslat V %s\n", OSLAT_VERSION);
			usage_help();
			return LAT_DONE;
		case 'v':
			printf("oslat V %s\nlatscope %s (standing in for oslat)\n", OSLAT_VERSION, LATSCOPE_VERSION);
			return LAT_DONE;
		case ':':
			/* getopt names no long option that lacks its value: the word typed does */
			if (strncmp(argv[optind - 1], "--", 2) == 0)
				opt = argv[optind - 1];
			return storecmd_refuse("oslat", "option '%s' needs a value", opt);
		default:
			if (li < 0 && optopt == 0)
				return storecmd_refuse("oslat", "unknown option '%s'", argv[optind - 1]);
			return storecmd_refuse("oslat", "unknown option '%s'", opt);
		}
	}
	if (optind < argc)
		return storecmd_refuse("oslat", "unexpected argument '%s'", argv[optind]);
	return LAT_GO_ON;
}

/* What a run's hooks need. */
struct oslat_live {
	const struct oslat_opts *o;
	uint32_t nbins;                 /* of the linear histogram: the buckets and the bias */
	bool main_run;
};

static int keep_lin(void *ctx, struct result *res)
{
	const struct oslat_live *lv = ctx;
	return result_keep_lin(res, NS_PER_US, lv->nbins);
}

static void on_prepared(void *ctx, const struct result *res)
{
	const struct oslat_live *lv = ctx;
	struct cpuset main_cpu;

	(void)res;
	if (!lv->main_run)
		return;
	/* oslat's main thread is where -C says, measured CPU or not */
	cpuset_clear(&main_cpu);
	cpuset_add(&main_cpu, lv->o->main_cpu);
	if (cpus_pin(&main_cpu) < 0 && lv->o->verbose)
		fprintf(stderr, "latscope oslat: the main thread could not be moved to cpu %u\n", lv->o->main_cpu);
	if (!lv->o->quiet)
		printf("Test starts...\n");
	fflush(stdout);
}

/* The noise command's parameters as oslat's options ask; given names what was set. */
static void noise_params(const struct oslat_opts *o, const struct cpuset *cpus, uint64_t duration_ns,
			 struct noise_cmd *nc, struct opt_result *given)
{
	const struct measure_cmd *mc = &noise_command;

	memset(given, 0, sizeof(*given));
	mc->defaults(nc);
	nc->run.cpus = *cpus;
	nc->run.duration_ns = duration_ns;
	if (o->rtprio) {
		nc->run.policy = POLICY_FIFO;
		nc->run.priority = o->rtprio;
	}
	/* oslat leaves /dev/cpu_dma_latency alone */
	nc->run.no_pm_qos = true;
	nc->out.db_path = o->db;
	nc->out.no_store = o->no_store;
	nc->out.labels = o->labels;
	static const char *const set[] = { "cpus", "policy", "priority", "duration", "no-pm-qos", "label" };
	for (size_t i = 0; i < ARRAY_SIZE(set); i++)
		opt_mark(mc->opts, mc->nopts, given, set[i]);
}

/* The counter's MHz as oslat prints it: whole, truncated; the loop's own
 * calibration is per CPU and not kept, so this is one made on the main thread. */
static unsigned counter_mhz(const struct noise_cmd *nc)
{
	struct cycles_scale s;
	if (nc->p.clock != NOISE_TSC || !CYCLES_HAVE_COUNTER || cycles_calibrate(&s, 20u * NS_PER_MS) < 0 || !s.mult)
		return 1000;    /* nanoseconds: a 1000 MHz counter */
	return (unsigned)((UINT64_C(1000) << 32) / s.mult);
}

/* The command line as oslat's JSON states it: its name, then the arguments. */
static char *join_cmdline(int argc, char **argv)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	fputs("oslat", m);
	for (int i = 1; i < argc; i++)
		fprintf(m, " %s", argv[i]);
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* One noise run as the hooks say: the result in *res (result_free it), the exit status. */
static int measure(struct noise_cmd *nc, const struct opt_result *given, int argc, char **argv,
		   struct oslat_live *lv, struct result *res, int64_t *ret_id)
{
	struct measure_outcome out = { .res = res };
	struct measure_hooks mh = { .silent = true, .prepared = on_prepared, .shape = keep_lin, .ctx = lv };
	struct measure_cmd front = noise_command;

	front.name = "oslat";
	int code = measure_with(&front, nc, given, argc, argv, &mh, &out);
	*ret_id = out.stored_id;
	return code;
}

/* The pre-heat: a second on every CPU (one with -s), not stored.  Its least
 * gap in oslat's us becomes *ret_bias with -B.  0, or the exit status. */
static int preheat(const struct oslat_opts *o, const struct cpuset *cpus, struct noise_cmd *nc, uint64_t *ret_bias)
{
	struct cpuset on = *cpus;
	struct opt_result given;
	struct result res = { 0 };
	struct oslat_live lv = { .o = o, .nbins = 0, .main_run = false };
	int64_t id;

	if (o->single_preheat) {
		cpuset_clear(&on);
		cpuset_add(&on, (unsigned)cpuset_next(cpus, 0));
	}
	noise_params(o, &on, PREHEAT_NS, nc, &given);
	nc->out.no_store = true;
	char *pre_argv[] = { (char *)"oslat", (char *)"--preheat", NULL };
	int code = measure(nc, &given, 2, pre_argv, &lv, &res, &id);
	if (code == EXIT_OK && o->rtprio && !res.applied.rt_policy) {
		fprintf(stderr, "latscope oslat: option '--rtprio': SCHED_FIFO priority %u not applied (needs root or "
			"CAP_SYS_NICE)\n", o->rtprio);
		code = EXIT_ERROR;
	}
	*ret_bias = UINT64_MAX;
	for (size_t i = 0; code == EXIT_OK && i < res.ncpus; i++) {
		const struct lin_hist *h = res.cpus[i].lin;
		if (h && lin_load(&h->cycles) && lin_load(&h->min) + 1u < *ret_bias)
			*ret_bias = lin_load(&h->min) + 1u;
	}
	if (*ret_bias == UINT64_MAX || !o->bias)
		*ret_bias = 0;
	result_free(&res);
	return code;
}

/* The --json file, or standard output for '-' as rt-tests do. */
static int write_json(const struct oslat_opts *o, struct atomic_file *sink, const struct result *res,
		      const struct oslat_view *v, const struct oslat_core *cores, const struct oslat_run *run)
{
	json_t *doc = oslat_json(res, v, cores, res->ncpus, run);
	char *text = doc ? rtjson_dump(doc) : NULL;
	int r = text ? 0 : -ENOMEM;

	json_decref(doc);
	if (r == 0 && strcmp(o->json, "-") == 0)
		r = printf("%s\n", text) < 0 ? -EIO : 0;
	else if (r == 0 && (r = atomic_file_write(sink, text, strlen(text))) == 0 &&
		 (r = atomic_file_write(sink, "\n", 1)) == 0)
		r = atomic_file_commit(sink);
	free(text);
	if (r < 0)
		fprintf(stderr, "latscope oslat: cannot write '%s': %s\n", o->json, strerror(-r));
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}

static int report(const struct oslat_opts *o, int argc, char **argv, const struct result *res, int code,
		  const struct oslat_view *view, struct atomic_file *sink, int64_t stored_id)
{
	struct oslat_core *cores = calloc(res->ncpus ? res->ncpus : 1u, sizeof(*cores));
	int wcode = EXIT_OK;

	if (!cores) {
		fprintf(stderr, "latscope oslat: out of memory\n");
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < res->ncpus; i++)
		if (oslat_core_figures(&res->cpus[i], view, &cores[i]) < 0) {
			fprintf(stderr, "latscope oslat: cpu %d kept no histogram\n", res->cpus[i].cpu);
			free(cores);
			return EXIT_ERROR;
		}
	if (!o->quiet)
		printf("Test completed.\n\n");
	oslat_print_table(stdout, view, cores, res->ncpus);
	if (o->json) {
		char *cmdline = join_cmdline(argc, argv);
		struct oslat_run run = { .cmdline = cmdline ? cmdline : "oslat", .version = "latscope " LATSCOPE_VERSION,
					 .start_realtime_ns = res->start_realtime_ns,
					 .end_realtime_ns = res->start_realtime_ns + res->elapsed_ns,
					 .return_code = code, .stored_id = stored_id };
		wcode = write_json(o, sink, res, view, cores, &run);
		free(cmdline);
	}
	free(cores);
	return wcode;
}

static int run(int argc, char **argv, const struct oslat_opts *o)
{
	struct cpuset cpus;
	struct lat_error err;
	struct atomic_file sink = { .fd = -1 };
	struct noise_cmd *nc = calloc(1, sizeof(*nc));
	struct opt_result given;
	uint64_t bias = 0;
	int code, r;

	if (!nc)
		return EXIT_ERROR;
	/* the listed CPUs, checked; or every usable online one */
	if (o->cpu_list && strcmp(o->cpu_list, "all") != 0)
		cpuset_parse(o->cpu_list, &cpus);
	if ((r = measure_check_cpus(&cpus, o->cpu_list && strcmp(o->cpu_list, "all") != 0, &err)) < 0) {
		free(nc);
		if (r != -EINVAL) {
			fprintf(stderr, "latscope oslat: %s\n", err.msg);
			return EXIT_ERROR;
		}
		return storecmd_refuse("oslat", "option '-c': %s", strchr(err.msg, ':') ? strchr(err.msg, ':') + 2 : err.msg);
	}
	/* everything the main run will check, checked before anything is printed */
	noise_params(o, &cpus, o->runtime_s * NS_PER_SEC, nc, &given);
	if (measure_check(&noise_command, nc, &given, &err) < 0) {
		free(nc);
		return storecmd_refuse("oslat", "%s", err.msg);
	}
	const struct output outs[] = { { "'--json'", o->json && strcmp(o->json, "-") != 0 ? o->json : NULL } };
	if ((code = outputs_check("oslat", outs, 1, o->db, !o->no_store)) != 0) {
		free(nc);
		return code;
	}
	if (outs[0].path && (r = atomic_file_open(o->json, &sink)) < 0) {
		free(nc);
		return storecmd_refuse("oslat", "option '--json': cannot write '%s': %s", o->json, strerror(-r));
	}

	printf("oslat V %s\n", OSLAT_VERSION);
	struct oslat_header h = { .runtime_s = o->runtime_s, .rtprio = o->rtprio,
				  .cpu_list = o->cpu_list ? o->cpu_list : "all", .main_cpu = o->main_cpu,
				  .workload = "no", .workload_mem_kib = 0,
				  .preheat_cores = o->single_preheat ? 1u : cpuset_count(&cpus) };
	if (cpuset_has(&cpus, 0) && o->rtprio)
		printf("WARNING: Running SCHED_FIFO workload on CPU 0 may hang the thread\n");
	if (!o->quiet) {
		oslat_print_header(stdout, &h);
		printf("Pre-heat for 1 seconds...\n");
	}
	fflush(stdout);
	if ((code = preheat(o, &cpus, nc, &bias)) != EXIT_OK) {
		atomic_file_close(&sink);
		free(nc);
		return code;
	}
	if (o->bias) {
		printf("Global bias set to %llu (us)\n", (unsigned long long)bias);
		fflush(stdout);
	}

	struct oslat_view view = { .bucket_size = (uint32_t)o->bucket_size, .bias_us = bias,
				   .zero_omit = o->zero_omit, .counter_mhz = 0 };
	struct oslat_live lv = { .o = o, .nbins = (uint32_t)(o->bucket_size + bias), .main_run = true };
	struct result res = { 0 };
	int64_t stored_id = 0;
	noise_params(o, &cpus, o->runtime_s * NS_PER_SEC, nc, &given);
	view.counter_mhz = counter_mhz(nc);
	code = measure(nc, &given, argc, argv, &lv, &res, &stored_id);
	free(nc);
	if (!res.cpus) {
		/* measure_with said why */
		atomic_file_close(&sink);
		return code;
	}
	if (o->verbose)
		text_notes(stderr, "oslat", &res, 0, false);
	int wcode = report(o, argc, argv, &res, code, &view, &sink, stored_id);
	fflush(stdout);
	if (o->verbose && stored_id > 0)
		fprintf(stderr, "latscope oslat: stored as latscope run %lld (latscope show %lld)\n",
			(long long)stored_id, (long long)stored_id);
	atomic_file_close(&sink);
	result_free(&res);
	return code != EXIT_OK ? code : wcode;
}

int cmd_oslat(int argc, char **argv)
{
	struct oslat_opts o = { .runtime_s = 1, .bucket_size = OSLAT_BUCKETS_DEFAULT };
	int code = parse_opts(argc, argv, &o);

	/* the run records `latscope oslat ...`, which repeats it, whatever the link's path */
	if (argc > 0)
		argv[0] = (char *)"oslat";
	if (code == LAT_GO_ON)
		return run(argc, argv, &o);
	return code == LAT_DONE ? EXIT_OK : code;
}
