/*
 * One thread per CPU reads a clock as fast as it can and records every gap
 * between two reads.  Gaps at the loop's own period are the resolution floor;
 * longer ones are time the CPU was taken away: an interrupt, a softirq,
 * another task, or the hypervisor running something else on the vCPU.
 */
#include "probe/noise.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe/cycles.h"
#include "trace/eventlist.h"

#define CALIBRATE_NS (20u * NS_PER_MS)
#define CHECK_NS     NS_PER_MS      /* how often the loop looks at the clock's ns, the end and the stop flag */

struct noise_state {
	struct cycles_scale scale;
};

static int noise_setup(struct probe_thread *t)
{
	const struct noise_params *np = t->pp;
	struct noise_state *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	t->priv = s;
	rec_set_light(&t->rec, 0);
	if (np->clock == NOISE_MONOTONIC) {
		s->scale.mult = UINT64_C(1) << 32;      /* ns are ns */
		return 0;
	}
	/* On the measuring CPU: a counter that differs between CPUs is calibrated where it is read. */
	if ((r = cycles_calibrate(&s->scale, CALIBRATE_NS)) < 0) {
		snprintf(t->err, sizeof(t->err), "the cycle counter did not advance while calibrating");
		free(s);
		t->priv = NULL;
		return r;
	}
	return 0;
}

static void noise_teardown(struct probe_thread *t)
{
	free(t->priv);
	t->priv = NULL;
}

/* Sleep until ns, or until the runner says stop (its signal interrupts the sleep). */
static void sleep_until(const struct probe_thread *t, uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (atomic_load_explicit(t->stop, memory_order_relaxed))
			return;
}

/* The counter value that reads as ns (both relative to the base pair). */
static uint64_t ns_to_count(const struct cycles_scale *s, uint64_t ns)
{
	return (uint64_t)(((cycles_u128)ns << 32) / s->mult);
}

/*
 * The loop, for one clock.  Each iteration: read, take the gap, count it in
 * the recorder's light batch (and, with lin, in the linear histogram a front
 * end such as oslat keeps); the batch ends at the millisecond check, which
 * also looks at the end and the stop flag.  always_inline: one specialised
 * copy per clock and lin, so that a run without the linear histogram runs
 * the loop it always ran.
 */
static inline __attribute__((always_inline)) void spin(struct probe_thread *t, const struct noise_state *s,
						       bool counter, bool lin, uint64_t until_ns)
{
	struct recorder *rec = &t->rec;
	/* Locals, not loads through pointers the histogram stores might alias. */
	const struct cycles_scale scale = s->scale;
	const uint64_t base_ns = mono_ns(), base_c = counter ? cycles_read() : base_ns;
	const uint64_t check_c = counter ? ns_to_count(&scale, CHECK_NS) : CHECK_NS;
	const uint64_t end_c = base_c + (counter ? ns_to_count(&scale, until_ns - base_ns) : until_ns - base_ns);
	/* Gaps are differences of the time since base, not each converted alone:
	 * rounding each one down lost up to 1 ns a gap, 1.5 % of the run. */
	uint64_t prev_ns = 0, next_check = base_c + check_c;
	struct rec_batch b = rec_batch_begin(rec, base_ns);

	for (;;) {
		uint64_t now = counter ? cycles_read() : mono_ns();
		uint64_t now_rel = counter ? cycles_to_ns(&scale, now - base_c) : now - base_c;
		uint64_t gap = now_rel - prev_ns;
		prev_ns = now_rel;
		if (lin)
			rec_light_lin(rec, &b, gap, now_rel);
		else
			rec_light(rec, &b, gap, now_rel);
		if (__builtin_expect(now < next_check, 1))
			continue;
		rec_batch_end(rec, &b, now_rel);
		if (now >= end_c || atomic_load_explicit(t->stop, memory_order_relaxed))
			return;
		next_check = now + check_c;
	}
}

static void noise_run(struct probe_thread *t)
{
	const struct noise_params *np = t->pp;
	const struct noise_state *s = t->priv;
	const bool counter = np->clock == NOISE_TSC && CYCLES_HAVE_COUNTER;
	const bool lin = (t->rec.keep & REC_KEEP_LIN) != 0;
	uint64_t start = t->origin_ns;

	/* Start together with the other CPUs, at the run's origin. */
	sleep_until(t, start);
	while (start < t->end_ns && !atomic_load_explicit(t->stop, memory_order_relaxed)) {
		uint64_t until = np->burst_ns ? start + np->burst_ns : t->end_ns;
		if (until > t->end_ns)
			until = t->end_ns;
		if (counter && lin)
			spin(t, s, true, true, until);
		else if (counter)
			spin(t, s, true, false, until);
		else if (lin)
			spin(t, s, false, true, until);
		else
			spin(t, s, false, false, until);
		if (!np->burst_ns)
			break;
		/* The rest is not noise: the next burst starts its gaps afresh. */
		start = until + np->rest_ns;
		if (start < t->end_ns)
			sleep_until(t, start);
	}
}

static const char *const noise_metrics[] = { "gap" };

static const struct probe_trace noise_trace = {
	.kind = PROBE_TRACE_GAPS,
	/* whatever took the CPU from the loop: timers, interrupts, and the tasks woken onto it */
	.events = TRACE_WANT_TIMER | TRACE_WANT_SCHED | TRACE_WANT_IRQ | TRACE_WANT_WAKEUP,
	.events_per_sec = 5000,         /* only the CPU's own traffic: ticks, interrupts, other tasks */
};

const struct probe_ops noise_probe = {
	.name = "noise",
	.title = "OS and hypervisor noise",
	.about = "OS and hypervisor noise: the gaps a busy loop sees between two clock reads",
	.nmetrics = 1,
	.metric_names = noise_metrics,
	.unit_ns = 1,
	.values_tile_time = true,
	.trace = &noise_trace,
	.suite_share = 5,
	.setup = noise_setup,
	.run = noise_run,
	.teardown = noise_teardown,
};
