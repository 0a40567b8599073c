/*
 * oslat's command line and output on latscope's noise probe.  The options
 * become a `latscope noise` run (which is what gets stored, with every
 * statistic), and oslat's table is printed from a linear histogram of 1 us
 * bins the noise loop keeps beside latscope's own (result_keep_lin).  Like
 * oslat, a pre-heat of one second comes first; its figures give --bias and are
 * not stored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/exitcode.h"
#include "measure/noise.h"
#include "measure/storecmd.h"
#include "config.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "front/driver.h"
#include "probe/cycles.h"
#include "report/oslat.h"
#include "report/text.h"
#include "sys/cpus.h"

#define PREHEAT_NS NS_PER_SEC

/* The options, and what the run's hooks keep. */
struct oslat_state {
	uint64_t runtime_s;
	unsigned rtprio;                /* 0: the default policy */
	const char *cpu_list;           /* NULL: all */
	unsigned main_cpu;
	uint64_t bucket_size;
	bool bias, quiet, single_preheat, zero_omit;
	struct cpuset cpus;             /* measured */
	uint32_t nbins;                 /* of the linear histogram: the buckets and the bias */
	bool main_run;                  /* else the pre-heat */
	struct oslat_view view;
	struct front_file *json_file;
};

static struct oslat_state *state_of(const void *fr)
{
	return ((const struct front_run *)fr)->st;
}

enum { K_BUCKET, K_CPUS, K_MAIN, K_DURATION, K_RTPRIO, K_MEM, K_VERSION, K_WORKLOAD };

#define FLAG(n, l, field) { .name = (n), .letter = (l), .kind = FRONT_FLAG, .key = offsetof(struct oslat_state, field) }
#define SET(n, l, a, k, t) { .name = (n), .letter = (l), .arg = (a), .kind = FRONT_SET, .key = (k), .to = (t) }
#define SET_CPUS(n, l, k, t) \
	{ .name = (n), .letter = (l), .arg = FRONT_ARG, .kind = FRONT_SET, .key = (k), .to = (t), .values = OPT_VALUES_CPUS }
#define REFUSED(n, l, w) { .name = (n), .letter = (l), .arg = FRONT_ARG, .kind = FRONT_REFUSE, .why = (w) }

static const struct front_opt oslat_opts[] = {
	SET("bucket-size", 'b', FRONT_ARG, K_BUCKET, 0),
	FLAG("bias", 'B', bias),
	SET_CPUS("cpu-list", 'c', K_CPUS, FRONT_TO(NOISE_OPT_CPUS)),
	SET_CPUS("cpu-main-thread", 'C', K_MAIN, 0),
	SET("duration", 'D', FRONT_ARG, K_DURATION, FRONT_TO(NOISE_OPT_DURATION)),
	FRONT_JSON_ROW,
	SET("rtprio", 'f', FRONT_ARG, K_RTPRIO, FRONT_TO(NOISE_OPT_PRIORITY)),
	FRONT_HELP_ROW('h'),
	SET("workload-mem", 'm', FRONT_ARG, K_MEM, 0),  /* checked, unused */
	FLAG("quiet", 'q', quiet),
	FLAG("single-preheat", 's', single_preheat),
	SET("version", 'v', FRONT_NO_ARG, K_VERSION, 0),
	SET("workload", 'w', FRONT_ARG, K_WORKLOAD, 0),
	FLAG("zero-omit", 'z', zero_omit),
	FRONT_DB_ROW,
	FRONT_DB_TRUST_ROW,
	FRONT_NO_STORE_ROW,
	FRONT_LABEL_ROW,
	FRONT_VERBOSE_ROW("verbose", 0),
	REFUSED("trace-threshold", 'T', "use latscope noise --trigger US --on-threshold stop,trace"),
	REFUSED("bucket-width", 'W', "latscope oslat follows oslat 2.4, whose buckets are 1 us wide"),
};

/* The noise command's rows every run sets from oslat's options, given or not. */
static const int oslat_sets[] = {
	NOISE_OPT_CPUS, NOISE_OPT_POLICY, NOISE_OPT_PRIORITY, NOISE_OPT_DURATION, NOISE_OPT_NO_PM_QOS, NOISE_OPT_LABEL,
};

