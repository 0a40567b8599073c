/* latscope timer: the cyclictest measurement, with nothing lost. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "measure/timer.h"

#include "core/array.h"
#include "core/units.h"
#include "probe/tracerun.h"
#include "trace/instance.h"


static const char *const mode_choices[] = { "nanosleep", "timerfd", "posix", NULL };
static const char *const clock_choices[] = { "monotonic", "realtime", "tai", "boottime", NULL };
_Static_assert(sizeof(clock_choices) / sizeof(clock_choices[0]) == TIMER_CLOCKS + 1, "a name for every clock");

/* Below this a wait cannot end before the next deadline on any hardware we know. */
#define MIN_INTERVAL_NS NS_PER_US

/* SCHED_DEADLINE's limits as the kernel checks them (__checkparam_dl): a
 * runtime of at least 2^10 ns, its unit of bandwidth; periods within
 * kernel.sched_deadline_period_min_us and _max_us, by default 100 us and
 * 2^22 us (a changed sysctl is the kernel's EINVAL at the start). */
#define DL_MIN_NS         1024u
#define DL_MIN_PERIOD_NS  (100u * NS_PER_US)
#define DL_MAX_PERIOD_NS  ((UINT64_C(1) << 22) * NS_PER_US)
/* The default runtime: a job is a clock read, a sample and sched_yield, a few
 * microseconds here; 100 us leaves room for an interrupt or the host within
 * the job and reserves 10% of the default 1 ms period. */
#define DL_DEFAULT_RUNTIME_NS (100u * NS_PER_US)
/* Nor less than this when chosen for the user (capped at the deadline): a job
 * overrunning its runtime is throttled a whole period. */
#define DL_DEFAULT_RUNTIME_MIN_NS (5u * NS_PER_US)

