#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "trace/attrib.h"
#include "trace/evbuf.h"

/* hrtimer_expire_entry.now is the clock hrtimer_interrupt read before running
 * callbacks; farther than this from the event's own time it cannot be the
 * mono clock (a timer on another base), and the event time is used instead. */
#define NOW_SANE_NS NS_PER_MS

const char *trace_part_name(enum trace_part p)
{
	switch (p) {
	case TRACE_PART_IRQ_DELAY: return "irq delay";
	case TRACE_PART_HANDLER:   return "timer handler";
	case TRACE_PART_WAKEUP:    return "wakeup to running";
	case TRACE_PART_RETURN:    return "return to user";
	case TRACE_PARTS:          break;
	}
	return "?";
}

const char *trace_occ_kind_name(enum trace_occ_kind k)
{
	switch (k) {
	case TRACE_OCC_TASK:     return "task";
	case TRACE_OCC_IRQ:      return "irq";
	case TRACE_OCC_SOFTIRQ:  return "softirq";
	case TRACE_OCC_TIMER_CB: return "timer callbacks";
	case TRACE_OCC_UNTRACED: return "untraced kernel";
	case TRACE_OCC_NO_EVENT: return "no event";
	case TRACE_OCC_KINDS:    break;
	}
	return "?";
}

const char *trace_softirq_name(unsigned vec)
{
	/* The kernel's softirq_to_name[], stable since 2.6.x. */
	static const char *const names[] = {
		"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK",
		"IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
	};
	return vec < ARRAY_SIZE(names) ? names[vec] : "?";
}

/* ---- timer decomposition ---------------------------------------------- */

/* T's hrtimer_start for deadline: back from D to where T last ran, then on
 * to W for a thread that armed its timer late.  *other is the timer T armed
 * for another deadline meanwhile (0 if none): its expiry is not this sample's. */
static size_t find_start(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t tid,
			 uint64_t deadline, uint64_t wake, uint64_t *other)
{
	size_t i0 = trace_ev_lower_bound(ev, n, deadline);

	*other = 0;
	for (size_t j = i0; j-- > 0;) {
		const struct trace_ev *e = &ev[j];
		if (e->cpu != cpu)
			continue;
		if (e->type == TRACE_EV_SCHED_SWITCH && e->pid == tid)
			break;                  /* T ran here: its sleep began later */
		if (e->type == TRACE_EV_HRTIMER_START && e->pid == tid) {
			if (e->arg == deadline || e->arg2 == deadline)
				return j;
			if (!*other)
				*other = e->timer;
		}
	}
	for (size_t j = i0; j < n && ev[j].ts <= wake; j++) {
		const struct trace_ev *e = &ev[j];
		if (e->cpu == cpu && e->type == TRACE_EV_HRTIMER_START && e->pid == tid &&
		    (e->arg == deadline || e->arg2 == deadline))
			return j;
	}
	return n;
}

enum want { WANT_EXPIRY, WANT_WAKING, WANT_SWITCH, WANT_DONE };

int trace_decompose_timer(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t tid,
			  uint64_t deadline, uint64_t wake, struct trace_timer_sample *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (wake < deadline)
		return -EINVAL;

	uint64_t other;
	size_t s = find_start(ev, n, cpu, tid, deadline, wake, &other);
	bool have_start = s < n;
	uint64_t timer = have_start ? ev[s].timer : 0;
	size_t from = have_start ? s + 1 : trace_ev_lower_bound(ev, n, deadline);
	const struct trace_ev *entry = NULL, *waking = NULL, *sw = NULL;
	const struct trace_ev *open = NULL;     /* without a start: the expiry in progress */
	enum want want = WANT_EXPIRY;
	uint32_t flags = have_start ? 0 : TRACE_F_NO_START;

	for (size_t j = from; j < n && want != WANT_DONE; j++) {
		const struct trace_ev *e = &ev[j];
		if (e->ts > wake + TRACE_SKEW_TOL_NS)
			break;
		if (e->cpu != cpu)
			continue;
		if (e->type == TRACE_EV_LOST) {
			flags |= TRACE_F_LOST;
			continue;
		}
		switch (want) {
		case WANT_EXPIRY:
			if (have_start) {
				if (e->type == TRACE_EV_HRTIMER_ENTRY && e->timer == timer) {
					entry = e;
					want = WANT_WAKING;
				} else if (e->type == TRACE_EV_HRTIMER_START && e->timer == timer) {
					j = n;          /* re-armed before expiring: not this sample's */
				}
				break;
			}
			/* No start: the expiry whose callback wakes T is the one. */
			if (e->type == TRACE_EV_HRTIMER_ENTRY && (!other || e->timer != other))
				open = e;
			else if (e->type == TRACE_EV_HRTIMER_EXIT && open && e->timer == open->timer)
				open = NULL;
			else if (e->type == TRACE_EV_SCHED_WAKING && e->pid == tid && open) {
				entry = open;
				waking = e;
				want = WANT_SWITCH;
			}
			break;
		case WANT_WAKING:
			if (e->type == TRACE_EV_SCHED_WAKING && e->pid == tid) {
				waking = e;
				want = WANT_SWITCH;
			} else if (e->type == TRACE_EV_HRTIMER_EXIT && e->timer == timer) {
				j = n;          /* the expiry ended without waking T */
			}
			break;
		case WANT_SWITCH:
			if (e->type == TRACE_EV_SCHED_SWITCH && e->pid == tid) {
				sw = e;
				want = WANT_DONE;
			} else if (e->type == TRACE_EV_SYS_EXIT && e->pid == tid) {
				sw = e;         /* T runs: its switch in was not traced */
				flags |= TRACE_F_SWITCH_INFERRED;
				want = WANT_DONE;
			}
			break;
		case WANT_DONE:
			break;
		}
	}

	if (!entry)
		flags |= TRACE_F_NO_EXPIRY;
	else if (!waking)
		flags |= TRACE_F_NO_WAKING;
	else if (!sw)
		flags |= TRACE_F_NO_SWITCH;
	if (flags & TRACE_F_UNMATCHED) {
		ret->flags = flags;
		return -ENOENT;
	}

	return trace_timer_parts(deadline, entry->arg, entry->ts, waking->ts, sw->ts, wake, flags, ret);
}

