/*
 * What the host did to one vCPU thread over an interval of host time, from
 * the host's recorded trace events: the answer to a guest's question about a
 * spike.  Pure logic over an array of events in time order (all CPUs
 * merged), so it is tested with synthetic streams.
 *
 * The thread's time is split into states: running in the guest, running in
 * the host (from kvm_exit to kvm_entry, on its CPU), preempted (switched out
 * while runnable, or woken and waiting for a CPU), halted (switched out
 * asleep, or polling in the host after a HLT exit: a vCPU sleeps when its
 * guest halted, so the guest was idle) and
 * stopped (a signal or a debugger).  For preempted time it ranks what ran on
 * the host CPU instead (trace_explain's occupancy of that CPU).
 *
 * sched_switch's prev_state (trace/ev.h, TRACE_SWITCH_STATE_KNOWN) tells
 * preempted from asleep; where a collector leaves it out, a wakeup of the
 * thread before it is switched in again means it slept up to that wakeup
 * (the kernel traces no wakeup of a runnable task), and `inferred` says so.
 */
#ifndef LATSCOPE_HOST_EXPLAIN_H
#define LATSCOPE_HOST_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/ev.h"

enum host_state {
	HOST_ST_UNKNOWN,        /* no event says (the events start later, or the thread had none) */
	HOST_ST_GUEST,          /* on its CPU, in the guest (with no KVM events: on its CPU) */
	HOST_ST_IN_HOST,        /* on its CPU, between kvm_exit and kvm_entry (but a HLT's: halted) */
	HOST_ST_PREEMPTED,      /* runnable, not running */
	HOST_ST_HALTED,         /* asleep or halt-polling: the guest halted */
	HOST_ST_STOPPED,        /* stopped or traced */
	HOST_ST_OFF,            /* switched out, and no event tells why */
	HOST_STATES
};

const char *host_state_name(enum host_state s);    /* "guest", "in_host", ... */

enum host_ran_kind {
	HOST_RAN_TASK,
	HOST_RAN_VCPU,          /* a vCPU thread, of this guest or another ("CPU N/KVM") */
	HOST_RAN_IRQ,           /* id = irq number, comm = handler */
	HOST_RAN_SOFTIRQ,       /* id = vector, comm = "NET_RX", ... */
	HOST_RAN_TIMER,         /* hrtimer callbacks */
	HOST_RAN_IDLE,          /* nothing traced ran: idle, or the kernel between events */
	HOST_RAN_KINDS
};

const char *host_ran_kind_name(enum host_ran_kind k);

#define HOST_TOP        3
#define HOST_REASONS    8
#define HOST_STRETCHES  32
#define HOST_MIGRATIONS 8
#define HOST_POLICY_UNKNOWN (-1)

struct host_stretch {
	uint64_t from, to;
	uint8_t state;          /* enum host_state */
	uint8_t cpu;
};

/* What ran on the host CPU while the vCPU was preempted. */
struct host_ran {
	uint64_t ns;
	int32_t id;             /* pid, irq number or softirq vector */
	int32_t prio;           /* kernel prio (0-98 real-time), -1 when not a task */
	int32_t policy;         /* SCHED_*, or HOST_POLICY_UNKNOWN */
	uint8_t kind;           /* enum host_ran_kind */
	uint8_t cpu;
	char comm[TRACE_COMM_LEN];
};

struct host_exit_reason {
	uint64_t ns;            /* on the CPU, in the host, after exits of this reason */
	uint64_t reason;
	uint32_t count;         /* exits inside the interval */
	uint8_t isa;            /* 1 VMX, 2 SVM */
};

struct host_migration {
	uint64_t ts;
	uint16_t from_cpu, to_cpu;
};

struct host_query {
	int32_t tid;            /* the vCPU thread on the host */
	int32_t vcpu;           /* its index in the guest; -1: read it from the thread's name */
	uint64_t from, to;      /* host CLOCK_MONOTONIC */
	uint64_t complete_from; /* the events are complete from here (0: from the first event) */
};

struct host_answer {
	struct host_query q;
	char comm[TRACE_COMM_LEN];           /* the thread's, from its switches ("" unseen) */
	bool covered;                        /* the events cover [from, to] with nothing lost */
	uint64_t covered_from, covered_to;   /* what they do cover */
	uint64_t lost;                       /* events the rings lost inside the interval */
	bool kvm;                            /* kvm_exit/kvm_entry seen for the thread */
	bool inferred;                       /* asleep or preempted told by wakeups, not prev_state */
	uint64_t state_ns[HOST_STATES];      /* sums to to - from */
	uint64_t not_running_ns;             /* preempted + halted + stopped + off */
	uint64_t in_host_ns;
	struct host_stretch stretch[HOST_STRETCHES];
	unsigned nstretches, stretches_more; /* more: those that did not fit */
	struct host_ran ran[HOST_TOP];       /* largest first */
	unsigned nran;
	uint64_t ran_other_ns;
	struct host_exit_reason exits[HOST_REASONS];   /* largest time first */
	unsigned nexits;
	uint32_t exits_total;
	uint64_t exits_other_ns;
	uint32_t migrations;
	struct host_migration migration[HOST_MIGRATIONS];
};

/* The answer for q from ev[0..n) in time order.  0, or -EINVAL when to < from
 * or tid <= 0.  ret is filled on success. */
int host_explain(const struct trace_ev *ev, size_t n, const struct host_query *q, struct host_answer *ret);

/* N of a vCPU thread's name ("CPU N/KVM", "CPU N/TCG", "fc_vcpu N", "vcpuN"), or -1. */
int host_vcpu_of_comm(const char *comm);

/*
 * One line for a spike's explanation, beginning "the host: ":
 *   vCPU 1 (pid 4242, 'CPU 1/KVM') not running for 12.1ms, host CPU 3 ran stress-ng (pid 999, FIFO 50) for 11.9ms
 *   vCPU 1 running but in the host for 2.1ms: 3 exits, EPT_VIOLATION 1.9ms
 *   vCPU 1 halted (the guest was idle)
 * The largest of the host's doing (preempted and stopped), the guest's
 * (halted) and the exits decides which.
 */
void host_answer_line(const struct host_answer *a, char *buf, size_t size);

#endif
