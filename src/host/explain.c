#include "host/explain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/exitreason.h"
#include "trace/attrib.h"

/* Room to rank in before keeping the top: a 10 ms interval rarely sees more. */
#define RAN_ACC  16
#define EXIT_ACC 32

struct walk {
	const struct trace_ev *ev;
	size_t n;
	const struct host_query *q;
	struct host_answer *a;
	enum host_state state;
	uint64_t since;                 /* the current state's start */
	int cpu;                        /* where the thread runs or waits, -1 unknown */
	bool in_exit;                   /* a kvm_exit with no kvm_entry yet */
	uint64_t reason;
	uint8_t isa;
	struct host_ran ran[RAN_ACC];
	unsigned nran;
	struct host_exit_reason exits[EXIT_ACC];
	unsigned nexits;
};

const char *host_state_name(enum host_state s)
{
	static const char *const names[HOST_STATES] = {
		"unknown", "guest", "in_host", "preempted", "halted", "stopped", "off",
	};
	return (unsigned)s < HOST_STATES ? names[s] : "?";
}

const char *host_ran_kind_name(enum host_ran_kind k)
{
	static const char *const names[HOST_RAN_KINDS] = { "task", "vcpu", "irq", "softirq", "timer", "idle" };
	return (unsigned)k < HOST_RAN_KINDS ? names[k] : "?";
}

int host_vcpu_of_comm(const char *comm)
{
	unsigned n;
	char kind[4];
	int end = 0;
	if (sscanf(comm, "CPU %u/%3[A-Z]%n", &n, kind, &end) == 2 && comm[end] == '\0' &&
	    (strcmp(kind, "KVM") == 0 || strcmp(kind, "TCG") == 0))
		return (int)n;
	if ((sscanf(comm, "fc_vcpu %u%n", &n, &end) == 1 || sscanf(comm, "vcpu%u%n", &n, &end) == 1) && comm[end] == '\0')
		return (int)n;
	return -1;
}

static void add_ran(struct walk *w, const struct trace_contrib *c, unsigned cpu)
{
	static const uint8_t kinds[TRACE_OCC_KINDS] = {
		[TRACE_OCC_TASK] = HOST_RAN_TASK, [TRACE_OCC_IRQ] = HOST_RAN_IRQ,
		[TRACE_OCC_SOFTIRQ] = HOST_RAN_SOFTIRQ, [TRACE_OCC_TIMER_CB] = HOST_RAN_TIMER,
		[TRACE_OCC_UNTRACED] = HOST_RAN_IDLE, [TRACE_OCC_NO_EVENT] = HOST_RAN_IDLE,
	};
	uint8_t kind = kinds[c->kind];
	if (kind == HOST_RAN_TASK && host_vcpu_of_comm(c->name) >= 0)
		kind = HOST_RAN_VCPU;
	const int32_t id = kind == HOST_RAN_IDLE ? -1 : c->id;
	for (unsigned i = 0; i < w->nran; i++)
		if (w->ran[i].kind == kind && w->ran[i].id == id) {
			w->ran[i].ns += c->ns;
			return;
		}
	if (w->nran == RAN_ACC) {
		w->a->ran_other_ns += c->ns;
		return;
	}
	struct host_ran *r = &w->ran[w->nran++];
	*r = (struct host_ran){ .ns = c->ns, .id = id, .prio = c->prio, .policy = HOST_POLICY_UNKNOWN, .kind = kind,
				.cpu = (uint8_t)cpu };
	snprintf(r->comm, sizeof(r->comm), "%s", kind == HOST_RAN_IDLE ? "idle" : c->name);
}

