/*
 * A tracefs instance must not outlive its run, even when latscope is killed
 * with SIGKILL: its tracing stays on and its buffers (megabytes per CPU) stay
 * allocated.  The guard is a small process, forked while latscope is still
 * single-threaded, that waits on a pipe: when latscope releases it, it ends;
 * when the pipe closes without that (latscope died), it removes the instance.
 * It runs in a session of its own, so a terminal's or a process group's
 * signals do not take it with latscope.  When latscope mounted tracefs for
 * the run, it says so down the pipe, and the guard unmounts it too (by the
 * rules of trace/mount.h).
 */
#ifndef LATSCOPE_TRACE_GUARD_H
#define LATSCOPE_TRACE_GUARD_H

#include <stdbool.h>
#include <sys/types.h>

struct trace_guard {
	pid_t pid;                      /* 0: none */
	int fd;                         /* the pipe's write end; -1: none */
};

/* Start guarding the instance called name (it need not exist yet).  0 or
 * -errno; without tracefs support -ENOTSUP.  *g is usable either way. */
int trace_guard_start(struct trace_guard *g, const char *name);

/* latscope mounted tracefs at TRACEFS_MOUNT_DIR (mounted), or no longer
 * owns that mount (!mounted): after latscope's death the guard unmounts what
 * it owns.  A no-op on a guard that never started. */
void trace_guard_mounted(struct trace_guard *g, bool mounted);

/* The instance is gone (or never came): end the guard and reap it.  Safe to
 * call on a guard that never started, and more than once. */
void trace_guard_release(struct trace_guard *g);

#endif
