/*
 * Single facts about the running system that commands check around a run,
 * so that src/cli never opens /proc or /sys itself.  Files are read under
 * root as fingerprint_collect reads them (NULL, "" or "/": this machine), so a
 * test can point them at a fake tree.  Each returns 0 or -errno, fills its
 * outputs only on success and never prints.
 */
#ifndef LATSCOPE_SYS_SYSFACTS_H
#define LATSCOPE_SYS_SYSFACTS_H

#include <stddef.h>
#include <stdint.h>

/* kernel.sched_rt_runtime_us (-1: real-time tasks are not throttled) and
 * kernel.sched_rt_period_us.  -EINVAL when either is not a number. */
int sys_rt_runtime(const char *root, int64_t *ret_runtime_us, int64_t *ret_period_us);

/* The transparent huge page mode in effect ("always", "madvise", "never"):
 * the bracketed choice of /sys/kernel/mm/transparent_hugepage/enabled.
 * -EINVAL when the file marks none. */
int sys_thp_mode(const char *root, char *buf, size_t size);

/* How many bytes of [addr, addr + len) this process has in transparent huge
 * pages: AnonHugePages of the mappings of /proc/self/smaps that overlap the
 * range, each at most its overlap (a mapping merged with a neighbour counts
 * no more than its share of the range).  -ENOENT when no mapping overlaps it. */
int sys_huge_bytes(const char *root, uintptr_t addr, size_t len, uint64_t *ret_huge);

/* Whether the first CPU's "flags" line of /proc/cpuinfo names flag: 1 or 0.
 * -ENOENT when the file has no such line. */
int sys_cpu_flag(const char *root, const char *flag);

/* Whether the kernel still offers clocksource name: 1 or 0 (it drops the tsc
 * from available_clocksource when it finds it unstable). */
int sys_clocksource_offered(const char *root, const char *name);

/* /proc/loadavg as the kernel writes it: "0.05 0.10 0.08 1/123 4567". */
int sys_loadavg(const char *root, char *buf, size_t size);

/* The NUMA node of cpu: the nodeN link in its sysfs directory.  -ENOENT when
 * it has none (a kernel without NUMA). */
int sys_cpu_node(const char *root, unsigned cpu, unsigned *ret_node);

/* Whether this process may set up an io_uring: 0, or the kernel's refusal
 * (-EPERM for kernel.io_uring_disabled or a seccomp filter, -ENOSYS, ...).
 * Asks the kernel, so it takes no root. */
int sys_io_uring_usable(void);

#endif