static void usage_help(void)
{
	printf("oslat V %s\n", OSLAT_VERSION);
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
	       "    --db-trust         store it even in a store another user owns or may write\n"
	       "    --no-store         do not store the run\n"
	       "    --label=KEY=VALUE  tag the stored run; repeatable\n"
	       "    --verbose          say on standard error what latscope noted and where the run is stored\n"
	       "-h, --help             show this help\n\n"
	       "Refused: -w memmove (the loop only reads the clock), -T/--trace-threshold (use latscope noise\n"
	       "--trigger US --on-threshold stop,trace), -W/--bucket-width (oslat 2.5's).\n\n"
	       "Exit status: 0 done (also when stopped by Ctrl-C, SIGTERM or SIGHUP), 1 error (such as\n"
	       "SCHED_FIFO refused), 2 bad usage.  See latscope-oslat(1).\n");
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

/* The counter's MHz as oslat prints it: whole, truncated; the loop's own
 * calibration is per CPU and not kept, so this is one made on the main thread. */
static unsigned counter_mhz(const struct noise_cmd *nc)
{
	struct cycles_scale s;
	if (nc->p.clock != NOISE_TSC || !CYCLES_HAVE_COUNTER || cycles_calibrate(&s, 20u * NS_PER_MS) < 0 || !s.mult)
		return 1000;    /* nanoseconds: a 1000 MHz counter */
	return (unsigned)((UINT64_C(1000) << 32) / s.mult);
}

static int bad(const char *opt, const char *what, const char *value)
{
	return front_refuse(&oslat_front, "option '%s': '%s' %s", opt, value, what);
}

static int oslat_set(struct front_run *fr, const struct front_opt *row, const char *as, const char *arg)
{
	struct oslat_state *o = state_of(fr);
	struct cpuset allowed, probe;
	uint64_t v, mem;

	switch (row->key) {
	case K_BUCKET:
		if (parse_u64(arg, &v) < 0 || v < OSLAT_BUCKETS_MIN || v > OSLAT_BUCKETS_MAX)
			return bad(as, "is not a number of buckets from 5 to 1024", arg);
		o->bucket_size = v;
		return LAT_GO_ON;
	case K_CPUS:
		if (strcmp(arg, "all") != 0 && (cpuset_parse(arg, &probe) < 0 || cpuset_count(&probe) == 0))
			return bad(as, "is not a CPU list (such as 1,3,5,7-15 or all)", arg);
		o->cpu_list = arg;
		return LAT_GO_ON;
	case K_MAIN:
		if (parse_u64(arg, &v) < 0 || v >= CPUSET_MAX)
			return bad(as, "is not a CPU number", arg);
		if (cpus_allowed(&allowed) == 0 && !cpuset_has(&allowed, (unsigned)v))
			return front_refuse(&oslat_front, "option '%s': CPU %s is not one this process may run on", as, arg);
		o->main_cpu = (unsigned)v;
		return LAT_GO_ON;
	case K_DURATION:
		return parse_runtime(arg, &o->runtime_s) < 0
			       ? bad(as, "is not a whole number of seconds (such as 60, 20m, 2H or 1d)", arg) : LAT_GO_ON;
	case K_RTPRIO:
		if (parse_u64(arg, &v) < 0 || v < 1 || v > 99)
			return bad(as, "is not a SCHED_FIFO priority (1-99)", arg);
		o->rtprio = (unsigned)v;
		return LAT_GO_ON;
	case K_MEM:
		return parse_mem(arg, &mem) < 0 ? bad(as, "is not a memory size (such as 4K or 1M)", arg) : LAT_GO_ON;
	case K_WORKLOAD:
		if (strcmp(arg, "memmove") == 0)
			return front_refuse(&oslat_front, "option '%s': workload 'memmove' is not supported: latscope's loop "
					    "only reads the clock", as);
		return strcmp(arg, "no") != 0 ? bad(as, "is not a workload (no)", arg) : LAT_GO_ON;
	case K_VERSION:
		printf("oslat V %s\nlatscope %s (standing in for oslat)\n", OSLAT_VERSION, LATSCOPE_VERSION);
		return LAT_DONE;
	}
	return LAT_GO_ON;
}

