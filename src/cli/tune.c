/*
 * latscope tune: each fix of sys/tunefix.h that applies here, measured off (A)
 * and on (B) in alternation, judged as compare judges two rows, and kept
 * (--apply) or written down (--write-config) when it helps.  Every change is
 * a file_hold, restored after its trial, on every exit path, and after a
 * SIGKILL by the next run (sys/filehold.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/tuneout.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/units.h"
#include "measure/exitcode.h"
#include "measure/measure.h"
#include "measure/storecmd.h"
#include "probe/runner.h"
#include "report/tprint.h"
#include "result/compare.h"
#include "sys/cpuidle.h"
#include "sys/filehold.h"
#include "sys/tunefix.h"

#define ROUNDS_DEFAULT	 4u
#define TRIAL_DEFAULT_NS (10u * NS_PER_SEC)

struct tune_cmd {
	const char *cpus, *probe, *only, *skip, *write_config, *db;
	bool db_trust;
	uint64_t trial_ns, rounds;
	bool apply, no_store, quiet, help;
};

/* The i-th command of a suite probe, what --probe takes (the command table, not a list of names). */
static const struct measure_cmd *suite_command(size_t i)
{
	for (size_t k = 0; k < ncommands; k++) {
		const struct measure_cmd *mc = commands[k].mc;
		if (mc && mc->ops->suite_share && i-- == 0)
			return mc;
	}
	return NULL;
}

/* The probe's command: a suite probe of that name. */
static const struct measure_cmd *probe_command(const char *name)
{
	const struct measure_cmd *mc;

	for (size_t i = 0; (mc = suite_command(i)); i++)
		if (strcmp(mc->ops->name, name) == 0)
			return mc;
	return NULL;
}

static const char *probe_word(size_t i)
{
	const struct measure_cmd *mc = suite_command(i);
	return mc ? mc->ops->name : NULL;
}

static const char *fix_word(size_t i)
{
	return i < tune_nfixes ? tune_fixes[i].name : NULL;
}

static const struct opt tune_opts[] = {
	{ "cpus", 'a', OPT_STRING, offsetof(struct tune_cmd, cpus), .metavar = "CPUS", .values = OPT_VALUES_CPUS,
	  .help = "the CPUs to measure and to keep work off (default: every online CPU)" },
	{ "probe", 0, OPT_STRING, offsetof(struct tune_cmd, probe), .metavar = "PROBE",
	  .values = OPT_VALUES_WORDS, .words = probe_word,
	  .help = "what each trial measures: timer (the default), noise or wake" },
	{ "duration", 'D', OPT_DURATION, offsetof(struct tune_cmd, trial_ns), .min = NS_PER_SEC,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_SEC,
	  .help = "each trial's length; a bare number is seconds" },
	{ "rounds", 0, OPT_UINT, offsetof(struct tune_cmd, rounds), .min = 1, .max = 50,
	  .help = "trials of each state (A, the machine as it is, then B, the fix) for each fix" },
	{ "only", 0, OPT_STRING, offsetof(struct tune_cmd, only), .metavar = "FIX,...",
	  .values = OPT_VALUES_WORD_LIST, .words = fix_word,
	  .help = "try only these fixes" },
	{ "skip", 0, OPT_STRING, offsetof(struct tune_cmd, skip), .metavar = "FIX,...",
	  .values = OPT_VALUES_WORD_LIST, .words = fix_word,
	  .help = "do not try these fixes" },
	{ "apply", 0, OPT_FLAG, offsetof(struct tune_cmd, apply),
	  .help = "keep the fixes judged better, until the next reboot" },
	{ "write-config", 0, OPT_STRING, offsetof(struct tune_cmd, write_config), .metavar = "DIR",
	  .values = OPT_VALUES_DIR,
	  .help = "write into DIR what would make the fixes judged better persistent (nothing "
		  "elsewhere)" },
	DB_OPT(struct tune_cmd),
	{ "no-store", 0, OPT_FLAG, offsetof(struct tune_cmd, no_store),
	  .help = "do not keep the trials" },
	{ "quiet", 'q', OPT_FLAG, offsetof(struct tune_cmd, quiet), .help = "no line per trial" },
	{ "help", 'h', OPT_HELP, offsetof(struct tune_cmd, help), .help = "show this help" },
};

