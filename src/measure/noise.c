/* latscope noise: the gaps a busy loop sees, and what else happened beside them. */
#include "measure/noise.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/array.h"
#include "core/units.h"
#include "probe/cycles.h"
#include "probe/tracerun.h"
#include "sys/cpus.h"
#include "sys/sysfacts.h"

static const char *const clock_choices[] = { "tsc", "monotonic", NULL };

static const struct opt noise_opts[] = {
	[NOISE_OPT_CLOCK] = { "clock", 0, OPT_ENUM, offsetof(struct noise_cmd, p.clock), .choices = clock_choices,
	  .help = "what the loop reads: the cycle counter (TSC, or arm64's virtual counter) calibrated to ns, "
		  "or clock_gettime(CLOCK_MONOTONIC)" },
	[NOISE_OPT_BURST] = { "burst", 0, OPT_DURATION, offsetof(struct noise_cmd, p.burst_ns), .min = 10u * NS_PER_MS,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_SEC,
	  .help = "spin in bursts this long, with --rest between them (for real-time priorities under RT "
		  "throttling); a bare number is seconds" },
	[NOISE_OPT_REST] = { "rest", 0, OPT_DURATION, offsetof(struct noise_cmd, p.rest_ns), .min = NS_PER_MS,
	  .max = 3600u * NS_PER_SEC, .unit = NS_PER_SEC, .help = "the pause between bursts; a bare number is seconds" },
	[NOISE_OPT_TRACE] = { "trace", 0, OPT_FLAG, offsetof(struct noise_cmd, run.trace),
	  .help = "explain every gap above the threshold from kernel trace events: interrupt, softirq, task or "
		  "nothing seen (root)" },
	[NOISE_OPT_TRACE_BACKEND] = { "trace-backend", 0, OPT_ENUM, offsetof(struct noise_cmd, run.trace_backend), .choices = trace_backend_choices,
	  .help = "with --trace: where the events are gathered: auto (BPF where the kernel allows, else tracefs), "
		  "bpf (every event of the CPU, handed over in batches) or tracefs (both: timer only)" },
	[NOISE_OPT_HWLAT] = { "hwlat", 0, OPT_FLAG, offsetof(struct noise_cmd, hwlat), .flags = OPT_NOT_PARAM,
	  .help = "run the kernel's hwlat tracer on the measured CPUs for the run and keep its samples (inner/outer "
		  "gaps with interrupts off, NMIs) as the hardware's part (root; where the kernel has the tracer)" },
	[NOISE_OPT_UNTIL] = UNTIL_OPT(struct noise_cmd),
	/* RUN_OPTS fills the rows from NOISE_OPT_CPUS on, in RUN_OPT_ROWS's order */
	[NOISE_OPT_CPUS] = RUN_OPTS(struct noise_cmd, policy_choices_no_deadline),
};
_Static_assert(ARRAY_SIZE(noise_opts) == NOISE_NOPTS, "enum noise_opt names every row of noise_opts");

#define NOPTS ARRAY_SIZE(noise_opts)

static void noise_defaults(void *params)
{
	struct noise_cmd *c = params;
	run_params_defaults(&c->run, &c->out);
	/* Spinning at a real-time priority would starve the rest of the system. */
	c->run.policy = POLICY_OTHER;
	c->run.priority = 0;
	c->run.threshold_ns = NS_PER_US;
	c->p.clock = NOISE_TSC;
	c->p.burst_ns = 0;
	c->p.rest_ns = 100u * NS_PER_MS;
	c->help = false;
}

/* sched_rt_runtime_us, or -1 when throttling is off or unknown. */
static int64_t rt_runtime_us(int64_t *ret_period_us)
{
	int64_t runtime, period;
	if (sys_rt_runtime(NULL, &runtime, &period) < 0) {
		*ret_period_us = 1000000;
		return -1;
	}
	*ret_period_us = period;
	return runtime;
}

static int noise_validate(void *params, const struct opt_result *given, struct lat_error *err)
{
	struct noise_cmd *c = params;
	struct lat_error why;

	if (opt_given_at(NOPTS, given, NOISE_OPT_LOOPS)) {
		return err_set(err, -EINVAL, "option '--loops' is not for noise: a spinning loop is measured "
			 "for a --duration");
	}
	if (opt_given_at(NOPTS, given, NOISE_OPT_TRACE_BACKEND) && !c->run.trace)
		return err_set(err, -EINVAL, "option '--trace-backend' needs '--trace'");
	if (c->run.trace_backend == TRACE_BACKEND_BOTH)
		return err_set(err, -EINVAL, "option '--trace-backend': 'both' compares the split of timer samples; "
			       "noise gaps have none");
	if (opt_given_at(NOPTS, given, NOISE_OPT_REST) && !c->p.burst_ns) {
		return err_set(err, -EINVAL, "option '--rest' needs '--burst'");
	}
	if (c->p.clock == NOISE_TSC && !cycles_reliable(&why)) {
		if (opt_given_at(NOPTS, given, NOISE_OPT_CLOCK)) {
			return err_set(err, -EINVAL, "option '--clock': tsc cannot be trusted here: %s", why.msg);
		}
		c->p.clock = NOISE_MONOTONIC;
		snprintf(c->out.note, sizeof(c->out.note), "reading CLOCK_MONOTONIC instead of the cycle counter: %.180s", why.msg);
	}
	int64_t period, runtime = rt_runtime_us(&period);
	if (c->run.policy != POLICY_OTHER && runtime < 0 && !c->p.burst_ns) {
		struct cpuset online, left;
		if (cpus_online(&online) == 0) {
			cpuset_diff(&left, &online, &c->run.cpus);
			if (cpuset_count(&left) == 0) {
				return err_set(err, -EINVAL, "refusing to spin at a real-time priority on every CPU with RT "
					       "throttling off: nothing else could run; leave a CPU out with -a, or use --burst");
			}
		}
	}
	/* Events, not loop turns: a busy CPU on a guest sees a few thousand a second. */
	if (c->run.trace)
		c->run.trace_log_cap = tracerun_log_cap(&c->run, 20000u);
	return 0;
}

