#include "measure/measure.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/checkpoint.h"
#include "measure/exitcode.h"
#include "measure/hostask.h"
#include "measure/loadrun.h"
#include "measure/onend.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "measure/storepath.h"
#include "measure/unstored.h"
#include "core/quote.h"
#include "core/units.h"
#include "probe/runner.h"
#include "report/text.h"
#include "result/json.h"
#include "store/store.h"
#include "sys/findings.h"
#include "sys/fingerprint.h"
#include "sys/cpus.h"
#include "sys/smi.h"
#include "report/tprint.h"

const char *const policy_choices[] = { "fifo", "rr", "other", "deadline", NULL };
/* The same indices, for the probes that have no loop of their own for SCHED_DEADLINE (probe_ops.run_deadline). */
const char *const policy_choices_no_deadline[] = { "fifo", "rr", "other", NULL };
_Static_assert(POLICY_DEADLINE == 3 && POLICY_OTHER == 2,
	       "policy_choices_no_deadline is policy_choices without its last");
const char *const trace_backend_choices[] = { "auto", "bpf", "tracefs", "both", NULL };
_Static_assert(sizeof(trace_backend_choices) / sizeof(trace_backend_choices[0]) == TRACE_BACKENDS + 1,
	       "a name for every --trace-backend");
const char *const fail_stat_choices[] = { "max", "warm_max", "p99", "p99.9", "p99.99", "mean", NULL };

void run_params_defaults(struct run_params *rp, struct measure_extras *x)
{
	memset(rp, 0, sizeof(*rp));
	memset(x, 0, sizeof(*x));
	rp->policy = POLICY_FIFO;
	rp->priority = 95;
	rp->threshold_ns = 100u * NS_PER_US;
	rp->window_ns = NS_PER_SEC;
	rp->warmup = 2;
	rp->timer_slack_ns = 1;
	rp->action_interval_ns = NS_PER_SEC;
	rp->deepest_idle_state = OPT_UNSET;
	x->fail_stat = FAIL_MAX;
}

static int usage_error(const struct measure_cmd *mc, const char *msg)
{
	return storecmd_usage(measure_name(mc), msg);
}

static void print_help(const struct measure_cmd *mc)
{
	void *defaults = calloc(1, mc->params_size);

	printf("Usage: latscope %s %s\n\n%s\n\nOptions:\n", measure_name(mc), mc->synopsis, mc->about);
	if (defaults) {
		mc->defaults(defaults);
		opt_print_help(stdout, mc->opts, mc->nopts, defaults);
		free(defaults);
	}
	const bool until = opt_run_row(mc->opts, mc->nopts, RUN_ROW_UNTIL) >= 0;
	tprintf(stdout, "\nExit status: 0 done (also when stopped by Ctrl-C, SIGTERM, SIGHUP or SIGQUIT), 1 error, 2 bad usage,\n"
	       "3 --fail-above exceeded, --on-threshold stop ended the run");
	if (until)
		tprintf(stdout, " or --until decided above,\n4 --until still undecided at the end");
	tprintf(stdout, ".  See latscope-%s(1).\n", measure_name(mc));
}

int measure_check_cpus(struct cpuset *cpus, bool given, struct lat_error *err)
{
	struct cpuset online, usable, bad;
	char list[80], have[80];
	int r;

	if ((r = cpus_online(&online)) < 0) {
		return err_set(err, r, "cannot read the online CPUs: %s", strerror(-r));
	}
	if (given) {
		cpuset_diff(&bad, cpus, &online);
		if (cpuset_count(&bad)) {
			cpuset_format(&bad, list, sizeof(list));
			cpuset_format(&online, have, sizeof(have));
			return err_set(err, -EINVAL, "option '--cpus': cpu %s is not online (online: %s)", list, have);
		}
	}
	if ((r = cpus_usable(given ? cpus : &online, &usable)) < 0) {
		return err_set(err, r, "cannot read the CPU affinity: %s", strerror(-r));
	}
	if (!given) {
		*cpus = usable;
		return 0;
	}
	cpuset_diff(&bad, cpus, &usable);
	if (cpuset_count(&bad)) {
		cpuset_format(&bad, list, sizeof(list));
		return err_set(err, -EINVAL, "option '--cpus': cpu %s cannot be used by this process (cpuset cgroup or container limit)", list);
	}
	return 0;
}

