#include "trace/causes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Entries are appended, then sorted and merged in place whenever the array fills:
 * a run of thousands of events from a few dozen causes stays small and linear. */
#define CAUSES_MIN 256

static int by_who(const void *pa, const void *pb)
{
	const struct trace_contrib *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return strncmp(a->name, b->name, sizeof(a->name));
}

static int by_ns(const void *pa, const void *pb)
{
	const struct trace_contrib *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return by_who(pa, pb);   /* a stable order for ties */
}

static void merge(struct trace_causes *c)
{
	size_t out = 0;

	if (!c->n)
		return;
	qsort(c->v, c->n, sizeof(*c->v), by_who);
	for (size_t i = 1; i < c->n; i++) {
		struct trace_contrib *last = &c->v[out];
		if (by_who(last, &c->v[i]) == 0) {
			/* a task's priority is kept from one of its entries: it rarely changes mid-run */
			last->ns += c->v[i].ns;
			last->count += c->v[i].count;
		} else {
			c->v[++out] = c->v[i];
		}
	}
	c->n = out + 1;
}

int trace_causes_add(struct trace_causes *c, const struct trace_occupancy *occ)
{
	if (!occ->ntop) {
		c->other_ns += occ->other_ns;
		return 0;
	}
	if (c->n + occ->ntop > c->cap) {
		merge(c);
		if (c->n + occ->ntop > c->cap / 2) {
			size_t cap = c->cap ? 2 * c->cap : CAUSES_MIN;
			struct trace_contrib *v = realloc(c->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			c->v = v;
			c->cap = cap;
		}
	}
	memcpy(c->v + c->n, occ->top, occ->ntop * sizeof(*occ->top));
	c->n += occ->ntop;
	c->other_ns += occ->other_ns;
	return 0;
}

void trace_causes_rank(struct trace_causes *c)
{
	merge(c);
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), by_ns);
}

void trace_causes_free(struct trace_causes *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}
