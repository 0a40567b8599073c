/*
 * The latency fixes latscope tune tries (issue 30): each measured off and on,
 * alternating, to judge what it buys.  A fix here only knows whether it
 * applies and what it would write; sys/filehold.h applies and restores the
 * writes, and the runner holds the kinds that are no files.
 */
#ifndef LATSCOPE_SYS_TUNEFIX_H
#define LATSCOPE_SYS_TUNEFIX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "sys/tuneplan.h" /* struct tune_where, tune_write, tune_plan; tune_plan_free */

enum tune_kind {
	TUNE_FILES, /* writes files: plan() gives them, file_hold applies and restores them */
	TUNE_PMQOS, /* PM QoS /dev/cpu_dma_latency 0: the runner holds it (run param), no files */
	TUNE_IDLE, /* deepest idle state 0: the runner's --deepest-idle-state (run param), no files */
	TUNE_BOOT, /* only a reboot can make it: listed with .cmdline, never tried */
};

struct tune_fix {
	const char *name; /* "timer-migration", "irq-affinity", ... (lower case, dashes) */
	const char *
		finding; /* the id of the latscope sys finding it answers (sys/findings.c), or NULL */
	const char *about; /* one line: what it does and why it may help */
	enum tune_kind kind;
	const char *cmdline; /* TUNE_BOOT: the kernel command line it needs, "%s" where the measured
				CPU list goes; else NULL */
	/*
	 * Does it apply here, and what would it write?  measured: the CPUs
	 * measured (fixes that move work off them use it); busy_poll: the probe
	 * spins (noise), the only case sched_rt_runtime_us is tried.  0 with
	 * *ret filled (TUNE_FILES: the writes; other kinds: n = 0 and from/to
	 * set), or a negative errno with why when it does not apply or would
	 * change nothing: -TUNE_NOT_HERE "not here: no cpufreq (no
	 * /sys/devices/system/cpu/cpu0/cpufreq)", -TUNE_ALREADY "already so:
	 * timer_migration is 0", -TUNE_NOT_TRIED "not tried: ...", another
	 * -errno when a file cannot be read.  *ret is untouched on failure.
	 */
	int (*plan)(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
		    struct tune_plan *ret, struct lat_error *why);
};

extern const struct tune_fix tune_fixes[];
extern const size_t tune_nfixes;

/* The fix of that name, or NULL. */
const struct tune_fix *tune_fix_find(const char *name);

#endif
