/*
 * The few kernel structures the collector reads, declared by hand: with
 * preserve_access_index libbpf finds each field by name in the running
 * kernel's BTF when it loads the program (CO-RE), so no vmlinux.h of the
 * build machine is needed and one object runs on every kernel with BTF.
 */
#ifndef LATSCOPE_TRACE_BPF_KTYPES_H
#define LATSCOPE_TRACE_BPF_KTYPES_H

#include <linux/bpf.h>
#include <linux/types.h>

#define CORE __attribute__((preserve_access_index))

struct task_struct {
	int pid;
	int prio;
	char comm[16];
} CORE;

struct timerqueue_node {
	__s64 expires;
} CORE;

struct hrtimer {
	struct timerqueue_node node;
	__s64 _softexpires;
	void *function;
} CORE;

/* What clock_nanosleep sleeps on: its timer, and the task it wakes. */
struct hrtimer_sleeper {
	struct hrtimer timer;
	struct task_struct *task;
} CORE;

struct irqaction {
	const char *name;
} CORE;

#undef CORE

#endif
