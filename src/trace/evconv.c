#include "trace/evconv.h"

#include <string.h>

#include "config.h"
#include "trace/eventlist.h"

#if HAVE_TRACEFS

#include <event-parse.h>

/* As enum trace_evconv_field, a line a group. */
/* clang-format off */
static const char *const field_names[TRACE_F_COUNT] = {
	"hrtimer", "expires", "softexpires", "now", "function",
	"pid", "prio", "comm",
	"prev_pid", "prev_prio", "prev_comm", "prev_state",
	"next_pid", "next_prio", "next_comm",
	"irq", "name", "vec", "id",
	"exit_reason", "isa", "orig_cpu", "dest_cpu",
};
/* clang-format on */

void trace_evconv_init(struct trace_evconv *cv, struct tep_handle *tep)
{
	memset(cv, 0, sizeof(*cv));
	cv->tep = tep;
	for (size_t k = 0; k < TRACE_EV_TYPES; k++)
		cv->kinds[k].id = -1;
	for (size_t i = 0; i < trace_event_count; i++) {
		const struct trace_event_name *names = trace_event_names;
		struct tep_event *ev = tep_find_event_by_name(tep, names[i].sys, names[i].name);
		if (!ev)
			continue;
		struct trace_evconv_kind *k = &cv->kinds[names[i].type];
		k->id = ev->id;
		for (int f = 0; f < TRACE_F_COUNT; f++)
			k->f[f] = tep_find_field(ev, field_names[f]);
	}
}

static uint64_t num(const struct trace_evconv_kind *k, enum trace_evconv_field f,
		    const struct tep_record *rec)
{
	unsigned long long v = 0;
	if (k->f[f])
		tep_read_number_field(k->f[f], rec->data, &v);
	return v;
}

/* A fixed char[16] field, or a __data_loc/__rel_loc string (irq names, and
 * sched_migrate_task's comm since Linux 6.10). */
static void str(const struct trace_evconv_kind *k, enum trace_evconv_field f,
		const struct tep_record *rec, char out[TRACE_COMM_LEN])
{
	const struct tep_format_field *fl = k->f[f];
	const char *p = NULL;
	size_t len = 0;

	out[0] = '\0';
	if (!fl)
		return;
	if (fl->flags & TEP_FIELD_IS_DYNAMIC) {
		unsigned long long loc = 0;
		if (tep_read_number_field((struct tep_format_field *)fl, rec->data, &loc) < 0)
			return;
		size_t off = (size_t)(loc & 0xffff);
		len = (size_t)((loc >> 16) & 0xffff);
		if (fl->flags & TEP_FIELD_IS_RELATIVE)
			off += (size_t)fl->offset + (size_t)fl->size;
		if (off + len > (size_t)rec->size)
			return;
		p = (const char *)rec->data + off;
	} else {
		p = (const char *)rec->data + fl->offset;
		len = (size_t)fl->size;
	}
	if (len > TRACE_COMM_LEN - 1)
		len = TRACE_COMM_LEN - 1;
	memcpy(out, p, len);
	out[len] = '\0';
}

/* The tracepoint's prev_state with the KNOWN bit (trace/ev.h): its low byte
 * and its "+" (preempted) bit, whichever that kernel's TASK_REPORT_MAX is. */
static uint64_t switch_state(const struct trace_evconv_kind *k, const struct tep_record *rec)
{
	if (!k->f[TRACE_F_PREV_STATE])
		return 0;
	return TRACE_SWITCH_STATE_KNOWN |
	       (num(k, TRACE_F_PREV_STATE, rec) & ~TRACE_SWITCH_STATE_KNOWN);
}

