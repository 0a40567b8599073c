/*
 * A fingerprint of what moves latency on a machine: virtualization, kernel
 * build and parameters, timekeeping, CPUs, idle and frequency, isolation,
 * interrupts, memory, console and scheduling.  Every file is read under a
 * root directory, so a copied tree (or a fake one in a test) reads like the
 * live system.  What cannot be read is unknown, never an error.
 */
#ifndef LATSCOPE_SYS_FINGERPRINT_H
#define LATSCOPE_SYS_FINGERPRINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpuset.h"

/* A number that could not be read. */
#define FP_UNKNOWN INT64_MIN

enum fp_tri { FP_TRI_UNKNOWN = -1, FP_TRI_NO = 0, FP_TRI_YES = 1 };

#define FP_IDLE_STATES_MAX 16
#define FP_PARAMS_MAX 40
#define FP_SYSCTLS_MAX 32
#define FP_CONSOLES_MAX 8

struct fp_idle_state {
	char name[24];                  /* "POLL", "C1", "C6" */
	int64_t latency_us;             /* exit latency */
	enum fp_tri disabled;
};

struct fp_cpu {
	unsigned cpu;
	char siblings[64];              /* thread_siblings_list: "0,4"; "" unknown */
	char governor[32];              /* "performance", ...; "none" without cpufreq; "" unknown */
	size_t nidle;                   /* 0: no cpuidle states (or unknown) */
	struct fp_idle_state idle[FP_IDLE_STATES_MAX];
};

/* A kernel command-line parameter of interest; a flag ("quiet") has value "". */
struct fp_param {
	char name[32];
	char value[256];                /* repeated ones (console=) joined by a space */
};

/* A sysctl as its text, under its dotted name ("kernel.sched_rt_runtime_us"). */
struct fp_sysctl {
	char name[64];
	char value[64];
};

/* A line of /proc/consoles. */
struct fp_console {
	char name[32];                  /* "ttyS0" */
	char flags[16];                 /* the letters in parentheses: "ECpa" */
	bool enabled;                   /* 'E' */
	bool serial;                    /* a UART or hypervisor console (ttyS, ttyAMA, hvc, ...) */
};

/* A device interrupt (a numbered line of /proc/interrupts). */
struct fp_irq {
	unsigned irq;
	char name[48];                  /* its actions: "ttyS0", "virtio1-req.0" */
	char affinity[64];              /* smp_affinity_list: where it may run; "" unknown */
	char effective[64];             /* effective_affinity_list: where it does; "" unknown */
};

struct fingerprint {
	/* Virtualization */
	char hypervisor[64];            /* "KVM", "Xen", ...; "" none named */
	enum fp_tri guest;
	const char *hypervisor_source;  /* "cpuid", "sysfs", "device tree", "cpuinfo flag", "given"; "" */

	/* Kernel: on this machine from uname(), in another tree from /proc/sys/kernel */
	char hostname[256];             /* not in the JSON: the result's "system" object has it */
	char release[128];              /* uname -r, osrelease */
	char version[256];              /* uname -v, version: "#1 SMP PREEMPT_DYNAMIC ..." */
	char arch[32];                  /* uname -m, arch: "x86_64", "aarch64" */
	char preempt[24];               /* "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "voluntary", "none"; "" */
	char preempt_mode[24];          /* in effect: "none", "voluntary", "full", "lazy",
					   "none or voluntary"; "" unknown */
	const char *preempt_mode_source;/* "debugfs", "cmdline", "config", "model"; "" */
	char config_source[192];        /* the kernel config read: "/boot/config-6.1.0", "/proc/config.gz"; "" */
	int64_t hz;                     /* CONFIG_HZ */
	char nohz[16];                  /* the config's tick: "full", "idle", "periodic"; "" unknown */
	bool cmdline_known;
	size_t nparams;
	struct fp_param params[FP_PARAMS_MAX];
	bool mitigations_known;
	char mitigated[512];            /* vulnerabilities with a mitigation on, ", " separated */

	/* Timekeeping */
	char clocksource[32];           /* "" unknown */
	char clocksources[256];         /* available ones, space separated */
	bool cpu_flags_known;           /* x86: the TSC flags below are known */
	bool constant_tsc, nonstop_tsc, tsc_reliable, tsc_known_freq;
	int64_t timer_slack_ns;         /* of the calling process */
	int64_t timer_slop_ns;          /* the hypervisor's, as the guest sees it (Xen only, sys/timerslop.h) */
	const char *timer_slop_source;  /* "/proc/timer_list", "cmdline"; "" unknown */

