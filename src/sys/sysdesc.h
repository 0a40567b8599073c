/* A description of the machine a run happened on: what moves latency. */
#ifndef LATSCOPE_SYS_SYSDESC_H
#define LATSCOPE_SYS_SYSDESC_H

#include <stdbool.h>

struct sysdesc {
	char hostname[256];
	char kernel_release[128];       /* uname -r */
	char kernel_version[256];       /* uname -v */
	char machine[32];               /* uname -m */
	char preempt[32];               /* "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "none", or "unknown" */
	char preempt_mode[32];          /* for PREEMPT_DYNAMIC: "full", "voluntary", "none", "lazy"; "" when unknown */
	char clocksource[64];           /* current clocksource, "" when unknown */
	char clocksources[256];         /* available ones, space separated */
	char cpu_model[128];
	char hypervisor[64];            /* "KVM", "Xen", "Hyper-V", "VMware", ... ; "" on bare metal or unknown */
	char online_cpus[256];          /* a CPU list such as "0-3" */
	unsigned ncpus_online;
};

/*
 * Fill ret from uname, /proc and /sys.  Missing sources leave their field empty
 * (or "unknown" for preempt); only a failing uname() is an error (-errno).
 * Never prints.
 */
int sysdesc_collect(struct sysdesc *ret);

#endif
