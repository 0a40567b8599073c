/*
 * The flow every measuring command shares: parse, check, open the outputs,
 * run the probe, print, write, and turn the result into an exit code.  A
 * command supplies its option table and its probe; nothing else.
 */
#ifndef LATSCOPE_MEASURE_MEASURE_H
#define LATSCOPE_MEASURE_MEASURE_H

#include <stddef.h>

#include "measure/loadrun.h"
#include "measure/opt.h"
#include "measure/storepath.h"
#include "core/error.h"
#include "core/nstime.h"
#include "probe/probe.h"
#include "result/result.h"
#include "result/until.h"
#include "sys/cpuidle.h"

/* The statistic --fail-above compares. */
enum fail_stat { FAIL_MAX, FAIL_WARM_MAX, FAIL_P99, FAIL_P999, FAIL_P9999, FAIL_MEAN };

/*
 * What a measuring command does around the measurement, apart from what the
 * runner and the probe receive (struct run_params): the load it runs beside
 * it, where the result goes, how it is shown and how it is judged.
 */
struct measure_extras {
	const char *json_path;          /* NULL: none */
	const char *db_path;            /* --db; NULL: $LATSCOPE_DB or the default store */
	bool db_trust;                  /* --db-trust: write it whoever owns it (store/trust.h) */
	bool no_store;
	struct labels labels;
	bool quiet;
	bool live;                      /* window lines even when stdout is not a terminal */
	uint64_t fail_above_ns;         /* 0: off */
	int fail_stat;                  /* enum fail_stat */
	struct strlist load;            /* --load specs, as given */
	const char *load_cmd;           /* --load-cmd; NULL: none */
	uint64_t checkpoint_ns;         /* --checkpoint; 0: none (check_params sets the default, measure/checkpoint.h) */
	char note[256];                 /* what validate() chose in the user's stead, for the result's notes */
	struct strlist on_threshold;    /* --on-threshold, as given: parsed into run_params.on_threshold */
	struct strlist on_end;          /* --on-end, as given */
	struct action_list end_actions; /* on_end parsed: done after the result is written */
	const char *host;               /* --host: latscope host's address; NULL: none */
	const char *host_secret;        /* --host-secret FILE; NULL: none */
	const char *until_text;         /* --until EXPR, as given; NULL: none */
	struct until until;             /* until_text parsed */
};

struct measure_cmd {
	const char *name;               /* NULL: the probe's name (a front end such as cyclictest names itself) */
	const char *synopsis;           /* after "latscope NAME " */
	const char *about;              /* one paragraph for --help */
	const struct probe_ops *ops;
	const struct opt *opts;
	size_t nopts;
	size_t params_size;
	size_t run_offset;              /* where struct run_params sits in the params */
	size_t extras_offset;           /* where struct measure_extras sits */
	size_t probe_offset;            /* where the probe's own parameters sit */
	size_t help_offset;             /* the bool set by --help */
	void (*defaults)(void *params);
	/* Optional: the one positional argument (a PATH to measure); -EINVAL with err filled. */
	int (*path)(void *params, const char *path, struct lat_error *err);
	const char *path_name;          /* how --help and errors call it */
	/* Probe-specific checks after the common ones; -EINVAL with err filled. */
	int (*validate)(void *params, const struct opt_result *given, struct lat_error *err);
	/* Optional: what the run reads, opened once the options are checked and
	 * before the result is shaped (it may set the CPUs): 0, or -errno with err
	 * filled (-EINVAL: the user's input, exit 2; else exit 1). */
	int (*open)(void *params, struct lat_error *err);
	/* Optional: undo open, on every path after it succeeded. */
	void (*close)(void *params);
	/* One line of what the probe does with its parameters, for the header; the
	 * scheduling the threads got is added after it, once it is known. */
	void (*describe)(const void *params, char *buf, size_t size);
	/* Optional: what the user should know before the run (res->notes). */
	void (*notes)(const void *params, struct result *res);
	/* Optional: what the finalized result says the user should know (res->notes). */
	void (*after)(const void *params, struct result *res);
	/* Optional: the period the probe's wakeups keep, which the findings weigh
	 * the timer slack and the hypervisor's timer slop against. */
	uint64_t (*period)(const void *params);
};