int trace_timer_parts(uint64_t deadline, uint64_t expiry_now, uint64_t expiry_ts, uint64_t waking_ts,
		      uint64_t switch_ts, uint64_t wake, uint32_t flags, struct trace_timer_sample *ret)
{
	uint64_t now = expiry_now;
	if (now > expiry_ts + TRACE_SKEW_TOL_NS || now + NOW_SANE_NS < expiry_ts)
		now = expiry_ts;
	if (wake < deadline)
		return -EINVAL;

	/* Consecutive differences over D, now, waking, switch, W: they telescope. */
	ret->part[TRACE_PART_IRQ_DELAY] = (int64_t)(now - deadline);
	ret->part[TRACE_PART_HANDLER] = (int64_t)(waking_ts - now);
	ret->part[TRACE_PART_WAKEUP] = (int64_t)(switch_ts - waking_ts);
	ret->part[TRACE_PART_RETURN] = (int64_t)(wake - switch_ts);
	for (int p = 0; p < TRACE_PARTS; p++)
		if (ret->part[p] < -(int64_t)TRACE_SKEW_TOL_NS)
			flags |= TRACE_F_SKEW;
	ret->expiry_ts = expiry_ts;
	ret->waking_ts = waking_ts;
	ret->switch_ts = switch_ts;
	ret->flags = flags;
	return 0;
}

/* ---- occupancy -------------------------------------------------------- */

#define STACK_MAX 8
#define ACC_MAX 64

struct ctx {
	uint8_t kind;
	int32_t id;
	int32_t prio;
	char name[TRACE_COMM_LEN];
};

struct walk {
	struct ctx task;                 /* the running task; id -1 while unknown */
	struct ctx stack[STACK_MAX];     /* irq, softirq and timer callbacks nest over it */
	unsigned depth;
	struct ctx pending;              /* woken on the idle CPU, switched in untraced */
	bool has_pending;
};

/* How far to look for the switch that proves an untraced one happened. */
#define LOOKAHEAD_EVENTS 100000

struct acc {
	struct trace_contrib c[ACC_MAX];
	unsigned n;
	uint64_t overflow_ns;            /* contributors beyond ACC_MAX */
	int last_slot;
};

static void set_ctx(struct ctx *c, uint8_t kind, int32_t id, int32_t prio, const char *name)
{
	c->kind = kind;
	c->id = id;
	c->prio = prio;
	size_t len = strnlen(name, TRACE_COMM_LEN - 1);   /* comms from the kernel may fill all 16 */
	memcpy(c->name, name, len);
	c->name[len] = '\0';
}

static void set_task(struct ctx *c, int32_t pid, int32_t prio, const char *comm)
{
	set_ctx(c, TRACE_OCC_TASK, pid, prio, comm);
}

static void push(struct walk *w, uint8_t kind, int32_t id, const char *name)
{
	char buf[TRACE_COMM_LEN] = "";
	if (w->depth == STACK_MAX)
		return;                  /* deeper than the kernel nests: lost exits; ignore */
	if (name)
		strncpy(buf, name, TRACE_COMM_LEN - 1);
	set_ctx(&w->stack[w->depth++], kind, id, -1, buf);
}

