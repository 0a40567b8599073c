#include "probe/recorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void window_reset(struct rec_window *w, struct hist *h, unsigned nmetrics)
{
	memset(w, 0, sizeof(*w));
	stats_reset(&w->overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		stats_reset(&w->m[m].st);
	for (unsigned m = 0; m < nmetrics; m++)
		hist_reset(&h[m]);     /* also pre-faults the pages before measuring */
}

int rec_init(struct recorder *r, unsigned nmetrics, const uint64_t *thresholds, uint64_t window_ns)
{
	if (nmetrics == 0 || nmetrics > REC_MAX_METRICS || window_ns == 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->nmetrics = nmetrics;
	r->window_ns = window_ns;
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		r->threshold[m] = thresholds && m < nmetrics ? thresholds[m] : REC_NO_THRESHOLD;
	for (unsigned i = 0; i < REC_SLOTS; i++) {
		struct rec_slot *s = &r->slots[i];
		s->hist = malloc(nmetrics * sizeof(struct hist));
		if (!s->hist) {
			rec_free(r);
			return -ENOMEM;
		}
		window_reset(&s->w, s->hist, nmetrics);
		atomic_init(&s->owner, SLOT_WRITER);
	}
	r->cur = &r->slots[0].w;
	r->cur_hist = r->slots[0].hist;
	r->next_boundary = UINT64_MAX;
	r->trigger = REC_NO_THRESHOLD;
	atomic_init(&r->trig_ready, 0u);
	atomic_init(&r->trig_count, 0u);
	return 0;
}

void rec_set_trigger(struct recorder *r, uint64_t trigger_ns)
{
	r->trigger = trigger_ns ? trigger_ns : REC_NO_THRESHOLD;
}

bool rec_trigger_take(struct recorder *r, struct rec_trigger *ret)
{
	if (!atomic_load_explicit(&r->trig_ready, memory_order_acquire))
		return false;
	*ret = r->trig;
	atomic_store_explicit(&r->trig_ready, 0u, memory_order_release);
	return true;
}

void rec_free(struct recorder *r)
{
	for (unsigned i = 0; i < REC_SLOTS; i++) {
		free(r->slots[i].hist);
		r->slots[i].hist = NULL;
	}
	r->cur = NULL;
	r->cur_hist = NULL;
	free(r->log.spans);
	memset(&r->log, 0, sizeof(r->log));
	if (r->keep & REC_KEEP_LIN)
		lin_hist_free(&r->lin);
	r->keep = 0;
}

int rec_log_init(struct recorder *r, size_t cap)
{
	free(r->log.spans);
	memset(&r->log, 0, sizeof(r->log));
	r->keep &= ~(unsigned)REC_KEEP_SPANS;
	if (cap == 0)
		return 0;
	r->log.spans = malloc(cap * sizeof(*r->log.spans));
	if (!r->log.spans)
		return -ENOMEM;
	/* Touch every page now: a first write during the run would be a page fault. */
	memset(r->log.spans, 0, cap * sizeof(*r->log.spans));
	r->log.cap = cap;
	r->keep |= REC_KEEP_SPANS;
	return 0;
}

void rec_lin_take(struct recorder *r, struct lin_hist *h)
{
	if (r->keep & REC_KEEP_LIN)
		lin_hist_free(&r->lin);
	lin_hist_move(&r->lin, h);
	r->keep |= REC_KEEP_LIN;
}

void rec_lin_figures(const struct recorder *r, struct lin_hist *h)
{
	if (r->keep & REC_KEEP_LIN)
		lin_hist_copy_figures(h, &r->lin);
}

void rec_lin_give(struct recorder *r, struct lin_hist *h)
{
	if (!(r->keep & REC_KEEP_LIN))
		return;
	lin_hist_free(h);
	lin_hist_move(h, &r->lin);
	r->keep &= ~(unsigned)REC_KEEP_LIN;
}

void rec_start(struct recorder *r, uint64_t origin_ns)
{
	r->origin_ns = origin_ns;
	r->cur->index = 0;
	r->cur->start_ns = 0;
	r->next_boundary = origin_ns + r->window_ns;
}

void rec_rotate(struct recorder *r, uint64_t now_ns)
{
	uint64_t idx = (now_ns - r->origin_ns) / r->window_ns;
	unsigned next = (r->wi + 1u) % REC_SLOTS;

	if (atomic_load_explicit(&r->slots[next].owner, memory_order_acquire) != SLOT_WRITER) {
		/* The reader is behind: this window grows to cover the one containing now. */
		r->next_boundary = r->origin_ns + (idx + 1u) * r->window_ns;
		return;
	}
	r->cur->end_ns = r->next_boundary - r->origin_ns;
	atomic_store_explicit(&r->slots[r->wi].owner, SLOT_READER, memory_order_release);

	r->wi = next;
	r->cur = &r->slots[next].w;
	r->cur_hist = r->slots[next].hist;
	r->cur->index = idx;
	r->cur->start_ns = idx * r->window_ns;
	r->next_boundary = r->origin_ns + (idx + 1u) * r->window_ns;
}

void rec_top_insert(struct recorder *r, uint64_t v, uint64_t now_ns)
{
	struct rec_event e = { .at_ns = now_ns > r->origin_ns ? now_ns - r->origin_ns : 0, .value = v };
	unsigned at = r->ntop;

	if (r->ntop < REC_TOP) {
		r->ntop++;
	} else {
		at = 0;                 /* replace the smallest */
		for (unsigned i = 1; i < REC_TOP; i++)
			if (r->top[i].value < r->top[at].value)
				at = i;
	}
	r->top[at] = e;
	if (r->ntop < REC_TOP)
		return;
	r->top_floor = r->top[0].value;
	for (unsigned i = 1; i < REC_TOP; i++)
		if (r->top[i].value < r->top_floor)
			r->top_floor = r->top[i].value;
}

void rec_finish(struct recorder *r, uint64_t now_ns)
{
	uint64_t end = now_ns > r->origin_ns ? now_ns - r->origin_ns : 0;
	r->cur->end_ns = end > r->cur->start_ns ? end : r->cur->start_ns;
}

void rec_set_light(struct recorder *r, unsigned metric)
{
	r->light |= 1u << metric;
}

/* Reader: mean and m2 of light metrics, from their sum and histogram. */
static void finish_light(const struct recorder *r, struct rec_window *w, const struct hist *h)
{
	for (unsigned m = 0; m < r->nmetrics; m++) {
		struct stats *st = &w->m[m].st;
		if (!(r->light >> m & 1u) || st->n == 0)
			continue;
		st->mean = (double)w->m[m].sum / (double)st->n;
		double m2 = 0.0;
		for (unsigned i = hist_next(&h[m], 0); i < HIST_BUCKETS; i = hist_next(&h[m], i + 1u)) {
			double d = (double)hist_bucket_value(i) - st->mean;
			m2 += d * d * (double)h[m].counts[i];
		}
		st->m2 = m2;
		w->m[m].sum = 0;
	}
}

const struct rec_window *rec_peek(struct recorder *r, const struct hist **ret_hist)
{
	struct rec_slot *s = &r->slots[r->ri];

	if (atomic_load_explicit(&s->owner, memory_order_acquire) != SLOT_READER)
		return NULL;
	finish_light(r, &s->w, s->hist);
	*ret_hist = s->hist;
	return &s->w;
}

void rec_release(struct recorder *r)
{
	struct rec_slot *s = &r->slots[r->ri];

	window_reset(&s->w, s->hist, r->nmetrics);
	atomic_store_explicit(&s->owner, SLOT_WRITER, memory_order_release);
	r->ri = (r->ri + 1u) % REC_SLOTS;
}

const struct rec_window *rec_last(struct recorder *r, const struct hist **ret_hist)
{
	finish_light(r, r->cur, r->cur_hist);
	*ret_hist = r->cur_hist;
	return r->cur;
}

const struct rec_event *rec_largest(const struct recorder *r, unsigned *ret_n)
{
	*ret_n = r->ntop;
	return r->top;
}

const struct rec_log *rec_spans(const struct recorder *r)
{
	return &r->log;
}
