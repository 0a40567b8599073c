#include "host/timeline.h"

#include <errno.h>
#include <stdlib.h>

static int grow(void **p, size_t *cap, size_t need, size_t size, size_t max)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	if (c > max)
		c = max;
	void *n = realloc(*p, c * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

int host_timeline_offset(struct host_timeline *t, uint64_t guest_ns, int64_t offset_ns,
			 uint64_t bound_ns)
{
	if (t->npt && guest_ns <= t->pt[t->npt - 1].guest_ns)
		return 0;
	if (t->npt == HOST_TIMELINE_POINTS) {
		/* A week of seconds: thin the older half to every other point. */
		size_t j = 0;
		for (size_t i = 0; i < t->npt; i++)
			if (i >= t->npt / 2 || i % 2 == 0)
				t->pt[j++] = t->pt[i];
		t->npt = j;
	}
	if (grow((void **)&t->pt, &t->cappt, t->npt + 1, sizeof(*t->pt), HOST_TIMELINE_POINTS) < 0)
		return -ENOMEM;
	t->pt[t->npt++] = (struct host_offset_pt){ guest_ns, offset_ns, bound_ns };
	return 0;
}

/* What the host held the vCPU by in a: its not running (but asleep) and its time in the host. */
static uint64_t held_of(const struct host_answer *a)
{
	return a->state_ns[HOST_ST_PREEMPTED] + a->state_ns[HOST_ST_STOPPED] +
	       a->state_ns[HOST_ST_OFF] + a->state_ns[HOST_ST_IN_HOST];
}

int host_timeline_episode(struct host_timeline *t, unsigned vcpu, const struct host_answer *a)
{
	const struct host_episode e = { .vcpu = vcpu, .held_ns = held_of(a), .a = *a };

	if (t->nep == HOST_TIMELINE_EPISODES) {
		size_t least = 0;
		for (size_t i = 1; i < t->nep; i++)
			if (t->ep[i].held_ns < t->ep[least].held_ns)
				least = i;
		t->dropped++;
		if (t->ep[least].held_ns < e.held_ns)
			t->ep[least] = e;
		return 0;
	}
	if (grow((void **)&t->ep, &t->capep, t->nep + 1, sizeof(*t->ep), HOST_TIMELINE_EPISODES) <
	    0)
		return -ENOMEM;
	t->ep[t->nep++] = e;
	return 0;
}

void host_timeline_free(struct host_timeline *t)
{
	free(t->pt);
	free(t->ep);
	*t = (struct host_timeline){ 0 };
}

int host_timeline_host_of(const struct host_timeline *t, uint64_t guest_ns, uint64_t *ret_host_ns,
			  uint64_t *ret_bound_ns)
{
	if (!t->npt)
		return -ENOENT;
	size_t lo = 0, hi = t->npt;
	while (lo < hi) { /* the first point at or after guest_ns */
		size_t mid = lo + (hi - lo) / 2;
		if (t->pt[mid].guest_ns < guest_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct host_offset_pt *b = &t->pt[lo < t->npt ? lo : t->npt - 1],
				    *a = lo ? &t->pt[lo - 1] : b;
	int64_t off = a->offset_ns;
	if (a != b && b->guest_ns > a->guest_ns)
		off += (int64_t)((double)(b->offset_ns - a->offset_ns) *
				 (double)(guest_ns - a->guest_ns) /
				 (double)(b->guest_ns - a->guest_ns));
	*ret_host_ns = (uint64_t)((int64_t)guest_ns + off);
	*ret_bound_ns = a->bound_ns > b->bound_ns ? a->bound_ns : b->bound_ns;
	return 0;
}

int host_timeline_match(const struct host_timeline *t, unsigned vcpu, uint64_t guest_from,
			uint64_t guest_to, struct host_match *ret)
{
	struct host_match m = { 0 };
	uint64_t b1, b2;

	if (host_timeline_host_of(t, guest_from, &m.host_from, &b1) < 0 ||
	    host_timeline_host_of(t, guest_to, &m.host_to, &b2) < 0)
		return -ENOENT;
	m.bound_ns = b1 > b2 ? b1 : b2;
	m.supported = m.bound_ns < guest_to - guest_from;
	const uint64_t lo = m.host_from > m.bound_ns ? m.host_from - m.bound_ns : 0,
		       hi = m.host_to + m.bound_ns;
	for (size_t i = 0; i < t->nep; i++) {
		const struct host_episode *e = &t->ep[i];
		if (e->vcpu != vcpu || e->a.q.to <= lo || e->a.q.from >= hi)
			continue;
		const uint64_t ov =
			(e->a.q.to < hi ? e->a.q.to : hi) - (e->a.q.from > lo ? e->a.q.from : lo);
		if (!m.ep || ov > m.overlap_ns) {
			m.ep = e;
			m.overlap_ns = ov;
		}
	}
	*ret = m;
	return 0;
}