static void help_more(FILE *out)
{
	fprintf(out, "\nFixes (a fix that does not apply here is listed as \"not here\" and never "
		     "tried):\n");
	for (size_t i = 0; i < tune_nfixes; i++)
		fprintf(out, "  %-20s %s\n", tune_fixes[i].name, tune_fixes[i].about);
	fprintf(out, "\nEvery trial is a stored run labelled tune=START, fix=NAME and state=a|b: "
		     "latscope compare --label\n"
		     "tune=START --by fix,state shows them again.  Needs root; one tune at a "
		     "time.  Ctrl-C,\n"
		     "SIGTERM or SIGHUP end it: everything is restored and the table so far "
		     "printed (exit 0).  See\n"
		     "latscope-tune(1).\n");
}

static const struct cmd_spec tune_spec = {
	.name = "tune",
	.synopsis = "[-a CPUS] [--probe timer|noise|wake] [-D PER_TRIAL] [--rounds N] [--only "
		    "FIX,...]\n"
		    "                     [--skip FIX,...] [--apply] [--write-config DIR] [--db "
		    "PATH | --no-store] [-q]",
	.about = "Try each fix latscope sys would suggest and can apply and undo at run time: "
		 "measure with the\n"
		 "machine as it is (A) and with the fix (B), in turn for --rounds each, judge the "
		 "difference as\n"
		 "latscope compare does, and print one table.  Every change is undone after its "
		 "trial.",
	.opts = tune_opts,
	.nopts = ARRAY_SIZE(tune_opts),
	.help_offset = offsetof(struct tune_cmd, help),
	.help_more = help_more,
	.pos_name = "argument",
	.exits = " or not root",
};

const struct cmd_spec *cmd_tune_spec(void)
{
	return &tune_spec;
}

/* "a,b,c" has name. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Every name of --only and --skip is a fix: EXIT_OK or the usage error. */
static int check_names(const char *opt, const char *list)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		char name[64];
		size_t len = end ? (size_t)(end - p) : strlen(p);
		snprintf(name, sizeof(name), "%.*s",
			 (int)(len < sizeof(name) - 1u ? len : sizeof(name) - 1u), p);
		if (!tune_fix_find(name))
			return storecmd_refuse(
				"tune",
				"option '%s': '%s' is not a fix (latscope tune --help lists them)",
				opt, name);
		p = end ? end + 1 : NULL;
	}
	return EXIT_OK;
}

/* One trial's parameters: the probe's defaults, the trial's length, -a, the labels and the state's run params. */
static int set_params(const struct tune_cmd *c, const struct measure_cmd *mc,
		      const struct tune_trial *t, bool b, const char *start, void *params,
		      struct opt_result *given, struct lat_error *err)
{
	struct run_params *rp = measure_run_params(mc, params);
	struct measure_extras *x = measure_extras_of(mc, params);
	const int cpus = opt_run_row(mc->opts, mc->nopts, RUN_ROW_CPUS);
	const char *labels[3][2] = { { "tune", start },
				     { "fix", t->fix->name },
				     { "state", b ? "b" : "a" } };

	memset(given, 0, sizeof(*given));
	mc->defaults(params);
	rp->duration_ns = c->trial_ns;
	opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_DURATION);
	/* ten windows a trial: the verdict needs several a side whatever -D is */
	rp->window_ns = c->trial_ns / 10u < 10u * NS_PER_MS ? 10u * NS_PER_MS : c->trial_ns / 10u;
	opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_WINDOW);
	if (c->cpus && cpus >= 0 && mc->opts[cpus].kind == OPT_CPUS) {
		if (cpuset_parse(c->cpus, &rp->cpus) < 0)
			return err_set(err, -EINVAL,
				       "option '--cpus': '%s' is not a CPU list (such as 0-3,6)",
				       c->cpus);
		opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_CPUS);
	}
	for (size_t i = 0; i < ARRAY_SIZE(labels); i++) {
		snprintf(x->labels.items[i].key, sizeof(x->labels.items[i].key), "%s",
			 labels[i][0]);
		snprintf(x->labels.items[i].value, sizeof(x->labels.items[i].value), "%s",
			 labels[i][1]);
	}
	x->labels.n = ARRAY_SIZE(labels);
	opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_LABEL);
	x->quiet = true;
	x->no_store = c->no_store;
	x->db_path = c->db;
	x->db_trust = c->db_trust;
	/* The fixes the runner holds itself: A is without them, B with them. */
	if (t->fix->kind == TUNE_PMQOS) {
		rp->no_pm_qos = !b;
		opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_NO_PM_QOS);
	} else if (t->fix->kind == TUNE_IDLE && b) {
		rp->deepest_idle_state = 0;
		opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_DEEPEST_IDLE_STATE);
	}
	return 0;
}

