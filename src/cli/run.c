/*
 * latscope run: the suite to start with.  The timer, noise and wake probes in
 * turn, each stored as a run of its own with a shared suite label, then one
 * table of all three and the top findings of `latscope sys`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/loadrun.h"
#include "measure/measure.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/units.h"
#include "probe/probe.h"
#include "report/text.h"
#include "report/tprint.h"

#define DEFAULT_TOTAL_NS (60u * NS_PER_SEC)
#define QUICK_TOTAL_NS   (10u * NS_PER_SEC)
#define FINDINGS_SHOWN   5

struct run_cmd {
	bool quick;
	uint64_t duration_ns;
	const char *cpus;
	struct labels labels;
	struct strlist load;
	const char *load_cmd;
	const char *host, *host_secret;
	const char *until;
	const char *db;
	bool db_trust;
	bool no_store;
	uint64_t checkpoint_ns;
	bool checkpoint_given;          /* else each probe's default (measure/checkpoint.h) */
	bool cpus_short;                /* typed as -a: the probes' messages say '-a' too */
	bool quiet;
	bool help;
};

/* The rows of run_opts, by which this file names them. */
enum suite_opt {
	SUITE_OPT_QUICK,
	SUITE_OPT_DURATION,
	SUITE_OPT_CPUS,
	SUITE_OPT_LABEL,
	SUITE_OPT_LOAD,
	SUITE_OPT_LOAD_CMD,
	SUITE_OPT_HOST,
	SUITE_OPT_HOST_SECRET,
	SUITE_OPT_UNTIL,
	SUITE_OPT_DB,
	SUITE_OPT_DB_TRUST,
	SUITE_OPT_NO_STORE,
	SUITE_OPT_CHECKPOINT,
	SUITE_OPT_QUIET,
	SUITE_OPT_HELP,
	SUITE_NOPTS
};

static const struct opt run_opts[] = {
	[SUITE_OPT_QUICK] = { "quick", 0, OPT_FLAG, offsetof(struct run_cmd, quick),
			      .help = "about 10 s in all instead of a minute" },
	[SUITE_OPT_DURATION] = { "duration", 'D', OPT_DURATION,
				 offsetof(struct run_cmd, duration_ns), .min = 5u * NS_PER_SEC,
				 .max = 30u * 24u * 3600u * NS_PER_SEC, .unit = NS_PER_SEC,
				 .help = "the whole suite's length, shared 5:5:2 by timer, noise "
					 "and wake; a bare number is seconds" },
	[SUITE_OPT_CPUS] = { "cpus", 'a', OPT_STRING, offsetof(struct run_cmd, cpus),
			     .metavar = "CPUS", .values = OPT_VALUES_CPUS,
			     .help = "CPUs for the timer and noise probes (default: every online "
				     "CPU)" },
	[SUITE_OPT_LABEL] = { "label", 0, OPT_LABEL, offsetof(struct run_cmd, labels),
			      .help = "tag every run of the suite; repeatable" },
	[SUITE_OPT_LOAD] = { "load", 0, OPT_STRLIST, offsetof(struct run_cmd, load),
			     .metavar = "SPEC", .values = OPT_VALUES_WORDS,
			     .words = loadrun_kind_word,
			     .help = "measure every probe under this load (see latscope timer "
				     "--help); repeatable" },
	[SUITE_OPT_LOAD_CMD] = { "load-cmd", 0, OPT_STRING, offsetof(struct run_cmd, load_cmd),
				 .metavar = "CMD",
				 .help = "measure every probe while CMD runs (started anew for "
					 "each probe)" },
	[SUITE_OPT_HOST] = { "host", 0, OPT_STRING, offsetof(struct run_cmd, host),
			     .metavar = "SPEC",
			     .help = "in a VM: ask its host's agent what it did to the vCPUs at "
				     "each probe's spikes (see latscope timer --help)" },
	[SUITE_OPT_HOST_SECRET] = { "host-secret", 0, OPT_STRING,
				    offsetof(struct run_cmd, host_secret), .metavar = "FILE",
				    .values = OPT_VALUES_FILE,
				    .help = "with --host: the secret file the agent was started "
					    "with" },
	[SUITE_OPT_UNTIL] = { "until", 0, OPT_STRING, offsetof(struct run_cmd, until),
			      .metavar = "EXPR",
			      .help = "end each probe when EXPR is decided, such as 'level(1h) < "
				      "100us' (see latscope timer --help); "
				      "its share of -D is the most it runs" },
	[SUITE_OPT_DB] = { "db", 0, OPT_STRING, offsetof(struct run_cmd, db), .metavar = "PATH",
			   .values = OPT_VALUES_FILE,
			   .help = "keep the runs in this store (default: $LATSCOPE_DB, else "
				   "$XDG_DATA_HOME/latscope/runs.db)" },
	[SUITE_OPT_DB_TRUST] = { "db-trust", 0, OPT_FLAG, offsetof(struct run_cmd, db_trust),
				 .help = DB_TRUST_HELP },
	[SUITE_OPT_NO_STORE] = { "no-store", 0, OPT_FLAG, offsetof(struct run_cmd, no_store),
				 .help = "do not keep the runs" },
	[SUITE_OPT_CHECKPOINT] = CHECKPOINT_OPT(offsetof(struct run_cmd, checkpoint_ns),
						"store each probe's result so far every DUR while "
						"it measures (see latscope timer --help)"),
	[SUITE_OPT_QUIET] = { "quiet", 'q', OPT_FLAG, offsetof(struct run_cmd, quiet),
			      .help = "no progress line" },
	[SUITE_OPT_HELP] = { "help", 'h', OPT_HELP, offsetof(struct run_cmd, help),
			     .help = "show this help" },
};
_Static_assert(ARRAY_SIZE(run_opts) == SUITE_NOPTS, "enum suite_opt names every row of run_opts");