/* What held the thread's CPU while it waited. */
static void rank_ran(struct walk *w, uint64_t lo, uint64_t hi)
{
	if (w->cpu < 0)
		return;
	struct trace_occupancy occ;
	if (trace_explain(w->ev, w->n, (unsigned)w->cpu, w->q->tid, lo, hi, &occ) < 0)
		return;
	for (unsigned i = 0; i < occ.ntop; i++)
		add_ran(w, &occ.top[i], (unsigned)w->cpu);
	w->a->ran_other_ns += occ.other_ns;
}

static struct host_exit_reason *exit_slot(struct walk *w, uint64_t reason, uint8_t isa)
{
	for (unsigned i = 0; i < w->nexits; i++)
		if (w->exits[i].reason == reason && w->exits[i].isa == isa)
			return &w->exits[i];
	if (w->nexits == EXIT_ACC)
		return NULL;
	struct host_exit_reason *x = &w->exits[w->nexits++];
	*x = (struct host_exit_reason){ .reason = reason, .isa = isa };
	return x;
}

static void add_stretch(struct host_answer *a, uint64_t lo, uint64_t hi, enum host_state s, int cpu)
{
	struct host_stretch *last = a->nstretches ? &a->stretch[a->nstretches - 1u] : NULL;
	if (last && last->state == s && last->to == lo) {
		last->to = hi;
		return;
	}
	if (a->nstretches == HOST_STRETCHES) {
		a->stretches_more++;
		return;
	}
	a->stretch[a->nstretches++] = (struct host_stretch){ .from = lo, .to = hi, .state = (uint8_t)s,
							     .cpu = (uint8_t)(cpu < 0 ? 0 : cpu) };
}

/* The current state from w->since up to `end`, clipped to the interval; then it starts anew at end. */
static void emit(struct walk *w, uint64_t end)
{
	const uint64_t lo = w->since > w->q->from ? w->since : w->q->from;
	const uint64_t hi = end < w->q->to ? end : w->q->to;
	w->since = end;
	if (lo >= hi)
		return;
	struct host_answer *a = w->a;
	/* In the host after a HLT is KVM's halt polling: the guest is idle. */
	const bool polling = w->state == HOST_ST_IN_HOST && host_exit_is_halt(w->isa, w->reason);
	const enum host_state s = polling ? HOST_ST_HALTED : w->state;
	a->state_ns[s] += hi - lo;
	add_stretch(a, lo, hi, s, w->cpu);
	if (w->state == HOST_ST_IN_HOST) {
		struct host_exit_reason *x = exit_slot(w, w->reason, w->isa);
		if (x)
			x->ns += hi - lo;
		else
			a->exits_other_ns += hi - lo;
	} else if (w->state == HOST_ST_PREEMPTED) {
		rank_ran(w, lo, hi);
	}
}

static void migrate(struct walk *w, uint64_t ts, int from_cpu, int to_cpu)
{
	w->cpu = to_cpu;
	if (from_cpu < 0 || from_cpu == to_cpu || ts < w->q->from || ts > w->q->to)
		return;
	struct host_answer *a = w->a;
	if (a->migrations < HOST_MIGRATIONS)
		a->migration[a->migrations] = (struct host_migration){ .ts = ts, .from_cpu = (uint16_t)from_cpu,
									.to_cpu = (uint16_t)to_cpu };
	a->migrations++;
}

static enum host_state switched_out_as(const struct trace_ev *e)
{
	if (!(e->arg & TRACE_SWITCH_STATE_KNOWN))
		return HOST_ST_OFF;
	const uint64_t st = e->arg & TRACE_SWITCH_STATE_MASK;
	if (st == 0)
		return HOST_ST_PREEMPTED;
	return st & TRACE_SWITCH_STATE_STOPPED ? HOST_ST_STOPPED : HOST_ST_HALTED;
}

static void copy_comm(struct host_answer *a, const char *comm)
{
	memcpy(a->comm, comm, TRACE_COMM_LEN);
	a->comm[TRACE_COMM_LEN - 1u] = '\0';
}

