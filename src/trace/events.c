#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/error.h"
#include "trace/events.h"
#include "trace/eventlist.h"
#include "trace/session.h"

#if !HAVE_TRACEFS

int trace_session_read(struct trace_session *s, struct trace_events *e, struct lat_error *err)
{
	(void)s;
	(void)e;
	return err_set(err, -ENOTSUP, "built without tracefs support");
}

#else

#include <sched.h>
#include <tracefs.h>

/* Fields looked up once per read: by name per event would dominate the cost. */
enum field {
	F_TIMER, F_EXPIRES, F_SOFTEXPIRES, F_NOW, F_FUNCTION,
	F_PID, F_PRIO, F_COMM,
	F_PREV_PID, F_PREV_PRIO, F_PREV_COMM, F_NEXT_PID, F_NEXT_PRIO, F_NEXT_COMM,
	F_IRQ, F_NAME, F_VEC, F_ID,
	F_COUNT
};

struct kind {
	int id;                          /* tep event id, -1 when not loaded */
	uint8_t type;
	struct tep_format_field *f[F_COUNT];
};

struct reader {
	struct trace_events *e;
	struct tep_handle *tep;
	struct kind kinds[TRACE_EV_TYPES];
	int err;
};


static const char *const field_names[F_COUNT] = {
	"hrtimer", "expires", "softexpires", "now", "function",
	"pid", "prio", "comm",
	"prev_pid", "prev_prio", "prev_comm", "next_pid", "next_prio", "next_comm",
	"irq", "name", "vec", "id",
};

static void setup_kinds(struct reader *rd)
{
	for (size_t k = 0; k < TRACE_EV_TYPES; k++)
		rd->kinds[k].id = -1;
	for (size_t i = 0; i < trace_event_count; i++) {
		const struct trace_event_name *names = trace_event_names;
		struct tep_event *ev = tep_find_event_by_name(rd->tep, names[i].sys, names[i].name);
		if (!ev)
			continue;
		struct kind *k = &rd->kinds[names[i].type];
		k->id = ev->id;
		k->type = names[i].type;
		for (int f = 0; f < F_COUNT; f++)
			k->f[f] = tep_find_field(ev, field_names[f]);
	}
}

static uint64_t num(const struct kind *k, enum field f, const struct tep_record *rec)
{
	unsigned long long v = 0;
	if (k->f[f])
		tep_read_number_field(k->f[f], rec->data, &v);
	return v;
}

/* A fixed char[16] field, or a __data_loc/__rel_loc string (irq names). */
static void str(const struct kind *k, enum field f, const struct tep_record *rec, char out[TRACE_COMM_LEN])
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