static const struct cmd_spec run_spec = {
	.name = "run",
	.synopsis = "[--quick | -D DURATION] [-a CPUS] [--label KEY=VALUE]... [--load SPEC]... [--load-cmd CMD]\n"
		    "                    [--host SPEC [--host-secret FILE]] [--until EXPR] [--db PATH | --no-store] [--checkpoint DUR] [-q]",
	.about = "The suite to start with: timer wakeup latency, OS and hypervisor noise, and thread wakeup cost,\n"
		 "in turn (about a minute; --quick for 10 s), each stored as a run with a shared label suite=...,\n"
		 "then one table of all three and what `latscope sys` advises.  Works without root, saying what\n"
		 "root would have added.",
	.opts = run_opts,
	.nopts = ARRAY_SIZE(run_opts),
	.help_offset = offsetof(struct run_cmd, help),
	.pos_name = "argument",
};

const struct cmd_spec *cmd_run_spec(void)
{
	return &run_spec;
}

/* The suite: every measuring command of the command table whose probe has a
 * share of it, in the table's order.  Nothing here names a probe. */
#define PHASES_MAX 16

struct phase {
	const struct measure_cmd *mc;
	unsigned share;
	const char *what;
};

static size_t suite_phases(struct phase *ph, unsigned *ret_shares)
{
	size_t n = 0;
	*ret_shares = 0;
	for (size_t i = 0; i < ncommands && n < PHASES_MAX; i++) {
		const struct measure_cmd *mc = commands[i].mc;
		if (!mc || !mc->ops->suite_share)
			continue;
		ph[n++] = (struct phase){ mc, mc->ops->suite_share, mc->ops->title };
		*ret_shares += mc->ops->suite_share;
	}
	return n;
}

struct progress {
	bool tty;
	const struct phase *ph;
	size_t phase, nphases;
	uint64_t phase_ns;
};

/* A phase's warnings (a load command that failed), said as `latscope timer -q`
 * says them, with the probe they are about: the suite prints no summary of
 * its own per phase, so this is the only place the user sees them. */
static void phase_finished(void *ctx, struct result *res)
{
	const struct progress *p = ctx;
	char who[64];

	if (p->tty)
		fprintf(stderr, "\r\033[K");
	snprintf(who, sizeof(who), "run: %s", res->probe);
	text_notes(stderr, who, res, 0, false);
}

static void show_progress(void *ctx, uint64_t elapsed_ns, uint64_t total_ns)
{
	const struct progress *p = ctx;
	(void)total_ns;
	if (!p->tty)
		return;
	/* Rounded up: "0 s left" would stand for the whole last second. */
	uint64_t left = elapsed_ns < p->phase_ns ? (p->phase_ns - elapsed_ns + NS_PER_SEC - 1u) / NS_PER_SEC : 0;
	fprintf(stderr, "\r\033[Klatscope run: %zu/%zu %s, %llu s left", p->phase + 1u, p->nphases, p->ph[p->phase].what,
		(unsigned long long)left);
	fflush(stderr);
}

/*
 * One phase's parameters: the probe's defaults and the suite's options, set
 * as if typed (opt_run_mark), so that measure_with checks them as it checks any
 * command line.  -EINVAL with err filled (a CPU list, too many labels).
 */