/* One of the thread's switches; a first event also says what came before it. */
static void on_switch(struct walk *w, const struct trace_ev *e)
{
	if (e->prev_pid == w->q->tid) {
		if (w->state == HOST_ST_UNKNOWN)
			w->state = w->in_exit ? HOST_ST_IN_HOST : HOST_ST_GUEST;
		emit(w, e->ts);
		w->state = switched_out_as(e);
		w->cpu = e->cpu;
		copy_comm(w->a, e->prev_comm);
		return;
	}
	if (w->state == HOST_ST_UNKNOWN || w->state == HOST_ST_OFF) {
		/* Switched in with no wakeup since it went: it never slept. */
		w->a->inferred |= w->state == HOST_ST_OFF;
		w->state = HOST_ST_PREEMPTED;
	}
	emit(w, e->ts);
	migrate(w, e->ts, w->cpu, e->cpu);
	w->state = w->in_exit ? HOST_ST_IN_HOST : HOST_ST_GUEST;
	copy_comm(w->a, e->comm);
}

static void on_wakeup(struct walk *w, const struct trace_ev *e)
{
	if (w->state == HOST_ST_OFF || w->state == HOST_ST_UNKNOWN) {
		w->a->inferred |= w->state == HOST_ST_OFF;
		w->state = HOST_ST_HALTED;
	}
	if (w->state != HOST_ST_HALTED && w->state != HOST_ST_STOPPED)
		return;                 /* a second wakeup event, or a wakeup of a running thread */
	emit(w, e->ts);
	w->state = HOST_ST_PREEMPTED;   /* runnable now: waiting for a CPU */
}

static void on_kvm(struct walk *w, const struct trace_ev *e)
{
	const bool is_exit = e->type == TRACE_EV_KVM_EXIT;
	w->a->kvm = true;
	if (w->state == HOST_ST_UNKNOWN)
		w->state = is_exit ? HOST_ST_GUEST : HOST_ST_IN_HOST;
	emit(w, e->ts);
	w->in_exit = is_exit;
	w->state = is_exit ? HOST_ST_IN_HOST : HOST_ST_GUEST;
	w->cpu = e->cpu;
	if (!is_exit)
		return;
	w->reason = e->arg;
	w->isa = (uint8_t)e->arg2;
	if (e->ts >= w->q->from && e->ts <= w->q->to) {
		struct host_exit_reason *x = exit_slot(w, e->arg, (uint8_t)e->arg2);
		if (x)
			x->count++;
		w->a->exits_total++;
	}
}

static void on_event(struct walk *w, const struct trace_ev *e)
{
	const int32_t tid = w->q->tid;
	switch (e->type) {
	case TRACE_EV_SCHED_SWITCH:
		if (e->prev_pid == tid || e->pid == tid)
			on_switch(w, e);
		break;
	case TRACE_EV_SCHED_WAKING:
	case TRACE_EV_SCHED_WAKEUP:
		if (e->pid == tid)
			on_wakeup(w, e);
		break;
	case TRACE_EV_KVM_EXIT:
	case TRACE_EV_KVM_ENTRY:
		if (e->pid == tid)
			on_kvm(w, e);
		break;
	case TRACE_EV_SCHED_MIGRATE:
		if (e->pid == tid) {
			emit(w, e->ts);         /* what it waited for before the move was on the old CPU */
			migrate(w, e->ts, (int)e->arg2, (int)e->arg);
		}
		break;
	case TRACE_EV_LOST:
		if (e->ts > w->q->from && e->ts <= w->q->to) {
			w->a->lost += e->arg;
			w->a->covered = false;
		}
		break;
	default:
		break;
	}
}

static int by_ran_ns(const void *pa, const void *pb)
{
	const struct host_ran *a = pa, *b = pb;
	return a->ns != b->ns ? (a->ns > b->ns ? -1 : 1) : a->id - b->id;
}

