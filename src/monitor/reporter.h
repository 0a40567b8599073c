/*
 * --report: `latscope report --monitor ID` of the periods stored so far, made
 * by a process of its own (reading every period takes seconds: never the
 * engine's loop), on the loop's CPUs, at normal priority.  The file is
 * replaced whole by report; once it is, its text can be served.
 */
#ifndef LATSCOPE_MONITOR_REPORTER_H
#define LATSCOPE_MONITOR_REPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct reporter {
	const char *file;               /* --report FILE */
	pid_t pid;                      /* the `latscope report` making it; 0: none */
};

/* Start one for monitor id on store, unless one runs (the next period makes
 * a newer one): 0, or a positive errno of posix_spawn. */
int reporter_start(struct reporter *rp, const char *id, const char *store);

/*
 * Whether the reporter has ended (wait: wait for it); when it ended well and
 * not waited for, *ret_text is the file it wrote (malloc'ed, *ret_len bytes;
 * NULL when it could not be read whole), else NULL.
 */
bool reporter_collect(struct reporter *rp, bool wait, char **ret_text, size_t *ret_len);

/* End a running one, leaving nothing behind. */
void reporter_stop(struct reporter *rp);

#endif
