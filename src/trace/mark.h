/*
 * cyclictest's --tracemark: a line in the kernel's own trace (the top
 * instance, which trace-cmd, perf and the user's ftrace set-ups record into)
 * where the break happened, and that trace stopped there so that it still
 * holds what led to it.  Stopping it is the option's purpose: tracing_on stays
 * 0 for the user to read the trace, as cyclictest leaves it.
 */
#ifndef LATSCOPE_TRACE_MARK_H
#define LATSCOPE_TRACE_MARK_H

#include <stdio.h>

#include "core/error.h"

/* Write text to trace_marker and 0 to tracing_on of the tracefs the mount
 * table (mounts, /proc/self/mounts' text) shows.  0; -ENODEV when no tracefs
 * is mounted (nothing is traced then, so nothing to mark); -errno with err. */
int trace_mark_and_stop(FILE *mounts, const char *text, struct lat_error *err);

#endif