static int set_params(const struct run_cmd *c, const struct phase *ph, uint64_t ns, const char *suite, void *params,
		      struct opt_result *given, struct lat_error *err)
{
	const struct measure_cmd *mc = ph->mc;
	struct run_params *rp = measure_run_params(mc, params);
	struct measure_extras *x = measure_extras_of(mc, params);
	const int cpus = opt_run_row(mc->opts, mc->nopts, RUN_ROW_CPUS);
	char text[LABEL_KEY_MAX + LABEL_VALUE_MAX + 8];

	memset(given, 0, sizeof(*given));
	mc->defaults(params);
	rp->duration_ns = ns;
	opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_DURATION);
	/* -a goes to the probes that take a CPU list; a probe that places its threads itself keeps its own */
	if (c->cpus && cpus >= 0 && mc->opts[cpus].kind == OPT_CPUS) {
		if (cpuset_parse(c->cpus, &rp->cpus) < 0) {
			return err_set(err, -EINVAL,
				       "option '%s': '%s' is not a CPU list (such as 0-3,6)",
				       c->cpus_short ? "-a" : "--cpus", c->cpus);
		}
		opt_mark_typed(mc->nopts, given, (size_t)cpus, c->cpus_short);
	}
	x->quiet = true;
	snprintf(text, sizeof(text), "suite=%s", suite);
	if (parse_label(text, &x->labels.items[0]) < 0 || c->labels.n + 1u > LABELS_MAX) {
		return err_set(err, -EINVAL, "option '--label': too many labels with suite=");
	}
	x->labels.n = 1;
	for (unsigned i = 0; i < c->labels.n; i++)
		x->labels.items[x->labels.n++] = c->labels.items[i];
	opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_LABEL);
	x->load = c->load;
	x->load_cmd = c->load_cmd;
	x->host = c->host;
	x->host_secret = c->host_secret;
	if (c->until) {
		x->until_text = c->until;
		opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_UNTIL);
	}
	x->no_store = c->no_store;
	x->db_path = c->db;
	x->db_trust = c->db_trust;
	if (c->checkpoint_given) {
		x->checkpoint_ns = c->checkpoint_ns;
		opt_run_mark(mc->opts, mc->nopts, given, RUN_ROW_CHECKPOINT);
	}
	return 0;
}

/* A value in the probe's unit, with the unit: "31.2us", "29ns". */
static void fmt_val(const struct result *res, double ns, char *buf, size_t size)
{
	const struct probe_ops *ops = probe_find(res->probe);
	if (ops && ops->unit_ns == 1)
		snprintf(buf, size, "%.0fns", ns);
	else
		snprintf(buf, size, "%.1fus", ns / 1000.0);
}

static void table_row(const struct result *res, int64_t id, const char *what)
{
	const struct summary *s = &res->all.sum[0];
	char v[7][32], thr[32];

	fmt_val(res, (double)s->min, v[0], sizeof(v[0]));
	fmt_val(res, (double)s->p50, v[1], sizeof(v[1]));
	fmt_val(res, (double)s->p99, v[2], sizeof(v[2]));
	fmt_val(res, (double)s->p999, v[3], sizeof(v[3]));
	fmt_val(res, (double)s->max, v[4], sizeof(v[4]));
	if (s->has_warm_max)
		fmt_val(res, (double)s->warm_max, v[5], sizeof(v[5]));
	else
		snprintf(v[5], sizeof(v[5]), "-");
	fmt_duration(res->threshold_ns, thr, sizeof(thr));
	tprintf(stdout, "%-6s %-24s %11llu %9s %9s %9s %9s %11s %11s %8.3f%% > %-6s %6llu%s%s\n", res->probe, what,
		(unsigned long long)s->count, v[0], v[1], v[2], v[3], v[4], v[5], s->above_pct, thr,
		(unsigned long long)res->all.missed, id ? "" : "  (not stored)",
		res->interrupted ? "  (stopped early)" : "");
}

/* A phase the suite never came to: a row that says so, not a gap. */
static void missing_row(const struct phase *ph)
{
	tprintf(stdout, "%-6s %-24s   (not run: the suite was stopped before it)\n", measure_name(ph->mc), ph->what);
}