static int check_common(const struct measure_cmd *mc, struct run_params *rp, const struct measure_extras *x,
			const struct opt_result *given, struct lat_error *err)
{
	bool prio_given = opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_PRIORITY);
	int r;

	if ((r = measure_check_cpus(
		     &rp->cpus, opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_CPUS), err)) < 0)
		return r;
	/* A priority alone asks for a real-time one (noise runs under SCHED_OTHER by default). */
	if (prio_given && rp->priority != 0 &&
	    !opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_POLICY))
		rp->policy = POLICY_FIFO;
	if (rp->policy == POLICY_DEADLINE) {
		/* Its wait is sched_yield for the next period: only a probe with such a loop can keep it. */
		if (!mc->ops->run_deadline)
			return err_set(err, -EINVAL, "option '--policy': 'deadline' is not available for latscope %s "
				       "(its wait is its own; latscope timer measures under SCHED_DEADLINE)",
				       measure_name(mc));
		if (prio_given)
			return err_set(err, -EINVAL, "option '--priority': --policy deadline has no priority (its "
				       "threads run by their deadlines)");
		rp->priority = 0;
	} else if (rp->policy == POLICY_OTHER) {
		if (prio_given && rp->priority != 0) {
			return err_set(err, -EINVAL, "option '--priority': %llu is out of range for --policy other (only 0)",
				 (unsigned long long)rp->priority);
		}
		rp->priority = 0;
	} else {
		int policy = rp->policy == POLICY_RR ? SCHED_RR : SCHED_FIFO;
		int lo = sched_get_priority_min(policy), hi = sched_get_priority_max(policy);
		if (rp->priority < (uint64_t)lo || rp->priority > (uint64_t)hi) {
			return err_set(err, -EINVAL, "option '--priority': %llu is out of range for --policy %s (%d to %d)",
				 (unsigned long long)rp->priority, policy_choices[rp->policy], lo, hi);
		}
	}
	if (opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_DURATION) &&
	    opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_LOOPS)) {
		return err_set(err, -EINVAL, "options '--duration' and '--loops' exclude each other");
	}
	rp->limit_idle = opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_DEEPEST_IDLE_STATE);
	if (opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_FAIL_STAT) && !x->fail_above_ns) {
		return err_set(err, -EINVAL, "option '--fail-stat' needs '--fail-above'");
	}
	return 0;
}

/* --until parsed afresh from its text (checks may run twice). */
static int check_until(struct measure_extras *x, struct lat_error *err)
{
	if (x->until_text && until_parse(x->until_text, &x->until, err) < 0)
		return err_prefix(err, -EINVAL, "option '--until': ");
	return 0;
}

struct live {
	bool windows;
	bool verbose;
	bool silent;
	bool header;                    /* print the header once the threads are set up */
	const char *name;               /* the command, for messages */
	const char *what;               /* what the probe does (describe) */
	const char *load;               /* the load's text, or NULL */
	const struct run_params *rp;
	const struct measure_hooks *mh;
	struct checkpoint *ck;
	uint64_t duration_ns;
	unsigned notes_shown;
	const struct until *until;      /* --until, or NULL */
	uint64_t windows_added;         /* windows of any CPU so far */
	uint64_t judged_at;             /* windows_added when --until was last judged */
	uint64_t next_judge_ns;         /* CLOCK_MONOTONIC: not before */
	bool until_failed;              /* judging ran out of memory: said once, not tried again */
};

/* The scheduling the measuring threads got, not the one asked for. */
static void sched_applied(const struct run_params *rp, const struct result *res, char *buf, size_t size)
{
	if (rp->policy == POLICY_OTHER)
		snprintf(buf, size, "%s", sched_policy_name(POLICY_OTHER));
	else if (rp->policy == POLICY_DEADLINE) {
		char rt[32], dl[32], per[32];
		fmt_duration(rp->dl.runtime_ns, rt, sizeof(rt));
		fmt_duration(rp->dl.deadline_ns, dl, sizeof(dl));
		fmt_duration(rp->dl.period_ns, per, sizeof(per));
		snprintf(buf, size, "%s runtime %s deadline %s period %s", sched_policy_name(POLICY_DEADLINE), rt, dl, per);
	}
	else if (res->applied.rt_policy)
		snprintf(buf, size, "%s priority %llu", sched_policy_name(rp->policy), (unsigned long long)rp->priority);
	else
		snprintf(buf, size, "%s (%s priority %llu not applied)", sched_policy_name(POLICY_OTHER),
			 sched_policy_name(rp->policy), (unsigned long long)rp->priority);
}

