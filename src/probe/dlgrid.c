/*
 * The grid of period starts, from the jobs' readings (sched(7) and the
 * kernel's kernel/sched/deadline.c as of Linux 6.1):
 * - Period 0 starts when the thread wakes from a sleep past its deadline
 *   (update_dl_entity), the timer's delay after the sleep's end and a
 *   context switch before the job reads the clock: period 0's latency is
 *   from the sleep's end (a wakeup latency like the timer probe's), and the
 *   grid goes on from that reading, a little late, which the window
 *   estimate below mends.
 * - A job that yields gives up its runtime; the replenishment
 *   (replenish_dl_entity) pushes its deadline one period on and starts the
 *   next job at the next period's start, or at once when that start has
 *   passed.  Only when the pushed deadline has passed too (the job ran a
 *   period plus the deadline late) does the kernel restart its grid at the
 *   replenishment, that is at the yield, just after the reading.
 * - The kernel counts its periods in the scheduler's clock, which drifts from
 *   CLOCK_MONOTONIC.  A job runs at its period's start plus a delay that is
 *   never negative, so the smallest offset from the grid over a window is the
 *   best estimate of where the grid is: each window moves the grid by the
 *   smallest offset of its second half and corrects the rate by how far that
 *   moved from its first half's.
 */
#include "probe/dlgrid.h"

#define Q16 65536

/* The kernel's periods are at most this much (1/1024) longer or shorter than ours. */
#define RATE_MAX_SHIFT 10u

static void window_reset(struct dlgrid *g, unsigned len)
{
	g->min[0] = g->min[1] = INT64_MAX;
	g->n = 0;
	g->len = len;
}

uint64_t dlgrid_init(struct dlgrid *g, uint64_t origin, uint64_t earliest, uint64_t period, uint64_t deadline,
		     uint64_t end)
{
	*g = (struct dlgrid){ .period = period, .deadline = deadline, .end = end };
	/* Period 0 on the origin's grid, so every period of the run is a sample or missed. */
	if (earliest > origin)
		g->lead = (earliest - origin + period - 1u) / period;
	g->next = origin + g->lead * period;
	window_reset(g, DLGRID_FIRST_WINDOW);
	return g->next;
}

/* The grid a period on, with the estimated rate. */
static void advance(struct dlgrid *g)
{
	g->frac_q16 += g->rate_q16;
	const int64_t whole = g->frac_q16 / Q16;
	g->frac_q16 -= whole * Q16;
	g->next += g->period + (uint64_t)whole;
}

/* Counts a job's offset (before the grid moved on) and closes a full window. */
static void estimate(struct dlgrid *g, int64_t off)
{
	const unsigned half = g->n++ < g->len / 2u ? 0 : 1;
	if (off < g->min[half])
		g->min[half] = off;
	if (g->n < g->len)
		return;
	/* The grid is min[1] behind (or ahead, when negative) the kernel's. */
	g->next += (uint64_t)g->min[1];
	/* Half the rate error seen across the window: noise in the minima halves too. */
	if (g->len == DLGRID_WINDOW) {
		const int64_t lim = (int64_t)(g->period * Q16 >> RATE_MAX_SHIFT);
		g->rate_q16 += (g->min[1] - g->min[0]) * Q16 / (int64_t)(g->len / 2u) / 2;
		if (g->rate_q16 > lim)
			g->rate_q16 = lim;
		if (g->rate_q16 < -lim)
			g->rate_q16 = -lim;
	}
	window_reset(g, DLGRID_WINDOW);
}

bool dlgrid_job(struct dlgrid *g, uint64_t now, struct dlgrid_job *j)
{
	const uint64_t period = g->period;
	int64_t off = (int64_t)(now - g->next);
	uint64_t missed = g->lead;

	g->lead = 0;
	/*
	 * After a job late by a period or more the kernel runs the next at once.
	 * When it did not, the late one had been pushed a period (a runtime
	 * overrun): this job is that many periods on and they were missed.
	 */
	if (g->at_once && now - g->prev_now >= period / 2u && off >= (int64_t)period) {
		const uint64_t skip = (uint64_t)off / period;
		missed += skip;
		off -= (int64_t)(skip * period);
		g->next += skip * period;
	}
	if (g->next >= g->end)
		return false;
	g->prev_now = now;
	*j = (struct dlgrid_job){ .lat_ns = off > 0 ? (uint64_t)off : 0, .from_ns = g->next };
	if (off >= (int64_t)(period + g->deadline)) {
		/* The kernel restarts at the yield: the periods that passed whole are missed, none past the end. */
		uint64_t skip = (uint64_t)off / period - 1u;
		if (skip && g->end - g->next <= skip * period)
			skip = (g->end - g->next - 1u) / period;
		missed += skip;
		g->next = now;
		g->started = true;
		g->at_once = false;
		window_reset(g, DLGRID_FIRST_WINDOW);
	} else if (!g->started) {
		/* Period 0's latency is its sleep's; the kernel's period 0 began at the wakeup, at most now. */
		g->started = true;
		g->next = now;
		advance(g);
	} else {
		g->at_once = off >= (int64_t)period;
		estimate(g, off);
		advance(g);
	}
	j->missed = missed;
	return true;
}