int measure_main(const struct measure_cmd *mc, int argc, char **argv);

/* Where the shared parts sit in a command's parameters (params is mc->params_size bytes). */
static inline struct run_params *measure_run_params(const struct measure_cmd *mc, void *params)
{
	return (struct run_params *)(void *)((char *)params + mc->run_offset);
}

static inline struct measure_extras *measure_extras_of(const struct measure_cmd *mc, void *params)
{
	return (struct measure_extras *)(void *)((char *)params + mc->extras_offset);
}

/* The command's name in messages and help: its own, else its probe's. */
static inline const char *measure_name(const struct measure_cmd *mc)
{
	return mc->name ? mc->name : mc->ops->name;
}

/* For commands that run others (latscope run). */
struct measure_hooks {
	bool silent;                    /* print nothing but errors */
	/* The command has measured before (a monitor's later period): a store
	 * that cannot be opened now is a runtime error (exit 1), not bad usage. */
	bool started;
	/* Now and then: how far the run is (elapsed of total; total 0 when open-ended). */
	void (*progress)(void *ctx, uint64_t elapsed_ns, uint64_t total_ns);
	/* Optional: set up to measure, just before the first sample (see runner_hooks). */
	void (*prepared)(void *ctx, const struct result *res);
	/* Optional: a few times a second while measuring. */
	void (*tick)(void *ctx, const struct result *res);
	/* Optional: a window of one CPU has been added to res (runner_hooks). */
	void (*window)(void *ctx, const struct result *res, const struct cpu_result *cr,
		       const struct result_window *w);
	/* Optional: the finalized result, before it is printed and stored: what
	 * the caller adds to it (a note) is kept with it. */
	void (*finished)(void *ctx, struct result *res);
	/* Optional: add to the result before the run, e.g. a front end's own
	 * histogram (result_keep_lin); a negative errno ends the command. */
	int (*shape)(void *ctx, struct result *res);
	void *ctx;
};

struct measure_outcome {
	int64_t stored_id;              /* 0 when the run was not stored */
	struct result *res;             /* when set: the finalized result, handed over (result_free it) */
};

/* measure_main with hooks, and what came of it. */
int measure_run(const struct measure_cmd *mc, int argc, char **argv, const struct measure_hooks *mh,
		struct measure_outcome *out);

/*
 * The same with parameters a caller set instead of parsed (latscope run and
 * the front ends such as cyclictest): params holds mc->defaults and the
 * caller's changes, given names them as if they had been typed (opt_mark);
 * every check measure_parse makes is made here too.  argc and argv are the
 * command line the result records (argv[0] the subcommand).
 */
int measure_with(const struct measure_cmd *mc, void *params, const struct opt_result *given, int argc, char **argv,
		 const struct measure_hooks *mh, struct measure_outcome *out);

/*
 * Defaults, options and every check, without running: LAT_GO_ON, LAT_DONE
 * when --help was asked, -EINVAL with err filled (core/error.h).  params is mc->params_size bytes.
 */
int measure_parse(const struct measure_cmd *mc, int argc, char **argv, void *params, struct lat_error *err);

/* A CPU list the user gave (given) must be online and usable by this process;
 * without one, cpus becomes every usable online CPU.  -errno with err filled. */
int measure_check_cpus(struct cpuset *cpus, bool given, struct lat_error *err);

extern const char *const policy_choices[];
extern const char *const policy_choices_no_deadline[];
extern const char *const fail_stat_choices[];
extern const char *const trace_backend_choices[];       /* enum trace_backend's */

