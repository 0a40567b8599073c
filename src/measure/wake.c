/* latscope wake: what it costs to wake another thread, on one CPU and across CPUs. */
#include "measure/wake.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/parse.h"
#include "core/units.h"
#include "sys/sysfacts.h"

static const char *const via_choices[] = { "futex", "eventfd", "pipe", "cond", NULL };

/* Below this the sleeper may still be on its way back to sleep when the next wakeup comes. */
#define MIN_INTERVAL_NS (10u * NS_PER_US)

/* wake's own rows, by which this file names them; the shared ones follow. */
enum wake_opt {
	WAKE_OPT_CPUS,
	WAKE_OPT_VIA,
	WAKE_OPT_PINGPONG,
	WAKE_OPT_INTERVAL,
	WAKE_OPT_UNTIL,
	WAKE_NOWN
};

static const struct opt wake_opts[] = {
	/* --cpus's place among the shared rows, taken as a pair (not a list: -a of run and tune passes it by) */
	[WAKE_OPT_CPUS] = { "cpus", 'a', OPT_STRING, offsetof(struct wake_cmd, pair),
			    .run_row = RUN_ROW_CPUS, .metavar = "A,B", .values = OPT_VALUES_CPUS,
			    .help = "the waker's CPU, then the sleeper's; the same CPU twice "
				    "measures on one CPU "
				    "(default: the first two usable CPUs, or the only one twice)" },
	[WAKE_OPT_VIA] = { "via", 0, OPT_ENUM, offsetof(struct wake_cmd, p.via),
			   .choices = via_choices,
			   .help = "how to wake: a futex, an eventfd, a pipe, or a mutex and "
				   "condition variable" },
	[WAKE_OPT_PINGPONG] = { "pingpong", 0, OPT_FLAG, offsetof(struct wake_cmd, p.pingpong),
				.help = "the sleeper answers at once through a second channel; "
					"also records the round trip" },
	[WAKE_OPT_INTERVAL] = { "interval", 'i', OPT_DURATION,
				offsetof(struct wake_cmd, p.interval_ns), .min = 0,
				.max = 3600u * NS_PER_SEC, .unit = NS_PER_US,
				.help = "pause between wakeups, at least 10us, or 0 (back to back, "
					"the default) with --pingpong; "
					"a bare number is microseconds" },
	[WAKE_OPT_UNTIL] = UNTIL_OPT(struct wake_cmd),
	RUN_OPTS_BUT_CPUS(struct wake_cmd, policy_choices_no_deadline),
};

#define NOPTS ARRAY_SIZE(wake_opts)
_Static_assert(NOPTS == WAKE_NOWN + RUN_ROW_HELP - RUN_ROW_PRIORITY + 1,
	       "enum wake_opt names every own row");

static void wake_defaults(void *params)
{
	struct wake_cmd *c = params;
	run_params_defaults(&c->run, &c->out);
	c->p.sleeper_cpu = 0;
	c->p.via = WAKE_FUTEX;
	c->p.pingpong = false;
	c->p.interval_ns = NS_PER_MS;
	c->pair = NULL;
	c->pair_text[0] = '\0';
	c->help = false;
}

/* "A,B": two CPU numbers and one comma, nothing else.  -EINVAL or -ERANGE. */
static int parse_pair(const char *text, unsigned *ret_a, unsigned *ret_b)
{
	const char *comma = strchr(text, ',');
	char first[24];
	uint64_t a, b;
	int r;

	if (!comma || (size_t)(comma - text) >= sizeof(first))
		return -EINVAL;
	memcpy(first, text, (size_t)(comma - text));
	first[comma - text] = '\0';
	if ((r = parse_u64(first, &a)) < 0 || (r = parse_u64(comma + 1, &b)) < 0)
		return r;
	if (a >= CPUSET_MAX || b >= CPUSET_MAX)
		return -ERANGE;
	*ret_a = (unsigned)a;
	*ret_b = (unsigned)b;
	return 0;
}

/* The pair the user gave, checked as measure.c checks a CPU list. */
static int check_pair(const char *text, unsigned *ret_a, unsigned *ret_b, struct lat_error *err)
{
	struct cpuset want;
	int r = parse_pair(text, ret_a, ret_b);

	if (r == -ERANGE) {
		return err_set(err, r, "option '--cpus': '%s' names a CPU above %u", text, CPUSET_MAX - 1u);
	}
	if (r < 0) {
		return err_set(err, r, "option '--cpus': '%s' is not a pair of CPUs such as 0,1", text);
	}
	cpuset_clear(&want);
	cpuset_add(&want, *ret_a);
	cpuset_add(&want, *ret_b);
	return measure_check_cpus(&want, true, err);
}