/* The run records `latscope oslat ...`, which repeats it, whatever the link's path. */
static int oslat_args(struct front_run *fr, int argc, char **argv, int *ret_argc, char ***ret_argv)
{
	(void)fr;
	if (argc > 0)
		argv[0] = (char *)"oslat";
	*ret_argc = argc;
	*ret_argv = argv;
	return LAT_GO_ON;
}

static int keep_lin(void *ctx, struct result *res)
{
	return result_keep_lin(res, NS_PER_US, state_of(ctx)->nbins);
}

static void on_prepared(void *ctx, const struct result *res)
{
	const struct oslat_state *o = state_of(ctx);
	struct cpuset main_cpu;

	(void)res;
	if (!o->main_run)
		return;
	/* oslat's main thread is where -C says, measured CPU or not */
	cpuset_clear(&main_cpu);
	cpuset_add(&main_cpu, o->main_cpu);
	if (cpus_pin(&main_cpu) < 0 && ((const struct front_run *)ctx)->verbose)
		fprintf(stderr, "latscope oslat: the main thread could not be moved to cpu %u\n", o->main_cpu);
	if (!o->quiet)
		printf("Test starts...\n");
	fflush(stdout);
}

/* The noise command's parameters as oslat's options ask, checked before anything is printed.  0 or the exit status. */
static int oslat_translate(struct front_run *fr)
{
	struct oslat_state *o = state_of(fr);
	struct noise_cmd *nc = fr->params;
	const bool listed = o->cpu_list && strcmp(o->cpu_list, "all") != 0;
	struct lat_error err;
	int r;

	/* the listed CPUs, checked; or every usable online one */
	if (listed)
		cpuset_parse(o->cpu_list, &o->cpus);
	if ((r = measure_check_cpus(&o->cpus, listed, &err)) < 0) {
		if (r != -EINVAL) {
			fprintf(stderr, "latscope oslat: %s\n", err.msg);
			return EXIT_ERROR;
		}
		return storecmd_refuse("oslat", "option '-c': %s", strchr(err.msg, ':') ? strchr(err.msg, ':') + 2 : err.msg);
	}
	nc->run.cpus = o->cpus;
	nc->run.duration_ns = o->runtime_s * NS_PER_SEC;
	if (o->rtprio) {
		nc->run.policy = POLICY_FIFO;
		nc->run.priority = o->rtprio;
	}
	nc->run.no_pm_qos = true;       /* oslat leaves /dev/cpu_dma_latency alone */
	if (measure_check(&noise_command, nc, &fr->given, &err) < 0)
		return storecmd_refuse("oslat", "%s", err.msg);
	o->json_file = front_add_file(fr, "'--json'", "--json", fr->json && strcmp(fr->json, "-") != 0 ? fr->json : NULL);
	return 0;
}

/* The pre-heat: a second on every CPU (one with -s), not stored.  Its least
 * gap in oslat's us becomes *ret_bias with -B.  0, or the exit status. */
