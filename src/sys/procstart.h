/*
 * When a process started (field 22 of /proc/PID/stat, clock ticks since
 * boot): with its pid it names one process for good, where a pid alone may
 * since have gone to another.  What latscope leaves for a later run to judge
 * (idle-state files) records it.
 */
#ifndef LATSCOPE_SYS_PROCSTART_H
#define LATSCOPE_SYS_PROCSTART_H

/* 0 with *ret, -ENOENT when there is no such process, -EINVAL when its stat
 * cannot be read as the kernel writes it, other -errno from /proc. */
int proc_start_time(long pid, unsigned long long *ret);

#endif
