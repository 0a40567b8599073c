#include "trace/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "core/nstime.h"
#include "trace/evbuf.h"
#include "trace/events.h"
#include "trace/guard.h"
#include "trace/instance.h"
#include "trace/names.h"
#include "trace/session.h"

#if HAVE_TRACEFS
#include <tracefs.h>
#endif

/* The starting guess of events a second per CPU: the timer probe's rate
 * (probe/timer.c: ten events a wakeup at 0.5 ms); reads grow it. */
#define TRACE_RING_RATE_START 20000u
/* Grow a CPU's buffer when the rate observed at a read asks for this much more. */
#define TRACE_RING_GROW_NUM 5u
#define TRACE_RING_GROW_DEN 4u

struct ring_cpu {
	struct trace_ring_cpu held;
	unsigned kb;	  /* its kernel buffer */
	uint64_t read_at; /* the last read (mono ns) */
};

struct trace_ring {
	struct trace_guard guard;
	struct trace_session *s;
	uint64_t keep_ns;
	unsigned ncpus;
	struct ring_cpu *cpu;
	const struct trace_ring_cpu **view; /* by CPU: &cpu[c].held, NULL when not recorded */
};

unsigned trace_ring_events(const struct trace_ring *r)
{
	return r ? trace_session_events(r->s) : 0;
}

const char *trace_ring_mounted(const struct trace_ring *r)
{
	return r ? trace_session_mounted(r->s) : NULL;
}

const struct spike_history *trace_ring_history(const struct trace_ring *r, unsigned cpu)
{
	return r && cpu < r->ncpus && r->view[cpu] ? &r->view[cpu]->h : NULL;
}

int trace_ring_collect(const struct trace_ring *r, uint64_t from, uint64_t to,
		       struct trace_ev **ret, size_t *ret_n, uint64_t *ret_complete_from,
		       uint64_t *ret_lost, struct lat_error *err)
{
	if (trace_ring_merge(r->view, r->ncpus, from, to, ret, ret_n, ret_complete_from, ret_lost) <
	    0)
		return err_set(err, -ENOMEM, "out of memory");
	return 0;
}

int trace_ring_stop(struct trace_ring *r, struct lat_error *note)
{
	const char *said;

	if (!r)
		return 1;
	trace_session_destroy(r->s);
	int rc = trace_session_unmounted(r->s, &said);
	if (rc != 1)
		err_set(note, rc, "%s", said);
	trace_session_free(r->s);
	trace_guard_release(&r->guard); /* after the instance is gone */
	for (unsigned c = 0; c < r->ncpus; c++)
		spike_history_free(&r->cpu[c].held.h);
	free(r->cpu);
	free(r->view);
	free(r);
	return rc;
}

#if !HAVE_TRACEFS

int trace_ring_start(const struct cpuset *cpus, uint64_t keep_ns, unsigned events,
		     struct trace_ring **ret, struct lat_error *err)
{
	(void)cpus;
	(void)keep_ns;
	(void)events;
	(void)ret;
	return err_set(err, -ENOTSUP, "built without tracefs support");
}

int trace_ring_read(struct trace_ring *r, struct lat_error *err)
{
	(void)r;
	return err_set(err, -ENOTSUP, "built without tracefs support");
}

#else