bool trace_evconv_record(const struct trace_evconv *cv, const struct tep_event *event,
			 const struct tep_record *rec, int cpu, struct trace_ev *ev)
{
	const struct trace_evconv_kind *k = NULL;
	size_t t;
	/* tep_data_pid() takes no const record, though it only reads it. */
	struct tep_record *r = (struct tep_record *)rec;

	for (t = 1; t < TRACE_EV_TYPES; t++) {
		if (cv->kinds[t].id == event->id) {
			k = &cv->kinds[t];
			break;
		}
	}
	if (!k)
		return false;

	memset(ev, 0, sizeof(*ev));
	ev->ts = rec->ts;
	ev->type = (uint8_t)t;
	ev->cpu = (uint8_t)cpu;
	switch ((enum trace_ev_type)t) {
	case TRACE_EV_HRTIMER_START:
		ev->pid = tep_data_pid(cv->tep, r);
		ev->timer = num(k, TRACE_F_TIMER, rec);
		ev->arg = num(k, TRACE_F_SOFTEXPIRES, rec);
		ev->arg2 = num(k, TRACE_F_EXPIRES, rec);
		break;
	case TRACE_EV_HRTIMER_ENTRY:
		ev->pid = tep_data_pid(cv->tep, r);
		ev->timer = num(k, TRACE_F_TIMER, rec);
		ev->arg = num(k, TRACE_F_NOW, rec);
		ev->arg2 = num(k, TRACE_F_FUNCTION, rec);
		break;
	case TRACE_EV_HRTIMER_EXIT:
		ev->pid = tep_data_pid(cv->tep, r);
		ev->timer = num(k, TRACE_F_TIMER, rec);
		break;
	case TRACE_EV_SCHED_WAKING:
	case TRACE_EV_SCHED_WAKEUP:
		ev->pid = (int32_t)num(k, TRACE_F_PID, rec);
		ev->prio = (int32_t)num(k, TRACE_F_PRIO, rec);
		ev->prev_pid = tep_data_pid(cv->tep, r);
		str(k, TRACE_F_COMM, rec, ev->comm);
		break;
	case TRACE_EV_SCHED_SWITCH:
		ev->pid = (int32_t)num(k, TRACE_F_NEXT_PID, rec);
		ev->prio = (int32_t)num(k, TRACE_F_NEXT_PRIO, rec);
		str(k, TRACE_F_NEXT_COMM, rec, ev->comm);
		ev->prev_pid = (int32_t)num(k, TRACE_F_PREV_PID, rec);
		ev->prev_prio = (int32_t)num(k, TRACE_F_PREV_PRIO, rec);
		str(k, TRACE_F_PREV_COMM, rec, ev->prev_comm);
		ev->arg = switch_state(k, rec);
		break;
	case TRACE_EV_IRQ_ENTRY:
		ev->pid = (int32_t)num(k, TRACE_F_IRQ, rec);
		str(k, TRACE_F_NAME, rec, ev->comm);
		break;
	case TRACE_EV_IRQ_EXIT: ev->pid = (int32_t)num(k, TRACE_F_IRQ, rec); break;
	case TRACE_EV_SOFTIRQ_ENTRY:
	case TRACE_EV_SOFTIRQ_EXIT: ev->pid = (int32_t)num(k, TRACE_F_VEC, rec); break;
	case TRACE_EV_SYS_EXIT:
		ev->pid = tep_data_pid(cv->tep, r);
		ev->arg = num(k, TRACE_F_ID, rec);
		break;
	case TRACE_EV_KVM_EXIT:
		ev->pid = tep_data_pid(cv->tep, r);
		ev->arg = num(k, TRACE_F_EXIT_REASON, rec);
		ev->arg2 = num(k, TRACE_F_ISA, rec);
		break;
	case TRACE_EV_KVM_ENTRY: ev->pid = tep_data_pid(cv->tep, r); break;
	case TRACE_EV_SCHED_MIGRATE:
		ev->pid = (int32_t)num(k, TRACE_F_PID, rec);
		ev->prio = (int32_t)num(k, TRACE_F_PRIO, rec);
		str(k, TRACE_F_COMM, rec, ev->comm);
		ev->arg = num(k, TRACE_F_DEST_CPU, rec);
		ev->arg2 = num(k, TRACE_F_ORIG_CPU, rec);
		break;
	case TRACE_EV_NONE:
	case TRACE_EV_LOST:
	case TRACE_EV_TYPES: return false;
	}
	return true;
}

#endif