static int preheat(struct front_run *fr, uint64_t *ret_bias)
{
	const struct oslat_state *o = state_of(fr);
	struct noise_cmd *nc = malloc(sizeof(*nc));
	struct result res = { 0 };
	int64_t id;

	if (!nc)
		return EXIT_ERROR;
	*nc = *(const struct noise_cmd *)fr->params;
	if (o->single_preheat) {
		cpuset_clear(&nc->run.cpus);
		cpuset_add(&nc->run.cpus, (unsigned)cpuset_next(&o->cpus, 0));
	}
	nc->run.duration_ns = PREHEAT_NS;
	nc->out.no_store = true;
	char *pre_argv[] = { (char *)"oslat", (char *)"--preheat", NULL };
	int code = front_measure(fr, nc, &fr->given, 2, pre_argv, &res, &id);
	free(nc);
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

/* oslat's header and pre-heat, before the run it reports.  0 or the exit status. */
static int oslat_before(struct front_run *fr)
{
	struct oslat_state *o = state_of(fr);
	uint64_t bias = 0;
	int code;

	printf("oslat V %s\n", OSLAT_VERSION);
	struct oslat_header h = { .runtime_s = o->runtime_s, .rtprio = o->rtprio,
				  .cpu_list = o->cpu_list ? o->cpu_list : "all", .main_cpu = o->main_cpu,
				  .workload = "no", .workload_mem_kib = 0,
				  .preheat_cores = o->single_preheat ? 1u : cpuset_count(&o->cpus) };
	if (cpuset_has(&o->cpus, 0) && o->rtprio)
		printf("WARNING: Running SCHED_FIFO workload on CPU 0 may hang the thread\n");
	if (!o->quiet) {
		oslat_print_header(stdout, &h);
		printf("Pre-heat for 1 seconds...\n");
	}
	fflush(stdout);
	if ((code = preheat(fr, &bias)) != EXIT_OK)
		return code;
	if (o->bias) {
		printf("Global bias set to %llu (us)\n", (unsigned long long)bias);
		fflush(stdout);
	}
	o->view = (struct oslat_view){ .bucket_size = (uint32_t)o->bucket_size, .bias_us = bias,
				       .zero_omit = o->zero_omit, .counter_mhz = counter_mhz(fr->params) };
	o->nbins = (uint32_t)(o->bucket_size + bias);
	o->main_run = true;
	return 0;
}

/* The table, and the --json file or standard output for '-' as rt-tests do. */
static int oslat_write(struct front_run *fr, int code)
{
	const struct oslat_state *o = state_of(fr);
	const struct result *res = &fr->res;
	struct oslat_core *cores = calloc(res->ncpus ? res->ncpus : 1u, sizeof(*cores));
	int wcode = EXIT_OK;

	if (fr->verbose)
		text_notes(stderr, "oslat", res, 0, false);
	if (!cores) {
		fprintf(stderr, "latscope oslat: out of memory\n");
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < res->ncpus; i++)
		if (oslat_core_figures(&res->cpus[i], &o->view, &cores[i]) < 0) {
			fprintf(stderr, "latscope oslat: cpu %d kept no histogram\n", res->cpus[i].cpu);
			free(cores);
			return EXIT_ERROR;
		}
	if (!o->quiet)
		printf("Test completed.\n\n");
	oslat_print_table(stdout, &o->view, cores, res->ncpus);
	if (fr->json) {
		char *cmdline = front_cmdline(fr);
		struct oslat_run run = { .cmdline = cmdline ? cmdline : "oslat", .version = "latscope " LATSCOPE_VERSION,
					 .start_realtime_ns = res->start_realtime_ns,
					 .end_realtime_ns = res->start_realtime_ns + res->elapsed_ns,
					 .return_code = code, .stored_id = fr->stored_id };
		wcode = front_put_json(fr, o->json_file->path ? o->json_file : NULL, fr->json,
				       oslat_json(res, &o->view, cores, res->ncpus, &run));
		free(cmdline);
	}
	free(cores);
	return code != EXIT_OK ? code : wcode;
}

static void oslat_defaults(void *st)
{
	struct oslat_state *o = st;
	o->runtime_s = 1;
	o->bucket_size = OSLAT_BUCKETS_DEFAULT;
}

const struct front_end oslat_front = {
	.name = "oslat",
	.mc = &noise_command,
	.opts = oslat_opts,
	.nopts = ARRAY_SIZE(oslat_opts),
	.sets = oslat_sets,
	.nsets = ARRAY_SIZE(oslat_sets),
	.refused = " is not supported: ",
	.state_size = sizeof(struct oslat_state),
	.defaults = oslat_defaults,
	.help = usage_help,
	.args = oslat_args,
	.set = oslat_set,
	.translate = oslat_translate,
	.before = oslat_before,
	.prepared = on_prepared,
	.shape = keep_lin,
	.write = oslat_write,
};

int cmd_oslat(int argc, char **argv)
{
	return front_run(&oslat_front, argc, argv);
}
