/*
 * One measuring thread, as --trace knows it: what tracerun.c, the splitters
 * and the cross check all read, kept apart so that they need not include
 * one another.
 */
#ifndef LATSCOPE_PROBE_TRACETHREAD_H
#define LATSCOPE_PROBE_TRACETHREAD_H

#include <sys/types.h>

struct lin_hist;
struct rec_log;

struct tracerun_thread {
	unsigned cpu;
	pid_t tid;
	const struct rec_log *log;
	/* The front end's linear histogram (result_keep_lin) the thread holds
	 * while measuring, whose unit and bins the stages are also counted in; NULL: none. */
	const struct lin_hist *lin;
};

#endif