/* What root would have added: said once for the whole suite. */
static void root_notes(const struct result *res, size_t n)
{
	bool rt = false, lock = false, qos = false;
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		json_t *policy = r->params ? json_object_get(r->params, "policy") : NULL;
		bool asked_rt = policy && json_is_string(policy) && strcmp(json_string_value(policy), "other") != 0;
		rt |= asked_rt && !r->applied.rt_policy;
		lock |= !r->applied.memlock;
		json_t *nq = r->params ? json_object_get(r->params, "no_pm_qos") : NULL;
		qos |= !r->applied.pm_qos && !json_is_true(nq);
	}
	if (!rt && !lock && !qos)
		return;
	tprintf(stdout, "\nnot applied (as root, or with CAP_SYS_NICE and CAP_IPC_LOCK, latscope would also have):\n");
	if (rt)
		tprintf(stdout, "  - run the measuring threads at SCHED_FIFO priority 95, so other tasks cannot delay them\n");
	if (lock)
		tprintf(stdout, "  - locked its memory, so no page fault lands in a measurement\n");
	if (qos)
		tprintf(stdout, "  - held /dev/cpu_dma_latency at 0, keeping the CPUs out of deep idle states\n");
}

static void show_findings(const struct result *res)
{
	size_t shown = 0;
	size_t i;
	json_t *f;

	if (!res->findings)
		return;
	json_array_foreach(res->findings, i, f) {
		const char *sev = json_string_value(json_object_get(f, "severity"));
		if (!sev || strcmp(sev, "info") == 0 || shown == FINDINGS_SHOWN)
			continue;
		if (shown++ == 0)
			tprintf(stdout, "\nwhat latscope sys found (all of it: latscope sys):\n");
		tprintf(stdout, "  [%s] %s\n    why: %s\n    fix: %s\n", sev, json_string_value(json_object_get(f, "saw")),
		       json_string_value(json_object_get(f, "why")), json_string_value(json_object_get(f, "fix")));
	}
}

/* The suite as it ran: each phase's result and stored id. */
struct suite_run {
	struct phase phases[PHASES_MAX];
	size_t nphases;
	unsigned shares;
	struct result res[PHASES_MAX];
	int64_t ids[PHASES_MAX];
	size_t done;
	const struct result *stopped;   /* the phase a signal ended, which ends the suite */
	char label[32];                 /* suite=LABEL on every run */
};

/* Checks across options and of the loads, before the first probe runs: LAT_GO_ON or the exit code. */
static int check_run(struct run_cmd *c, const struct opt_result *given)
{
	if (c->quick && c->duration_ns) {
		char msg[sizeof(((struct lat_error *)0)->msg)] =
			"options '--quick' and '--duration' exclude each other";
		opt_msg_as_typed(run_opts, ARRAY_SIZE(run_opts), given, msg, sizeof(msg));
		return storecmd_usage("run", msg);
	}
	c->checkpoint_given = opt_given_at(SUITE_NOPTS, given, SUITE_OPT_CHECKPOINT);
	c->cpus_short = opt_short_at(SUITE_NOPTS, given, SUITE_OPT_CPUS);
	/* Bad loads are named before the first probe runs, not after it. */
	struct loadrun *lr = malloc(sizeof(*lr));
	struct lat_error lerr;
	int lr_r = lr ? loadrun_parse(&c->load, c->load_cmd, lr, &lerr) : -ENOMEM;
	free(lr);
	if (lr_r == -ENOMEM) {
		tprintf(stderr, "latscope run: out of memory\n");
		return EXIT_ERROR;
	}
	if (lr_r < 0)
		return storecmd_usage("run", lerr.msg);
	return LAT_GO_ON;
}