static int wake_validate(void *params, const struct opt_result *given, struct lat_error *err)
{
	struct wake_cmd *c = params;
	unsigned a = 0, b = 0;          /* set by check_pair unless it fails */
	char x[32], y[32];

	if (opt_given_at(NOPTS, given, WAKE_OPT_CPUS)) {
		int r = check_pair(c->pair, &a, &b, err);
		if (r < 0)
			return r;
	} else {
		/* The common checks left every usable online CPU here. */
		int first = cpuset_next(&c->run.cpus, 0);
		if (first < 0) {
			return err_set(err, -EINVAL, "no CPU is usable by this process");
		}
		int second = cpuset_next(&c->run.cpus, (unsigned)first + 1u);
		a = (unsigned)first;
		b = second < 0 ? a : (unsigned)second;
	}
	/* The runner measures on the waker's CPU; the probe places the sleeper. */
	cpuset_clear(&c->run.cpus);
	cpuset_add(&c->run.cpus, a);
	c->p.sleeper_cpu = b;
	snprintf(c->pair_text, sizeof(c->pair_text), "%u,%u", a, b);
	c->pair = c->pair_text;

	if (c->p.pingpong && !opt_given_at(NOPTS, given, WAKE_OPT_INTERVAL))
		c->p.interval_ns = 0;
	if (!c->p.pingpong && c->p.interval_ns < MIN_INTERVAL_NS) {
		fmt_duration(c->p.interval_ns, x, sizeof(x));
		fmt_duration(MIN_INTERVAL_NS, y, sizeof(y));
		return err_set(err, -EINVAL, "option '--interval': %s is below the minimum of %s without "
			 "--pingpong (the sleeper must be asleep when it is woken)", x, y);
	}
	if (c->run.window_ns < c->p.interval_ns) {
		fmt_duration(c->run.window_ns, x, sizeof(x));
		fmt_duration(c->p.interval_ns, y, sizeof(y));
		return err_set(err, -EINVAL, "option '--window': %s is shorter than the interval %s", x, y);
	}
	return 0;
}

/* Whether the kernel throttles real-time tasks (sched_rt_runtime_us is not -1). */
static bool rt_throttled(void)
{
	int64_t runtime, period;
	return sys_rt_runtime(NULL, &runtime, &period) == 0 && runtime >= 0;
}

static void wake_notes(const void *params, struct result *res)
{
	const struct wake_cmd *c = params;

	/* Back to back on one CPU, two real-time threads keep it busy all the time. */
	if (c->p.pingpong && !c->p.interval_ns && c->run.policy != POLICY_OTHER &&
	    cpuset_has(&c->run.cpus, c->p.sleeper_cpu) && rt_throttled())
		result_note(res, "back to back on one CPU, the two real-time threads keep cpu %u busy: RT throttling "
			    "(kernel.sched_rt_runtime_us) will stop them for part of every period, which shows as "
			    "wakeups that late; -i 10us or --policy other avoids it", c->p.sleeper_cpu);
}

static void wake_describe(const void *params, char *buf, size_t size)
{
	const struct wake_cmd *c = params;
	int waker = cpuset_next(&c->run.cpus, 0);
	char pace[48], dur[32];

	if (c->p.interval_ns) {
		char iv[32];
		fmt_duration(c->p.interval_ns, iv, sizeof(iv));
		snprintf(pace, sizeof(pace), "every %s", iv);
	} else {
		snprintf(pace, sizeof(pace), "back to back");
	}
	if (c->run.duration_ns)
		fmt_duration(c->run.duration_ns, dur, sizeof(dur));
	else if (c->run.loops)
		snprintf(dur, sizeof(dur), "%llu wakeups", (unsigned long long)c->run.loops);
	else
		snprintf(dur, sizeof(dur), "until Ctrl-C");
	snprintf(buf, size, "waker on cpu %d, sleeper on cpu %u (%s), via %s%s, %s, %s", waker,
		 c->p.sleeper_cpu, (unsigned)waker == c->p.sleeper_cpu ? "same CPU" : "across CPUs",
		 via_choices[c->p.via], c->p.pingpong ? " ping-pong" : "", pace, dur);
}

const struct measure_cmd wake_command = {
	.synopsis = "[--cpus A,B] [--via futex|eventfd|pipe|cond] [--pingpong] [-i INTERVAL] [-p PRIO]\n"
		    "                     [--policy fifo|rr|other] [-D DURATION | -l LOOPS] [--threshold DUR] [--window DUR]\n"
		    "                     [--warmup N] [--until EXPR] [--fail-above DUR] [--json FILE] [--label KEY=VALUE]... [-q]",
	.about = "Measure what it costs one thread to wake another: the waker on CPU A wakes a sleeper on CPU B\n"
		 "(A and B may be the same) and reads the clock around its wake call; the sleeper reads it as soon\n"
		 "as its wait returns.  latency is that read minus the one before the wake, wake_call the time in\n"
		 "the wake call; with --pingpong the sleeper answers at once and roundtrip is the time until the\n"
		 "answer arrives.",
	.ops = &wake_probe,
	.opts = wake_opts,
	.nopts = NOPTS,
	.params_size = sizeof(struct wake_cmd),
	.run_offset = offsetof(struct wake_cmd, run),
	.extras_offset = offsetof(struct wake_cmd, out),
	.probe_offset = offsetof(struct wake_cmd, p),
	.help_offset = offsetof(struct wake_cmd, help),
	.defaults = wake_defaults,
	.validate = wake_validate,
	.describe = wake_describe,
	.notes = wake_notes,
};
