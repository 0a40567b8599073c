/*
 * What the attach probe reads: the calls of a function through uprobes
 * (probe/uprobe.h) or the wakes a program reports through loop.h
 * (probe/loopring.h).  Opened before the run: it finds the threads that
 * call it, the period, and the CPU each thread counts under (its home: the
 * one it is pinned to, else where it ran last), one reader per home CPU.
 */
#ifndef LATSCOPE_PROBE_ATTACHSRC_H
#define LATSCOPE_PROBE_ATTACHSRC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cpuset.h"
#include "core/error.h"

struct uprobe;
struct loopring;
struct strlist;

#define ATTACH_THREADS 64u

struct attach_thread {
	pid_t tid;
	unsigned cpu;	 /* its home */
	bool pinned;	 /* allowed on its home CPU alone */
	int prio;	 /* its kernel prio: 99 - rtprio, or 120 + nice */
	unsigned worker; /* its reader: the home's index in cpus */
	size_t slot;	 /* --loop: its slot */
};

struct attach_src {
	bool loop;
	pid_t pid;
	int pidfd; /* readable when the process has ended */
	struct uprobe *up;
	struct loopring *lr;
	size_t n;
	struct attach_thread th[ATTACH_THREADS];
	uint64_t period_ns;
	bool estimated;	     /* period_ns is the median of intervals seen, not given */
	size_t intervals;    /* how many */
	bool from_due;	     /* between the due times of its sleeps (exact), not its calls */
	size_t not_measured; /* threads left out by --tid */
	struct cpuset cpus;  /* the homes */
	_Atomic uint64_t
		ended_ns; /* when a reader saw the process end during the run; 0: it did not */
	char where[320];  /* what is measured, for the notes */
};

/* Open p's source and find its threads and period (waiting up to a few seconds
 * for calls).  0, or -errno with err naming the reason: -ESRCH no such process,
 * -EPERM not permitted, -ENOENT no such function or loop, -ENODATA no call seen. */
/* What to open: a function of a process, or a loop. */
struct attach_want {
	pid_t pid;                      /* with func */
	const char *func;               /* NULL: loop */
	const char *loop;
	uint64_t period_ns;             /* 0: estimate it (func) or take the loop's */
	const struct strlist *tids;     /* the threads to measure; none: every one that calls it */
};

int attachsrc_open(const struct attach_want *p, struct attach_src **ret, struct lat_error *err);
/* Hand the calls to the readers from now on.  0 or -errno with err filled. */
int attachsrc_start(struct attach_src *s, struct lat_error *err);
/* The reader index of CPU cpu; -1 when it has none. */
int attachsrc_worker(const struct attach_src *s, unsigned cpu);
void attachsrc_close(struct attach_src *s);

#endif
