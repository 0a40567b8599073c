#include "trace/spikering.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

const char *spike_kind_name(enum spike_kind k)
{
	switch (k) {
	case SPIKE_IRQ:      return "irq";
	case SPIKE_SOFTIRQ:  return "softirq";
	case SPIKE_TASK:     return "task";
	case SPIKE_NO_EVENT: return "no_event";
	case SPIKE_KINDS:    break;
	}
	return "?";
}

/* ---- one CPU's history --------------------------------------------------- */

static void drop_before(struct spike_history *h, size_t i)
{
	if (i == 0)
		return;
	memmove(h->ev, h->ev + i, (h->n - i) * sizeof(*h->ev));
	h->n -= i;
}

int spike_history_add(struct spike_history *h, const struct trace_ev *batch, size_t n, uint64_t lost_total,
		      uint64_t now, uint64_t keep_ns)
{
	size_t from = 0;

	/* A loss the kernel counted but did not mark lies before this read's first event. */
	if (lost_total != h->lost_seen) {
		uint64_t gap_end = n ? batch[0].ts : now;
		h->n = 0;
		if (gap_end > h->held_from)
			h->held_from = gap_end;
	}
	h->lost_seen = lost_total;
	for (size_t i = 0; i < n; i++) {
		if (batch[i].type != TRACE_EV_LOST)
			continue;
		h->n = 0;
		from = i + 1;
		if (batch[i].ts > h->held_from)
			h->held_from = batch[i].ts;
	}
	if (h->n + (n - from) > h->cap) {
		size_t cap = h->cap ? h->cap : 4096;
		while (cap < h->n + (n - from))
			cap *= 2;
		struct trace_ev *p = realloc(h->ev, cap * sizeof(*p));
		if (!p) {
			h->n = 0;
			h->held_from = now;
			return -ENOMEM;
		}
		h->ev = p;
		h->cap = cap;
	}
	if (n > from) {                 /* an empty read may come with no batch at all */
		memcpy(h->ev + h->n, batch + from, (n - from) * sizeof(*batch));
		h->n += n - from;
	}

	if (now > keep_ns && now - keep_ns > h->held_from) {
		h->held_from = now - keep_ns;
		drop_before(h, trace_ev_lower_bound(h->ev, h->n, h->held_from));
	}
	return 0;
}

void spike_history_free(struct spike_history *h)
{
	free(h->ev);
	memset(h, 0, sizeof(*h));
}

/* ---- the sample ---------------------------------------------------------- */

/* The latest-waking of tid's sleeps with D in [from, to]: 0 and *ret_d,
 * *ret_wake, or -ENOENT. */
static int latest_wake(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t tid, uint64_t from, uint64_t to,
		       uint64_t min_latency, uint64_t *ret_d, uint64_t *ret_wake)
{
	uint64_t best = 0;
	bool found = false;

	for (size_t j = 0; j < n && ev[j].ts <= to; j++) {
		const struct trace_ev *s = &ev[j];
		if (s->cpu != cpu || s->type != TRACE_EV_HRTIMER_START || s->pid != tid || s->arg < from || s->arg > to)
			continue;
		/* T runs again at its switch in, or (untraced switch) its return from the syscall. */
		for (size_t k = j + 1; k < n; k++) {
			const struct trace_ev *e = &ev[k];
			if (e->cpu != cpu || e->pid != tid)
				continue;
			if (e->type == TRACE_EV_HRTIMER_START)
				break;          /* re-armed before it ran: not a wakeup of this deadline */
			if (e->type != TRACE_EV_SCHED_SWITCH && e->type != TRACE_EV_SYS_EXIT)
				continue;
			if (e->ts >= s->arg && e->ts - s->arg > min_latency && (!found || e->ts - s->arg > best)) {
				best = e->ts - s->arg;
				*ret_d = s->arg;
				*ret_wake = e->ts;
				found = true;
			}
			break;
		}
	}
	return found ? 0 : -ENOENT;
}

/* tid's kernel prio from its wakeup before wake; the lowest when not traced. */
static int32_t thread_prio(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t tid, uint64_t wake)
{
	for (size_t j = trace_ev_lower_bound(ev, n, wake + 1); j-- > 0;) {
		const struct trace_ev *e = &ev[j];
		if (e->cpu == cpu && e->pid == tid &&
		    (e->type == TRACE_EV_SCHED_WAKING || e->type == TRACE_EV_SCHED_SWITCH))
			return e->prio;
	}
	return 139;
}

#define CANDS (2 * TRACE_TOP_N)

struct cands {
	struct trace_contrib c[CANDS];
	unsigned n;
};