	/* CPUs */
	char cpu_model[128];
	bool online_known;
	struct cpuset online;
	char smt_control[24];           /* "on", "off", "forceoff", "notsupported"; "" */
	enum fp_tri smt_active;
	int64_t numa_nodes;
	size_t ncpus;
	struct fp_cpu *cpus;            /* one per online CPU, ascending */

	/* Idle and frequency */
	char cpuidle_driver[32];
	char cpuidle_governor[32];

	/* Isolation: sysfs when it says, else the command line */
	bool isolated_known, nohz_full_known;
	struct cpuset isolated, nohz_full;

	/* Interrupts */
	bool irqs_known;
	size_t nirqs;
	struct fp_irq *irqs;

	/* Memory */
	char thp_enabled[16];           /* the bracketed choice: "always", "madvise", "never" */
	char thp_defrag[24];

	/* Console */
	bool consoles_known;
	size_t nconsoles;
	struct fp_console consoles[FP_CONSOLES_MAX];

	/* Scheduling */
	int64_t steal_ns;               /* all CPUs, since boot */
	int64_t cpu_ns;                 /* all CPU time since boot, steal included */
	const char *smi_source;         /* where SMIs can be counted (sys/smi.h): "msr_pmu", "msr"; "" nowhere */
	int64_t smis;                   /* since reset, MSR_SMI_COUNT of the first online CPU; FP_UNKNOWN
					 * without a readable MSR (the PMU counts only from when it opens) */
	size_t nsysctls;
	struct fp_sysctl sysctls[FP_SYSCTLS_MAX];
};

/* What files cannot tell: a zeroed struct (or NULL) reads everything. */
struct fingerprint_opts {
	const char *sysroot;            /* NULL or "/": this machine */
	/*
	 * NULL: detect (on this machine CPUID, then /sys/hypervisor and the
	 * device tree; in another tree the last two; then cpuinfo's hypervisor
	 * flag).  "": bare metal.  Else the hypervisor's name.
	 */
	const char *hypervisor;
	uint64_t timer_slack_ns;        /* 0: prctl on this machine, proc/self/timerslack_ns in a tree */
	/*
	 * Only the identity that struct sysdesc shows (sysdesc.h): the kernel's
	 * names and preemption model, the hypervisor, the clocksource, the CPU
	 * model and the online CPUs.  A dozen small files and CPUID: no per-CPU
	 * walk, no /proc/interrupts, no kernel config (so no gzip child), no
	 * command line.  Every other field stays unknown.
	 */
	bool identity_only;
};

/*
 * Read the fingerprint under opts->sysroot into a new *ret.  -ENOTDIR or
 * -ENOENT when the sysroot is not a directory, -ENAMETOOLONG, -ENOMEM.
 * Unreadable files leave their fields unknown.  Never prints; may run
 * "gzip -dc" to read /proc/config.gz.
 */
int fingerprint_collect(const struct fingerprint_opts *opts, struct fingerprint **ret);
void fingerprint_free(struct fingerprint *fp);

/* The value of kernel parameter name ("" for a flag), or NULL when absent or
 * the command line is unknown.  '-' and '_' in names are the same, as for the kernel. */
const char *fingerprint_param(const struct fingerprint *fp, const char *name);
/* A sysctl's text, or NULL. */
const char *fingerprint_sysctl(const struct fingerprint *fp, const char *name);
/* A sysctl's first number; -ENOENT absent, -EINVAL not a number. */
int fingerprint_sysctl_i64(const struct fingerprint *fp, const char *name, int64_t *ret);
bool fingerprint_is_x86(const struct fingerprint *fp);

/*
 * The fingerprint as a compact JSON object, grouped like the text output
 * ("virtualization", "kernel", ...); unknown values are null and per-CPU
 * values are grouped by CPU list.  NULL when out of memory.
 */
json_t *fingerprint_to_json(const struct fingerprint *fp);

/* The two CPUs have the same idle states, latencies and switches. */
bool fp_same_idle(const struct fp_cpu *a, const struct fp_cpu *b);

#endif