static void on_prepared(void *ctx, const struct result *res)
{
	struct live *lv = ctx;
	if (lv->header) {
		char sched[160], what[448];
		sched_applied(lv->rp, res, sched, sizeof(sched));
		snprintf(what, sizeof(what), "%s, %s", lv->what, sched);
		text_header(stdout, lv->name, res, what);
		if (lv->load)
			tprintf(stdout, "under load: %s\n", lv->load);
		fflush(stdout);
	}
	if (!lv->silent)
		text_notes(stderr, lv->name, res, 0, lv->verbose);
	lv->notes_shown = res->nnotes;
	if (lv->mh && lv->mh->prepared)
		lv->mh->prepared(lv->mh->ctx, res);
}

/* --until between windows, on the main thread: true when decided (the run then stops).
 * At most once a second, as the tail fit over many windows takes milliseconds. */
static bool judge_until(struct live *lv, struct result *res)
{
	struct until_state s;
	struct lat_error err;
	char what[256];

	if (!lv->until || lv->until_failed || lv->windows_added == lv->judged_at || mono_ns() < lv->next_judge_ns)
		return false;
	lv->judged_at = lv->windows_added;
	lv->next_judge_ns = mono_ns() + NS_PER_SEC;
	if (until_judge(lv->until, res, &s, &err) < 0) {
		lv->until_failed = true;
		result_note(res, "--until was not judged while measuring: %s", err.msg);
		return false;
	}
	if (lv->windows) {
		until_describe(lv->until, &s.at, what, sizeof(what));
		tprintf(stdout, "until %s: %s, %s\n", lv->until->text,
			s.decision == UNTIL_OPEN ? "open" : until_decision_name(s.decision), what);
	}
	if (s.decision == UNTIL_OPEN)
		return false;
	snprintf(res->stop_reason, sizeof(res->stop_reason), "until");
	return true;
}

static bool on_tick(void *ctx, struct result *res)
{
	struct live *lv = ctx;
	checkpoint_tick(lv->ck, res);
	if (lv->mh && lv->mh->tick)
		lv->mh->tick(lv->mh->ctx, res);
	return judge_until(lv, res);
}

static void on_window(void *ctx, const struct result *res, const struct cpu_result *cr,
		      const struct result_window *w)
{
	struct live *lv = ctx;
	lv->windows_added++;
	if (lv->windows)
		text_window(stdout, res, cr, w);
	if (lv->mh && lv->mh->progress)
		lv->mh->progress(lv->mh->ctx, w->w.end_ns, lv->duration_ns);
	if (lv->mh && lv->mh->window)
		lv->mh->window(lv->mh->ctx, res, cr, w);
}

static int fill_result(const struct measure_cmd *mc, const void *params, const struct run_params *rp,
		       const struct measure_extras *x, int argc, char **argv, struct result *res)
{
	int r;

	const struct probe_ops *ops = mc->ops;
	const unsigned nmetrics = probe_metrics(ops, (const char *)params + mc->probe_offset);
	if ((r = result_init(res, ops->name, nmetrics, ops->metric_names, &rp->cpus)) < 0)
		return r;
	/* The command line as typed: the dispatcher removed "latscope" from argv. */
	char **full = calloc((size_t)argc + 1u, sizeof(*full));
	if (!full)
		return -ENOMEM;
	full[0] = (char *)"latscope";
	memcpy(full + 1, argv, (size_t)argc * sizeof(*argv));
	r = result_set_argv(res, argc + 1, full);
	free(full);
	if (r < 0)
		return r;
	res->params = opt_params_json(mc->opts, mc->nopts, params);
	if (!res->params)
		return -ENOMEM;
	res->labels = x->labels;
	res->ops.per_op = ops->per_op_costs;
	return sysdesc_collect(&res->sys);
}

static uint64_t judged(const struct summary *s, int stat, bool *ret_fallback)
{
	*ret_fallback = false;
	switch ((enum fail_stat)stat) {
	case FAIL_MAX: return s->max;
	case FAIL_WARM_MAX:
		if (s->has_warm_max)
			return s->warm_max;
		*ret_fallback = true;
		return s->max;
	case FAIL_P99: return s->p99;
	case FAIL_P999: return s->p999;
	case FAIL_P9999: return s->p9999;
	case FAIL_MEAN: return (uint64_t)s->mean;
	}
	return s->max;
}

