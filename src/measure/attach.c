/* latscope attach: the cycles of the user's own program, measured from outside. */
#include "measure/attach.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/units.h"
#include "probe/attachsrc.h"
#include "probe/tracerun.h"
#include "probe/uprobe.h"

/* attach's own rows, by which this file names them; the shared ones follow. */
enum attach_opt {
	ATTACH_OPT_PID,
	ATTACH_OPT_FUNC,
	ATTACH_OPT_LOOP,
	ATTACH_OPT_PERIOD,
	ATTACH_OPT_TID,
	ATTACH_OPT_TRACE,
	ATTACH_OPT_UNTIL,
	ATTACH_NOWN
};

static const struct opt attach_opts[] = {
	[ATTACH_OPT_PID] = { "pid", 0, OPT_UINT, offsetof(struct attach_cmd, p.pid), .min = 1,
			     .max = 4194304, .metavar = "PID",
			     .help = "the running process whose function --func is measured "
				     "(uprobes: root)" },
	[ATTACH_OPT_FUNC] = { "func", 0, OPT_STRING, offsetof(struct attach_cmd, p.func),
			      .metavar = "SYMBOL",
			      .help = "the function called once a cycle, by its name in the "
				      "executable's or a library's symbol table" },
	[ATTACH_OPT_LOOP] = { "loop", 0, OPT_STRING, offsetof(struct attach_cmd, p.loop),
			      .metavar = "NAME",
			      .help = "read the wakes a program reports through latscope/loop.h "
				      "under NAME instead (no privilege)" },
	[ATTACH_OPT_PERIOD] = { "period", 0, OPT_DURATION, offsetof(struct attach_cmd, p.period_ns),
				.min = 10u * NS_PER_US, .max = 3600u * NS_PER_SEC,
				.unit = NS_PER_US,
				.help = "the program's period (default: the median interval of its "
					"first calls, or what loop.h was told); a bare number is "
					"microseconds" },
	[ATTACH_OPT_TID] = { "tid", 0, OPT_STRLIST, offsetof(struct attach_cmd, p.tids),
			     .metavar = "TID",
			     .help = "measure only these threads (repeatable, or a comma list); "
				     "default: every thread that calls it" },
	[ATTACH_OPT_TRACE] = { "trace", 0, OPT_FLAG, offsetof(struct attach_cmd, run.trace),
			       .help = "explain every late cycle from kernel trace events: what "
				       "ran on the thread's CPU while it waited (root)" },
	[ATTACH_OPT_UNTIL] = UNTIL_OPT(struct attach_cmd),
	RUN_OPTS_BUT_CPUS(struct attach_cmd, policy_choices_no_deadline),
};

#define NOPTS ARRAY_SIZE(attach_opts)
_Static_assert(NOPTS == ATTACH_NOWN + RUN_ROW_HELP - RUN_ROW_PRIORITY + 1,
	       "enum attach_opt names every own row");

static void attach_defaults(void *params)
{
	struct attach_cmd *c = params;
	run_params_defaults(&c->run, &c->out);
	/* The readers only take what the kernel or the program timed: they must not
	 * preempt the program they share a CPU with. */
	c->run.policy = POLICY_OTHER;
	c->run.priority = 0;
	c->p = (struct attach_params){ 0 };
	c->help = false;
}

static int attach_validate(void *params, const struct opt_result *given, struct lat_error *err)
{
	struct attach_cmd *c = params;
	const bool pid = opt_given_at(NOPTS, given, ATTACH_OPT_PID),
		   func = opt_given_at(NOPTS, given, ATTACH_OPT_FUNC);

	if (c->p.loop && (pid || func))
		return err_set(err, -EINVAL,
			       "option '--loop': not with --%s: the loop names its program",
			       pid ? "pid" : "func");
	if (!c->p.loop && (!pid || !func))
		return err_set(err, -EINVAL, "%s",
			       !pid && !func
				       ? "what to measure: --pid PID --func SYMBOL, or --loop NAME"
			       : !pid ? "option '--func' needs '--pid'"
				      : "option '--pid' needs '--func'");
	if (c->p.loop && (!c->p.loop[0] || strlen(c->p.loop) > 64))
		return err_set(err, -EINVAL, "option '--loop': a name of 1 to 64 characters");
	if (func && (!c->p.func[0] || strlen(c->p.func) > 255))
		return err_set(err, -EINVAL, "option '--func': a symbol of 1 to 255 characters");
	if (opt_run_given(attach_opts, NOPTS, given, RUN_ROW_LOOPS))
		return err_set(
			err, -EINVAL,
			"option '--loops' is not for attach: the program runs its own cycles; "
			"give a --duration");
	return 0;
}

/* The exit code of a source that could not be opened: the user's input, or the system. */
static int open_error(int r)
{
	return r == -ESRCH || r == -ENOENT || r == -EINVAL || r == -ENOEXEC || r == -EPROTO
		       ? -EINVAL
		       : r;
}