static const struct opt timer_opts[] = {
	[TIMER_OPT_INTERVAL] = { "interval", 'i', OPT_DURATION, offsetof(struct timer_cmd, p.interval_ns), .min = MIN_INTERVAL_NS,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_US,
	  .help = "period between deadlines; a bare number is microseconds" },
	[TIMER_OPT_DISTANCE] = { "distance", 'd', OPT_DURATION, offsetof(struct timer_cmd, p.distance_ns), .min = 0,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_US,
	  .help = "give the Nth measured CPU the period interval + N * distance, as cyclictest -d does; a bare number "
		  "is microseconds" },
	[TIMER_OPT_ALIGNED] = { "aligned", 0, OPT_FLAG, offsetof(struct timer_cmd, aligned),
	  .flags = OPT_NOT_PARAM,
	  .help = "every measured CPU's deadlines on the same instants (or --aligned-offset apart), "
		  "as cyclictest -A asks: the timer always puts them there, so this only refuses "
		  "--distance, whose periods differ per CPU" },
	[TIMER_OPT_ALIGNED_OFFSET] = { "aligned-offset", 0, OPT_DURATION,
	  offsetof(struct timer_cmd, p.aligned_offset_ns), .min = 0, .max = 3600u * NS_PER_SEC,
	  .unit = NS_PER_US, .flags = OPT_PARAM_IF_SET,
	  .help = "the Nth measured CPU's deadlines N * DUR after the first CPU's (modulo its "
		  "period), as cyclictest -A USEC does: wakeups spread instead of simultaneous; a "
		  "bare number is microseconds" },
	[TIMER_OPT_MODE] = { "mode", 0, OPT_ENUM, offsetof(struct timer_cmd, p.mode), .choices = mode_choices,
	  .help = "how to wait: clock_nanosleep with TIMER_ABSTIME, a timerfd read, or a POSIX timer signal" },
	[TIMER_OPT_CLOCK] = { "clock", 0, OPT_ENUM, offsetof(struct timer_cmd, p.clock), .choices = clock_choices,
	  .help = "the clock of the deadlines and of the reading on wakeup; a step of realtime or tai (NTP, PTP, "
		  "settimeofday) shows as latency" },
	[TIMER_OPT_TIMER_SLACK] = { "timer-slack", 0, OPT_DURATION, offsetof(struct timer_cmd, run.timer_slack_ns), .min = 1, .max = NS_PER_SEC,
	  .unit = NS_PER_US,
	  .help = "the measuring threads' timer slack, which the kernel honours for --policy other only; a bare "
		  "number is microseconds" },
	[TIMER_OPT_CO_CORRECT] = { "co-correct", 0, OPT_FLAG, offsetof(struct timer_cmd, p.co_correct),
	  .help = "also record the latency each missed deadline would have had (coordinated omission)" },
	[TIMER_OPT_RUNTIME] = { "runtime", 0, OPT_DURATION, offsetof(struct timer_cmd, run.dl.runtime_ns), .min = DL_MIN_NS,
	  .max = DL_MAX_PERIOD_NS, .unit = NS_PER_US, .flags = OPT_PARAM_IF_SET,
	  .help = "with --policy deadline: the CPU time reserved for each period's job (default 100us, or half the "
		  "deadline when that is shorter, at least 5us); a bare number is microseconds" },
	[TIMER_OPT_DEADLINE] = { "deadline", 0, OPT_DURATION, offsetof(struct timer_cmd, run.dl.deadline_ns), .min = DL_MIN_NS,
	  .max = DL_MAX_PERIOD_NS, .unit = NS_PER_US, .flags = OPT_PARAM_IF_SET,
	  .help = "with --policy deadline: how long after its period's start each job must be done (default: the "
		  "period); a bare number is microseconds" },
	[TIMER_OPT_PERIOD] = { "period", 0, OPT_DURATION, offsetof(struct timer_cmd, run.dl.period_ns), .min = DL_MIN_PERIOD_NS,
	  .max = DL_MAX_PERIOD_NS, .unit = NS_PER_US, .flags = OPT_PARAM_IF_SET,
	  .help = "with --policy deadline: the reservation's period (default: --interval); a bare number is "
		  "microseconds" },
	[TIMER_OPT_TRACE] = { "trace", 0, OPT_FLAG, offsetof(struct timer_cmd, run.trace),
	  .help = "split every sample's latency into its parts from kernel trace events, and explain the spikes (root)" },
	[TIMER_OPT_TRACE_ABOVE] = { "trace-above", 0, OPT_DURATION, offsetof(struct timer_cmd, run.trace_above_ns), .min = 1,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_US,
	  .help = "with --trace: explain the samples above this (default: --threshold); a bare number is microseconds" },
	[TIMER_OPT_TRACE_BACKEND] = { "trace-backend", 0, OPT_ENUM, offsetof(struct timer_cmd, run.trace_backend), .choices = trace_backend_choices,
	  .help = "with --trace: where the events are gathered: auto (BPF where the kernel allows, else tracefs), "
		  "bpf (in the kernel, one record a sample), tracefs (every event, paired afterwards), or both (BPF's "
		  "result, each sample checked against tracefs's)" },
	[TIMER_OPT_UNTIL] = UNTIL_OPT(struct timer_cmd),
	/* RUN_OPTS fills the rows from TIMER_OPT_CPUS on, in RUN_OPT_ROWS's order */
	[TIMER_OPT_CPUS] = RUN_OPTS(struct timer_cmd, policy_choices),
};
_Static_assert(ARRAY_SIZE(timer_opts) == TIMER_NOPTS, "enum timer_opt names every row of timer_opts");

static void timer_defaults(void *params)
{
	struct timer_cmd *c = params;
	run_params_defaults(&c->run, &c->out);
	c->p.interval_ns = NS_PER_MS;
	c->p.distance_ns = 0;
	c->p.aligned_offset_ns = 0;
	c->aligned = false;
	c->p.mode = TIMER_NANOSLEEP;
	c->p.clock = TIMER_CLOCK_MONOTONIC;
	c->p.co_correct = false;
	c->help = false;
}

static bool given_opt(const struct opt_result *given, enum timer_opt row)
{
	return opt_given_at(TIMER_NOPTS, given, row);
}

/*
 * --policy deadline's reservation from what was given: the period is
 * --interval unless --period says it (both, only when equal), the deadline
 * the period, the runtime 100 us or half the deadline (at least 5 us); then the kernel's
 * rule runtime <= deadline <= period.  The timer's own options that do not
 * apply to a sched_yield wait are refused rather than ignored.
 */