/* Named contributors only: untraced and no-event time is summed apart. */
static void add_cand(struct cands *cs, const struct trace_contrib *c)
{
	if (c->kind == TRACE_OCC_UNTRACED || c->kind == TRACE_OCC_NO_EVENT)
		return;
	for (unsigned i = 0; i < cs->n; i++) {
		struct trace_contrib *t = &cs->c[i];
		if (t->kind == c->kind && t->id == c->id && strcmp(t->name, c->name) == 0) {
			t->ns += c->ns;
			return;
		}
	}
	if (cs->n < CANDS)
		cs->c[cs->n++] = *c;
}

static void name_cause(const struct trace_contrib *c, struct spike_cause *ret)
{
	switch ((enum trace_occ_kind)c->kind) {
	case TRACE_OCC_TASK:
		ret->kind = SPIKE_TASK;
		snprintf(ret->name, sizeof(ret->name), "task %s (pid %d)", c->name, (int)c->id);
		break;
	case TRACE_OCC_IRQ:
		ret->kind = SPIKE_IRQ;
		snprintf(ret->name, sizeof(ret->name), "irq %d %s", (int)c->id, c->name);
		break;
	case TRACE_OCC_SOFTIRQ:
		ret->kind = SPIKE_SOFTIRQ;
		snprintf(ret->name, sizeof(ret->name), "softirq %s", c->name);
		break;
	case TRACE_OCC_TIMER_CB:
		ret->kind = SPIKE_IRQ;   /* hrtimer callbacks run in the timer interrupt */
		snprintf(ret->name, sizeof(ret->name), "hrtimer callbacks");
		break;
	case TRACE_OCC_UNTRACED:
	case TRACE_OCC_NO_EVENT:
	case TRACE_OCC_KINDS:
		ret->kind = SPIKE_NO_EVENT;
		snprintf(ret->name, sizeof(ret->name), "no event");
		break;
	}
	ret->share_ns = c->ns;
}

int spike_pick(const struct trace_ev *ev, size_t n, uint64_t held_from, unsigned cpu, int32_t tid, uint64_t from,
	       uint64_t to, uint64_t min_latency, struct spike_cause *ret, struct lat_error *why)
{
	uint64_t d, wake;

	if (to < from)
		return err_set(why, -EINVAL, "the window ends before it begins");
	if (to < held_from) {
		return err_set(why, -ENOENT, "overwritten: the window ended %.3f s before the oldest event held on CPU %u",
			(double)(held_from - to) / (double)NS_PER_SEC, cpu);
	}
	uint32_t flags = from < held_from ? SPIKE_F_PARTIAL : 0;
	if (latest_wake(ev, n, cpu, tid, from < held_from ? held_from : from, to, min_latency, &d, &wake) < 0) {
		return err_set(why, -ENOENT, "no wakeup of thread %d on CPU %u later than %llu ns has its deadline in %s",
			(int)tid, cpu, (unsigned long long)min_latency,
			flags ? "the part of the window still held" : "the window");
	}

	struct trace_timer_sample smp;
	struct trace_occupancy before, after;
	struct cands cs = { .n = 0 };
	uint64_t no_event = 0;

	if (trace_decompose_timer(ev, n, cpu, tid, d, wake, &smp) == 0) {
		int32_t prio = thread_prio(ev, n, cpu, tid, wake);
		uint64_t expiry = smp.expiry_ts > d ? smp.expiry_ts : d;
		uint64_t end = smp.switch_ts > expiry ? smp.switch_ts : wake;
		flags |= smp.flags & TRACE_F_LOST ? SPIKE_F_LOST : 0;
		if (expiry > d && trace_explain(ev, n, cpu, tid, d, expiry, &before) == 0) {
			no_event += trace_undelivered_ns(&before, prio, smp.part[TRACE_PART_IRQ_DELAY]);
			for (unsigned i = 0; i < before.ntop; i++)
				if (before.top[i].kind != TRACE_OCC_TASK || before.top[i].prio <= prio)
					add_cand(&cs, &before.top[i]);
			flags |= before.flags & TRACE_F_LOST ? SPIKE_F_LOST : 0;
		}
		if (trace_explain(ev, n, cpu, tid, expiry, end, &after) < 0)
			memset(&after, 0, sizeof(after));
	} else {
		flags |= SPIKE_F_UNPAIRED;
		if (trace_explain(ev, n, cpu, tid, d, wake, &after) < 0)
			memset(&after, 0, sizeof(after));
	}
	for (unsigned i = 0; i < after.ntop; i++)
		add_cand(&cs, &after.top[i]);
	no_event += after.kind_ns[TRACE_OCC_NO_EVENT] + after.kind_ns[TRACE_OCC_UNTRACED];
	flags |= after.flags & TRACE_F_LOST ? SPIKE_F_LOST : 0;

	const struct trace_contrib *top = NULL;
	for (unsigned i = 0; i < cs.n; i++)
		if (!top || cs.c[i].ns > top->ns)
			top = &cs.c[i];
	memset(ret, 0, sizeof(*ret));
	if (top && top->ns >= no_event) {
		name_cause(top, ret);
	} else {
		ret->kind = SPIKE_NO_EVENT;
		snprintf(ret->name, sizeof(ret->name), "no event");
		ret->share_ns = no_event;
	}
	ret->latency_ns = wake - d;
	ret->deadline_ns = d;
	ret->flags = flags;
	return 0;
}