static int attach_open(void *params, struct lat_error *err)
{
	struct attach_cmd *c = params;
	const struct attach_want want = { .pid = (pid_t)c->p.pid, .func = c->p.func, .loop = c->p.loop,
					  .period_ns = c->p.period_ns, .tids = &c->p.tids };
	int r = attachsrc_open(&want, &c->p.src, err);

	if (r < 0)
		return open_error(r);
	c->p.period_ns = c->p.src->period_ns;
	c->p.pid = (uint64_t)c->p.src->pid;
	c->run.cpus = c->p.src->cpus;
	if (c->run.trace) {
		/* What the program sleeps in is its own: tracefs follows any wait, the BPF collector only latscope's. */
		c->run.trace_backend = TRACE_BACKEND_TRACEFS;
		c->run.trace_log_cap = tracerun_log_cap(&c->run, NS_PER_SEC / c->p.period_ns + 1u);
		c->run.trace_rate = NS_PER_SEC / c->p.period_ns + 1u;
		c->run.trace_thread_prio = c->p.src->th[0].prio;
	}
	if ((r = attachsrc_start(c->p.src, err)) < 0) {
		attachsrc_close(c->p.src);
		c->p.src = NULL;
		return r;
	}
	return 0;
}

static void attach_close(void *params)
{
	struct attach_cmd *c = params;
	attachsrc_close(c->p.src);
	c->p.src = NULL;
}

static void attach_notes(const void *params, struct result *res)
{
	const struct attach_cmd *c = params;
	const struct attach_src *s = c->p.src;
	char per[32];

	if (!s)
		return;
	fmt_duration(s->period_ns, per, sizeof(per));
	if (s->estimated)
		result_note(res,
			    "period %s: the median of %zu intervals between %s (give --period to "
			    "set it)",
			    per, s->intervals,
			    s->from_due ? "the due times of its first calls' sleeps"
					: "its first calls");
	for (size_t i = 0; i < s->n; i++)
		if (!s->th[i].pinned)
			result_note(res,
				    "thread %d is not pinned to one CPU: its cycles count under "
				    "cpu %u, where it ran "
				    "last before the run",
				    (int)s->th[i].tid, s->th[i].cpu);
}

static void attach_after(const void *params, struct result *res)
{
	const struct attach_cmd *c = params;
	const struct attach_src *s = c->p.src;
	struct uprobe_counts k = { 0 };

	if (!s)
		return;
	const uint64_t ended = atomic_load(&s->ended_ns);
	if (ended) {
		char at[32];
		fmt_duration(ended > res->origin_ns ? ended - res->origin_ns : 0, at, sizeof(at));
		result_note(res, "process %d ended %s into the run: the run ends there",
			    (int)s->pid, at);
	}
	if (!s->loop)
		uprobe_counts(s->up, &k);
	if (k.unrouted)
		result_note(res,
			    "%llu calls came from threads that started after the run began: not "
			    "measured",
			    (unsigned long long)k.unrouted);
	if (k.lost)
		result_note(res, "%llu calls were lost: a reader's ring was full",
			    (unsigned long long)k.lost);
	if (k.unreturned)
		result_note(
			res,
			"%llu calls did not return before the next (their runtime is not counted)",
			(unsigned long long)k.unreturned);
}

static void attach_describe(const void *params, char *buf, size_t size)
{
	const struct attach_cmd *c = params;
	const struct attach_src *s = c->p.src;
	char per[32], dur[32];

	fmt_duration(c->p.period_ns, per, sizeof(per));
	if (c->run.duration_ns)
		fmt_duration(c->run.duration_ns, dur, sizeof(dur));
	else
		snprintf(dur, sizeof(dur), "until Ctrl-C or its end");
	snprintf(buf, size, "%s: %zu thread%s, period %s%s, %s", s ? s->where : "?", s ? s->n : 0,
		 s && s->n == 1 ? "" : "s", per, s && s->estimated ? " (estimated)" : "", dur);
}

static uint64_t attach_period(const void *params)
{
	return ((const struct attach_cmd *)params)->p.period_ns;
}

const struct measure_cmd attach_command = {
	.synopsis = "--pid PID --func SYMBOL | --loop NAME  [--period DUR] [--tid TID]... [-D "
		    "DURATION] [--trace]\n"
		    "                       [--threshold DUR] [--window DUR] [--until EXPR] "
		    "[--json FILE] [--label KEY=VALUE]... [-q]",
	.about = "Measure a program that is already running, not a stand-in: each call of its "
		 "function SYMBOL (a\n"
		 "uprobe on its entry and return; root) or each wake it reports through "
		 "latscope/loop.h is a cycle.\n"
		 "lateness is how long after its period's start a cycle began: from when the sleep "
		 "before it was due\n"
		 "to end (clock_nanosleep, or ls_loop_wake_due), else from a grid of starts "
		 "estimated from the calls;\n"
		 "runtime how long the call ran.  Missed cycles count as the timer probe's missed "
		 "periods, and\n"
		 "cycles under the CPU each thread is pinned to.",
	.ops = &attach_probe,
	.opts = attach_opts,
	.nopts = NOPTS,
	.params_size = sizeof(struct attach_cmd),
	.run_offset = offsetof(struct attach_cmd, run),
	.extras_offset = offsetof(struct attach_cmd, out),
	.probe_offset = offsetof(struct attach_cmd, p),
	.help_offset = offsetof(struct attach_cmd, help),
	.defaults = attach_defaults,
	.validate = attach_validate,
	.open = attach_open,
	.close = attach_close,
	.describe = attach_describe,
	.notes = attach_notes,
	.after = attach_after,
	.period = attach_period,
};
