#include "probe/cyclegrid.h"

/* A call within 1/64 of a period (20 us at least, an eighth at most) of a grid point is on it. */
#define TOL_SHIFT  6u
#define TOL_MIN_NS 20000u

void cyclegrid_init(struct cyclegrid *g, uint64_t period_ns)
{
	*g = (struct cyclegrid){ .period = period_ns, .min = UINT64_MAX };
	g->tol = period_ns >> TOL_SHIFT;
	if (g->tol < TOL_MIN_NS)
		g->tol = TOL_MIN_NS < period_ns / 8u ? TOL_MIN_NS : period_ns / 8u;
}

/* The window's smallest lateness moves the grid forward: a grid that was early follows. */
static void close_window(struct cyclegrid *g, uint64_t late)
{
	if (late < g->min)
		g->min = late;
	if (++g->n < CYCLEGRID_WINDOW)
		return;
	g->next += g->min;
	g->n = 0;
	g->min = UINT64_MAX;
}

/* Measured from its due time: the periods skipped between two due times are missed. */
static bool exact(struct cyclegrid *g, uint64_t now, uint64_t due, struct cyclegrid_call *c)
{
	const uint64_t p = g->period;
	uint64_t missed = 0;

	if (g->prev_due && due > g->prev_due + p + g->tol)
		missed = (due - g->prev_due + g->tol) / p - 1u;
	*c = (struct cyclegrid_call){ .late_ns = now - due, .from_ns = due, .missed = missed };
	g->prev_due = due;
	g->started = true;
	g->next = due + p;
	g->prev = now;
	g->prev_late = 0;
	g->exact++;
	return true;
}

bool cyclegrid_call(struct cyclegrid *g, uint64_t now, uint64_t due, struct cyclegrid_call *c)
{
	const uint64_t p = g->period;

	if (due && due <= now)
		return exact(g, now, due, c);
	g->prev_due = 0;
	if (!g->started || now < g->prev) {
		g->started = true;
		g->next = now + p;
		g->prev = now;
		g->prev_late = 0;
		return false;
	}
	/* The loop restarted its grid at the last call, which was late: this one is a period after it. */
	if (g->prev_late > p / 4u && now >= g->next && now - g->prev + g->tol >= p &&
	    now - g->prev <= p + g->tol)
		g->next = g->prev + p;
	if (now < g->next) {
		/* Earlier than the grid: the grid was late by that much. */
		g->next = now;
	}
	const uint64_t late = now - g->next;
	const uint64_t missed = late / p;
	*c = (struct cyclegrid_call){ .late_ns = late, .from_ns = g->next, .missed = missed };
	g->next += (missed + 1u) * p;
	g->prev = now;
	g->prev_late = late;
	close_window(g, late - missed * p);
	g->estimated++;
	return true;
}
