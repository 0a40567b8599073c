/*
 * Where a program's cycles should have started, from when they did: the
 * lateness of each call of a periodic function and the cycles it missed.
 *
 * A loop that sleeps to absolute times (clock_nanosleep with TIMER_ABSTIME,
 * the usual real-time loop) starts cycle k at g + k * period plus a delay
 * that is never negative.  The grid is placed at the first call and moved
 * back to any call earlier than it (the smallest delay is the best estimate
 * of where the grid is); every CYCLEGRID_WINDOW calls it moves forward by
 * the smallest delay of the window, so a grid that drifts (a period a little
 * longer than the one given, a loop on CLOCK_REALTIME) is followed.
 *
 * When the call's due time is known (the end of the sleep the thread asked
 * for before it, which the kernel sees), lateness is measured from it, and
 * the periods between two due times past the first are missed; the grid is
 * kept in step for calls without one.
 *
 * A call a period or more late counts the whole periods it passed as missed
 * and keeps its lateness (as the timer probe does).  A loop that restarts
 * its grid at a cycle more than a quarter period late (next = now + period)
 * shows as that call followed by one a period later, within the tolerance:
 * the grid follows it from the late call on.  (Two calls late by the same
 * smaller amount are more often one disturbance than a restart.)
 */
#ifndef LATSCOPE_PROBE_CYCLEGRID_H
#define LATSCOPE_PROBE_CYCLEGRID_H

#include <stdbool.h>
#include <stdint.h>

#define CYCLEGRID_WINDOW 64u

struct cyclegrid {
	uint64_t period;
	uint64_t tol;  /* a call this near a grid point is on it */
	uint64_t next; /* the grid point the next call belongs to */
	bool started;
	uint64_t prev;		   /* the last call */
	uint64_t prev_late;	   /* its lateness */
	unsigned n;		   /* calls in the window */
	uint64_t min;		   /* their smallest lateness */
	uint64_t prev_due;	   /* the last call's due time; 0: none */
	uint64_t exact, estimated; /* calls measured from their due time, and from the grid */
};

struct cyclegrid_call {
	uint64_t late_ns; /* after its grid point */
	uint64_t from_ns; /* the grid point */
	uint64_t missed;  /* whole periods passed before it without a call */
};

void cyclegrid_init(struct cyclegrid *g, uint64_t period_ns);
/* A call at now, due at due (0: unknown): false for the first call without a
 * due time (its lateness cannot be known), else true with c filled.  Calls
 * come in time order. */
bool cyclegrid_call(struct cyclegrid *g, uint64_t now, uint64_t due, struct cyclegrid_call *c);

#endif
