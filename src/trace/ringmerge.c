/* The ring's pure part (trace/ring.h): per-CPU losses, and the merge. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/evbuf.h"
#include "trace/ring.h"

static void add_gap(struct trace_ring_cpu *c, uint64_t ts, uint64_t lost)
{
	if (c->ngap == TRACE_RING_GAPS) {
		memmove(c->gap, c->gap + 1, (TRACE_RING_GAPS - 1) * sizeof(*c->gap));
		c->ngap--;
	}
	c->gap[c->ngap++] = (struct trace_ring_gap){ .ts = ts, .lost = lost };
}

int trace_ring_cpu_add(struct trace_ring_cpu *c, const struct trace_ev *batch, size_t n,
		       uint64_t lost_total, uint64_t capped, uint64_t now, uint64_t keep_ns)
{
	uint64_t counted = lost_total > c->h.lost_seen ? lost_total - c->h.lost_seen : 0;
	uint64_t marked = 0;
	size_t nmarks = 0;

	for (size_t i = 0; i < n; i++) {
		if (batch[i].type == TRACE_EV_LOST) {
			add_gap(c, batch[i].ts, batch[i].arg);
			marked += batch[i].arg;
			nmarks++;
		}
	}
	/* The kernel's count covers losses the markers did not size: put them
	 * at the first marker, or where spike_history_add() puts the gap. */
	if (counted > marked) {
		if (nmarks)
			c->gap[c->ngap - (nmarks < c->ngap ? nmarks : c->ngap)].lost +=
				counted - marked;
		else
			add_gap(c, n ? batch[0].ts : now, counted - marked);
	}
	int r = spike_history_add(&c->h, batch, n, lost_total, now, keep_ns);
	if (capped) {
		/* The newest events were not stored: a gap after the last one. */
		c->h.n = 0;
		c->h.held_from = now;
		add_gap(c, now, capped);
	}
	size_t keep = 0;
	while (keep < c->ngap && now > keep_ns && c->gap[keep].ts < now - keep_ns)
		keep++;
	memmove(c->gap, c->gap + keep, (c->ngap - keep) * sizeof(*c->gap));
	c->ngap -= keep;
	return r;
}

/* A run of time-ordered events; src orders ties (the markers' run first). */
struct cursor {
	const struct trace_ev *p, *end;
	size_t src;
};

static bool before(const struct cursor *a, const struct cursor *b)
{
	return a->p->ts != b->p->ts ? a->p->ts < b->p->ts : a->src < b->src;
}

static void sift_down(struct cursor *h, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (r < n && before(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct cursor t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int by_time_then_cpu(const void *a, const void *b)
{
	const struct trace_ev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* The markers of the gaps in [from, to], time-ordered, malloc'ed; -ENOMEM. */
static int markers(const struct trace_ring_cpu *const *cpu, size_t ncpu, uint64_t from, uint64_t to,
		   struct trace_ev **ret, size_t *ret_n, uint64_t *ret_lost)
{
	size_t n = 0;
	for (size_t c = 0; c < ncpu; c++)
		for (size_t g = 0; cpu[c] && g < cpu[c]->ngap; g++)
			n += cpu[c]->gap[g].ts >= from && cpu[c]->gap[g].ts <= to;
	*ret = NULL;
	*ret_n = 0;
	*ret_lost = 0;
	if (!n)
		return 0;
	struct trace_ev *m = calloc(n, sizeof(*m));
	if (!m)
		return -ENOMEM;
	size_t k = 0;
	for (size_t c = 0; c < ncpu; c++) {
		for (size_t g = 0; cpu[c] && g < cpu[c]->ngap; g++) {
			const struct trace_ring_gap *gp = &cpu[c]->gap[g];
			if (gp->ts < from || gp->ts > to)
				continue;
			m[k] = (struct trace_ev){ .ts = gp->ts,
						  .type = TRACE_EV_LOST,
						  .cpu = (uint8_t)c,
						  .arg = gp->lost };
			*ret_lost += gp->lost ? gp->lost : 1;
			k++;
		}
	}
	qsort(m, n, sizeof(*m), by_time_then_cpu);
	*ret = m;
	*ret_n = n;
	return 0;
}

int trace_ring_merge(const struct trace_ring_cpu *const *cpu, size_t ncpu, uint64_t from,
		     uint64_t to, struct trace_ev **ret, size_t *ret_n, uint64_t *ret_complete_from,
		     uint64_t *ret_lost)
{
	struct trace_ev *mk = NULL, *out = NULL;
	struct cursor *heap = NULL;
	size_t nmk, total, nh = 0;
	uint64_t complete = 0, lost;

	for (size_t c = 0; c < ncpu; c++)
		if (cpu[c] && cpu[c]->h.held_from > complete)
			complete = cpu[c]->h.held_from;
	if (to < from) {
		*ret = NULL;
		*ret_n = 0;
		*ret_complete_from = complete;
		*ret_lost = 0;
		return 0;
	}
	if (markers(cpu, ncpu, from, to, &mk, &nmk, &lost) < 0)
		return -ENOMEM;
	if (!(heap = calloc(ncpu + 1, sizeof(*heap)))) {
		free(mk);
		return -ENOMEM;
	}
	if (nmk)
		heap[nh++] = (struct cursor){ .p = mk, .end = mk + nmk, .src = 0 };
	total = nmk;
	for (size_t c = 0; c < ncpu; c++) {
		if (!cpu[c])
			continue;
		const struct spike_history *h = &cpu[c]->h;
		size_t lo = trace_ev_lower_bound(h->ev, h->n, from);
		size_t hi = to == UINT64_MAX ? h->n : trace_ev_lower_bound(h->ev, h->n, to + 1);
		if (lo < hi)
			heap[nh++] =
				(struct cursor){ .p = h->ev + lo, .end = h->ev + hi, .src = c + 1 };
		total += hi > lo ? hi - lo : 0;
	}
	if (total && !(out = malloc(total * sizeof(*out)))) {
		free(heap);
		free(mk);
		return -ENOMEM;
	}
	for (size_t i = nh / 2; i-- > 0;)
		sift_down(heap, nh, i);
	for (size_t k = 0; nh > 0; k++) {
		out[k] = *heap[0].p;
		if (++heap[0].p == heap[0].end)
			heap[0] = heap[--nh];
		sift_down(heap, nh, 0);
	}
	free(heap);
	free(mk);
	*ret = out;
	*ret_n = total;
	*ret_complete_from = complete;
	*ret_lost = lost;
	return 0;
}
