/* The process between latscope and the load: starts it, watches latscope, ends it. */
#ifndef LATSCOPE_LOAD_SUPERVISOR_H
#define LATSCOPE_LOAD_SUPERVISOR_H

#include <stddef.h>
#include <sys/types.h>

#include "load/load.h"

#define SUPERVISOR_READY_MS 5000     /* for every worker to set up */
#define SUPERVISOR_GRACE_MS 300      /* between SIGTERM and SIGKILL */

/*
 * Runs in the forked child.  Reports MSG_READY (or MSG_ERROR) on report_fd,
 * runs until life_fd reaches EOF (latscope closed it or died) or SIGTERM, ends
 * every descendant, reports MSG_OUTCOME and exits.
 */
void supervisor_main(const struct load_spec *specs, size_t n, const char *cmd, int life_fd, int report_fd,
		     pid_t parent) __attribute__((noreturn));

#endif
