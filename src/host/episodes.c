#include "host/episodes.h"

#include <errno.h>
#include <stdbool.h>

/* The longest kept so far, as candidate intervals; explained only once chosen. */
struct span {
	uint64_t from, to;
	uint64_t held; /* of it, runnable (or stopped) but not running, or in the host */
};

struct pick {
	struct span *s;
	size_t n, max, more;
};

static void offer(struct pick *p, const struct host_episodes_query *q, uint64_t from, uint64_t to,
		  uint64_t held)
{
	if (held < q->min_ns || from < q->from || from >= q->to)
		return;
	size_t i = p->n;
	if (p->n == p->max) {
		p->more++;
		if (!p->max || p->s[p->n - 1].held >= held)
			return;
		i = --p->n; /* the least held makes room */
	}
	for (; i > 0 && p->s[i - 1].held < held; i--)
		p->s[i] = p->s[i - 1];
	p->s[i] = (struct span){ from, to, held };
	p->n++;
}

/* How a vCPU thread left its CPU, as far as sched_switch tells. */
enum left { LEFT_HELD, LEFT_ASLEEP, LEFT_UNKNOWN };

/* Runnable or stopped is the host's doing; asleep, the guest's (it halted);
 * unknown is taken as held until a wakeup shows that it slept. */
static enum left left_as(const struct trace_ev *e)
{
	if (!(e->arg & TRACE_SWITCH_STATE_KNOWN))
		return LEFT_UNKNOWN;
	const uint64_t st = e->arg & TRACE_SWITCH_STATE_MASK;
	return st == 0 || (st & TRACE_SWITCH_STATE_STOPPED) ? LEFT_HELD : LEFT_ASLEEP;
}

int host_episodes(const struct trace_ev *ev, size_t n, const struct host_episodes_query *q,
		  struct host_answer *ret, size_t max, size_t *ret_n, size_t *ret_more)
{
	struct span spans[HOST_EPISODES_MAX];
	struct pick p = { spans, 0, max < HOST_EPISODES_MAX ? max : HOST_EPISODES_MAX, 0 };
	bool off = false, exited = false;
	enum left left = LEFT_UNKNOWN;
	uint64_t off_at = 0, exit_at = 0, held_at = 0;

	if (q->to < q->from || q->tid <= 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct trace_ev *e = &ev[i];
		switch (e->type) {
		case TRACE_EV_SCHED_SWITCH:
			if (e->prev_pid == q->tid && !off) {
				off = true;
				off_at = held_at = e->ts;
				left = left_as(e);
			}
			if (e->pid == q->tid && off) {
				off = false;
				offer(&p, q, off_at, e->ts,
				      left == LEFT_ASLEEP ? 0 : e->ts - held_at);
			}
			break;
		case TRACE_EV_SCHED_WAKING:
		case TRACE_EV_SCHED_WAKEUP:
			/* It slept until now; a wakeup of a stopped thread (SIGCONT) ends no sleep. */
			if (e->pid == q->tid && off && left != LEFT_HELD) {
				left = LEFT_HELD;
				held_at = e->ts;
			}
			break;
		case TRACE_EV_KVM_EXIT:
			if (e->pid == q->tid && !exited) {
				exited = true;
				exit_at = e->ts;
			}
			break;
		case TRACE_EV_KVM_ENTRY:
			if (e->pid == q->tid && exited) {
				exited = false;
				offer(&p, q, exit_at, e->ts, e->ts - exit_at);
			}
			break;
		default: break;
		}
	}
	if (n && off)
		offer(&p, q, off_at, ev[n - 1].ts,
		      left == LEFT_ASLEEP ? 0 : ev[n - 1].ts - held_at);
	for (size_t i = 0; i < p.n; i++) {
		const struct host_query hq = { .tid = q->tid,
					       .vcpu = q->vcpu,
					       .from = spans[i].from,
					       .to = spans[i].to,
					       .complete_from = q->complete_from };
		host_explain(ev, n, &hq, &ret[i]);
	}
	*ret_n = p.n;
	*ret_more = p.more;
	return 0;
}