/* A stop signal came (between trials, or ended the last one): the tune ends. */
static bool stop_pending(const struct result *last)
{
	sigset_t stop, pending;
	runner_stop_signals(&stop);
	if (last && last->interrupted && strncmp(last->stop_reason, "signal ", 7) == 0)
		return true;
	if (sigpending(&pending) < 0)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&stop, s) == 1 && sigismember(&pending, s) == 1)
			return true;
	return false;
}

/* One trial: apply B's files, measure, restore.  EXIT_OK with the result kept in *ret, or the exit code. */
static int trial(const struct tune_cmd *c, const struct measure_cmd *mc, struct tune_trial *t,
		 bool b, const char *start, int argc, char **argv, struct result *ret)
{
	void *params = calloc(1, mc->params_size);
	struct opt_result given;
	struct lat_error err;
	struct file_hold hold;
	int code = EXIT_ERROR;

	file_hold_init(&hold);
	if (!params) {
		tprintf(stderr, "latscope tune: out of memory\n");
		return EXIT_ERROR;
	}
	if (set_params(c, mc, t, b, start, params, &given, &err) < 0) {
		free(params);
		return storecmd_usage("tune", err.msg);
	}
	if (b && t->fix->kind == TUNE_FILES &&
	    file_hold_apply(NULL, t->fix->name, &t->plan, &hold, &err) < 0) {
		tprintf(stderr, "latscope tune: %s: cannot apply: %s\n", t->fix->name, err.msg);
		snprintf(t->why, sizeof(t->why), "could not be applied: %.200s", err.msg);
		t->failed = true;
		free(params);
		return EXIT_ERROR;
	}
	struct measure_hooks mh = { .silent = true };
	struct measure_outcome out = { .res = ret };
	/* its messages name the command typed */
	struct measure_cmd as_tune = *mc;
	as_tune.name = "tune";
	code = measure_with(&as_tune, params, &given, argc, argv, &mh, &out);
	if (hold.skipped && !t->skipped_note[0])
		snprintf(t->skipped_note, sizeof(t->skipped_note),
			 "%u write(s) the kernel refused were left, such as %s", hold.skipped,
			 hold.skipped_what);
	if (file_hold_restore(&hold, &err) < 0) {
		tprintf(stderr,
			"latscope tune: %s: cannot restore: %s (the next latscope run retries)\n",
			t->fix->name, err.msg);
		code = EXIT_ERROR;
	}
	free(params);
	return code == EXIT_THRESHOLD ? EXIT_OK : code;
}

static void progress(const struct tune_cmd *c, const struct tune_trial *t, unsigned round, bool b)
{
	if (!c->quiet)
		tprintf(stderr, "latscope tune: %s, round %u of %llu, %s\n", t->fix->name,
			round + 1u, (unsigned long long)c->rounds,
			b ? "B (with the fix)" : "A (as it is)");
}

/* Every fix's trials, A B A B ..., until the end or a stop signal: the exit code. */
static int run_trials(const struct tune_cmd *c, const struct measure_cmd *mc, struct tune_run *tr,
		      int argc, char **argv)
{
	for (size_t i = 0; i < tr->n; i++) {
		struct tune_trial *t = &tr->t[i];
		if (t->state != TRIAL_TRY)
			continue;
		for (unsigned r = 0; r < c->rounds && !t->failed; r++) {
			for (int b = 0; b < 2; b++) {
				struct result *res = &(b ? t->b : t->a)[r];
				if (stop_pending(NULL)) {
					tr->stopped = true;
					return EXIT_OK;
				}
				progress(c, t, r, b);
				int code = trial(c, mc, t, b, tr->start, argc, argv, res);
				if (t->failed)
					break; /* said; the next fix is tried */
				if (code != EXIT_OK)
					return code;
				(b ? &t->nb : &t->na)[0]++;
				if (stop_pending(res)) {
					tr->stopped = true;
					return EXIT_OK;
				}
			}
		}
		tune_judge(t);
	}
	return EXIT_OK;
}

