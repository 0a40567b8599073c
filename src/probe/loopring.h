/*
 * The wake times a program writes with include/latscope/loop.h, read from
 * outside (`latscope attach --loop NAME`): the loop's shared-memory object
 * mapped read-only, one ring per thread of the program, each with its own
 * reader tail.  The layout is loop.h's, the contract between the two.
 */
#ifndef LATSCOPE_PROBE_LOOPRING_H
#define LATSCOPE_PROBE_LOOPRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

struct loopring;

struct loopring_thread {
	pid_t tid;
	int cpu;	    /* where it ran when it opened; -1 unknown */
	uint64_t period_ns; /* declared; 0 none */
	bool closed;	    /* it called ls_loop_close: what it wrote can still be read */
};

/*
 * Open the loop NAME read-only from outside.  0, or -errno with err naming the loop and the reason:
 *   -EINVAL  bad name
 *   -ENOENT  no such loop ("no loop named NAME: no /dev/shm/latscope-loop.NAME; is the program
 *            running, and did it call ls_loop_open?")
 *   -EACCES/-EPERM  not permitted
 *   -EPROTO  not a latscope loop, or another layout version
 *   -EAGAIN  its program is making it right now: try again
 *   -ENOMEM
 * The loop stays readable after its program ends or removes the name.
 */
int loopring_open(const char *name, struct loopring **ret, struct lat_error *err);
/* The producer process. */
pid_t loopring_pid(const struct loopring *lr);
/* Slots claimed so far (it may grow while running). */
size_t loopring_nthreads(const struct loopring *lr);
/* 0, or -ENOENT: no slot i, or one being claimed right now. */
int loopring_thread(const struct loopring *lr, size_t i, struct loopring_thread *ret);
/* Start reading slot i from now on (skip what was written before): call once per slot before
 * the run. */
void loopring_skip_to_now(struct loopring *lr, size_t i);
/* The wake times written to slot i since the last read, oldest first, up to n into out; *lost
 * (NULL: not counted) grows by those overwritten before they were read.  One reader per slot;
 * no system call, no lock, no allocation.  A slot holds LS_LOOP_RING_SIZE - 1 unread wakes at
 * most: read it at least that often. */
size_t loopring_read(struct loopring *lr, size_t i, uint64_t *out, size_t n, uint64_t *lost);
/* The same, and into due (n of them) when each wake was due (0: the program did not say;
 * ls_loop_wake_due). */
size_t loopring_read_due(struct loopring *lr, size_t i, uint64_t *out, uint64_t *due, size_t n, uint64_t *lost);
void loopring_close(struct loopring *lr); /* NULL: nothing */

#endif
