/*
 * The grid of period starts, from the jobs' readings (sched(7) and the
 * kernel's kernel/sched/deadline.c, Linux 6.1 to 6.18):
 * - Period 0 starts when the thread wakes from a sleep past its deadline
 *   (update_dl_entity), the timer's delay after the sleep's end and a
 *   context switch before the job reads the clock: period 0's latency is
 *   from the sleep's end (a wakeup latency like the timer probe's), and the
 *   grid goes on from that reading, a little late, which the window
 *   estimate below mends.
 * - A job that yields gives up its runtime; the replenishment
 *   (replenish_dl_entity) pushes its deadline one period on and starts the
 *   next job at the next period's start, or at once when that start has
 *   passed.  Only when the pushed deadline has passed too (the job yielded a
 *   period plus the deadline late) does the kernel restart its grid at the
 *   replenishment, that is at the yield: the clock read just before it
 *   decides, as the recording between may take long.
 * - The kernel also skips whole periods (a runtime overrun pushes the
 *   deadline more than one period; seen too in guests after a job the
 *   hypervisor stalled): the next job then reads on a grid point a period or
 *   more on, within a wakeup's delay.  Such a job was on time for that later
 *   period and the ones between are missed, not one job a period late.
 * - And it may restart its grid where none of the above shows (seen in KVM
 *   guests whose scheduler clock jumped over a stall): a late job followed a
 *   period later by the next, off the old grid by as much.  The late job
 *   keeps its latency (it ran that late after its period's start) and the
 *   grid follows the kernel's from it.
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

/* A reading within 1/64 of a period (20us at least, an eighth at most) of a grid point is on it. */
#define TOL_SHIFT  6u
#define TOL_MIN_NS 20000u

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
	g->tol = period >> TOL_SHIFT;
	if (g->tol < TOL_MIN_NS)
		g->tol = TOL_MIN_NS < period / 8u ? TOL_MIN_NS : period / 8u;
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
	/* Over half a period behind: the kernel's starts are nearer the next period's, and one was missed. */
	if (g->min[1] >= (int64_t)(g->period / 2u))
		g->carry++;
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

/* n periods after the one starting at from, none at or past the end. */
static uint64_t before_end(const struct dlgrid *g, uint64_t from, uint64_t n)
{
	if (n && g->end - from <= n * g->period)
		n = (g->end - from - 1u) / g->period;
	return n;
}

/* Periods the kernel skips when it restarts its grid at time t: those that passed whole. */
static uint64_t restart_skip(const struct dlgrid *g, uint64_t from, uint64_t t)
{
	return before_end(g, from, (t - from) / g->period - 1u);
}

static void restart(struct dlgrid *g, uint64_t at)
{
	g->next = at;
	g->started = true;
	g->at_once = false;
	g->restarted = true;
	g->prev_ordinary = false;
	window_reset(g, DLGRID_FIRST_WINDOW);
}

/* m >= 1 when the reading is within tol of the grid point m periods on (a period the kernel skipped). */
static uint64_t periods_skipped(const struct dlgrid *g, int64_t off)
{
	if (off + (int64_t)g->tol < (int64_t)g->period)
		return 0;
	const uint64_t m = ((uint64_t)off + g->tol) / g->period;
	return (uint64_t)off <= m * g->period + g->tol ? m : 0;
}

bool dlgrid_job(struct dlgrid *g, uint64_t now, struct dlgrid_job *j)
{
	const uint64_t period = g->period;
	int64_t off = (int64_t)(now - g->next);
	uint64_t missed = g->lead + g->carry;
	uint64_t skip = 0;
	bool ordinary = false;

	g->lead = g->carry = 0;
	if (g->at_once) {
		/*
		 * The last job yielded past this one's period start: the kernel
		 * runs it at once.  When it did not, the late one had been pushed
		 * a period (a runtime overrun): this job is that many periods on.
		 */
		if (now - g->yield >= period / 2u && off >= (int64_t)period)
			skip = (uint64_t)off / period;
	} else if (g->started && !g->restarted) {
		skip = periods_skipped(g, off);
		/* The kernel restarted at the last, late job: this one is a period after it. */
		if (!skip && g->prev_ordinary && g->prev_now >= g->prev_from + 2u * g->tol &&
		    now - g->prev_now + g->tol >= period && now - g->prev_now <= period + g->tol) {
			g->next = g->prev_now + period;
			off = (int64_t)(now - g->next);
			window_reset(g, DLGRID_FIRST_WINDOW);
		}
	}
	if (skip && g->next < g->end && g->end - g->next <= skip * period) {
		/* On a grid point past the end: the periods from this one to the end were missed. */
		j->missed = missed + (g->end - g->next + period - 1u) / period;
		g->next = g->end;
		return false;
	}
	if (skip) {
		missed += skip;
		off -= (int64_t)(skip * period);
		g->next += skip * period;
	}
	if (g->next >= g->end) {
		j->missed = missed;
		return false;
	}
	g->prev_now = g->yield = now;
	g->prev_from = g->next;
	g->restarted = false;
	*j = (struct dlgrid_job){ .lat_ns = off > 0 ? (uint64_t)off : 0, .from_ns = g->next };
	if (!g->started) {
		/*
		 * Period 0's latency is its sleep's; the kernel's period 0 began at
		 * the wakeup, at most now: the run's periods that began before
		 * then, other than period 0, had no job.
		 */
		missed += before_end(g, g->next, off > 0 ? (uint64_t)off / period : 0);
		g->started = true;
		g->next = now;
		advance(g);
	} else if (off >= (int64_t)(period + g->deadline)) {
		/* The kernel restarts at the yield: the periods that passed whole are missed. */
		missed += restart_skip(g, g->next, now);
		restart(g, now);
	} else {
		ordinary = !skip;
		g->at_once = off >= (int64_t)period;
		estimate(g, off);
		advance(g);
	}
	g->prev_ordinary = ordinary;
	j->missed = missed;
	return true;
}

void dlgrid_yield(struct dlgrid *g, uint64_t now)
{
	g->yield = now;
	if (g->restarted || !g->started)
		return;
	if (now > g->prev_from && now - g->prev_from >= g->period + g->deadline) {
		/* Recorded before its deadline + a period, yielded after: the kernel restarts here. */
		g->carry += restart_skip(g, g->prev_from, now);
		restart(g, now);
		return;
	}
	g->at_once = now >= g->next;
}
