/*
 * Per-thread recorder: the measuring thread owns the current window; finished
 * windows go to the main thread through a small ring of slots whose ownership is
 * handed over with one atomic store each way.  No lock, no allocation and no
 * system call on the measuring side.
 *
 * When every slot is still waiting for the reader, the writer keeps filling its
 * current window (it simply covers a longer span): a stalled reader delays
 * windows but never loses a sample.
 */
#ifndef LATSCOPE_PROBE_RECORDER_H
#define LATSCOPE_PROBE_RECORDER_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/hist.h"
#include "core/linhist.h"
#include "core/stats.h"
#include "core/window.h"

#define REC_SLOTS 4
#define REC_NO_THRESHOLD UINT64_MAX

enum { SLOT_WRITER, SLOT_READER };

struct rec_slot {
	_Alignas(64) struct rec_window w;
	struct hist *hist;              /* nmetrics histograms */
	_Atomic unsigned owner;
};

/* One sample's span, for matching it with kernel trace events after the run. */
struct rec_span {
	uint64_t from_ns;               /* the deadline (or the gap's start) */
	uint64_t to_ns;                 /* the clock read on wakeup (or the gap's end) */
};

struct rec_log {
	struct rec_span *spans;         /* NULL: not logging */
	size_t cap, n;
	uint64_t dropped;               /* samples past cap */
};

struct recorder {
	/* the writer's per-sample state, in one cache line */
	_Alignas(64) struct rec_window *cur;    /* writer's window and histograms */
	struct hist *cur_hist;
	uint64_t next_boundary;         /* absolute: when the current window ends */
	uint64_t threshold[REC_MAX_METRICS];
	unsigned nmetrics;
	unsigned light;                 /* bit m: metric m is recorded light (see rec_light_add) */
	unsigned wi;                    /* writer's slot */
	uint64_t origin_ns;             /* absolute CLOCK_MONOTONIC (or the probe's clock in ns) */
	uint64_t window_ns;
	/* the run's largest values of metric 0: writer's, read after join */
	uint64_t top_floor;             /* a value must beat this to enter */
	unsigned ntop;
	struct rec_event top[REC_TOP];
	struct rec_log log;             /* writer's, read after join */
	struct lin_hist *lin;           /* NULL, or cyclictest's histogram of metric 0 (not owned) */
	_Alignas(64) unsigned ri;       /* reader's next slot: apart from the writer's line */
	struct rec_slot slots[REC_SLOTS];
};

/* Allocate and pre-fault every slot.  thresholds may be NULL (none).  -ENOMEM. */
int rec_init(struct recorder *r, unsigned nmetrics, const uint64_t *thresholds, uint64_t window_ns);
void rec_free(struct recorder *r);
/* Keep every sample's span, up to cap of them (allocated and pre-faulted now). -ENOMEM. */
int rec_log_init(struct recorder *r, size_t cap);

/* Writer: open window 0 at origin (call once, on the measuring thread). */
void rec_start(struct recorder *r, uint64_t origin_ns);

void rec_rotate(struct recorder *r, uint64_t now_ns);

/* Writer: close the window that contains now if its span has passed. */
static inline void rec_tick(struct recorder *r, uint64_t now_ns)
{
	if (__builtin_expect(now_ns >= r->next_boundary, 0))
		rec_rotate(r, now_ns);
}

static inline void rec_value(struct recorder *r, unsigned metric, uint64_t v)
{
	struct rec_metric *m = &r->cur->m[metric];
	stats_add(&m->st, v);
	hist_record(&r->cur_hist[metric], v);
	if (__builtin_expect(v > r->threshold[metric], 0)) {
		m->above++;
		m->above_ns += v;
	}
}

/*
 * Light recording, for metrics recorded tens of millions of times a second
 * (the noise probe's gaps): the probe counts n, sum, min and max itself and
 * adds them now and then; the histogram takes every value.  The reader then
 * derives the mean exactly and the variance from the histogram (within its
 * error), sparing the writer a division per value.
 */
void rec_set_light(struct recorder *r, unsigned metric);

static inline void rec_light_add(struct recorder *r, unsigned metric, uint64_t n, uint64_t sum, uint64_t min,
				 uint64_t max)
{
	struct rec_metric *m = &r->cur->m[metric];
	m->st.n += n;
	m->sum += sum;
	if (min < m->st.min)
		m->st.min = min;
	if (max > m->st.max)
		m->st.max = max;
}

/* The threshold test of a light value: call for the values above r->threshold only. */
static inline void rec_light_above(struct recorder *r, unsigned metric, uint64_t v)
{
	r->cur->m[metric].above++;
	r->cur->m[metric].above_ns += v;
}

void rec_top_insert(struct recorder *r, uint64_t v, uint64_t now_ns);

/* Keep v among the run's largest values of metric 0 when it is one of them. */
static inline void rec_top(struct recorder *r, uint64_t v, uint64_t now_ns)
{
	if (__builtin_expect(v > r->top_floor, 0))
		rec_top_insert(r, v, now_ns);
}

static inline void rec_log(struct recorder *r, uint64_t from_ns, uint64_t to_ns)
{
	struct rec_log *l = &r->log;
	if (__builtin_expect(!l->spans, 1))
		return;
	if (l->n < l->cap)
		l->spans[l->n++] = (struct rec_span){ from_ns, to_ns };
	else
		l->dropped++;
}

/* Count metric 0's value the way cyclictest does too, when asked to. */
static inline void rec_lin(struct recorder *r, uint64_t v)
{
	if (__builtin_expect(r->lin != NULL, 0))
		lin_hist_record(r->lin, v);
}

static inline void rec_missed(struct recorder *r, uint64_t n)
{
	r->cur->missed += n;
}

static inline void rec_overhead(struct recorder *r, uint64_t ns)
{
	stats_add(&r->cur->overhead, ns);
}

/* Writer, at the end: the current window ends at now.  The reader takes it after join. */
void rec_finish(struct recorder *r, uint64_t now_ns);

/* Reader: the oldest window handed over, or NULL.  hist points at nmetrics histograms. */
const struct rec_window *rec_peek(struct recorder *r, const struct hist **ret_hist);
/* Reader: give the slot returned by rec_peek back to the writer. */
void rec_release(struct recorder *r);
/* Reader, after the writer thread has been joined: the writer's last window. */
const struct rec_window *rec_last(struct recorder *r, const struct hist **ret_hist);

#endif
