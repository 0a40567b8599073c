#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/error.h"
#include "trace/events.h"
#include "trace/eventlist.h"
#include "trace/evconv.h"
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

struct reader {
	struct trace_events *e;
	struct trace_evconv cv;
	int err;
};

static int on_event(struct tep_event *event, struct tep_record *rec, int cpu, void *data)
{
	struct reader *rd = data;
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
	if (!trace_evconv_record(&rd->cv, event, rec, cpu, &ev))
		return 0;
	int r = trace_events_append(rd->e, &ev);
	if (r == -ENOMEM) {
		rd->err = r;
		return 1;               /* stop iterating */
	}
	return 0;
}

static bool whole_system(const char *sys)
{
	for (const char *const *w = trace_event_systems; *w; w++)
		if (strcmp(*w, sys) == 0)
			return true;
	return false;
}

static void parse_format(struct tep_handle *tep, const char *sys, const char *name)
{
	int size = 0;
	char *fmt = tracefs_event_file_read(NULL, sys, name, "format", &size);
	if (fmt && size > 0)
		tep_parse_event(tep, fmt, (unsigned long)size, sys);
	free(fmt);
}

/* The ring's page header and the formats of the recorded events: our systems
 * whole, and the events of other systems one by one.  A missing format leaves
 * its event unread, as for a missing system.  Not tracefs_local_events_system():
 * it also loads /proc/kallsyms, saved_cmdlines and printk_formats, which nothing
 * here prints with, and reads kallsyms (megabytes) by growing one buffer with
 * realloc, a copy each time where realloc cannot grow in place (AddressSanitizer's:
 * 14 of a recording host agent's 14.4 s to start). */
static struct tep_handle *load_formats(unsigned events)
{
	struct tep_handle *tep = tep_alloc();
	if (!tep)
		return NULL;
	/* The kernel's ring is in this machine's byte order. */
	enum tep_endian order = tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN;
	tep_set_file_bigendian(tep, order);
	tep_set_local_bigendian(tep, order);
	int size = 0;
	char *header = tracefs_instance_file_read(NULL, "events/header_page", &size);
	int rc = header && size > 0 ? tep_parse_header_page(tep, header, (unsigned long)size, (int)sizeof(long)) : -1;
	free(header);
	if (rc < 0) {
		tep_free(tep);
		return NULL;
	}
	for (const char *const *sys = trace_event_systems; *sys; sys++) {
		char **names = tracefs_system_events(NULL, *sys);
		for (size_t i = 0; names && names[i]; i++)
			parse_format(tep, *sys, names[i]);
		tracefs_list_free(names);
	}
	for (size_t i = 0; i < trace_event_count; i++) {
		const struct trace_event_name *e = &trace_event_names[i];
		if ((events & e->want) && !whole_system(e->sys))
			parse_format(tep, e->sys, e->name);
	}
	return tep;
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
		s->tep = load_formats(s->events);
		if (!s->tep) {
			return err_set(err, -EIO, "cannot load trace event formats from tracefs");
		}
	}

	struct reader *rd = calloc(1, sizeof(*rd));
	if (!rd) {
		return err_set(err, -ENOMEM, "out of memory");
	}
	rd->e = e;
	trace_evconv_init(&rd->cv, s->tep);

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
