/* The session's insides, shared by instance.c, events.c and ring.c only. */
#ifndef LATSCOPE_TRACE_SESSION_H
#define LATSCOPE_TRACE_SESSION_H

#include <limits.h>
#include <stdbool.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "trace/mount.h"

struct trace_guard;
struct tracefs_instance;
struct tep_handle;

struct trace_session {
	struct tracefs_instance *inst;
	struct tep_handle *tep;       /* event formats, loaded on first read */
	struct cpuset cpus;
	unsigned events;
	bool stopped;
	bool destroyed;
	struct trace_guard *guard;
	struct tracefs_mount mount;   /* mount.ours: this session mounted tracefs at mount.dir */
	bool mounted;                 /* it did (mount.ours goes false once unmounting was tried) */
	int unmounted;                /* tracefs_unmount()'s outcome; 1 until then */
	struct lat_error unmount_note;
	char name[48];
	char dir[PATH_MAX];
};

#endif
