/*
 * --deepest-idle-state: the idle states deeper than N disabled on the measured
 * CPUs (cpuN/cpuidle/stateK/disable) while measuring, each put back after.
 *
 * The states this process disabled are listed in a state file written (whole,
 * atomically) before the first sysfs write and removed after the restore, so
 * that a run killed with SIGKILL leaves them named: the next run restores the
 * states of a state file whose process is gone (as trace/ removes a killed
 * run's tracefs instance).  Only states that were enabled are written, and so
 * only those are put back: one disabled before stays disabled.
 */
#ifndef LATSCOPE_SYS_CPUIDLE_H
#define LATSCOPE_SYS_CPUIDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cpuset.h"
#include "core/error.h"

#define CPUIDLE_STATES_MAX 10u          /* the kernel's CPUIDLE_STATE_MAX: state0..state9 */
#define CPUIDLE_STATE_DIR "/run/latscope" /* latscope's runtime directory */

/* Where the files are: a test's fake tree, or (NULLs) this machine. */
struct cpuidle_where {
	const char *sysroot;            /* NULL: "/" */
	const char *state_dir;          /* NULL: CPUIDLE_STATE_DIR */
};

struct cpuidle_change {
	unsigned cpu, state;
};

struct cpuidle_hold {
	char sysroot[256];              /* without its trailing slash ("" for "/") */
	char file[512];                 /* the state file; "" when none was written */
	size_t n;                       /* states this hold disabled, to enable again */
	struct cpuidle_change *ch;
	bool limited;                   /* some state deeper than N is disabled now */
	char fact[512];                 /* what the limit did: which states on which CPUs, or "nothing to limit: ..." */
};

/* A hold with nothing to restore (for every exit path before cpuidle_limit). */
void cpuidle_hold_init(struct cpuidle_hold *h);

/*
 * Disable every idle state deeper than deepest on cpus.  0 also when there is
 * nothing to limit (h->fact says why).  -EBUSY when a live latscope holds idle
 * states already (its limits and ours would undo each other), -errno of the
 * state file or a sysfs file, with err naming it; on failure what was already
 * changed is restored and no state file is left.
 */
int cpuidle_limit(const struct cpuidle_where *w, const struct cpuset *cpus, unsigned deepest,
		  struct cpuidle_hold *h, struct lat_error *err);

/* Enable again what h disabled, then remove its state file (kept when a write
 * failed, for the next run to retry).  Safe to call more than once. */
int cpuidle_restore(struct cpuidle_hold *h, struct lat_error *err);

struct cpuidle_stale {
	unsigned files;                 /* state files of gone processes restored */
	unsigned states;                /* states enabled again */
	long pid;                       /* the last such process */
};

/*
 * Restore the states of every state file whose process is gone (a live one's,
 * or another pid namespace's, is left alone) and remove the file.  0 when the
 * directory is absent; -errno with err naming the file of the first failure.
 */
int cpuidle_restore_stale(const struct cpuidle_where *w, struct cpuidle_stale *ret, struct lat_error *err);

#endif
