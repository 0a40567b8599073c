/*
 * What the kernel counts per CPU, read from /proc: interrupts by source,
 * softirqs by vector, steal time, and a thread's context switches.  The runner
 * reads these beside every window, so a noise event or a late wakeup can be
 * set against what else happened on that CPU.
 */
#ifndef LATSCOPE_SYS_PROCSTAT_H
#define LATSCOPE_SYS_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cpuset.h"

#define PROC_NAME_LEN 48

/*
 * Counters of named sources for a fixed list of CPUs: counts[s * ncpus + k] is
 * source s on the k-th CPU of the list.  The source list is whatever the file
 * holds; it only grows: a source keeps its row from one read to the next (so
 * two reads can be subtracted row by row over the older nsrc), a new one is
 * appended, and one that left the file stays with counts 0 (so a delta must
 * not assume that counts only grow).
 */
struct proc_table {
	size_t ncpus;
	int *cpus;                      /* the CPUs of the columns, ascending */
	size_t nsrc;
	char (*names)[PROC_NAME_LEN];   /* "LOC", "TIMER", "24 virtio0-input.0" */
	uint64_t *counts;

	/* Private, kept between reads so that a read which finds no new source
	 * allocates nothing. */
	size_t cap;                     /* rows allocated in names, counts and spare */
	uint64_t *spare;                /* cap + 1 rows: the read in progress, copied on success */
	int *col;                       /* per CPU of the list: its column in the file, or -1 */
	char *buf;                      /* the last file read, whole */
	size_t buf_size;
};

/* A table for these CPUs (the set may be empty), with no sources.  -ENOMEM. */
int proc_table_init(struct proc_table *t, const struct cpuset *cpus);
/* Frees and zeroes t; a zeroed table is fine to free again. */
void proc_table_free(struct proc_table *t);

/*
 * Read /proc/interrupts (or /proc/softirqs) into t: for each source line, its
 * count on each of t's CPUs.  Columns are matched to CPUs by the header
 * ("CPU0 CPU2 CPU5" when CPUs are offline), so a CPU the file has no column
 * for counts 0, and so do the columns missing from a line shorter than the
 * header.  Names:
 *   - named lines ("LOC", "IPI0", "TIMER", "NET_RX"): the name;
 *   - numbered IRQs: the number and the action list after the chip columns,
 *     cut to fit: "24 virtio0-input.0", "16 ehci_hcd:usb1, i801_smbus".  A
 *     line without actions gives its last field ("141 2097153-edge"), one
 *     with no text after the counts the number alone.
 * Lines holding one system-wide count and nothing else (x86 "ERR", "MIS",
 * arm64 "Err") belong to no CPU and are skipped.  Two lines with the same
 * name add up.  path NULL means the usual file.  -errno when the file cannot
 * be read, -EINVAL when it is not of the expected form (no CPU header, a line
 * without "name:", a count that is not a number, text cut short), -ENOMEM.
 * On failure t's sources and counts are as they were.
 */
int proc_read_interrupts(struct proc_table *t, const char *path);
int proc_read_softirqs(struct proc_table *t, const char *path);

/* Sum of all sources for column k (0 when k is out of range). */
uint64_t proc_table_total(const struct proc_table *t, size_t k);
/* The count of source name in column k, 0 when absent. */
uint64_t proc_table_get(const struct proc_table *t, const char *name, size_t k);

/*
 * Steal time of each CPU in t's list, in ns (from /proc/stat's cpuN lines,
 * USER_HZ ticks converted; 0 for a CPU without a line, as offline ones are).
 * ret_ns has t->ncpus entries and is untouched on failure.  t is not const
 * because its read buffer is reused; its sources and counts are left alone.
 * path NULL: /proc/stat.  -errno, -EINVAL (no cpuN line, or one with fewer
 * than 8 values), -ENOMEM.
 */
int proc_read_steal(struct proc_table *t, uint64_t *ret_ns, const char *path);

/*
 * A thread's voluntary and involuntary context switches, from
 * /proc/TID/status: a thread of this process or, for attach, of the program
 * it measures (-ENOENT when there is none).  -EINVAL for tid <= 0 or a file
 * without both counts.
 */
int proc_thread_switches(pid_t tid, uint64_t *ret_voluntary, uint64_t *ret_involuntary);

/* Where a CPU's time went, from /proc/stat, in ns (USER_HZ ticks converted). */
enum cpu_time_kind {
	CPU_USER, CPU_NICE, CPU_SYSTEM, CPU_IDLE, CPU_IOWAIT, CPU_IRQ, CPU_SOFTIRQ, CPU_STEAL, CPU_TIME_KINDS
};

struct cpu_times {
	uint64_t ns[CPU_TIME_KINDS];
};

extern const char *const cpu_time_names[CPU_TIME_KINDS];     /* "user", "nice", ... */

/* The whole machine, from the same file. */
struct proc_stat {
	struct cpu_times cpu;           /* the "cpu" line: every CPU added up */
	uint64_t intr;                  /* interrupts since boot ("intr"'s first number) */
	uint64_t softirq;               /* softirqs since boot */
	uint64_t ctxt;                  /* context switches since boot */
};

/*
 * Each of t's CPUs' times into ret (t->ncpus entries; NULL to skip) and the
 * whole machine's into ret_machine (NULL to skip).  Nothing is written unless
 * the whole file reads well.  path NULL: /proc/stat.
 */
int proc_read_stat(struct proc_table *t, struct cpu_times *ret, struct proc_stat *ret_machine, const char *path);

#endif