static int on_event(struct tep_event *event, struct tep_record *rec, int cpu, void *data)
{
	struct reader *rd = data;
	const struct kind *k = NULL;
	struct trace_ev ev;

	if (cpu < 0 || (unsigned)cpu >= rd->e->ncpus)
		return 0;
	if (rec->missed_events) {
		/* Put the loss where it happened, so windows across it are flagged. */
		memset(&ev, 0, sizeof(ev));
		ev.ts = rec->ts;
		ev.type = TRACE_EV_LOST;
		ev.cpu = (uint8_t)cpu;
		ev.arg = rec->missed_events > 0 ? (uint64_t)rec->missed_events : 0;
		if (rec->missed_events < 0)
			rd->e->cpu[cpu].lost_unknown++;
		trace_events_append(rd->e, &ev);
	}
	for (size_t t = 1; t < TRACE_EV_TYPES; t++) {
		if (rd->kinds[t].id == event->id) {
			k = &rd->kinds[t];
			break;
		}
	}
	if (!k)
		return 0;

	memset(&ev, 0, sizeof(ev));
	ev.ts = rec->ts;
	ev.type = k->type;
	ev.cpu = (uint8_t)cpu;
	switch ((enum trace_ev_type)k->type) {
	case TRACE_EV_HRTIMER_START:
		ev.pid = tep_data_pid(rd->tep, rec);
		ev.timer = num(k, F_TIMER, rec);
		ev.arg = num(k, F_SOFTEXPIRES, rec);
		ev.arg2 = num(k, F_EXPIRES, rec);
		break;
	case TRACE_EV_HRTIMER_ENTRY:
		ev.pid = tep_data_pid(rd->tep, rec);
		ev.timer = num(k, F_TIMER, rec);
		ev.arg = num(k, F_NOW, rec);
		ev.arg2 = num(k, F_FUNCTION, rec);
		break;
	case TRACE_EV_HRTIMER_EXIT:
		ev.pid = tep_data_pid(rd->tep, rec);
		ev.timer = num(k, F_TIMER, rec);
		break;
	case TRACE_EV_SCHED_WAKING:
	case TRACE_EV_SCHED_WAKEUP:
		ev.pid = (int32_t)num(k, F_PID, rec);
		ev.prio = (int32_t)num(k, F_PRIO, rec);
		ev.prev_pid = tep_data_pid(rd->tep, rec);
		str(k, F_COMM, rec, ev.comm);
		break;
	case TRACE_EV_SCHED_SWITCH:
		ev.pid = (int32_t)num(k, F_NEXT_PID, rec);
		ev.prio = (int32_t)num(k, F_NEXT_PRIO, rec);
		str(k, F_NEXT_COMM, rec, ev.comm);
		ev.prev_pid = (int32_t)num(k, F_PREV_PID, rec);
		ev.prev_prio = (int32_t)num(k, F_PREV_PRIO, rec);
		str(k, F_PREV_COMM, rec, ev.prev_comm);
		break;
	case TRACE_EV_IRQ_ENTRY:
		ev.pid = (int32_t)num(k, F_IRQ, rec);
		str(k, F_NAME, rec, ev.comm);
		break;
	case TRACE_EV_IRQ_EXIT:
		ev.pid = (int32_t)num(k, F_IRQ, rec);
		break;
	case TRACE_EV_SOFTIRQ_ENTRY:
	case TRACE_EV_SOFTIRQ_EXIT:
		ev.pid = (int32_t)num(k, F_VEC, rec);
		break;
	case TRACE_EV_SYS_EXIT:
		ev.pid = tep_data_pid(rd->tep, rec);
		ev.arg = num(k, F_ID, rec);
		break;
	case TRACE_EV_NONE:
	case TRACE_EV_LOST:
	case TRACE_EV_KVM_EXIT:         /* not collected here (yet): the host agent's */
	case TRACE_EV_KVM_ENTRY:
	case TRACE_EV_SCHED_MIGRATE:
	case TRACE_EV_TYPES:
		return 0;
	}
	int r = trace_events_append(rd->e, &ev);
	if (r == -ENOMEM) {
		rd->err = r;
		return 1;               /* stop iterating */
	}
	return 0;
}

/* "overrun: N" and "dropped events: N" from per_cpu/cpuN/stats. */
static uint64_t kernel_lost(struct tracefs_instance *inst, unsigned cpu)
{
	char file[64];
	uint64_t lost = 0;
	snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpu);
	char *text = tracefs_instance_file_read(inst, file, NULL);
	if (!text)
		return 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		if (sscanf(line, "overrun: %llu", &v) == 1 || sscanf(line, "dropped events: %llu", &v) == 1)
			lost += v;
	}
	free(text);
	return lost;
}

int trace_session_read(struct trace_session *s, struct trace_events *e, struct lat_error *err)
{
	if (!s || s->destroyed) {
		return err_set(err, -EINVAL, "the trace session is gone");
	}
	if (!s->tep) {
		/* Only our systems: parsing every format on the machine takes long. */
		s->tep = tracefs_local_events_system(NULL, trace_event_systems);
		if (!s->tep) {
			return err_set(err, -EIO, "cannot load trace event formats from tracefs");
		}
	}

	struct reader *rd = calloc(1, sizeof(*rd));
	if (!rd) {
		return err_set(err, -ENOMEM, "out of memory");
	}
	rd->e = e;
	rd->tep = s->tep;
	setup_kinds(rd);

	cpu_set_t *set = CPU_ALLOC(e->ncpus);
	size_t setsize = CPU_ALLOC_SIZE(e->ncpus);
	if (!set) {
		free(rd);
		return err_set(err, -ENOMEM, "out of memory");
	}
	CPU_ZERO_S(setsize, set);
	cpuset_foreach(c, &s->cpus)
		if ((unsigned)c < e->ncpus)
			CPU_SET_S((size_t)c, setsize, set);

	errno = 0;
	int r = tracefs_iterate_raw_events(s->tep, s->inst, set, (int)setsize, on_event, rd);
	if (rd->err) {
		r = rd->err;
		err_set(err, 0, "out of memory reading the trace");
	} else if (r < 0) {
		r = errno ? -errno : -EIO;
		err_set(err, 0, "cannot read the trace buffers of '%s': %s", s->dir, strerror(-r));
	}
	cpuset_foreach(c, &s->cpus)
		if ((unsigned)c < e->ncpus)
			e->cpu[c].lost = kernel_lost(s->inst, (unsigned)c);
	CPU_FREE(set);
	free(rd);
	return r < 0 ? r : 0;
}

#endif