static int deadline_settle(struct timer_cmd *c, const struct opt_result *given, struct lat_error *err)
{
	static const enum timer_opt dl_opts[] = { TIMER_OPT_RUNTIME, TIMER_OPT_DEADLINE,
						  TIMER_OPT_PERIOD };
	struct run_deadline *dl = &c->run.dl;
	char a[32], b[32];

	if (c->run.policy != POLICY_DEADLINE) {
		for (size_t i = 0; i < ARRAY_SIZE(dl_opts); i++)
			if (given_opt(given, dl_opts[i]))
				return err_set(err, -EINVAL,
					       "option '--%s' needs '--policy deadline'",
					       timer_opts[dl_opts[i]].name);
		return 0;
	}
	if (given_opt(given, TIMER_OPT_MODE))
		return err_set(err, -EINVAL, "option '--mode': --policy deadline waits with sched_yield, not a timer");
	if (c->p.clock != TIMER_CLOCK_MONOTONIC)
		return err_set(err, -EINVAL, "option '--clock': --policy deadline reads CLOCK_MONOTONIC, the clock of "
			       "the kernel's deadlines");
	if (c->p.distance_ns)
		return err_set(err, -EINVAL, "option '--distance': --policy deadline gives every thread the one period");
	if (c->run.trace)
		return err_set(err, -EINVAL, "option '--trace': not available with --policy deadline (the trace "
			       "follows pinned threads)");
	if (given_opt(given, TIMER_OPT_PERIOD) && given_opt(given, TIMER_OPT_INTERVAL) &&
	    dl->period_ns != c->p.interval_ns) {
		fmt_duration(dl->period_ns, a, sizeof(a));
		fmt_duration(c->p.interval_ns, b, sizeof(b));
		return err_set(err, -EINVAL, "option '--period': %s is not --interval %s (under --policy deadline "
			       "they are one: give either)", a, b);
	}
	if (!dl->period_ns) {
		dl->period_ns = c->p.interval_ns;
		if (dl->period_ns < DL_MIN_PERIOD_NS || dl->period_ns > DL_MAX_PERIOD_NS) {
			fmt_duration(dl->period_ns, a, sizeof(a));
			return err_set(err, -EINVAL, "option '--interval': %s is outside SCHED_DEADLINE's periods "
				       "(100us to 4.194304s)", a);
		}
	}
	c->p.interval_ns = dl->period_ns;       /* windows, findings and notes read the period there */
	if (!dl->deadline_ns)
		dl->deadline_ns = dl->period_ns;
	if (dl->deadline_ns > dl->period_ns) {
		fmt_duration(dl->deadline_ns, a, sizeof(a));
		fmt_duration(dl->period_ns, b, sizeof(b));
		return err_set(err, -EINVAL, "option '--deadline': %s is longer than the period %s", a, b);
	}
	if (!dl->runtime_ns) {
		dl->runtime_ns = dl->deadline_ns / 2u < DL_DEFAULT_RUNTIME_NS ? dl->deadline_ns / 2u : DL_DEFAULT_RUNTIME_NS;
		if (dl->runtime_ns < DL_DEFAULT_RUNTIME_MIN_NS)
			dl->runtime_ns = DL_DEFAULT_RUNTIME_MIN_NS < dl->deadline_ns ? DL_DEFAULT_RUNTIME_MIN_NS : dl->deadline_ns;
	}
	if (dl->runtime_ns > dl->deadline_ns) {
		fmt_duration(dl->runtime_ns, a, sizeof(a));
		fmt_duration(dl->deadline_ns, b, sizeof(b));
		return err_set(err, -EINVAL, "option '--runtime': %s is longer than the deadline %s", a, b);
	}
	return 0;
}

