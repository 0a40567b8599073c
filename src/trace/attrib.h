/*
 * Where the latency went: pure logic over one CPU's trace events.
 *
 * No tracefs here, so all of it is tested with synthetic event streams.  Every
 * function takes an array in time order (one CPU's, or several CPUs' merged:
 * events of other CPUs are skipped) and reads it without changing it.
 */
#ifndef LATSCOPE_TRACE_ATTRIB_H
#define LATSCOPE_TRACE_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

#include "core/nstime.h"
#include "trace/ev.h"

/*
 * The trace clock ("mono") and the thread's CLOCK_MONOTONIC read share one
 * timekeeper, so a part below zero means the two disagree; a part below
 * -TRACE_SKEW_TOL_NS is flagged.  The parts themselves always add up to
 * W - D exactly: they are differences of consecutive points on one line.
 */
#define TRACE_SKEW_TOL_NS (1 * NS_PER_US)

/*
 * Time in the idle task or in the measured thread itself with no event for
 * longer than this is "no event" time: the CPU did nothing the kernel traced,
 * which on a guest means the vCPU was not running and on bare metal points at
 * firmware or SMIs.  Shorter quiet stretches are interrupt entry and exit,
 * idle exit and the scheduler ("untraced kernel").  20 us sits above the
 * 1-8 us the traced steps of a wakeup take on this 2-vCPU KVM guest; its
 * timer interrupt reaches an idle vCPU 3-30 us late (median 16-20 us), so
 * there the upper half of that delay shows as no-event time, as it should.
 */
#define TRACE_GAP_NS (20 * NS_PER_US)

/* ---- timer decomposition ---------------------------------------------- */

enum trace_part {
	TRACE_PART_IRQ_DELAY,    /* D -> hrtimer_expire_entry.now: interrupt late (hardware, idle exit, irqs off, hypervisor) */
	TRACE_PART_HANDLER,      /* expiry -> sched_waking(T): the timer interrupt up to the wakeup */
	TRACE_PART_WAKEUP,       /* sched_waking(T) -> sched_switch to T: irq exit, softirqs, other tasks, scheduler */
	TRACE_PART_RETURN,       /* switch to T -> W: back to user space and the clock read */
	TRACE_PARTS
};

const char *trace_part_name(enum trace_part p);

/* Why a sample is not (fully) matched; several may be set. */
#define TRACE_F_NO_START  0x01u  /* no hrtimer_start for D: the expiry was found by the wakeup it caused */
#define TRACE_F_NO_EXPIRY 0x02u  /* no hrtimer_expire_entry for T's timer */
#define TRACE_F_NO_WAKING 0x04u  /* no sched_waking of T inside that expiry */
#define TRACE_F_NO_SWITCH 0x08u  /* no sched_switch to T before W */
#define TRACE_F_LOST      0x10u  /* the ring buffer lost events inside the window */
#define TRACE_F_SKEW      0x20u  /* a part is below -TRACE_SKEW_TOL_NS */
/* The switch to T was not traced (some kernels skip a CPU's switch from idle):
 * T's return from clock_nanosleep stands in for it, so the wakeup part also
 * holds the context switch and the syscall return (about 1 us). */
#define TRACE_F_SWITCH_INFERRED 0x40u
#define TRACE_F_UNMATCHED (TRACE_F_NO_EXPIRY | TRACE_F_NO_WAKING | TRACE_F_NO_SWITCH)

struct trace_timer_sample {
	int64_t part[TRACE_PARTS];   /* sum == W - D when matched */
	uint64_t expiry_ts;          /* hrtimer_expire_entry */
	uint64_t waking_ts;
	uint64_t switch_ts;          /* T switched in: the end of a spike's explanation window */
	uint32_t flags;
};

/*
 * Split one timer sample of thread tid on cpu: deadline D (the absolute
 * CLOCK_MONOTONIC expiry it slept until) and wake W (its clock read after
 * waking).  The hrtimer is found through T's hrtimer_start with softexpires
 * (or expires) == D, then its expiry, the sched_waking of T inside it, the
 * sched_switch to T (or, when that is not traced, T's raw_syscalls:sys_exit).
 * Cost: O(log n) plus the events from T's sleep to W.
 * ret is always filled.  Returns 0 when matched (ret->flags may still carry
 * TRACE_F_NO_START, _LOST or _SKEW), -ENOENT when not (flags say which step
 * failed), -EINVAL when W < D.
 */
