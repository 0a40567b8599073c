/* The attach probe: the cycles of a program that is already running, through uprobes or loop.h. */
#ifndef LATSCOPE_PROBE_ATTACH_H
#define LATSCOPE_PROBE_ATTACH_H

#include <stdint.h>

#include "core/parse.h"
#include "probe/probe.h"

struct attach_src;

struct attach_params {
	uint64_t pid;	    /* --pid; 0 with --loop: the loop's program */
	const char *func;   /* --func SYMBOL; NULL with --loop */
	const char *loop;   /* --loop NAME; NULL with --func */
	uint64_t period_ns; /* --period, or estimated before the run (attachsrc.h) */
	struct strlist
		tids; /* --tid, as given: the threads to measure (default all that call it) */
	struct attach_src *src; /* opened before the run by the command */
};

extern const struct probe_ops attach_probe;

#endif
