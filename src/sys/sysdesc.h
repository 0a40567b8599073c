/*
 * A description of the machine a run happened on: what moves latency.
 *
 * This is a view of the fingerprint (fingerprint.h), not a second describer:
 * the fingerprint is the one place that detects the kernel, the preemption
 * model, the hypervisor and the rest, and sysdesc_from_fingerprint() only
 * picks and renames.  The direction keeps the hot path cheap: sysdesc_collect
 * runs before every measurement, so it asks for the fingerprint's identity
 * part alone (fingerprint_opts.identity_only: a dozen small files and CPUID,
 * no per-CPU walk, no /proc/interrupts, no kernel config or gzip child), and
 * the whole fingerprint is read after the run.  The view reads only what the
 * identity part fills the same way the whole one does, so the result's
 * "system" object is always the view of its "fingerprint" object unless the
 * machine itself changed during the run.
 */
#ifndef LATSCOPE_SYS_SYSDESC_H
#define LATSCOPE_SYS_SYSDESC_H

#include <stdbool.h>

struct sysdesc {
	char hostname[256];
	char kernel_release[128];       /* uname -r */
	char kernel_version[256];       /* uname -v */
	char machine[32];               /* uname -m */
	char preempt[32];               /* "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "none", or "unknown" */
	char preempt_mode[32];          /* the active mode when debugfs shows it: "full", "voluntary", "none",
					   "lazy"; "" when unknown */
	char clocksource[64];           /* current clocksource, "" when unknown */
	char clocksources[256];         /* available ones, space separated */
	char cpu_model[128];
	char hypervisor[64];            /* "KVM", "Xen", "Hyper-V", "VMware", ... ; "" on bare metal or unknown */
	char online_cpus[256];          /* a CPU list such as "0-3" */
	unsigned ncpus_online;
};

/*
 * Fill ret from this machine's fingerprint, its identity part only.  Missing
 * sources leave their field empty (or "unknown" for preempt); -ENOMEM is the
 * only error.  Never prints.
 */
int sysdesc_collect(struct sysdesc *ret);

struct fingerprint;

/*
 * ret as a view of fp, whole or identity part alike: the same names; the
 * model in sysdesc's coarser words ("voluntary" and "lazy", which only the
 * kernel config tells apart, are "none" as uname -v says; unknown is
 * "unknown"); the mode only when debugfs showed it, never a guess from the
 * command line or the config.
 */
void sysdesc_from_fingerprint(const struct fingerprint *fp, struct sysdesc *ret);

#endif