static int timer_validate(void *params, const struct opt_result *given, struct lat_error *err)
{
	struct timer_cmd *c = params;
	struct timespec res;
	char a[32], b[32];

	/* The kernel's timerfd takes no CLOCK_TAI (timerfd_create(2)). */
	if (c->p.clock == TIMER_CLOCK_TAI && c->p.mode == TIMER_TIMERFD)
		return err_set(err, -EINVAL, "option '--clock': 'tai' cannot drive --mode timerfd (a timerfd takes "
			       "monotonic, realtime or boottime)");
	if (deadline_settle(c, given, err) < 0)
		return -EINVAL;
	if (c->aligned && c->p.distance_ns)
		return err_set(err, -EINVAL, "option '--aligned': --distance gives each CPU its "
			       "own period, so their deadlines meet only at the start");
	uint64_t floor_ns = MIN_INTERVAL_NS;
	if (clock_getres(timer_clock_ids[c->p.clock], &res) == 0 && ts_to_ns(&res) > floor_ns)
		floor_ns = ts_to_ns(&res);
	if (c->p.interval_ns < floor_ns) {
		fmt_duration(c->p.interval_ns, a, sizeof(a));
		fmt_duration(floor_ns, b, sizeof(b));
		return err_set(err, -EINVAL, "option '--interval': %s is below what the clock can honour (at least %s)", a, b);
	}
	/* the last CPU's period is the longest */
	uint64_t longest = c->p.interval_ns + (uint64_t)(cpuset_count(&c->run.cpus) - 1u) * c->p.distance_ns;
	if (longest > 3600u * NS_PER_SEC) {
		fmt_duration(c->p.distance_ns, a, sizeof(a));
		return err_set(err, -EINVAL, "option '--distance': %s gives the last CPU a period over an hour", a);
	}
	if (c->run.window_ns < longest) {
		fmt_duration(c->run.window_ns, a, sizeof(a));
		fmt_duration(longest, b, sizeof(b));
		return err_set(err, -EINVAL, "option '--window': %s is shorter than the %sinterval %s", a,
			 c->p.distance_ns ? "longest " : "", b);
	}
	if (given_opt(given, TIMER_OPT_TRACE_ABOVE) && !c->run.trace) {
		return err_set(err, -EINVAL, "option '--trace-above' needs '--trace'");
	}
	if (given_opt(given, TIMER_OPT_TRACE_BACKEND) && !c->run.trace) {
		return err_set(err, -EINVAL, "option '--trace-backend' needs '--trace'");
	}
	if (c->run.trace)
		c->run.trace_log_cap = tracerun_log_cap(&c->run, NS_PER_SEC / c->p.interval_ns);
	c->run.trace_rate = NS_PER_SEC / c->p.interval_ns;
	c->run.trace_sleeps_mono = c->p.mode == TIMER_NANOSLEEP && c->p.clock == TIMER_CLOCK_MONOTONIC;
	c->run.trace_sleep_call = c->p.mode == TIMER_TIMERFD ? TRACE_SLEEP_READ
				: c->p.mode == TIMER_POSIX ? TRACE_SLEEP_SIGWAIT : TRACE_SLEEP_NANOSLEEP;
	return 0;
}

static void timer_describe(const void *params, char *buf, size_t size)
{
	const struct timer_cmd *c = params;
	char iv[32], dur[32];
	fmt_duration(c->p.interval_ns, iv, sizeof(iv));
	if (c->run.duration_ns)
		fmt_duration(c->run.duration_ns, dur, sizeof(dur));
	else if (c->run.loops)
		snprintf(dur, sizeof(dur), "%llu loops", (unsigned long long)c->run.loops);
	else
		snprintf(dur, sizeof(dur), "until Ctrl-C");
	char dist[48] = "";
	if (c->p.distance_ns) {
		char d[32];
		fmt_duration(c->p.distance_ns, d, sizeof(d));
		snprintf(dist, sizeof(dist), " + %s per CPU", d);
	}
	char phase[96] = "";
	if (c->p.aligned_offset_ns) {
		char d[32];
		fmt_duration(c->p.aligned_offset_ns, d, sizeof(d));
		snprintf(phase, sizeof(phase), ", the Nth CPU's %s N * %s later",
			 c->run.policy == POLICY_DEADLINE ? "periods" : "deadlines", d);
	}
	char clk[32] = "", slack[32];
	if (c->p.clock != TIMER_CLOCK_MONOTONIC)
		snprintf(clk, sizeof(clk), ", clock %s", clock_choices[c->p.clock]);
	fmt_duration(run_timer_slack(&c->run), slack, sizeof(slack));
	if (c->run.policy == POLICY_DEADLINE)
		snprintf(buf, size, "period %s (sched_yield)%s, %s%s", iv, phase, dur,
			 c->p.co_correct ? ", coordinated-omission correction" : "");
	else
		snprintf(buf, size, "interval %s%s (%s%s)%s, timer slack %s, %s%s", iv, dist,
			 mode_choices[c->p.mode], clk, phase, slack, dur,
			 c->p.co_correct ? ", coordinated-omission correction" : "");
}

