/*
 * The kernel trace events latscope records, in one table: which of its event
 * types each becomes when read (trace/ev.h), which group enables it
 * (TRACE_WANT_* below), and its tracefs system and name.  Which groups a run
 * records is its caller's choice: a probe's, in its description (probe/probe.h).
 */
#ifndef LATSCOPE_TRACE_EVENTLIST_H
#define LATSCOPE_TRACE_EVENTLIST_H

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

struct trace_event_name {
	uint8_t type;                   /* enum trace_ev_type */
	unsigned want;                  /* the TRACE_WANT_* group that enables it */
	const char *sys, *name;
};

extern const struct trace_event_name trace_event_names[];
extern const size_t trace_event_count;
/* The systems of those events, NULL-terminated: all whose formats need loading. */
extern const char *const trace_event_systems[];

#endif
