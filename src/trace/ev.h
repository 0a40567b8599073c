/*
 * One kernel trace event, reduced to what latency attribution needs.
 *
 * Kept free of libtracefs types so attribution can be tested with synthetic
 * streams and built without tracefs.  Times are CLOCK_MONOTONIC ns because the
 * session records with the "mono" trace clock.
 */
#ifndef LATSCOPE_TRACE_EV_H
#define LATSCOPE_TRACE_EV_H

#include <stdint.h>

#define TRACE_COMM_LEN 16

enum trace_ev_type {
	TRACE_EV_NONE = 0,
	TRACE_EV_HRTIMER_START,   /* pid = task that armed it, timer, arg = softexpires, arg2 = expires */
	TRACE_EV_HRTIMER_ENTRY,   /* timer, arg = the expiry clock's now, arg2 = callback address */
	TRACE_EV_HRTIMER_EXIT,    /* timer */
	TRACE_EV_SCHED_WAKING,    /* pid, prio, comm of the woken task */
	TRACE_EV_SCHED_WAKEUP,    /* as waking */
	TRACE_EV_SCHED_SWITCH,    /* pid, prio, comm = next; prev_pid, prev_prio, prev_comm = prev;
				   * arg, arg2: see TRACE_SWITCH_* below (tracefs fills arg; BPF neither) */
	TRACE_EV_IRQ_ENTRY,       /* pid = irq number, comm = handler name (cut to 15 chars) */
	TRACE_EV_IRQ_EXIT,        /* pid = irq number */
	TRACE_EV_SOFTIRQ_ENTRY,   /* pid = vector */
	TRACE_EV_SOFTIRQ_EXIT,    /* pid = vector */
	TRACE_EV_SYS_EXIT,        /* pid = the task returning, arg = syscall number */
	TRACE_EV_LOST,            /* marker: the ring buffer lost arg events before ts (arg 0: unknown) */
	/* The host agent's (src/host/): a vCPU thread's exits to KVM and its moves. */
	TRACE_EV_KVM_EXIT,        /* pid = the vCPU thread, arg = exit_reason, arg2 = isa, both as the
				   * kvm_exit tracepoint has them (isa 1 VMX, 2 SVM) */
	TRACE_EV_KVM_ENTRY,       /* pid = the vCPU thread: back into the guest */
	TRACE_EV_SCHED_MIGRATE,   /* pid, prio, comm of the task; arg = dest cpu, arg2 = orig cpu */
	TRACE_EV_TYPES
};

/*
 * SCHED_SWITCH's arg and arg2 are optional, so that a collector that leaves
 * them 0 (BPF today; tracefs fills arg from the tracepoint) stays right: a
 * reader that needs them checks the KNOWN bit and otherwise infers what it
 * can.
 *
 * arg: TRACE_SWITCH_STATE_KNOWN | the tracepoint's prev_state: 0 (or the
 * TASK_REPORT_MAX "+" bit alone, 0x100 since Linux 4.14) means prev was
 * still runnable (preempted); any of the low byte's bits, sleeping or stopped
 * (1 S, 2 D, 4 T, 8 t, 0x80 I).
 * arg2: TRACE_SWITCH_POLICY_KNOWN | next's scheduling policy (SCHED_OTHER 0,
 * FIFO 1, RR 2, BATCH 3, IDLE 5, DEADLINE 6): the tracepoint has no policy,
 * so only a collector that reads the task (BPF) can fill it.
 */
#define TRACE_SWITCH_STATE_KNOWN  (UINT64_C(1) << 63)
#define TRACE_SWITCH_POLICY_KNOWN (UINT64_C(1) << 63)
#define TRACE_SWITCH_STATE_MASK   UINT64_C(0xff)        /* bits that mean "not runnable" */
#define TRACE_SWITCH_STATE_STOPPED UINT64_C(0x0c)       /* __TASK_STOPPED, __TASK_TRACED */

struct trace_ev {
	uint64_t ts;
	uint64_t arg;
	uint64_t arg2;
	uint64_t timer;           /* struct hrtimer address: the only link from start to expiry */
	int32_t pid;              /* pid, irq number or softirq vector, as the type says */
	int32_t prio;             /* kernel prio: 0-98 real-time (99 - rtprio), 100-139 normal */
	int32_t prev_pid;
	int32_t prev_prio;
	uint8_t type;             /* enum trace_ev_type */
	uint8_t cpu;
	char comm[TRACE_COMM_LEN];
	char prev_comm[TRACE_COMM_LEN];
};

#endif
