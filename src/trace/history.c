#include "trace/history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/evbuf.h"

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