/* EXIT_THRESHOLD when any CPU's judged statistic is above --fail-above. */
static int check_fail_above(const struct measure_cmd *mc, const struct measure_extras *x, const struct result *res)
{
	int code = EXIT_OK;
	char lim[32], val[32];

	if (!x->fail_above_ns)
		return EXIT_OK;
	fmt_duration(x->fail_above_ns, lim, sizeof(lim));
	for (size_t i = 0; i < res->ncpus; i++) {
		bool fallback;
		uint64_t v = judged(&res->cpus[i].sum[0], x->fail_stat, &fallback);
		if (v <= x->fail_above_ns)
			continue;
		fmt_duration(v, val, sizeof(val));
		tprintf(stderr, "latscope %s: cpu %d: %s %s is above --fail-above %s%s\n", measure_name(mc), res->cpus[i].cpu,
			fallback ? "max" : fail_stat_choices[x->fail_stat], val, lim,
			fallback ? " (no window after the warm-up, so the max is judged)" : "");
		code = EXIT_THRESHOLD;
	}
	return code;
}

/* The machine as `latscope sys` sees it, and its advice for this run.  After
 * the run: reading /sys and /proc must not disturb what was measured. */
static void attach_system(const struct measure_cmd *mc, const void *params, struct result *res,
			  const struct run_params *rp)
{
	struct fingerprint *fp;
	struct finding top[RESULT_FINDINGS_MAX];
	/* The kernel gives real-time threads no slack: only SCHED_OTHER ones have it. */
	const bool slack_honoured = res->applied.timer_slack && !res->applied.rt_policy;
	struct findings_context ctx = { .measured = &rp->cpus, .pm_qos_held = res->applied.pm_qos,
					.period_ns = mc->period ? mc->period(params) : 0,
					.timer_slack_ns = slack_honoured ? run_timer_slack(rp) : 0 };

	ctx.smis_counted = result_smis(res, &res->all, &ctx.smis);
	if (fingerprint_collect(NULL, &fp) < 0)
		return;
	res->fingerprint = fingerprint_to_json(fp);
	size_t n = findings_evaluate(fp, &ctx, top, RESULT_FINDINGS_MAX);
	res->findings = findings_to_json(top, n < RESULT_FINDINGS_MAX ? n : RESULT_FINDINGS_MAX);
	fingerprint_free(fp);
}

/* The result's text, once: the file and the store get the same bytes. */
static char *dump_result(const struct measure_cmd *mc, const struct result *res)
{
	json_t *doc = result_to_json(res);
	char *text = doc ? result_json_dump(doc) : NULL;

	json_decref(doc);
	if (!text)
		tprintf(stderr, "latscope %s: cannot format the result: out of memory\n", measure_name(mc));
	return text;
}

