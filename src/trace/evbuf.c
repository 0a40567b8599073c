#include <errno.h>
#include <stdlib.h>

#include "trace/evbuf.h"

int trace_events_new(unsigned ncpus, uint64_t max_bytes, struct trace_events **ret)
{
	if (ncpus == 0 || ncpus > 256)    /* trace_ev.cpu is one byte */
		return -EINVAL;
	if (max_bytes == 0)
		max_bytes = TRACE_EVBUF_DEFAULT_MAX_BYTES;

	struct trace_events *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cpu = calloc(ncpus, sizeof(*e->cpu));
	if (!e->cpu) {
		free(e);
		return -ENOMEM;
	}
	e->ncpus = ncpus;
	e->max_events = (size_t)(max_bytes / sizeof(struct trace_ev));
	if (e->max_events == 0)
		e->max_events = 1;
	*ret = e;
	return 0;
}

void trace_events_free(struct trace_events *e)
{
	if (!e)
		return;
	for (unsigned c = 0; c < e->ncpus; c++)
		free(e->cpu[c].ev);
	free(e->cpu);
	free(e);
}

int trace_events_append(struct trace_events *e, const struct trace_ev *ev)
{
	if (ev->cpu >= e->ncpus)
		return -ERANGE;
	struct trace_cpu_events *c = &e->cpu[ev->cpu];

	if (c->n == c->cap) {
		if (c->cap >= e->max_events) {
			c->capped++;
			return -E2BIG;
		}
		/* Doubling keeps appends amortised O(1); the cap bounds the last step. */
		size_t cap = c->cap ? c->cap * 2 : 4096;
		if (cap > e->max_events)
			cap = e->max_events;
		struct trace_ev *p = realloc(c->ev, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->ev = p;
		c->cap = cap;
	}
	c->ev[c->n++] = *ev;
	return 0;
}

uint64_t trace_events_lost(const struct trace_events *e)
{
	uint64_t sum = 0;
	for (unsigned c = 0; c < e->ncpus; c++)
		sum += e->cpu[c].lost + e->cpu[c].capped;
	return sum;
}

size_t trace_ev_lower_bound(const struct trace_ev *ev, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ev[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