/* ---- the ring ------------------------------------------------------------ */

/* The timer probe's expected rate (probe/timer.c: ten events a wakeup at 0.5 ms). */
#define SPIKE_RING_RATE_START 20000u
/* Grow a CPU's buffer when the rate observed at a read asks for this much more. */
#define SPIKE_RING_GROW_NUM 5u
#define SPIKE_RING_GROW_DEN 4u
/* What spike_ring_explain reads: the timer that was to wake the thread, what
 * held the CPU meanwhile, and the sleeper's return where its switch in is not traced. */
#define SPIKE_RING_EVENTS (TRACE_WANT_TIMER | TRACE_WANT_SCHED | TRACE_WANT_IRQ | TRACE_WANT_SLEEP_EXIT)

struct spike_cpu {
	struct spike_history h;
	unsigned kb;              /* its kernel buffer */
	uint64_t read_at;         /* the last read (mono ns) */
};

struct spike_ring {
	struct trace_guard guard;
	struct trace_session *s;
	struct cpuset cpus;
	uint64_t keep_ns;
	unsigned ncpus;
	struct spike_cpu *cpu;
};

const char *spike_ring_mounted(const struct spike_ring *r)
{
	return r ? trace_session_mounted(r->s) : NULL;
}

int spike_ring_stop(struct spike_ring *r, struct lat_error *note)
{
	const char *said;

	if (!r)
		return 1;
	trace_session_destroy(r->s);
	int rc = trace_session_unmounted(r->s, &said);
	if (rc != 1)
		err_set(note, rc, "%s", said);
	trace_session_free(r->s);
	trace_guard_release(&r->guard);         /* after the instance is gone */
	for (unsigned c = 0; c < r->ncpus; c++)
		spike_history_free(&r->cpu[c].h);
	free(r->cpu);
	free(r);
	return rc;
}

#if !HAVE_TRACEFS

int spike_ring_start(const struct cpuset *cpus, uint64_t keep_ns, struct spike_ring **ret, struct lat_error *err)
{
	(void)cpus;
	(void)keep_ns;
	(void)ret;
	return err_set(err, -ENOTSUP, "built without tracefs support");
}

int spike_ring_explain(struct spike_ring *r, unsigned cpu, pid_t tid, uint64_t from_mono_ns, uint64_t to_mono_ns,
		       uint64_t min_latency_ns, struct spike_cause *ret, struct lat_error *err)
{
	(void)r;
	(void)cpu;
	(void)tid;
	(void)from_mono_ns;
	(void)to_mono_ns;
	(void)min_latency_ns;
	(void)ret;
	return err_set(err, -ENOTSUP, "built without tracefs support");
}

#else

/*
 * Everything the kernel holds for the recorded CPUs, appended to their
 * histories; each CPU's buffer grows when this read saw more events a second
 * than its size was set for.
 */
static int read_ring(struct spike_ring *r, struct lat_error *err)
{
	struct trace_events *e = NULL;
	int rc = trace_events_new(r->ncpus, 0, &e);
	if (rc < 0)
		return err_set(err, rc, "out of memory");
	rc = trace_session_read(r->s, e, err);
	uint64_t now = mono_ns();
	for (unsigned c = 0; rc == 0 && c < r->ncpus; c++) {
		if (!cpuset_has(&r->cpus, c))
			continue;
		struct spike_cpu *sc = &r->cpu[c];
		struct trace_cpu_events *ce = &e->cpu[c];
		uint64_t lost = ce->lost - sc->h.lost_seen;
		if (spike_history_add(&sc->h, ce->ev, ce->n, ce->lost, now, r->keep_ns) < 0) {
			rc = err_set(err, -ENOMEM, "out of memory");
			break;
		}
		if (ce->capped) {
			/* The newest events were not stored: a gap after the last one. */
			sc->h.n = 0;
			sc->h.held_from = now;
		}
		uint64_t span = now - sc->read_at;
		sc->read_at = now;
		if (span < NS_PER_SEC / 10)
			continue;       /* too short to judge the rate by */
		uint64_t rate = (uint64_t)((double)(ce->n + lost + ce->capped) * (double)NS_PER_SEC / (double)span);
		unsigned want = trace_buffer_kb_for(r->keep_ns, rate);
		if ((uint64_t)want * SPIKE_RING_GROW_DEN > (uint64_t)sc->kb * SPIKE_RING_GROW_NUM &&
		    tracefs_instance_set_buffer_size(r->s->inst, want, (int)c) == 0)
			sc->kb = want;
	}
	trace_events_free(e);
	return rc;
}