static int by_exit_ns(const void *pa, const void *pb)
{
	const struct host_exit_reason *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->count != b->count ? (a->count > b->count ? -1 : 1) : (a->reason < b->reason ? -1 : 1);
}

/* The policy of pid from its last switch-in up to the interval's end whose collector knew it. */
static int32_t policy_of(const struct walk *w, int32_t pid)
{
	int32_t policy = HOST_POLICY_UNKNOWN;
	for (size_t i = 0; i < w->n && w->ev[i].ts <= w->q->to; i++) {
		const struct trace_ev *e = &w->ev[i];
		if (e->type == TRACE_EV_SCHED_SWITCH && e->pid == pid && (e->arg2 & TRACE_SWITCH_POLICY_KNOWN))
			policy = (int32_t)(e->arg2 & UINT64_C(0xffffffff));
	}
	return policy;
}

/* Keep the largest of the walk's tallies in the answer. */
static void keep_top(struct walk *w)
{
	struct host_answer *a = w->a;
	qsort(w->ran, w->nran, sizeof(w->ran[0]), by_ran_ns);
	for (unsigned i = 0; i < w->nran; i++) {
		if (i < HOST_TOP)
			a->ran[a->nran++] = w->ran[i];
		else
			a->ran_other_ns += w->ran[i].ns;
	}
	for (unsigned i = 0; i < a->nran; i++)
		if (a->ran[i].kind == HOST_RAN_TASK || a->ran[i].kind == HOST_RAN_VCPU)
			a->ran[i].policy = policy_of(w, a->ran[i].id);
	qsort(w->exits, w->nexits, sizeof(w->exits[0]), by_exit_ns);
	for (unsigned i = 0; i < w->nexits; i++) {
		if (i < HOST_REASONS && (w->exits[i].ns || w->exits[i].count))
			a->exits[a->nexits++] = w->exits[i];
		else
			a->exits_other_ns += w->exits[i].ns;
	}
}

static void coverage(struct walk *w)
{
	struct host_answer *a = w->a;
	const struct host_query *q = w->q;
	if (w->n == 0)
		return;
	a->covered_from = w->ev[0].ts > q->complete_from ? w->ev[0].ts : q->complete_from;
	a->covered_to = w->ev[w->n - 1u].ts;
	a->covered = a->covered_from <= q->from && a->covered_to >= q->to;
}

int host_explain(const struct trace_ev *ev, size_t n, const struct host_query *q, struct host_answer *ret)
{
	if (q->to < q->from || q->tid <= 0)
		return -EINVAL;
	struct walk walk = { .ev = ev, .n = n, .q = q, .a = ret, .state = HOST_ST_UNKNOWN, .since = q->from, .cpu = -1 };
	struct walk *w = &walk;
	memset(ret, 0, sizeof(*ret));
	ret->q = *q;
	coverage(w);
	if (!ret->covered && ret->covered_from > q->from)
		emit(w, ret->covered_from);     /* unknown up to where the events begin */
	for (size_t i = 0; i < n; i++) {
		/* Past the interval only to learn why an open switch-out happened. */
		if (ev[i].ts > q->to && w->state != HOST_ST_OFF && w->state != HOST_ST_UNKNOWN)
			break;
		on_event(w, &ev[i]);
	}
	if (ret->covered_to < q->to) {
		emit(w, ret->covered_to);       /* the events end: the rest is unknown */
		w->state = HOST_ST_UNKNOWN;
	}
	emit(w, q->to);
	keep_top(w);
	ret->not_running_ns = ret->state_ns[HOST_ST_PREEMPTED] + ret->state_ns[HOST_ST_HALTED] +
			      ret->state_ns[HOST_ST_STOPPED] + ret->state_ns[HOST_ST_OFF];
	ret->in_host_ns = ret->state_ns[HOST_ST_IN_HOST];
	if (ret->q.vcpu < 0)
		ret->q.vcpu = host_vcpu_of_comm(ret->comm);
	return 0;
}