static void apply_pending(struct walk *w)
{
	if (w->has_pending && w->depth == 0) {
		w->task = w->pending;
		w->has_pending = false;
	}
}

static void pop(struct walk *w, uint8_t kind)
{
	/* Pop to the matching entry; a lost entry must not pin a stale context. */
	for (unsigned d = w->depth; d-- > 0;) {
		if (w->stack[d].kind == kind) {
			w->depth = d;
			break;
		}
	}
	apply_pending(w);
}

/* A task woken while this CPU idles, whose switch out comes before any other
 * switch: it was switched in without a trace event. */
static void infer_switch(struct walk *w, const struct trace_ev *ev, size_t n, size_t j, unsigned cpu)
{
	const struct trace_ev *e = &ev[j];
	if (w->task.id != 0 || e->pid <= 0)
		return;
	size_t end = n - j > LOOKAHEAD_EVENTS ? j + LOOKAHEAD_EVENTS : n;
	for (size_t k = j + 1; k < end; k++) {
		if (ev[k].cpu != cpu || ev[k].type != TRACE_EV_SCHED_SWITCH)
			continue;
		if (ev[k].prev_pid == e->pid) {
			set_task(&w->pending, e->pid, e->prio, ev[k].prev_comm);
			w->has_pending = true;
			apply_pending(w);
		}
		return;
	}
}

/* One event's effect on the context; irq names live in comm. */
static void step(struct walk *w, const struct trace_ev *ev, size_t n, size_t j, unsigned cpu)
{
	const struct trace_ev *e = &ev[j];
	switch ((enum trace_ev_type)e->type) {
	case TRACE_EV_SCHED_SWITCH:
		set_task(&w->task, e->pid, e->prio, e->comm);
		w->depth = 0;            /* switches happen in task context */
		w->has_pending = false;
		break;
	case TRACE_EV_SCHED_WAKING:
	case TRACE_EV_SCHED_WAKEUP:
		infer_switch(w, ev, n, j, cpu);
		break;
	case TRACE_EV_SYS_EXIT:
		if (w->task.id == 0 && e->pid > 0) {
			/* Returning to user space: that task runs, traced switch or not. */
			if (w->has_pending && w->pending.id == e->pid)
				w->task = w->pending;
			else
				set_task(&w->task, e->pid, -1, "?");
			w->has_pending = false;
			w->depth = 0;
		}
		break;
	case TRACE_EV_IRQ_ENTRY:
		push(w, TRACE_OCC_IRQ, e->pid, e->comm);
		break;
	case TRACE_EV_IRQ_EXIT:
		pop(w, TRACE_OCC_IRQ);
		break;
	case TRACE_EV_SOFTIRQ_ENTRY:
		push(w, TRACE_OCC_SOFTIRQ, e->pid, trace_softirq_name((unsigned)e->pid));
		break;
	case TRACE_EV_SOFTIRQ_EXIT:
		pop(w, TRACE_OCC_SOFTIRQ);
		break;
	case TRACE_EV_HRTIMER_ENTRY:
		push(w, TRACE_OCC_TIMER_CB, -1, "hrtimer");
		break;
	case TRACE_EV_HRTIMER_EXIT:
		pop(w, TRACE_OCC_TIMER_CB);
		break;
	case TRACE_EV_LOST:
		w->depth = 0;            /* entries or exits may be among the lost */
		break;
	case TRACE_EV_NONE:
	case TRACE_EV_HRTIMER_START:
	case TRACE_EV_KVM_EXIT:
	case TRACE_EV_KVM_ENTRY:
	case TRACE_EV_SCHED_MIGRATE:
	case TRACE_EV_TYPES:
		break;
	}
}

static void add(struct acc *a, uint64_t *kind_ns, const struct ctx *c, uint64_t ns, bool new_stretch)
{
	kind_ns[c->kind] += ns;
	int slot = -1;
	for (unsigned i = 0; i < a->n; i++) {
		const struct trace_contrib *t = &a->c[i];
		if (t->kind == c->kind && t->id == c->id && strcmp(t->name, c->name) == 0) {
			slot = (int)i;
			break;
		}
	}
	if (slot < 0) {
		if (a->n == ACC_MAX) {
			a->overflow_ns += ns;
			return;
		}
		slot = (int)a->n++;
		struct trace_contrib *t = &a->c[slot];
		memset(t, 0, sizeof(*t));
		t->kind = c->kind;
		t->id = c->id;
		t->prio = c->kind == TRACE_OCC_TASK ? c->prio : -1;
		memcpy(t->name, c->name, TRACE_COMM_LEN);
	}
	a->c[slot].ns += ns;
	if (new_stretch || slot != a->last_slot)
		a->c[slot].count++;
	a->last_slot = slot;
}

