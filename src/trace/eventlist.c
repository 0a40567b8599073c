#include "core/array.h"
#include "trace/eventlist.h"

#include "trace/ev.h"

const struct trace_event_name trace_event_names[] = {
	{ TRACE_EV_HRTIMER_START, TRACE_WANT_TIMER,      "timer", "hrtimer_start" },
	{ TRACE_EV_HRTIMER_ENTRY, TRACE_WANT_TIMER,      "timer", "hrtimer_expire_entry" },
	{ TRACE_EV_HRTIMER_EXIT,  TRACE_WANT_TIMER,      "timer", "hrtimer_expire_exit" },
	{ TRACE_EV_SCHED_WAKING,  TRACE_WANT_SCHED,      "sched", "sched_waking" },
	{ TRACE_EV_SCHED_SWITCH,  TRACE_WANT_SCHED,      "sched", "sched_switch" },
	{ TRACE_EV_IRQ_ENTRY,     TRACE_WANT_IRQ,        "irq",   "irq_handler_entry" },
	{ TRACE_EV_IRQ_EXIT,      TRACE_WANT_IRQ,        "irq",   "irq_handler_exit" },
	{ TRACE_EV_SOFTIRQ_ENTRY, TRACE_WANT_IRQ,        "irq",   "softirq_entry" },
	{ TRACE_EV_SOFTIRQ_EXIT,  TRACE_WANT_IRQ,        "irq",   "softirq_exit" },
	{ TRACE_EV_SCHED_WAKEUP,  TRACE_WANT_WAKEUP,     "sched", "sched_wakeup" },
	{ TRACE_EV_SYS_EXIT,      TRACE_WANT_SLEEP_EXIT, "raw_syscalls", "sys_exit" },
};

const size_t trace_event_count = ARRAY_SIZE(trace_event_names);

const char *const trace_event_systems[] = { "sched", "irq", "timer", "raw_syscalls", NULL };
