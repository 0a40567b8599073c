/*
 * What /proc/PID/stat says of a process: its state and parent (load's
 * children), and when it started (field 22, clock ticks since boot), which
 * with its pid names one process for good where a pid alone may since have
 * gone to another (the idle-state files a later run judges).
 */
#ifndef LATSCOPE_SYS_PROCPID_H
#define LATSCOPE_SYS_PROCPID_H

struct proc_pid_stat {
	char state;                     /* R, S, D, Z, ... */
	long ppid;
	unsigned long long start;
};

/* 0 with *ret, -ENOENT when there is no such process, -EINVAL when its stat
 * cannot be read as the kernel writes it, other -errno from /proc. */
int proc_pid_stat(long pid, struct proc_pid_stat *ret);

#endif
