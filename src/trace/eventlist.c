#include <errno.h>

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
	{ TRACE_EV_KVM_EXIT,      TRACE_WANT_KVM,        "kvm",   "kvm_exit" },
	{ TRACE_EV_KVM_ENTRY,     TRACE_WANT_KVM,        "kvm",   "kvm_entry" },
	{ TRACE_EV_SCHED_MIGRATE, TRACE_WANT_MIGRATE,    "sched", "sched_migrate_task" },
};

const size_t trace_event_count = ARRAY_SIZE(trace_event_names);

/* Not "kvm": its system holds a hundred formats, and libtraceevent 1.7
 * leaks parsing one of them; its two events load one by one. */
const char *const trace_event_systems[] = { "sched", "irq", "timer", "raw_syscalls", NULL };

int trace_events_available(unsigned want, trace_event_exists_fn exists, void *ctx, unsigned *ret_had,
			   const struct trace_event_name **ret_missing)
{
	unsigned had = want;

	for (size_t i = 0; i < trace_event_count; i++) {
		const struct trace_event_name *e = &trace_event_names[i];
		if (!(had & e->want) || exists(e->sys, e->name, ctx))
			continue;
		if (!(e->want & TRACE_WANT_OPTIONAL)) {
			*ret_missing = e;
			return -ENOENT;
		}
		had &= ~e->want;
	}
	*ret_had = had;
	return 0;
}
