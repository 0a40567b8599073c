/*
 * System Management Interrupts counted per CPU.  Firmware stops every CPU for
 * each; the kernel never sees one, so its trace cannot explain the time lost.
 * Two sources, tried in order: the perf `msr` PMU's `smi` event (sysfs
 * describes it; a counting event per CPU, no msr module needed), then
 * MSR_SMI_COUNT (0x34) read through /dev/cpu/N/msr.  Neither: the caller says
 * "not available here", never 0.  Read by the runner beside every window, from
 * its main thread: nothing here runs in a measuring loop.
 */
#ifndef LATSCOPE_SYS_SMI_H
#define LATSCOPE_SYS_SMI_H

#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"

enum smi_source { SMI_SOURCE_NONE, SMI_SOURCE_PMU, SMI_SOURCE_MSR, SMI_SOURCES };

/* "msr_pmu", "msr"; NULL for SMI_SOURCE_NONE (JSON's null) and out of range. */
const char *smi_source_name(int source);
/* The source a name gives; -EINVAL for any other name. */
int smi_source_parse(const char *name, int *ret_source);

/* MSR_SMI_COUNT: SMIs since reset, in its low 32 bits. */
#define SMI_MSR 0x34u

struct smi_env {
	const char *sysroot; /* NULL, "" or "/": this machine; else a copied or fake tree */
	/* perf_event_open(2) of a counting event of type and config on cpu for
	 * every task; an fd or -errno.  NULL: the system call.  A test's fake. */
	int (*perf_open)(uint32_t type, uint64_t config, int cpu);
};

/* Where every command looks the SMI counter up: $LATSCOPE_SYSROOT, a copied or
 * fake tree as `sys --sysroot` reads one (the tests' way to hide or fake the
 * PMU); NULL, this machine, when it is not set. */
const char *smi_sysroot_env(void);

struct smi_counter;

/*
 * A counter on every CPU of cpus, from the first source that opens on all of
 * them.  -ENODEV when none does, err saying why each failed ("msr PMU: no
 * smi event in ...; MSR: cannot open '/dev/cpu/0/msr': No such file or
 * directory"); -ENOMEM.  env may be NULL (this machine).
 */
int smi_open(struct smi_counter **ret, const struct cpuset *cpus, const struct smi_env *env,
	     struct lat_error *err);
int smi_counter_source(const struct smi_counter *c);
/* Each CPU's count since the counter opened, in the set's order, into ret
 * (cpuset_count entries; untouched on failure).  -errno. */
int smi_read(struct smi_counter *c, uint64_t *ret);
/* NULL is fine. */
void smi_close(struct smi_counter *c);

/* MSR_SMI_COUNT of cpu as it stands (SMIs since reset, where the MSR is
 * readable under sysroot's dev/cpu/N/msr).  -errno. */
int smi_msr_since_reset(const char *sysroot, int cpu, uint64_t *ret);

/* The config of a PMU event file's text such as "event=0x04" (sysfs's
 * events/NAME).  -EINVAL for any other form. */
int smi_parse_event(const char *text, uint64_t *ret_config);

#endif
