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
	TRACE_EV_SCHED_SWITCH,    /* pid, prio, comm = next; prev_pid, prev_prio, prev_comm = prev */
	TRACE_EV_IRQ_ENTRY,       /* pid = irq number, comm = handler name (cut to 15 chars) */
	TRACE_EV_IRQ_EXIT,        /* pid = irq number */
	TRACE_EV_SOFTIRQ_ENTRY,   /* pid = vector */
	TRACE_EV_SOFTIRQ_EXIT,    /* pid = vector */
	TRACE_EV_SYS_EXIT,        /* pid = the task returning, arg = syscall number */
	TRACE_EV_LOST,            /* marker: the ring buffer lost arg events before ts (arg 0: unknown) */
	TRACE_EV_TYPES
};

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