/* clang-format off: one row a few lines, as the tables they fill */
/* --checkpoint's row (measure/checkpoint.h), at offset off: wherever it is taken, the same range. */
#define CHECKPOINT_OPT(off, text) \
	{ "checkpoint", 0, OPT_DURATION, (off), .run_row = RUN_ROW_CHECKPOINT, \
	  .min = NS_PER_SEC, .max = 30u * 24u * 3600u * NS_PER_SEC, \
	  .unit = NS_PER_SEC, .flags = OPT_NOT_PARAM | OPT_ZERO_OFF, .help = (text) }

/* --until's row, for the commands whose values have a tail (timer, noise, wake). */
#define UNTIL_OPT(T) \
	{ "until", 0, OPT_STRING, offsetof(T, out.until_text), .run_row = RUN_ROW_UNTIL, \
	  .metavar = "EXPR", .flags = OPT_NOT_PARAM, \
	  .help = "measure until EXPR is decided at 95 %: 'level(1h) < 100us' (the latency exceeded once an " \
		  "hour) or 'rate(>100us) < 1/h'; exit 0 below, 3 above, 4 still undecided at the end" }

/*
 * The options every measuring command takes, for a params struct T with
 * members run, out and help.  POLICIES: policy_choices for a probe that can
 * keep SCHED_DEADLINE's periods (probe_ops.run_deadline), else
 * policy_choices_no_deadline: --help and a shell offer only what it takes.
 */
#define RUN_OPTS(T, POLICIES) \
	RUN_OPT_CPUS(T), \
	RUN_OPTS_BUT_CPUS(T, POLICIES)

#define RUN_OPT_CPUS(T) \
	{ "cpus", 'a', OPT_CPUS, offsetof(T, run.cpus), .run_row = RUN_ROW_CPUS, .metavar = "CPUS", \
	  .help = "CPUs to measure on, one thread each, as a list such as 0-3,6" }

/* The same, for a command that places its threads itself. */
#define RUN_OPTS_BUT_CPUS(T, POLICIES) \
	RUN_OPTS_SCHED(T, POLICIES), \
	{ "loops", 'l', OPT_UINT, offsetof(T, run.loops), .run_row = RUN_ROW_LOOPS, \
	  .min = 1, .max = UINT64_C(1) << 48, \
	  .help = "stop after N samples per CPU instead of after a duration" }, \
	RUN_OPTS_REST(T)

/* Priority, policy and duration. */
#define RUN_OPTS_SCHED(T, POLICIES) \
	{ "priority", 'p', OPT_UINT, offsetof(T, run.priority), .run_row = RUN_ROW_PRIORITY, \
	  .min = 0, .max = 99, .metavar = "PRIO", \
	  .help = "priority of the measuring threads: 1-99 for fifo and rr, 0 for other" }, \
	{ "policy", 0, OPT_ENUM, offsetof(T, run.policy), .run_row = RUN_ROW_POLICY, .choices = (POLICIES), \
	  .help = "scheduling policy of the measuring threads" }, \
	{ "duration", 'D', OPT_DURATION, offsetof(T, run.duration_ns), .run_row = RUN_ROW_DURATION, \
	  .min = NS_PER_MS, \
	  .max = 30u * 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC, \
	  .help = "how long to measure (with none: until Ctrl-C); a bare number is seconds" }

