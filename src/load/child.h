/* What a process forked from latscope must undo before it does anything else. */
#ifndef LATSCOPE_LOAD_CHILD_H
#define LATSCOPE_LOAD_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* Default dispositions for every signal and an empty mask. */
void child_reset_signals(void);
/* Receive sig when the parent dies; -ESRCH when it is already gone. */
int child_die_with(pid_t parent, int sig);
/* fork() for a child that must not outlive us: in the child, signals are reset
 * and deathsig comes when we die (it exits at once if we already have).
 * Returns 0 in the child, its pid in the parent, or -errno. */
pid_t child_fork(int deathsig);
/* Drop what the measuring thread may hold: an RT policy, memory locks, a 1 ns
 * timer slack, pinning to a measured CPU (widened to the housekeeping CPUs). */
void child_unmeasure(void);
/* Close every descriptor above 2 but those in keep. */
void child_close_fds(const int *keep, size_t n);

#endif
