/*
 * A ring of the last seconds of kernel trace events, to explain a spike after
 * the fact: what held the CPU while one sample of the timer probe was late.
 *
 * For runs of hours (latscope monitor --trace-spikes): the kernel's per-CPU
 * buffers record in overwrite mode, so memory stays bounded however long the
 * run; an explanation reads the newest events of one CPU and keeps the last
 * keep_ns of them here, so a later window may still use them.  The pairing
 * and the occupancy come from trace/attrib.h; this file only picks the sample
 * and names its cause.
 */
#ifndef LATSCOPE_TRACE_SPIKERING_H
#define LATSCOPE_TRACE_SPIKERING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "trace/attrib.h"
#include "trace/ev.h"
#include "trace/history.h"   /* spike_history_*: one CPU's held events */

enum spike_kind { SPIKE_IRQ, SPIKE_SOFTIRQ, SPIKE_TASK, SPIKE_NO_EVENT, SPIKE_KINDS };

/* "irq", "softirq", "task", "no_event"; "?" outside the enum. */
const char *spike_kind_name(enum spike_kind k);

#define SPIKE_F_LOST    0x1u   /* the kernel lost events inside the sample: its explanation may be short */
#define SPIKE_F_PARTIAL 0x2u   /* the window's start was no longer held: the largest of the rest was taken */
/* The wake path was not paired (no expiry or waking traced): D to the wake
 * explained as one stretch, without the interrupt-not-delivered rule. */
#define SPIKE_F_UNPAIRED 0x4u

#define SPIKE_NAME_LEN 64

struct spike_cause {
	enum spike_kind kind;
	char name[SPIKE_NAME_LEN];   /* "irq 24 virtio0", "softirq TIMER", "task kworker/1:2 (pid 33)", "no event" */
	uint64_t share_ns;           /* the culprit's time between D and the thread running */
	uint64_t latency_ns;         /* switch to the thread (or its clock_nanosleep return) minus D */
	uint64_t deadline_ns;        /* D, CLOCK_MONOTONIC */
	uint32_t flags;              /* SPIKE_F_* */
};

struct spike_ring;

/* Default reach of a ring for the monitor. */
#define SPIKE_RING_KEEP_DEFAULT_NS (5 * NS_PER_SEC)

/*
 * Start recording what explains a timer wakeup (timer, sched and irq events,
 * the sleeper's syscall exit) on cpus in this process's tracefs instance
 * ("latscope-<pidns>-<pid>", trace/names.h), in overwrite mode, with a guard
 * process that removes it if this process is killed; stale instances of
 * killed runs are removed first.
 * Where tracefs is not mounted it is mounted (spike_ring_mounted() says
 * where) and spike_ring_stop() unmounts it, as for --trace.
 * It forks the guard: call it before the measuring threads start.  Only one
 * instance per process: -EBUSY when this process already has one (--trace).
 * Each recorded CPU's buffer starts at trace_buffer_kb_for(keep_ns, 20000
 * events/s) and grows when a read observes a higher rate (SPIKE_RING_*).
 * keep_ns 0: SPIKE_RING_KEEP_DEFAULT_NS.  Errors as trace_session_start(),
 * which this shares: on failure no mount of latscope's is left, or err also
 * says why it had to stay (trace_session_abandon()).
 */
int spike_ring_start(const struct cpuset *cpus, uint64_t keep_ns, struct spike_ring **ret, struct lat_error *err);

/*
 * Explain the largest wakeup of thread tid on cpu whose deadline D lies in
 * [from_mono_ns, to_mono_ns] and is late by more than min_latency_ns.  Reads
 * (and consumes) the kernel buffer of cpu while it records on, from this
 * thread: the measured CPU is not stopped.  Meant for shortly after the window
 * ended: a window that began more than keep_ns before the call, or before the
 * kernel overwrote it, is not held.  0 with ret filled; -ENOENT with err
 * saying why when the window is not held or holds no such wakeup; -EINVAL
 * for a cpu the ring does not record or to < from; others from reading.
 */
int spike_ring_explain(struct spike_ring *r, unsigned cpu, pid_t tid, uint64_t from_mono_ns, uint64_t to_mono_ns,
		       uint64_t min_latency_ns, struct spike_cause *ret, struct lat_error *err);

/* Where spike_ring_start() mounted tracefs, which was not mounted; else NULL. */
const char *spike_ring_mounted(const struct spike_ring *r);

/* Remove the instance, unmount tracefs when spike_ring_start() mounted it,
 * end the guard, free.  As trace_session_unmounted(): 0 unmounted, -EBUSY
 * (or another -errno) left mounted, note (may be NULL) saying which; 1 when
 * nothing was mounted (note untouched).  NULL is a no-op (1). */
int spike_ring_stop(struct spike_ring *r, struct lat_error *note);

/* ---- the pure part, tested with synthetic events ----------------------- */

/*
 * The sample and its cause, from one CPU's events held from held_from on:
 * among tid's hrtimer_start events on cpu with softexpires D in [from, to]
 * (and not before held_from), the wake (the next switch to tid, else tid's
 * sys_exit) that is latest after D by more than min_latency; then
 * trace_decompose_timer() and trace_explain() before and after the expiry.
 * Before the expiry, untraced time and tasks of lower priority than tid
 * count as the interrupt not delivered (trace_undelivered_ns), i.e. no event.
 * The culprit is the largest of the tasks, irqs, softirqs and timer callbacks
 * and that no-event time.  0, or -ENOENT with why (may be NULL) set.
 */
int spike_pick(const struct trace_ev *ev, size_t n, uint64_t held_from, unsigned cpu, int32_t tid, uint64_t from,
	       uint64_t to, uint64_t min_latency, struct spike_cause *ret, struct lat_error *why);

#endif