/* What follows --loops: a command that counts in its own unit (io's reads) puts its row before these. */
#define RUN_OPTS_REST(T) \
	{ "threshold", 0, OPT_DURATION, offsetof(T, run.threshold_ns), .run_row = RUN_ROW_THRESHOLD, \
	  .min = 1, .max = 3600u * NS_PER_SEC, \
	  .unit = NS_PER_US, .help = "count and report samples above this; a bare number is microseconds" }, \
	{ "window", 0, OPT_DURATION, offsetof(T, run.window_ns), .run_row = RUN_ROW_WINDOW, \
	  .min = 10u * NS_PER_MS, \
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_SEC, \
	  .help = "length of the per-window statistics; a bare number is seconds" }, \
	{ "warmup", 0, OPT_UINT, offsetof(T, run.warmup), .run_row = RUN_ROW_WARMUP, \
	  .min = 0, .max = 1000000, \
	  .help = "windows left out of the warm max" }, \
	{ "fail-above", 0, OPT_DURATION, offsetof(T, out.fail_above_ns), .run_row = RUN_ROW_FAIL_ABOVE, \
	  .min = 1, .max = 3600u * NS_PER_SEC, \
	  .unit = NS_PER_US, .help = "exit with status 3 when --fail-stat of any CPU is above this" }, \
	{ "fail-stat", 0, OPT_ENUM, offsetof(T, out.fail_stat), .run_row = RUN_ROW_FAIL_STAT, \
	  .choices = fail_stat_choices, \
	  .help = "the statistic --fail-above judges" }, \
	{ "trigger", 0, OPT_DURATION, offsetof(T, run.trigger_ns), .run_row = RUN_ROW_TRIGGER, \
	  .min = 1, .max = 3600u * NS_PER_SEC, \
	  .unit = NS_PER_US, .flags = OPT_NOT_PARAM, \
	  .help = "a sample above this sets off --on-threshold (default: --threshold); a bare number is microseconds" }, \
	{ "on-threshold", 0, OPT_STRLIST, offsetof(T, out.on_threshold), .run_row = RUN_ROW_ON_THRESHOLD, \
	  .metavar = "ACTION", .flags = OPT_NOT_PARAM, \
	  .help = "when a sample is above --trigger: stop, trace, exec CMD or signal PID:SIG; several separated by " \
		  "commas (exec last: its CMD is the rest), or repeated" }, \
	{ "action-interval", 0, OPT_DURATION, offsetof(T, run.action_interval_ns), .run_row = RUN_ROW_ACTION_INTERVAL, \
	  .min = NS_PER_MS, \
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_SEC, .flags = OPT_NOT_PARAM, \
	  .help = "do each exec, trace and signal of --on-threshold at most once in this time; a bare number is seconds" }, \
	{ "on-end", 0, OPT_STRLIST, offsetof(T, out.on_end), .run_row = RUN_ROW_ON_END, \
	  .metavar = "ACTION", .flags = OPT_NOT_PARAM, \
	  .help = "after the result is written: exec CMD or signal PID:SIG; several separated by commas (exec " \
		  "last), or repeated" }, \
	{ "json", 0, OPT_STRING, offsetof(T, out.json_path), .run_row = RUN_ROW_JSON, \
	  .metavar = "FILE", .flags = OPT_NOT_PARAM, \
	  .values = OPT_VALUES_FILE, \
	  .help = "write the whole result as JSON to FILE (replaced atomically)" }, \
	{ "db", 0, OPT_STRING, offsetof(T, out.db_path), .run_row = RUN_ROW_DB, \
	  .metavar = "PATH", .flags = OPT_NOT_PARAM, \
	  .values = OPT_VALUES_FILE, \
	  .help = "keep the run in this store (default: $LATSCOPE_DB, else $XDG_DATA_HOME/latscope/runs.db)" }, \
	{ "db-trust", 0, OPT_FLAG, offsetof(T, out.db_trust), .run_row = RUN_ROW_DB_TRUST, \
	  .flags = OPT_NOT_PARAM, .help = DB_TRUST_HELP }, \
	{ "no-store", 0, OPT_FLAG, offsetof(T, out.no_store), .run_row = RUN_ROW_NO_STORE, \
	  .flags = OPT_NOT_PARAM, \
	  .help = "do not keep the run in the store" }, \
	CHECKPOINT_OPT(offsetof(T, out.checkpoint_ns), "write the result so far (--json, the store) every DUR while " \
		       "measuring, marked partial; 0 or none: never; default 10m for a run over 1h or without -D"), \
	{ "label", 0, OPT_LABEL, offsetof(T, out.labels), .run_row = RUN_ROW_LABEL, .flags = OPT_NOT_PARAM, \
	  .help = "tag the run, such as config=guest; repeatable" }, \
	{ "quiet", 'q', OPT_FLAG, offsetof(T, out.quiet), .run_row = RUN_ROW_QUIET, .flags = OPT_NOT_PARAM, \
	  .help = "print only the summary and the id the run is stored as" }, \
	{ "live", 0, OPT_FLAG, offsetof(T, out.live), .run_row = RUN_ROW_LIVE, .flags = OPT_NOT_PARAM, \
	  .help = "print the window lines even when standard output is not a terminal" }, \
	{ "no-pm-qos", 0, OPT_FLAG, offsetof(T, run.no_pm_qos), .run_row = RUN_ROW_NO_PM_QOS, \
	  .help = "do not hold /dev/cpu_dma_latency at 0 while measuring" }, \
	{ "deepest-idle-state", 0, OPT_UINT, offsetof(T, run.deepest_idle_state), .run_row = RUN_ROW_DEEPEST_IDLE_STATE, \
	  .min = 0, \
	  .max = CPUIDLE_STATES_MAX - 1u, .metavar = "N", .flags = OPT_UNSET_NULL, \
	  .help = "disable the idle states deeper than N on the measured CPUs while measuring (root; beside PM QoS, " \
		  "for when its global 0 is too much)" }, \
	{ "no-context", 0, OPT_FLAG, offsetof(T, run.no_context), .run_row = RUN_ROW_NO_CONTEXT, \
	  .help = "do not count interrupts, softirqs, preemptions and steal time beside every window" }, \
	{ "strict", 0, OPT_FLAG, offsetof(T, run.strict), .run_row = RUN_ROW_STRICT, \
	  .help = "refuse to run when the policy, memory lock or PM QoS cannot be applied" }, \
	{ "load", 0, OPT_STRLIST, offsetof(T, out.load), .run_row = RUN_ROW_LOAD, .metavar = "SPEC", \
	  .values = OPT_VALUES_WORDS, .words = loadrun_kind_word, \
	  .help = "run a load while measuring: cpu, mem, syscall, sched, io or console, with :cpus=LIST,intensity=N%; repeatable" }, \
	{ "load-cmd", 0, OPT_STRING, offsetof(T, out.load_cmd), .run_row = RUN_ROW_LOAD_CMD, \
	  .metavar = "CMD", \
	  .help = "run CMD (with /bin/sh) as the load while measuring; it and its children are stopped at the end" }, \
	{ "host", 0, OPT_STRING, offsetof(T, out.host), .run_row = RUN_ROW_HOST, \
	  .metavar = "SPEC", .flags = OPT_NOT_PARAM, \
	  .help = "in a VM: ask its host's agent (latscope host) what it did to this guest's vCPUs at each spike: " \
		  "serial:DEVICE, vsock:CID:PORT, unix:PATH or ADDR:PORT" }, \
	{ "host-secret", 0, OPT_STRING, offsetof(T, out.host_secret), .run_row = RUN_ROW_HOST_SECRET, \
	  .metavar = "FILE", .flags = OPT_NOT_PARAM, \
	  .values = OPT_VALUES_FILE, \
	  .help = "with --host: the secret file the agent was started with (mode 0600)" }, \
	{ "help", 'h', OPT_HELP, offsetof(T, help), .run_row = RUN_ROW_HELP, \
	  .flags = OPT_NOT_PARAM, .help = "show this help" }
/* clang-format on */

/* Every check measure_with makes of params set by a caller (given as in
 * measure_with), without running: 0 or -EINVAL with err filled. */
int measure_check(const struct measure_cmd *mc, void *params, const struct opt_result *given, struct lat_error *err);

/* Defaults of the common options. */
void run_params_defaults(struct run_params *rp, struct measure_extras *x);

#endif