/* The context a stretch of ns belongs to. */
static const struct ctx *charge(const struct walk *w, int32_t self, uint64_t ns, struct ctx *scratch)
{
	if (w->depth)
		return &w->stack[w->depth - 1];
	if (w->task.id > 0 && w->task.id != self)
		return &w->task;
	/* Idle (pid 0) or the measured thread itself: nothing traced took the CPU. */
	uint8_t kind = ns > TRACE_GAP_NS ? TRACE_OCC_NO_EVENT : TRACE_OCC_UNTRACED;
	set_ctx(scratch, kind, -1, -1, trace_occ_kind_name((enum trace_occ_kind)kind));
	return scratch;
}

static int cmp_contrib(const void *pa, const void *pb)
{
	const struct trace_contrib *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->kind - b->kind;
}

/* The task running at index i0: the last switch before it, else the prev of
 * the next one.  Returns the index to replay irq nesting from. */
static size_t find_task(const struct trace_ev *ev, size_t n, unsigned cpu, size_t i0, struct walk *w)
{
	for (size_t j = i0; j-- > 0;) {
		if (ev[j].cpu == cpu && ev[j].type == TRACE_EV_SCHED_SWITCH) {
			set_task(&w->task, ev[j].pid, ev[j].prio, ev[j].comm);
			return j + 1;
		}
	}
	set_task(&w->task, -1, -1, "?");
	for (size_t j = i0; j < n; j++) {
		if (ev[j].cpu == cpu && ev[j].type == TRACE_EV_SCHED_SWITCH) {
			set_task(&w->task, ev[j].prev_pid, ev[j].prev_prio, ev[j].prev_comm);
			break;
		}
	}
	return 0;
}

uint64_t trace_undelivered_ns(const struct trace_occupancy *before, int32_t thread_prio, int64_t irq_delay)
{
	uint64_t ns = before->kind_ns[TRACE_OCC_NO_EVENT] + before->kind_ns[TRACE_OCC_UNTRACED];
	for (unsigned i = 0; i < before->ntop; i++)
		if (before->top[i].kind == TRACE_OCC_TASK && before->top[i].prio > thread_prio)
			ns += before->top[i].ns;
	if (irq_delay >= 0 && ns > (uint64_t)irq_delay)
		ns = (uint64_t)irq_delay;
	return ns;
}

int trace_explain(const struct trace_ev *ev, size_t n, unsigned cpu, int32_t self,
		  uint64_t start, uint64_t end, struct trace_occupancy *ret)
{
	if (end < start)
		return -EINVAL;

	struct walk w = { .depth = 0 };
	struct acc acc = { .n = 0, .last_slot = -1 };
	struct acc *a = &acc;
	memset(ret, 0, sizeof(*ret));
	ret->start = start;
	ret->end = end;

	size_t i0 = trace_ev_lower_bound(ev, n, start);
	for (size_t j = find_task(ev, n, cpu, i0, &w); j < i0; j++)
		if (ev[j].cpu == cpu)
			step(&w, ev, n, j, cpu);

	uint64_t t = start;
	bool new_stretch = true;
	struct ctx scratch;
	for (size_t j = i0; j < n && t < end; j++) {
		const struct trace_ev *e = &ev[j];
		if (e->cpu != cpu)
			continue;
		uint64_t upto = e->ts < end ? e->ts : end;
		if (upto > t) {
			add(a, ret->kind_ns, charge(&w, self, upto - t, &scratch), upto - t, new_stretch);
			t = upto;
			new_stretch = false;
		}
		if (e->ts >= end)
			break;
		if (e->type == TRACE_EV_LOST)
			ret->flags |= TRACE_F_LOST;
		unsigned depth = w.depth;
		int32_t pid = w.task.id;
		step(&w, ev, n, j, cpu);
		if (w.depth != depth || w.task.id != pid)
			new_stretch = true;
	}
	if (t < end)
		add(a, ret->kind_ns, charge(&w, self, end - t, &scratch), end - t, new_stretch);

	qsort(a->c, a->n, sizeof(a->c[0]), cmp_contrib);
	ret->ntop = a->n < TRACE_TOP_N ? a->n : TRACE_TOP_N;
	memcpy(ret->top, a->c, ret->ntop * sizeof(a->c[0]));
	ret->other_ns = a->overflow_ns;
	for (unsigned i = ret->ntop; i < a->n; i++)
		ret->other_ns += a->c[i].ns;
	return 0;
}
