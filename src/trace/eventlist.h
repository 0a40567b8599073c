/*
 * The kernel trace events latscope records, in one table: which of its event
 * types each becomes when read (trace/ev.h), which group enables it
 * (TRACE_WANT_* below), and its tracefs system and name.  Which groups a run
 * records is its caller's choice: a probe's, in its description (probe/probe.h).
 */
#ifndef LATSCOPE_TRACE_EVENTLIST_H
#define LATSCOPE_TRACE_EVENTLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Event groups, as bits of trace_opts.events (trace/instance.h). */
#define TRACE_WANT_TIMER  0x1u   /* timer:hrtimer_start, hrtimer_expire_entry, hrtimer_expire_exit */
#define TRACE_WANT_SCHED  0x2u   /* sched:sched_waking, sched_switch */
#define TRACE_WANT_IRQ    0x4u   /* irq:irq_handler_entry/exit, softirq_entry/exit */
#define TRACE_WANT_WAKEUP 0x8u   /* sched:sched_wakeup */
/* raw_syscalls:sys_exit of clock_nanosleep only: some kernels (this guest's)
 * do not trace a CPU's switch from idle, so the sleeper's return from the
 * syscall is what shows it running. */
#define TRACE_WANT_SLEEP_EXIT 0x10u
/* The host agent's (src/host/): kvm:kvm_exit, kvm_entry of the vCPU threads.
 * Optional: a kernel without the kvm module has no kvm events, and a session
 * then starts without the group (trace_session_events() says so). */
#define TRACE_WANT_KVM     0x20u
#define TRACE_WANT_MIGRATE 0x40u   /* sched:sched_migrate_task */
/* Groups a session may start without when this kernel lacks their events. */
#define TRACE_WANT_OPTIONAL TRACE_WANT_KVM

struct trace_event_name {
	uint8_t type;                   /* enum trace_ev_type */
	unsigned want;                  /* the TRACE_WANT_* group that enables it */
	const char *sys, *name;
};

extern const struct trace_event_name trace_event_names[];
extern const size_t trace_event_count;
/* The systems whose formats load whole, NULL-terminated: the reader loads
 * the formats of any other system's events one by one. */
extern const char *const trace_event_systems[];

/*
 * Which of the groups in want this kernel has, by exists(sys, name, ctx) of
 * each of their events: a group is had when all its events exist.  An
 * optional group (TRACE_WANT_OPTIONAL) that is not had is left out; for any
 * other, -ENOENT with *ret_missing the first of its events missing.  Else the
 * groups had (0 when only optional ones were asked for and none is had).
 */
typedef bool (*trace_event_exists_fn)(const char *sys, const char *name, void *ctx);
int trace_events_available(unsigned want, trace_event_exists_fn exists, void *ctx, unsigned *ret_had,
			   const struct trace_event_name **ret_missing);

#endif
