/*
 * The owner of a state file: what latscope writes before it changes a system
 * setting, so that a run killed with SIGKILL leaves named what it changed and
 * the next run can put it back (sys/cpuidle.h, sys/filehold.h).  The file
 * starts with a header of its kind and process; this decides from it whether
 * that process may still be holding its changes.
 */
#ifndef LATSCOPE_SYS_STATEFILE_H
#define LATSCOPE_SYS_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

struct statefile_owner {
	unsigned long pidns;
	long pid;
	unsigned long long start; /* when it started (sys/procpid.h); 0: a file without it */
};

/* The header naming this process, after the line magic: "MAGIC\npid P\npidns N\nstart S\n". */
int statefile_head(const char *magic, char *buf, size_t size);

/* The header of in; -EINVAL when in is not a state file of that magic. */
int statefile_read_owner(FILE *in, const char *magic, struct statefile_owner *ret);

/* Whether o's process may still hold its changes: true when it cannot be told
 * (another pid namespace's, or /proc cannot say). */
bool statefile_owner_alive(const struct statefile_owner *o, unsigned long self_ns);

/*
 * Each file of dir whose name starts with prefix, opened, to fn; stops at fn's
 * negative return and returns it.  0 when dir is absent.
 */
int statefile_each(const char *dir, const char *prefix,
		   int (*fn)(const char *path, FILE *in, void *data), void *data,
		   struct lat_error *err);

#endif
