/* host_answer_line: the answer in one line of a spike's explanation. */
#include "host/explain.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/units.h"
#include "host/exitreason.h"

static void dur(uint64_t ns, char *buf, size_t size)
{
	fmt_duration3(ns, buf, size);
}

/* "FIFO 50", "RT 50" (policy unknown), "DEADLINE", "nice 0", "BATCH nice 5". */
static void sched_of(const struct host_ran *r, char *buf, size_t size)
{
	if (r->policy == 6 || r->prio < 0)
		snprintf(buf, size, "DEADLINE");
	else if (r->prio < 100)
		snprintf(buf, size, "%s %d", r->policy == 1 ? "FIFO" : r->policy == 2 ? "RR" : "RT", 99 - r->prio);
	else
		snprintf(buf, size, "%snice %d", r->policy == 3 ? "BATCH " : r->policy == 5 ? "IDLE " : "", r->prio - 120);
}

static void ran_of(const struct host_ran *r, char *buf, size_t size)
{
	char sched[32];
	sched_of(r, sched, sizeof(sched));
	switch (r->kind) {
	case HOST_RAN_TASK:
		snprintf(buf, size, "%s (pid %d, %s)", r->comm, r->id, sched);
		break;
	case HOST_RAN_VCPU:
		snprintf(buf, size, "vCPU thread '%s' (pid %d, %s)", r->comm, r->id, sched);
		break;
	case HOST_RAN_IRQ:
		snprintf(buf, size, "irq %d (%s)", r->id, r->comm);
		break;
	case HOST_RAN_SOFTIRQ:
		snprintf(buf, size, "softirq %s", r->comm);
		break;
	case HOST_RAN_TIMER:
		snprintf(buf, size, "hrtimer callbacks");
		break;
	default:
		snprintf(buf, size, "nothing traced (idle)");
		break;
	}
}

/* Append to buf at *at, as far as it goes. */
__attribute__((format(printf, 4, 5))) static void put(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	if (*at >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	if (r > 0)
		*at += (size_t)r;
}

static void not_covered(const struct host_answer *a, char *buf, size_t size, size_t *at)
{
	char d[32];
	if (a->covered_to <= a->q.from || a->covered_from >= a->q.to) {
		put(buf, size, at, ": the host's events do not reach the interval");
	} else if (a->covered_from > a->q.from) {
		dur(a->covered_from - a->q.from, d, sizeof(d));
		put(buf, size, at, ": the host's events begin %s after the interval's start", d);
	} else if (a->covered_to < a->q.to) {
		dur(a->q.to - a->covered_to, d, sizeof(d));
		put(buf, size, at, ": the host's events end %s before the interval's end", d);
	} else {
		put(buf, size, at, ": the host lost %llu events in the interval", (unsigned long long)a->lost);
	}
}

static void in_host(const struct host_answer *a, char *buf, size_t size, size_t *at)
{
	char d[32], e[32];
	dur(a->in_host_ns, d, sizeof(d));
	put(buf, size, at, " running but in the host for %s: %u exit%s", d, a->exits_total, a->exits_total == 1 ? "" : "s");
	if (!a->nexits)
		return;
	const struct host_exit_reason *x = &a->exits[0];
	const char *name = host_exit_reason_name(x->isa, x->reason);
	dur(x->ns, e, sizeof(e));
	if (name)
		put(buf, size, at, ", %s %s", name, e);
	else
		put(buf, size, at, ", reason %llu %s", (unsigned long long)x->reason, e);
}

void host_answer_line(const struct host_answer *a, char *buf, size_t size)
{
	size_t at = 0;
	char d[32], what[96];
	put(buf, size, &at, "the host: ");
	if (a->q.vcpu >= 0)
		put(buf, size, &at, "vCPU %d", a->q.vcpu);
	else
		put(buf, size, &at, "vCPU thread %d", a->q.tid);
	const uint64_t *ns = a->state_ns;
	const uint64_t hosts = ns[HOST_ST_PREEMPTED] + ns[HOST_ST_STOPPED] + ns[HOST_ST_OFF];
	if (!a->covered) {
		not_covered(a, buf, size, &at);
	} else if (hosts > 0 && hosts >= ns[HOST_ST_HALTED] && hosts >= a->in_host_ns) {
		dur(a->not_running_ns, d, sizeof(d));
		put(buf, size, &at, " (pid %d, '%s') not running for %s", a->q.tid, a->comm, d);
		if (a->nran) {
			ran_of(&a->ran[0], what, sizeof(what));
			dur(a->ran[0].ns, d, sizeof(d));
			put(buf, size, &at, ", host CPU %u ran %s for %s", a->ran[0].cpu, what, d);
		} else if (ns[HOST_ST_STOPPED] >= ns[HOST_ST_PREEMPTED]) {
			put(buf, size, &at, " (stopped)");
		}
	} else if (ns[HOST_ST_HALTED] > 0 && ns[HOST_ST_HALTED] >= a->in_host_ns) {
		put(buf, size, &at, " halted (the guest was idle)");
	} else if (a->in_host_ns > 0) {
		in_host(a, buf, size, &at);
	} else if (ns[HOST_ST_GUEST] > 0) {
		put(buf, size, &at, " running %sthroughout", a->kvm ? "in the guest " : "");
	} else {
		put(buf, size, &at, " (pid %d): no event of its thread tells what it did", a->q.tid);
	}
}
