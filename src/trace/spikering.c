#include "trace/spikering.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nstime.h"
#include "trace/evbuf.h"
#include "trace/instance.h"
#include "trace/ring.h"

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

/* What spike_ring_explain reads: the timer that was to wake the thread, what
 * held the CPU meanwhile, and the sleeper's return where its switch in is not traced. */
#define SPIKE_RING_EVENTS (TRACE_WANT_TIMER | TRACE_WANT_SCHED | TRACE_WANT_IRQ | TRACE_WANT_SLEEP_EXIT)

/* A trace_ring of the timer's events, explained one CPU at a time. */
struct spike_ring {
	struct trace_ring *ring;
};

const char *spike_ring_mounted(const struct spike_ring *r)
{
	return r ? trace_ring_mounted(r->ring) : NULL;
}

int spike_ring_stop(struct spike_ring *r, struct lat_error *note)
{
	if (!r)
		return 1;
	int rc = trace_ring_stop(r->ring, note);
	free(r);
	return rc;
}

int spike_ring_start(const struct cpuset *cpus, uint64_t keep_ns, struct spike_ring **ret, struct lat_error *err)
{
	struct spike_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(err, -ENOMEM, "out of memory");
	int rc = trace_ring_start(cpus, keep_ns ? keep_ns : SPIKE_RING_KEEP_DEFAULT_NS, SPIKE_RING_EVENTS, &r->ring,
				  err);
	if (rc < 0) {
		free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

int spike_ring_explain(struct spike_ring *r, unsigned cpu, pid_t tid, uint64_t from_mono_ns, uint64_t to_mono_ns,
		       uint64_t min_latency_ns, struct spike_cause *ret, struct lat_error *err)
{
	if (!trace_supported())
		return err_set(err, -ENOTSUP, "built without tracefs support");
	const struct spike_history *h = r ? trace_ring_history(r->ring, cpu) : NULL;
	if (!h)
		return err_set(err, -EINVAL, "CPU %u is not traced", cpu);
	if (to_mono_ns < from_mono_ns)
		return err_set(err, -EINVAL, "the window ends before it begins");
	int rc = trace_ring_read(r->ring, err);
	if (rc < 0)
		return rc;
	return spike_pick(h->ev, h->n, h->held_from, cpu, (int32_t)tid, from_mono_ns, to_mono_ns, min_latency_ns, ret,
			  err);
}