static void noise_notes(const void *params, struct result *res)
{
	const struct noise_cmd *c = params;
	int64_t period, runtime = rt_runtime_us(&period);

	if (c->run.policy != POLICY_OTHER && runtime >= 0 && runtime < period) {
		if (!c->p.burst_ns || c->p.burst_ns > (uint64_t)runtime * NS_PER_US)
			result_note(res, "RT throttling (%lld of every %lld us) will stop the spinning threads for %lld us "
				    "each period: those gaps are the kernel's own; --burst %lldms --rest %lldms avoids them",
				    (long long)runtime, (long long)period, (long long)(period - runtime),
				    (long long)(runtime * 9 / 10 / 1000), (long long)(period / 10 / 1000));
	}
}

/* --hwlat: the tracer started before the threads, or one line saying why not (exit status 1). */
static int noise_open(void *params, struct lat_error *err)
{
	struct noise_cmd *c = params;
	char dir[512];
	int r;

	if (!c->hwlat)
		return 0;
	if ((r = hwlat_tracing_dir(c->run.sysroot, dir, sizeof(dir))) < 0)
		return err_set(err, r == -EINVAL ? -ENODEV : r, "option '--hwlat': no tracefs to run the hwlat tracer in: %s",
			       strerror(-r));
	if ((r = hwlat_available(dir, err)) < 0 || (r = hwlat_start(&c->hw, dir, &c->run.cpus, err)) < 0)
		return err_prefix(err, r == -EINVAL ? -ENODEV : r, "option '--hwlat': ");
	return 0;
}

static void noise_after(const void *params, struct result *res)
{
	const struct noise_cmd *c = params;
	struct lat_error err = { { 0 } };
	json_t *doc;

	if (!c->hw)
		return;
	hwlat_stop(c->hw, &doc, &err);
	if (!doc) {
		result_note(res, "--hwlat: %s", err.msg[0] ? err.msg : "out of memory");
		return;
	}
	json_decref(res->hwlat);
	res->hwlat = doc;
}

static void noise_close(void *params)
{
	struct noise_cmd *c = params;
	hwlat_free(c->hw);
	c->hw = NULL;
}

static void noise_describe(const void *params, char *buf, size_t size)
{
	const struct noise_cmd *c = params;
	char thr[32], dur[32], burst[96] = "";
	fmt_duration(c->run.threshold_ns, thr, sizeof(thr));
	if (c->run.duration_ns)
		fmt_duration(c->run.duration_ns, dur, sizeof(dur));
	else
		snprintf(dur, sizeof(dur), "until Ctrl-C");
	if (c->p.burst_ns) {
		char b[32], r[32];
		fmt_duration(c->p.burst_ns, b, sizeof(b));
		fmt_duration(c->p.rest_ns, r, sizeof(r));
		snprintf(burst, sizeof(burst), ", %s bursts, %s apart", b, r);
	}
	snprintf(buf, size, "gaps above %s are noise, clock %s, %s%s", thr, clock_choices[c->p.clock], dur, burst);
}

const struct measure_cmd noise_command = {
	.synopsis = "[-a CPUS] [-p PRIO] [--policy fifo|rr|other] [-D DURATION] [--threshold DUR]\n"
		    "                      [--clock tsc|monotonic] [--burst DUR [--rest DUR]] [--window DUR] [--until EXPR]\n"
		    "                      [--hwlat]\n"
		    "                      [--json FILE] [--label KEY=VALUE]... [-q]",
	.about = "Measure what the OS and the hypervisor take from a CPU that only wants to run: one thread per\n"
		 "CPU (by default every online CPU) reads a clock in a tight loop and records every gap between two reads.  Gaps above the\n"
		 "threshold are noise; interrupts, softirqs, preemptions and steal time are counted beside them.\n"
		 "SCHED_OTHER by default: a real-time priority (-p) needs care with RT throttling (--burst).",
	.ops = &noise_probe,
	.opts = noise_opts,
	.nopts = NOPTS,
	.params_size = sizeof(struct noise_cmd),
	.run_offset = offsetof(struct noise_cmd, run),
	.extras_offset = offsetof(struct noise_cmd, out),
	.probe_offset = offsetof(struct noise_cmd, p),
	.help_offset = offsetof(struct noise_cmd, help),
	.defaults = noise_defaults,
	.validate = noise_validate,
	.open = noise_open,
	.close = noise_close,
	.describe = noise_describe,
	.notes = noise_notes,
	.after = noise_after,
};