int trace_ring_read(struct trace_ring *r, struct lat_error *err)
{
	struct trace_events *e = NULL;
	int rc = trace_events_new(r->ncpus, 0, &e);
	if (rc < 0)
		return err_set(err, rc, "out of memory");
	rc = trace_session_read(r->s, e, err);
	uint64_t now = mono_ns();
	for (unsigned c = 0; rc == 0 && c < r->ncpus; c++) {
		if (!r->view[c])
			continue;
		struct ring_cpu *rcpu = &r->cpu[c];
		struct trace_cpu_events *ce = &e->cpu[c];
		uint64_t lost = ce->lost - rcpu->held.h.lost_seen;
		if (trace_ring_cpu_add(&rcpu->held, ce->ev, ce->n, ce->lost, ce->capped, now,
				       r->keep_ns) < 0) {
			rc = err_set(err, -ENOMEM, "out of memory");
			break;
		}
		uint64_t span = now - rcpu->read_at;
		rcpu->read_at = now;
		if (span < NS_PER_SEC / 10)
			continue; /* too short to judge the rate by */
		uint64_t rate = (uint64_t)((double)(ce->n + lost + ce->capped) *
					   (double)NS_PER_SEC / (double)span);
		unsigned want = trace_buffer_kb_for(r->keep_ns, rate);
		if ((uint64_t)want * TRACE_RING_GROW_DEN >
			    (uint64_t)rcpu->kb * TRACE_RING_GROW_NUM &&
		    tracefs_instance_set_buffer_size(r->s->inst, want, (int)c) == 0)
			rcpu->kb = want;
	}
	trace_events_free(e);
	return rc;
}

/* A start given up: the ring goes, and err (the reason) also says when a mount of latscope's has to stay. */
static int start_failed(struct trace_ring *r, int rc, struct lat_error *err)
{
	trace_session_abandon(r->s, rc, err); /* NULL (trace_session_start failed): a no-op */
	r->s = NULL;
	trace_ring_stop(r, NULL);
	return rc;
}

int trace_ring_start(const struct cpuset *cpus, uint64_t keep_ns, unsigned events,
		     struct trace_ring **ret, struct lat_error *err)
{
	char name[64];
	int rc;

	int last = -1;
	cpuset_foreach (c, cpus)
		last = c;
	if (last < 0)
		return err_set(err, -EINVAL, "no CPU to trace");
	if (last >= 256)
		return err_set(err, -EINVAL, "cannot trace CPU %d: at most 256 CPUs", last);
	if ((rc = trace_instance_name(trace_pidns(), (long)getpid(), name, sizeof(name))) < 0)
		return err_set(err, rc, "cannot name the tracefs instance");

	struct trace_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(err, -ENOMEM, "out of memory");
	r->guard = (struct trace_guard){ .pid = 0, .fd = -1 };
	r->keep_ns = keep_ns ? keep_ns : TRACE_RING_KEEP_DEFAULT_NS;
	r->ncpus = (unsigned)last + 1u;
	r->cpu = calloc(r->ncpus, sizeof(*r->cpu));
	r->view = calloc(r->ncpus, sizeof(*r->view));
	if (!r->cpu || !r->view) {
		free(r->cpu);
		free(r->view);
		free(r);
		return err_set(err, -ENOMEM, "out of memory");
	}
	/* Without a guard the instance is still removed on every exit but SIGKILL,
	 * and after a SIGKILL by the next traced run. */
	trace_guard_start(&r->guard, name);

	struct trace_opts o = {
		.cpus = *cpus,
		.buffer_kb = trace_buffer_kb_for(r->keep_ns, TRACE_RING_RATE_START),
		.events = events,
		.guard = &r->guard,
	};
	if ((rc = trace_session_start(&o, &r->s, err)) < 0)
		return start_failed(r, rc, err);
	/* The kernel's default, but the ring depends on it: the newest events win. */
	if (tracefs_option_enable(r->s->inst, TRACEFS_OPTION_OVERWRITE) < 0)
		return start_failed(r,
				    err_set(err, -EIO, "cannot set overwrite mode in '%s'",
					    trace_session_dir(r->s)),
				    err);
	uint64_t now = mono_ns();
	for (unsigned c = 0; c < r->ncpus; c++) {
		r->cpu[c].kb = o.buffer_kb;
		r->cpu[c].read_at = now;
		r->cpu[c].held.h.held_from = now; /* nothing before this is recorded */
		r->view[c] = cpuset_has(cpus, c) ? &r->cpu[c].held : NULL;
	}
	/* The first read loads the event formats: its cost falls here, not on the first use. */
	if ((rc = trace_ring_read(r, err)) < 0)
		return start_failed(r, rc, err);
	*ret = r;
	return 0;
}

#endif