/* A start given up: the ring goes, and err (the reason) also says when a mount of latscope's has to stay. */
static int start_failed(struct spike_ring *r, int rc, struct lat_error *err)
{
	trace_session_abandon(r->s, rc, err);   /* NULL (trace_session_start failed): a no-op */
	r->s = NULL;
	spike_ring_stop(r, NULL);
	return rc;
}

int spike_ring_start(const struct cpuset *cpus, uint64_t keep_ns, struct spike_ring **ret, struct lat_error *err)
{
	char name[64];
	int rc;

	int last = -1;
	cpuset_foreach(c, cpus)
		last = c;
	if (last < 0)
		return err_set(err, -EINVAL, "no CPU to trace");
	if (last >= 256)
		return err_set(err, -EINVAL, "cannot trace CPU %d: at most 256 CPUs", last);
	if ((rc = trace_instance_name(trace_pidns(), (long)getpid(), name, sizeof(name))) < 0)
		return err_set(err, rc, "cannot name the tracefs instance");

	struct spike_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(err, -ENOMEM, "out of memory");
	r->guard = (struct trace_guard){ .pid = 0, .fd = -1 };
	r->cpus = *cpus;
	r->keep_ns = keep_ns ? keep_ns : SPIKE_RING_KEEP_DEFAULT_NS;
	r->ncpus = (unsigned)last + 1u;
	r->cpu = calloc(r->ncpus, sizeof(*r->cpu));
	if (!r->cpu) {
		free(r);
		return err_set(err, -ENOMEM, "out of memory");
	}
	/* Without a guard the instance is still removed on every exit but SIGKILL,
	 * and after a SIGKILL by the next traced run. */
	trace_guard_start(&r->guard, name);

	struct trace_opts o = {
		.cpus = *cpus,
		.buffer_kb = trace_buffer_kb_for(r->keep_ns, SPIKE_RING_RATE_START),
		.events = SPIKE_RING_EVENTS,
		.guard = &r->guard,
	};
	if ((rc = trace_session_start(&o, &r->s, err)) < 0)
		return start_failed(r, rc, err);
	/* The kernel's default, but the ring depends on it: the newest events win. */
	if (tracefs_option_enable(r->s->inst, TRACEFS_OPTION_OVERWRITE) < 0)
		return start_failed(r, err_set(err, -EIO, "cannot set overwrite mode in '%s'", trace_session_dir(r->s)), err);
	uint64_t now = mono_ns();
	for (unsigned c = 0; c < r->ncpus; c++) {
		r->cpu[c].kb = o.buffer_kb;
		r->cpu[c].read_at = now;
		r->cpu[c].h.held_from = now;     /* nothing before this is recorded */
	}
	/* The first read loads the event formats: its cost falls here, not on the first spike. */
	if ((rc = read_ring(r, err)) < 0)
		return start_failed(r, rc, err);
	*ret = r;
	return 0;
}

int spike_ring_explain(struct spike_ring *r, unsigned cpu, pid_t tid, uint64_t from_mono_ns, uint64_t to_mono_ns,
		       uint64_t min_latency_ns, struct spike_cause *ret, struct lat_error *err)
{
	if (!r || cpu >= r->ncpus || !cpuset_has(&r->cpus, cpu))
		return err_set(err, -EINVAL, "CPU %u is not traced", cpu);
	if (to_mono_ns < from_mono_ns)
		return err_set(err, -EINVAL, "the window ends before it begins");
	int rc = read_ring(r, err);
	if (rc < 0)
		return rc;
	const struct spike_history *h = &r->cpu[cpu].h;
	return spike_pick(h->ev, h->n, h->held_from, cpu, (int32_t)tid, from_mono_ns, to_mono_ns, min_latency_ns, ret,
			  err);
}

#endif