/* Each probe in turn, until the end or a stop signal: the worst exit code. */
static int run_phases(struct run_cmd *c, struct suite_run *s, int argc, char **argv)
{
	const uint64_t total = c->duration_ns ? c->duration_ns : c->quick ? QUICK_TOTAL_NS : DEFAULT_TOTAL_NS;
	struct progress prog = { .tty = !c->quiet && isatty(STDERR_FILENO), .ph = s->phases, .nphases = s->nphases };
	int code, worst = EXIT_OK;

	for (size_t i = 0; i < s->nphases; i++) {
		/* whole milliseconds: a phase's duration reads as a user would write it */
		uint64_t ns = total / s->shares * s->phases[i].share / NS_PER_MS * NS_PER_MS;
		void *params = calloc(1, s->phases[i].mc->params_size);
		struct opt_result pgiven;
		struct lat_error perr;
		if (!params) {
			tprintf(stderr, "latscope run: out of memory\n");
			worst = EXIT_ERROR;
			break;
		}
		if (set_params(c, &s->phases[i], ns, s->label, params, &pgiven, &perr) < 0) {
			free(params);
			worst = storecmd_usage("run", perr.msg);
			break;
		}
		prog.phase = i;
		prog.phase_ns = ns;
		show_progress(&prog, 0, ns);
		struct measure_hooks mh = { .silent = true,
					    .progress = show_progress,
					    .finished = phase_finished,
					    .ctx = &prog };
		struct measure_outcome out = { .res = &s->res[i] };
		/* its messages name the command typed, run, not the probe's */
		struct measure_cmd as_run = *s->phases[i].mc;
		as_run.name = "run";
		/* every phase records the suite's own command line */
		code = measure_with(&as_run, params, &pgiven, argc, argv, &mh, &out);
		free(params);
		if (code == EXIT_USAGE) {       /* an option the user gave does not fit this probe */
			worst = code;
			break;
		}
		/* the worst: an error, then above (3), then undecided (4) */
		if (code != EXIT_OK && code != EXIT_THRESHOLD && code != EXIT_UNDECIDED)
			worst = EXIT_ERROR;
		else if (worst != EXIT_ERROR && (code == EXIT_THRESHOLD || (code == EXIT_UNDECIDED && worst == EXIT_OK)))
			worst = code;
		if (s->res[i].nmetrics == 0)    /* nothing came of it: the error is said */
			continue;
		s->ids[i] = out.stored_id;
		s->done = i + 1u;
		if (s->res[i].interrupted && strncmp(s->res[i].stop_reason, "signal", 6) == 0) {
			s->stopped = &s->res[i];        /* Ctrl-C ends the suite, not only this probe */
			break;
		}
	}
	if (prog.tty)
		tprintf(stderr, "\r\033[K");
	return worst;
}

/* One table of the phases that ran, the findings, and where they are stored. */
static void print_suite(const struct suite_run *s)
{
	const int64_t *ids = s->ids;
	const size_t done = s->done;

	tprintf(stdout, "%-6s %-24s %11s %9s %9s %9s %9s %11s %11s %20s %6s\n", "probe", "", "count", "min", "p50", "p99",
		"p99.9", "max", "warm max", "above threshold", "missed");
	for (size_t i = 0; i < done; i++)
		if (s->res[i].nmetrics)
			table_row(&s->res[i], ids[i], s->phases[i].what);
	for (size_t i = done; s->stopped && i < s->nphases; i++)
		missing_row(&s->phases[i]);
	root_notes(s->res, done);
	show_findings(s->res[0].nmetrics ? &s->res[0] : &s->res[done - 1u]);   /* the timer saw every CPU */
	if (ids[0] && ids[done - 1u] && ids[0] != ids[done - 1u])
		tprintf(stdout, "\nstored as runs %lld-%lld", (long long)ids[0], (long long)ids[done - 1u]);
	else if (ids[0])
		tprintf(stdout, "\nstored as run %lld", (long long)ids[0]);
	if (ids[0])
		tprintf(stdout, " with the label suite=%s (latscope runs --label suite=%s; latscope show ID)\n", s->label,
			s->label);
}

/* What a signal left out of the suite. */
static void print_cut_short(const struct suite_run *s)
{
	char left[128] = "";
	size_t len = 0;
	for (size_t i = s->done; i < s->nphases && len < sizeof(left); i++)
		len += (size_t)snprintf(left + len, sizeof(left) - len, "%s%s", i > s->done ? ", " : "",
					measure_name(s->phases[i].mc));
	tprintf(stdout, "\nthe suite was cut short (%s) during %s%s%s\n", s->stopped->stop_reason, s->stopped->probe,
		left[0] ? "; never ran: " : "", left);
}

int cmd_run(int argc, char **argv)
{
	struct run_cmd c;
	struct opt_result given;
	struct suite_run *s = calloc(1, sizeof(*s));
	int code;

	if (!s) {
		tprintf(stderr, "latscope run: out of memory\n");
		return EXIT_ERROR;
	}
	memset(&c, 0, sizeof(c));
	if ((code = storecmd_parse(&run_spec, argc, argv, &c, &given)) != LAT_GO_ON) {
		free(s);
		return storecmd_exit(code);
	}
	if ((code = check_run(&c, &given)) != LAT_GO_ON) {
		free(s);
		return code;
	}
	s->nphases = suite_phases(s->phases, &s->shares);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(s->label, sizeof(s->label), "%Y%m%dT%H%M%SZ", &tm);

	const int worst = run_phases(&c, s, argc, argv);
	if (s->done)
		print_suite(s);
	if (s->stopped)
		print_cut_short(s);
	for (size_t i = 0; i < s->nphases; i++)
		result_free(&s->res[i]);
	free(s);
	return worst;
}