/* The fixes to try, each planned: what applies here, what does not and why. */
static int plan_fixes(const struct tune_cmd *c, const struct measure_cmd *mc, struct tune_run *tr)
{
	struct cpuset cpus;
	struct lat_error err;

	/* The list as given, then checked: online and usable (without one, every usable CPU). */
	cpuset_clear(&cpus);
	if (c->cpus && cpuset_parse(c->cpus, &cpus) < 0)
		return storecmd_refuse(
			"tune", "option '--cpus': '%s' is not a CPU list (such as 0-3,6)", c->cpus);
	if (measure_check_cpus(&cpus, c->cpus != NULL, &err) < 0)
		return storecmd_usage("tune", err.msg);
	tr->measured = cpus;
	for (size_t i = 0; i < tune_nfixes; i++) {
		const struct tune_fix *f = &tune_fixes[i];
		if ((c->only && !listed(c->only, f->name)) || listed(c->skip, f->name))
			continue;
		struct tune_trial *t = &tr->t[tr->n++];
		t->fix = f;
		int r = f->plan(NULL, &cpus, mc->ops->values_tile_time, &t->plan, &err);
		if (r < 0) {
			t->state = TRIAL_NOT_HERE;
			snprintf(t->why, sizeof(t->why), "%.250s", err.msg);
		} else {
			t->state = f->kind == TUNE_BOOT ? TRIAL_BOOT : TRIAL_TRY;
		}
		if (t->state == TRIAL_TRY && (!(t->a = calloc(c->rounds, sizeof(*t->a))) ||
					      !(t->b = calloc(c->rounds, sizeof(*t->b))))) {
			tprintf(stderr, "latscope tune: out of memory\n");
			return EXIT_ERROR;
		}
	}
	return EXIT_OK;
}

/* Not root: what it would try, and that it needs root. */
static int not_root(const struct tune_cmd *c)
{
	char names[1024] = "";
	size_t len = 0;
	for (size_t i = 0; i < tune_nfixes; i++)
		if ((!c->only || listed(c->only, tune_fixes[i].name)) &&
		    !listed(c->skip, tune_fixes[i].name))
			len += (size_t)snprintf(names + len,
						len < sizeof(names) ? sizeof(names) - len : 0,
						"%s%s", len ? ", " : "", tune_fixes[i].name);
	return storecmd_refuse(
		"tune",
		"tuning needs root: it changes system settings for each trial (it would try: %s)",
		names);
}

int cmd_tune(int argc, char **argv)
{
	struct tune_cmd c = { .probe = "timer",
			      .trial_ns = TRIAL_DEFAULT_NS,
			      .rounds = ROUNDS_DEFAULT };
	struct opt_result given;
	int code = storecmd_parse(&tune_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	const struct measure_cmd *mc = probe_command(c.probe);
	if (!mc)
		return storecmd_refuse(
			"tune", "option '--probe': '%s' is not one of timer, noise, wake", c.probe);
	if ((code = check_names("--only", c.only)) != EXIT_OK ||
	    (code = check_names("--skip", c.skip)) != EXIT_OK)
		return code;
	if (c.write_config && (code = tuneout_check_dir(c.write_config)) != EXIT_OK)
		return code;
	if (geteuid() != 0)
		return not_root(&c);

	struct tune_run tr = { .rounds = (unsigned)c.rounds };
	struct lat_error err;
	unsigned stale = 0;
	int lock = file_hold_lock(NULL, &err);
	if (lock < 0) {
		tprintf(stderr, "latscope tune: %s\n", err.msg);
		return EXIT_ERROR;
	}
	if (file_hold_restore_stale(NULL, &stale, &err) < 0)
		tprintf(stderr, "latscope tune: %s\n", err.msg);
	else if (stale)
		tprintf(stderr,
			"latscope tune: restored the settings of %u tune run(s) that were killed\n",
			stale);
	/* idle-states is held by the runner's own state file (sys/cpuidle.h), not a file hold:
	 * a tune killed in its trial is put back here too, and said so, before A measures. */
	struct cpuidle_stale idle;
	if (cpuidle_restore_stale(NULL, &idle, &err) < 0)
		tprintf(stderr, "latscope tune: %s\n", err.msg);
	else if (idle.files)
		tprintf(stderr,
			"latscope tune: restored %u idle state(s) that latscope pid %ld, killed, left "
			"disabled\n",
			idle.states, idle.pid);
	tr.t = calloc(tune_nfixes, sizeof(*tr.t));
	if (!tr.t) {
		tprintf(stderr, "latscope tune: out of memory\n");
		file_hold_unlock(NULL, lock);
		return EXIT_ERROR;
	}
	time_t now = time(NULL);
	strftime(tr.start, sizeof(tr.start), "%Y%m%dT%H%M%SZ", gmtime(&now));

	/* Stop signals end the tune between trials, never in the middle of a change. */
	sigset_t stop, old;
	runner_stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, &old);
	if ((code = plan_fixes(&c, mc, &tr)) == EXIT_OK)
		code = run_trials(&c, mc, &tr, argc, argv);
	if (code == EXIT_OK && c.apply && !tr.stopped)
		code = tuneout_apply(NULL, &tr);
	tune_print(stdout, &tr, c.apply);
	if (code == EXIT_OK && c.write_config)
		code = tuneout_write_config(&tr, c.write_config);
	tune_run_free(&tr);
	file_hold_unlock(NULL, lock);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}