/* Before the run: what the chosen clock means for what is measured. */
static void timer_notes(const void *params, struct result *res)
{
	const struct timer_cmd *c = params;

	if (c->p.clock == TIMER_CLOCK_REALTIME || c->p.clock == TIMER_CLOCK_TAI)
		result_note(res, "--clock %s: a step of the clock during the run (NTP, PTP, settimeofday) shows as "
			    "latency; latscope compares it with CLOCK_MONOTONIC at every window's end and notes a step",
			    clock_choices[c->p.clock]);
}

static uint64_t timer_period(const void *params)
{
	return ((const struct timer_cmd *)params)->p.interval_ns;
}

/* The kernel gives real-time threads no timer slack: an asked one did nothing. */
static void slack_after(const struct timer_cmd *c, struct result *res)
{
	char slack[32];

	if (run_timer_slack(&c->run) <= 1u || !res->applied.rt_policy)
		return;
	fmt_duration(run_timer_slack(&c->run), slack, sizeof(slack));
	result_note(res, "--timer-slack %s had no effect: the kernel gives %s threads no timer slack (use --policy "
		    "other to measure it)", slack, sched_policy_name(c->run.policy));
}

/* More deadlines missed than served: the interval is below what this machine serves. */
static void timer_after(const void *params, struct result *res)
{
	const struct timer_cmd *c = params;
	const struct summary *s = &res->all.sum[0];
	char iv[32], floor[32], want[32];

	slack_after(c, res);
	if (res->all.missed <= s->count || s->count == 0)
		return;
	fmt_duration(c->p.interval_ns, iv, sizeof(iv));
	fmt_duration(s->min, floor, sizeof(floor));
	/* the next round step above the quickest wakeup, with room for its spread */
	uint64_t step = NS_PER_US;
	while (step < 2u * s->min && step < NS_PER_SEC)
		step *= 10u;
	fmt_duration(step, want, sizeof(want));
	result_note(res, "-i %s is shorter than this machine can serve: %llu of %llu deadlines passed while the "
		    "thread was late (missed), and the quickest wakeup took %s; try -i %s or longer", iv,
		    (unsigned long long)res->all.missed, (unsigned long long)(res->all.missed + s->count), floor, want);
}

const struct measure_cmd timer_command = {
	.synopsis = "[-a CPUS] [-p PRIO] [--policy fifo|rr|other] [-i INTERVAL] [-d DISTANCE] [-D DURATION | -l LOOPS]\n"
		    "                      [--aligned] [--aligned-offset DUR]\n"
		    "                      [--policy deadline [--runtime DUR] [--deadline DUR] [--period DUR]]\n"
		    "                      [--mode nanosleep|timerfd|posix] [--clock monotonic|realtime|tai|boottime]\n"
		    "                      [--timer-slack DUR] [--threshold DUR] [--window DUR] [--warmup N]\n"
		    "                      [--until EXPR] [--fail-above DUR] [--trigger DUR] [--on-threshold ACTION]... [--on-end ACTION]...\n"
		    "                      [--deepest-idle-state N] [--json FILE] [--label KEY=VALUE]... [-q]",
	.about = "Measure how late a periodic timer wakes a real-time thread on each chosen CPU (by default every\n"
		 "online CPU): the time read on wakeup minus the deadline.  Deadlines passed while late are counted\n"
		 "as missed.  With --policy deadline the threads run under SCHED_DEADLINE and wait with sched_yield:\n"
		 "the latency is the time read when a job runs minus its period's start.",
	.ops = &timer_probe,
	.opts = timer_opts,
	.nopts = ARRAY_SIZE(timer_opts),
	.params_size = sizeof(struct timer_cmd),
	.run_offset = offsetof(struct timer_cmd, run),
	.extras_offset = offsetof(struct timer_cmd, out),
	.probe_offset = offsetof(struct timer_cmd, p),
	.help_offset = offsetof(struct timer_cmd, help),
	.defaults = timer_defaults,
	.validate = timer_validate,
	.describe = timer_describe,
	.notes = timer_notes,
	.after = timer_after,
	.period = timer_period,
};
