/*
 * Where a SCHED_DEADLINE thread's periods start (timer --policy deadline).
 * The kernel does not show its period starts; each job's clock read after
 * sched_yield returns is the start plus the job's delay, and the delay is
 * never negative.  Pure arithmetic over the readings given to it (no clock,
 * no system call), so the measuring loop may call it and a test can inject
 * readings.
 */
#ifndef LATSCOPE_PROBE_DLGRID_H
#define LATSCOPE_PROBE_DLGRID_H

#include <stdbool.h>
#include <stdint.h>

/* Jobs in a window of the offset estimate (the first is shorter: see dlgrid.c). */
#define DLGRID_WINDOW       64u
#define DLGRID_FIRST_WINDOW 8u

struct dlgrid {
	uint64_t period, deadline, end;
	uint64_t next;          /* the estimated start of the next job's period */
	uint64_t lead;          /* periods between the run's origin and period 0, missed by the first job */
	uint64_t tol;           /* how far off a grid point a reading may be and still be on it */
	uint64_t prev_now;      /* the last job's reading */
	uint64_t prev_from;     /* the last job's period start */
	uint64_t yield;         /* the last job's reading before it yielded (its reading when not given) */
	uint64_t carry;         /* periods missed found after the last job was recorded: the next job's */
	bool prev_ordinary;     /* the last job was an ordinary one (not period 0, skipped to or restarting) */
	bool started;           /* period 0's job was seen */
	bool at_once;           /* the last job yielded past this job's period start: this one runs at once */
	bool restarted;         /* the last job restarted the grid */
	int64_t rate_q16;       /* the kernel's period minus ours, in 1/65536 ns */
	int64_t frac_q16;       /* rate_q16's fraction carried from period to period */
	int64_t min[2];         /* the smallest offset in each half of the window */
	unsigned n, len;        /* jobs so far in the window, and its length */
};

/* One job: its latency, its period's start and the periods it skipped. */
struct dlgrid_job {
	uint64_t lat_ns;
	uint64_t from_ns;
	uint64_t missed;
};

/*
 * A grid for the run from origin to end (CLOCK_MONOTONIC) whose period 0
 * starts at the first origin + k * period at or after earliest; returns that
 * start, to which the thread sleeps (woken after its deadline, the kernel
 * starts a new period at the wakeup).
 */
uint64_t dlgrid_init(struct dlgrid *g, uint64_t origin, uint64_t earliest, uint64_t period, uint64_t deadline,
		     uint64_t end);

/*
 * The job read at now (the first right after the sleep, then one after each
 * sched_yield): fills *j and moves the grid on.  False when the job's period
 * starts at or after the end: record no sample, only j->missed, the periods
 * before the end that had none.
 */
bool dlgrid_job(struct dlgrid *g, uint64_t now, struct dlgrid_job *j);

/*
 * The clock read just before the job's sched_yield: the kernel decides the
 * next period at the yield, which the recording may have pushed past the
 * next deadline.  Optional; without it the job's reading stands for it.
 */
void dlgrid_yield(struct dlgrid *g, uint64_t now);

#endif
