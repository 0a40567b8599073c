/*
 * The names of latscope's tracefs instances, and whose they are.  Apart from
 * the session so that the mount, the guard and the removal of stale
 * instances can judge a name without a session.
 *
 * Containers may share the host's tracefs while their pids mean other
 * processes: an instance is named by its owner's pid namespace (the inode of
 * /proc/self/ns/pid) and pid, "latscope-4026531836-1234", and only a process
 * of the same namespace judges whether its owner is gone.  (A boot id would
 * add nothing: instances do not outlive a boot.)
 */
#ifndef LATSCOPE_TRACE_NAMES_H
#define LATSCOPE_TRACE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "sys/pidns.h"

#define TRACE_INSTANCE_PREFIX "latscope-"
/* The pid namespace of the process that owns an instance of the older form
 * "latscope-<pid>": unknown, so only the initial namespace may judge it. */
#define TRACE_PIDNS_UNKNOWN PIDNS_UNKNOWN
/* The inode of the initial pid namespace (the kernel's PROC_PID_INIT_INO). */
#define TRACE_PIDNS_INIT 0xeffffffcul

unsigned long trace_pidns(void);        /* TRACE_PIDNS_UNKNOWN when /proc cannot say */
int trace_instance_name(unsigned long pidns, long pid, char *buf, size_t size);  /* -ENAMETOOLONG */
/* Owner of an instance name, of either form; -EINVAL when it is not latscope's. */
int trace_instance_parse(const char *name, unsigned long *ret_pidns, long *ret_pid);
/* Whether a process in pid namespace self_ns may judge the owner of an instance in owner_ns. */
bool trace_instance_judgeable(unsigned long owner_ns, unsigned long self_ns);

#endif