int trace_decompose_timer(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t tid,
			  uint64_t deadline, uint64_t wake, struct trace_timer_sample *ret);

/*
 * A sample's parts from its points: the deadline, the expiry's own "now" (a
 * value more than TRACE_SKEW_TOL_NS after the handler's time, or a
 * millisecond before it, is not believed: the handler's time stands in), the
 * handler, the waking, the switch and the wake; flags are kept and
 * TRACE_F_SKEW added.  Both backends split a sample here (the BPF collector
 * hands over the points).  0, or -EINVAL when wake < deadline.
 */
int trace_timer_parts(uint64_t deadline, uint64_t expiry_now, uint64_t expiry_ts, uint64_t waking_ts,
		      uint64_t switch_ts, uint64_t wake, uint32_t flags, struct trace_timer_sample *ret);

/* ---- occupancy: what held the CPU ------------------------------------- */

enum trace_occ_kind {
	TRACE_OCC_TASK,          /* id = pid, prio, name = comm */
	TRACE_OCC_IRQ,           /* id = irq number, name = handler name */
	TRACE_OCC_SOFTIRQ,       /* id = vector, name = "TIMER", "NET_RX", ... */
	TRACE_OCC_TIMER_CB,      /* hrtimer callbacks (the tick, other sleepers), id -1 */
	TRACE_OCC_UNTRACED,      /* idle or self, quiet for <= TRACE_GAP_NS: entry/exit paths, scheduler */
	TRACE_OCC_NO_EVENT,      /* idle or self, quiet for > TRACE_GAP_NS: hypervisor, firmware, SMI */
	TRACE_OCC_KINDS
};

const char *trace_occ_kind_name(enum trace_occ_kind k);

#define TRACE_TOP_N 8

struct trace_contrib {
	uint64_t ns;
	uint32_t count;          /* separate stretches (an irq firing 3 times counts 3) */
	int32_t id;
	int32_t prio;            /* tasks only (kernel prio); -1 otherwise */
	uint8_t kind;            /* enum trace_occ_kind */
	char name[TRACE_COMM_LEN];
};

struct trace_occupancy {
	uint64_t start, end;
	struct trace_contrib top[TRACE_TOP_N];   /* largest first */
	unsigned ntop;
	uint64_t other_ns;                       /* everything ranked below top[] */
	uint64_t kind_ns[TRACE_OCC_KINDS];       /* sums to end - start */
	uint32_t flags;                          /* TRACE_F_LOST */
};

/*
 * Rank what occupied cpu during [start, end): tasks, hard irqs, softirqs,
 * timer callbacks, untraced kernel and no-event time.  self is the measured
 * thread (its own quiet time counts as untraced or no-event; -1 for none).
 * Every ns of the window is attributed to exactly one contributor.  A switch
 * from idle the kernel did not trace is inferred: a task woken on the idle CPU
 * whose switch-out comes next runs from the end of the interrupt that woke it
 * (or from its first syscall exit).  The task
 * running at start comes from the last sched_switch before it (or, when there
 * is none, the prev of the next one), so the cost is O(log n) plus the events
 * since that switch.  Returns 0, or -EINVAL when end < start.
 */
int trace_explain(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t self,
		  uint64_t start, uint64_t end, struct trace_occupancy *ret);

/*
 * Of a timer sample's time from D to its expiry (before: trace_explain over
 * it), the part the timer interrupt was not delivered: a task of lower
 * priority than the sleeper (kernel prio above thread_prio) cannot hold back
 * an interrupt, nor can a CPU in user space, so that time and the stretches
 * where nothing was traced are interrupts off, or on a guest the vCPU not
 * running.  At most irq_delay (the sample's TRACE_PART_IRQ_DELAY) when >= 0.
 */
uint64_t trace_undelivered_ns(const struct trace_occupancy *before, int32_t thread_prio, int64_t irq_delay);

/* "HI", "TIMER", ... for a softirq vector; "?" outside the known range. */
const char *trace_softirq_name(unsigned vec);

#endif