static int write_json(const struct measure_cmd *mc, struct atomic_file *sink, const char *text)
{
	int r = json_file_commit(sink, text);

	if (r < 0) {
		tprintf(stderr, "latscope %s: cannot write '%s': %s\n", measure_name(mc), sink->path, strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/*
 * Open the store before measuring: like every output, the store that would
 * keep the run must work, named or default; --no-store measures without one.
 */
static int open_store(const struct measure_extras *x, struct store **ret, struct lat_error *err)
{
	char path[4096];
	bool chosen;
	struct lat_error serr;
	int r;

	*ret = NULL;
	if (x->no_store)
		return 0;
	r = store_path_resolve(x->db_path, path, sizeof(path), &chosen);
	if (r < 0 && !chosen) {
		return err_set(err, -EINVAL, "no home directory to keep the store in: use --db PATH or --no-store");
	}
	if (r < 0) {
		return err_set(err, r, "%s: path too long", x->db_path ? "option '--db'" : "LATSCOPE_DB");
	}
	/* Only the default store is given its directory; one the user named must
	 * have one, as a --json file must (a typo is not made into a tree). */
	if (!chosen && (r = store_default_dir_make()) < 0)
		return err_set(err, r,
			       "the default store: cannot create the directory of '%.400s': %s "
			       "(use --db PATH or --no-store)",
			       path, strerror(-r));
	r = store_open(path, STORE_CREATE | (x->db_trust ? STORE_TRUST : 0u), ret, &serr);
	if (r == 0)
		return 0;
	if (chosen)
		return err_set(err, r, "%s: %.480s", x->db_path ? "option '--db'" : "LATSCOPE_DB", serr.msg);
	return err_set(err, r, "the default store: %.440s (use --db PATH or --no-store)", serr.msg);
}

/* A run the store cannot take is kept in a file instead (measure/unstored.h),
 * beside the --json file when there is one on disk. */
static int store_result(const struct measure_cmd *mc, struct store *st, const char *text, const struct result *res,
			const struct measure_extras *x, const char *beside, bool quiet, int64_t *ret_id)
{
	struct lat_error serr;
	int64_t id;
	int r = store_put(st, text, &id, &serr);

	if (r < 0) {
		tprintf(stderr, "latscope %s: cannot store the run: %s\n", measure_name(mc), serr.msg);
		return unstored_keep(measure_name(mc), text, res, false, beside, x->db_path);
	}
	if (ret_id)
		*ret_id = id;
	if (!quiet)
		tprintf(stdout, "stored as run %lld in %s\n", (long long)id, store_path(st));
	return EXIT_OK;
}

/* Defaults, then the options and the positional argument as typed:
 * LAT_GO_ON, LAT_DONE for --help, or -EINVAL with err filled. */
static int parse_args(const struct measure_cmd *mc, int argc, char **argv, void *params, struct opt_result *given,
		      struct lat_error *err)
{
	mc->defaults(params);
	if (opt_parse(mc->opts, mc->nopts, argc, argv, params, given, err) < 0)
		return -EINVAL;
	if (*(bool *)(void *)((char *)params + mc->help_offset))
		return LAT_DONE;
	if (given->npos > (mc->path ? 1u : 0u)) {
		return err_set(err, -EINVAL, "unexpected argument '%s'", given->pos[mc->path ? 1 : 0]);
	}
	if (mc->path && given->npos == 0) {
		return err_set(err, -EINVAL, "missing %s", mc->path_name);
	}
	if (mc->path && mc->path(params, given->pos[0], err) < 0)
		return -EINVAL;
	return 0;
}

/* One list of --on-threshold or --on-end, parsed afresh from its text (checks may run twice). */
static int parse_actions(const char *opt, const struct strlist *text, bool on_end, struct action_list *ret,
			 struct lat_error *err)
{
	ret->n = 0;
	for (unsigned i = 0; i < text->n; i++) {
		int r = action_parse_list(text->items[i], on_end, ret, err);
		if (r == -E2BIG)
			return err_set(err, -EINVAL, "option '%s': at most %d actions", opt, ACTIONS_MAX);
		if (r < 0)
			return err_prefix(err, -EINVAL, "option '%s': ", opt);
	}
	return 0;
}

/* --on-threshold, --trigger, --action-interval and --on-end, as typed or set by a front end
 * (which asks for its own stop by adding "stop" to x->on_threshold). */
static int check_actions(const struct measure_cmd *mc, struct run_params *rp, struct measure_extras *x,
			 const struct opt_result *given, struct lat_error *err)
{
	if (parse_actions("--on-threshold", &x->on_threshold, false, &rp->on_threshold, err) < 0 ||
	    parse_actions("--on-end", &x->on_end, true, &x->end_actions, err) < 0)
		return -EINVAL;
	/* One tracefs instance a process: --trace's or the spike ring's. */
	if (action_list_has(&rp->on_threshold, ACTION_TRACE) && rp->trace)
		return err_set(err, -EINVAL, "option '--on-threshold': 'trace' cannot be used with '--trace'");
	static const enum run_row needs[] = { RUN_ROW_TRIGGER, RUN_ROW_ACTION_INTERVAL };
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		int row = opt_run_row(mc->opts, mc->nopts, needs[i]);
		if (rp->on_threshold.n == 0 && row >= 0 &&
		    opt_given_at(mc->nopts, given, (size_t)row))
			return err_set(err, -EINVAL, "option '--%s' needs '--on-threshold'",
				       mc->opts[row].name);
	}
	return 0;
}

/* Every check of the parameters, however they were set; the loads parsed go into lr. */
static int check_params(const struct measure_cmd *mc, void *params, const struct opt_result *given,
			struct loadrun *lr, struct lat_error *err)
{
	struct measure_extras *x = measure_extras_of(mc, params);
	int r;

	if (check_common(mc, measure_run_params(mc, params), x, given, err) < 0 ||
	    check_actions(mc, measure_run_params(mc, params), x, given, err) < 0 || check_until(x, err) < 0)
		return -EINVAL;
	if ((r = loadrun_parse(&x->load, x->load_cmd, lr, err)) < 0)
		return r;
	if (mc->validate && mc->validate(params, given, err) < 0)
		return -EINVAL;
	/* after validate, which may turn the duration off (clock's -l) */
	if (!opt_run_given(mc->opts, mc->nopts, given, RUN_ROW_CHECKPOINT))
		x->checkpoint_ns = checkpoint_default(measure_run_params(mc, params)->duration_ns);
	return 0;
}

int measure_check(const struct measure_cmd *mc, void *params, const struct opt_result *given, struct lat_error *err)
{
	struct loadrun *lr = malloc(sizeof(*lr));
	int r;

	if (!lr)
		return err_set(err, -ENOMEM, "out of memory");
	r = check_params(mc, params, given, lr, err);
	free(lr);
	return r;
}

int measure_parse(const struct measure_cmd *mc, int argc, char **argv, void *params, struct lat_error *err)
{
	struct opt_result given;
	int r = parse_args(mc, argc, argv, params, &given, err);

	if (r == 0 && (r = measure_check(mc, params, &given, err)) < 0)
		opt_msg_as_typed(mc->opts, mc->nopts, &given, err->msg, sizeof(err->msg));
	return r;
}

int measure_main(const struct measure_cmd *mc, int argc, char **argv)
{
	return measure_run(mc, argc, argv, NULL, NULL);
}

int measure_run(const struct measure_cmd *mc, int argc, char **argv, const struct measure_hooks *mh,
		struct measure_outcome *out)
{
	void *params = calloc(1, mc->params_size);
	struct opt_result given;
	struct lat_error err = { { 0 } };
	int code;

	if (!params) {
		tprintf(stderr, "latscope %s: out of memory\n", measure_name(mc));
		return EXIT_ERROR;
	}
	int r = parse_args(mc, argc, argv, params, &given, &err);
	if (r < 0)
		code = usage_error(mc, err.msg);
	else if (r == LAT_DONE)
		code = (print_help(mc), EXIT_OK);
	else
		code = measure_with(mc, params, &given, argc, argv, mh, out);
	free(params);
	return code;
}

/* One run of measure_with, passed from stage to stage. */
struct measuring {
	const struct measure_cmd *mc;
	void *params;
	struct run_params *rp;
	const struct measure_extras *x;
	const struct measure_hooks *mh;
	bool silent;
	struct atomic_file sink;
	struct store *st;
	struct checkpoint ck;
	struct result res;
	struct loadrun *lr;
	struct hostask host;
	unsigned notes_shown;
	bool verbose;
	struct until_state until;       /* --until's final judgement */
};

/* The parameters checked, and --json and the store opened: 0, or the exit code. */
static int open_outputs(struct measuring *m, const struct opt_result *given)
{
	const char *name = measure_name(m->mc);
	struct lat_error err = { { 0 } };
	int code, r;

	if (check_params(m->mc, m->params, given, m->lr, &err) < 0 ||
	    hostask_check(&m->host, m->x->host, m->x->host_secret, &err) < 0) {
		opt_msg_as_typed(m->mc->opts, m->mc->nopts, given, err.msg, sizeof(err.msg));
		return usage_error(m->mc, err.msg);
	}
	/* --json over the store would replace it: refused, like any two outputs that are one file. */
	const struct output json = { "'--json'", m->x->json_path };
	if ((code = outputs_check(name, &json, 1, m->x->db_path, !m->x->no_store)) != 0)
		return code;
	if (m->x->json_path && (r = atomic_file_open(m->x->json_path, &m->sink)) < 0) {
		char q[QUOTE_MAX];
		err_set(&err, 0, "option '--json': cannot write %s: %s", quote_short(m->x->json_path, q), strerror(-r));
		return usage_error(m->mc, err.msg);
	}
	if ((r = open_store(m->x, &m->st, &err)) < 0) {
		/* The user's store cannot serve: their input, unless the system failed. */
		const bool runtime = r == -ENOSPC || r == -EIO || r == -EBUSY || r == -ENOMEM ||
				     (m->mh && m->mh->started);
		if (!runtime)
			return usage_error(m->mc, err.msg);
		tprintf(stderr, "latscope %s: %s\n", name, err.msg);
		return EXIT_ERROR;
	}
	return 0;
}

/* What the probe reads, when it is opened before the run (attach's program): 0, or the exit code. */
static int open_source(struct measuring *m)
{
	struct lat_error err = { { 0 } };
	int r = m->mc->open ? m->mc->open(m->params, &err) : 0;

	if (r == 0)
		return 0;
	tprintf(stderr, "latscope %s: %s\n", measure_name(m->mc), err.msg);
	return r == -EINVAL ? EXIT_USAGE : EXIT_ERROR;
}

/* The result's head (parameters, labels, notes) before anything is measured: 0 or -errno. */
static int prepare_result(struct measuring *m, int argc, char **argv)
{
	const char *name = measure_name(m->mc);
	int r;

	if ((r = fill_result(m->mc, m->params, m->rp, m->x, argc, argv, &m->res)) < 0) {
		tprintf(stderr, "latscope %s: cannot prepare the result: %s\n", name, strerror(-r));
		return r;
	}
	if (m->mh && m->mh->shape && (r = m->mh->shape(m->mh->ctx, &m->res)) < 0) {
		tprintf(stderr, "latscope %s: cannot prepare the histogram: %s\n", name, strerror(-r));
		return r;
	}
	if (m->x->note[0])
		result_note(&m->res, "%s", m->x->note);
	if (m->mc->notes)
		m->mc->notes(m->params, &m->res);
	loadrun_label(m->lr, &m->res.labels);
	return 0;
}

/* --until judged on the finalized result, kept in it: what the exit code says. */
static void final_until(struct measuring *m)
{
	struct lat_error err;

	if (until_judge(&m->x->until, &m->res, &m->until, &err) < 0) {
		m->until = (struct until_state){ .decision = UNTIL_OPEN, .more_s = (double)NAN };
		snprintf(m->until.at.why, sizeof(m->until.at.why), "%.180s", err.msg);
	}
	m->res.until = until_to_json(&m->x->until, &m->until);
}

/* The load and the probe, start to end, and the result summed up: 0 or -1 (said). */
static int measure_probe(struct measuring *m)
{
	const char *name = measure_name(m->mc);
	const struct measure_extras *x = m->x;
	struct lat_error err, rerr;
	char what[256];
	int r;

	/* From here on a stop signal ends the run, never the process: the summary
	 * and the JSON are still owed.  The runner waits for these signals. */
	sigset_t stopsigs;
	runner_stop_signals(&stopsigs);
	sigprocmask(SIG_BLOCK, &stopsigs, NULL);

	/* The load runs before the probe starts, so the whole measurement sees it. */
	if (loadrun_start(m->lr, &err) < 0) {
		tprintf(stderr, "latscope %s: %s\n", name, err.msg);
		return -1;
	}
	m->mc->describe(m->params, what, sizeof(what));
	/* A device, FIFO or pipe takes the result once, at the end: no partial ones. */
	checkpoint_init(&m->ck, name, x->checkpoint_ns, m->sink.through ? NULL : x->json_path, m->st);
	const struct loadrun *lr = m->lr;
	struct live lv = { .windows = !x->quiet && !m->silent && (x->live || isatty(STDOUT_FILENO)),
			   .verbose = !x->quiet && !m->silent, .silent = m->silent, .header = !x->quiet && !m->silent,
			   .name = name, .what = what, .rp = m->rp, .mh = m->mh, .ck = &m->ck,
			   .duration_ns = m->rp->duration_ns, .until = x->until_text ? &x->until : NULL,
			   .load = !(lr->n || lr->cmd) ? NULL : lr->text[0] ? lr->text : "(too long for a label; see params)" };
	struct runner_hooks hooks = { .prepared = on_prepared, .window = on_window, .tick = on_tick, .ctx = &lv };
	hostask_start(&m->host, x->host, m->rp, &m->res);
	r = runner_run(m->mc->ops, m->rp, (const char *)m->params + m->mc->probe_offset, &m->res, &hooks, &rerr);
	hostask_finish(&m->host, name, &m->res);
	checkpoint_end(&m->ck, &m->res);        /* the final result replaces the last partial one */
	loadrun_stop(m->lr, &m->res);
	m->notes_shown = lv.notes_shown;
	m->verbose = lv.verbose;
	if (r < 0) {
		tprintf(stderr, "latscope %s: %s\n", name, rerr.msg);
		return -1;
	}
	attach_system(m->mc, m->params, &m->res, m->rp);
	if ((r = result_finalize(&m->res)) < 0) {
		tprintf(stderr, "latscope %s: cannot summarize: %s\n", name, strerror(-r));
		return -1;
	}
	if (x->until_text)
		final_until(m);
	if (m->mc->after)
		m->mc->after(m->params, &m->res);
	if (m->mh && m->mh->finished)
		m->mh->finished(m->mh->ctx, &m->res);
	return 0;
}

/* --until's decision said: below on stdout (a done run), above and undecided on
 * stderr as --fail-above's.  EXIT_OK, EXIT_THRESHOLD or EXIT_UNDECIDED. */
static int until_outcome(const char *name, const struct until *u, const struct until_state *s, bool silent)
{
	char what[256], more[32];

	until_describe(u, &s->at, what, sizeof(what));
	if (s->decision == UNTIL_BELOW) {
		/* silent: a front end's standard output is its tool's, which parsers read */
		tprintf(silent ? stderr : stdout, "%s%s%suntil %s: below on every CPU (the closest, %s)\n",
			silent ? "latscope " : "", silent ? name : "", silent ? ": --" : "", u->text, what);
		return EXIT_OK;
	}
	if (s->decision == UNTIL_ABOVE) {
		tprintf(stderr, "latscope %s: --until '%s': above: %s\n", name, u->text, what);
		return EXIT_THRESHOLD;
	}
	if (isfinite(s->more_s) && s->more_s < 1e9)
		fmt_duration3((uint64_t)(s->more_s * 1e9 < 1e9 ? 1e9 : s->more_s * 1e9), more, sizeof(more));
	tprintf(stderr, "latscope %s: --until '%s': undecided: %s: %s; %s%s%s\n", name, u->text, what, s->at.why,
		isfinite(s->more_s) ? "the current rate suggests about " : "how much longer cannot be told yet",
		isfinite(s->more_s) ? (s->more_s < 1e9 ? more : "ages") : "", isfinite(s->more_s) ? " more" : "");
	return EXIT_UNDECIDED;
}

/* The summary, the JSON, the stored run and the --on-end actions: the exit code. */
static int deliver(struct measuring *m, struct measure_outcome *out)
{
	const char *name = measure_name(m->mc);
	const struct measure_extras *x = m->x;
	struct result *res = &m->res;
	int code = EXIT_OK;
	int64_t stored_id = 0;

	if (!m->silent)
		text_summary(stdout, res, !x->quiet);   /* -q: the summary is the first thing printed */
	fflush(stdout);
	if (x->json_path || m->st) {
		char *text = dump_result(m->mc, res);
		if (!text)
			code = EXIT_ERROR;
		if (text && x->json_path)
			code = write_json(m->mc, &m->sink, text);
		/* -q keeps the run's id: a CI log needs it to find the run again */
		if (text && m->st && store_result(m->mc, m->st, text, res, x, m->sink.through ? NULL : x->json_path, m->silent,
					   &stored_id) != EXIT_OK)
			code = EXIT_ERROR;
		free(text);
	}
	if (out)
		out->stored_id = stored_id;
	if (on_end_run(name, &x->end_actions, res, stored_id) != EXIT_OK && code == EXIT_OK)
		code = EXIT_ERROR;
	/* Notes made during the run (a thread that stopped on an error) come last. */
	if (!m->silent)
		text_notes(stderr, name, res, m->notes_shown, m->verbose);
	if (res->failed)
		code = EXIT_ERROR;      /* what was measured is kept; the run did not complete */
	if (code == EXIT_OK)
		code = check_fail_above(m->mc, x, res);
	if (code == EXIT_OK && result_threshold_stopped(res))
		code = EXIT_THRESHOLD;
	if (x->until_text) {
		int until = until_outcome(name, &x->until, &m->until, m->silent);
		if (code == EXIT_OK)
			code = until;
	}
	if (out && out->res) {
		*out->res = *res;       /* the caller owns it now */
		memset(res, 0, sizeof(*res));
	}
	return code;
}

int measure_with(const struct measure_cmd *mc, void *params, const struct opt_result *given, int argc, char **argv,
		 const struct measure_hooks *mh, struct measure_outcome *out)
{
	struct measuring m = { .mc = mc, .params = params, .rp = measure_run_params(mc, params),
			       .x = measure_extras_of(mc, params), .mh = mh, .silent = mh && mh->silent,
			       .sink = { .fd = -1 }, .lr = calloc(1, sizeof(*m.lr)) };
	int code = EXIT_ERROR;

	checkpoint_init(&m.ck, measure_name(mc), 0, NULL, NULL);
	m.rp->sysroot = smi_sysroot_env();
	if (!m.lr) {
		tprintf(stderr, "latscope %s: out of memory\n", measure_name(mc));
		return EXIT_ERROR;
	}
	if ((code = open_outputs(&m, given)) == 0 && (code = open_source(&m)) == 0) {
		code = EXIT_ERROR;
		if (prepare_result(&m, argc, argv) == 0 && measure_probe(&m) == 0)
			code = deliver(&m, out);
		if (mc->close)
			mc->close(params);
	}
	checkpoint_end(&m.ck, NULL);    /* its writer uses the store */
	loadrun_stop(m.lr, &m.res);
	free(m.lr);
	atomic_file_close(&m.sink);
	store_close(m.st);
	result_free(&m.res);
	return code;
}
