/* The direct children of a process, which for a subreaper include the orphans
 * of its descendants. */
#ifndef LATSCOPE_LOAD_CHILDREN_H
#define LATSCOPE_LOAD_CHILDREN_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Call fn for each child of parent (0: the caller, which must be single-threaded),
 * with whether it is a zombie; a negative return from fn stops the walk and is
 * returned.  Otherwise returns how many there were, or -errno.  A pid given to
 * fn stays that child's until its parent reaps it: the caller that reaps nothing
 * meanwhile (or a parent that is stopped) can signal it safely.
 */
int children_each(pid_t parent, int (*fn)(pid_t pid, bool zombie, void *ctx), void *ctx);

/* Send sig to each child of the caller; returns how many there were, or -errno. */
int children_signal(int sig);

#endif
