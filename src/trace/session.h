/* The session's insides, shared by instance.c, events.c and spikering.c only. */
#ifndef LATSCOPE_TRACE_SESSION_H
#define LATSCOPE_TRACE_SESSION_H

#include <limits.h>
#include <stdbool.h>

#include "core/cpuset.h"
#include "trace/instance.h"

struct tracefs_instance;
struct tep_handle;

struct trace_session {
	struct tracefs_instance *inst;
	struct tep_handle *tep;       /* event formats, loaded on first read */
	struct cpuset cpus;
	unsigned events;
	bool stopped;
	bool destroyed;
	char name[48];
	char dir[PATH_MAX];
};

#endif
