/*
 * Per-thread recorder: the measuring thread owns the current window; finished
 * windows go to the main thread through a small ring of slots whose ownership is
 * handed over with one atomic store each way.  No lock, no allocation and no
 * system call on the measuring side.
 *
 * When every slot is still waiting for the reader, the writer keeps filling its
 * current window (it simply covers a longer span): a stalled reader delays
 * windows but never loses a sample.
 *
 * A probe records through rec_sample (one call a sample) or, for values too
 * many to time one by one, the light batch (rec_batch_begin, rec_light,
 * rec_batch_end).  The order of what a sample goes to is defined there once;
 * the steps they are made of (rec_tick, rec_value...) are the recorder's own
 * and its unit tests', not the probes'.  The measuring thread writes only
 * recorder memory: cyclictest's histogram too is the recorder's for the run
 * and is handed back to the result after it (rec_lin_take, rec_lin_give).
 */
#ifndef LATSCOPE_PROBE_RECORDER_H
#define LATSCOPE_PROBE_RECORDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/hist.h"
#include "core/linhist.h"
#include "core/nstime.h"
#include "core/stats.h"
#include "core/window.h"

#define REC_SLOTS 4
#define REC_NO_THRESHOLD UINT64_MAX

enum { SLOT_WRITER, SLOT_READER };

/* What else a sample goes to besides its window (struct recorder's keep).
 * rec_keep takes a nonzero keep without SPANS to be LIN: a third needs a test there. */
enum {
	REC_KEEP_SPANS = 1u << 0,       /* the trace log (rec_log_init) */
	REC_KEEP_LIN = 1u << 1,         /* cyclictest's linear histogram (rec_lin_take) */
};

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
	unsigned keep;                  /* REC_KEEP_*: one test a sample for both */
	unsigned wi;                    /* writer's slot */
	uint64_t top_floor;             /* a value must beat this to enter the largest */
	bool was_above;                 /* the last sample of metric 0 was above its threshold */
	unsigned nmetrics;
	unsigned light;                 /* bit m: metric m is recorded light (see rec_set_light) */
	uint64_t origin_ns;             /* absolute CLOCK_MONOTONIC (or the probe's clock in ns) */
	uint64_t window_ns;
	/* the run's largest values of metric 0: writer's, read after join */
	unsigned ntop;
	struct rec_event top[REC_TOP];
	struct rec_log log;             /* writer's, read after join */
	/* --on-threshold: metric 0 above trigger is noted for the main thread.
	 * trig is the writer's while trig_ready is 0 and the reader's while it is 1;
	 * the ready flag hands it over each way (rec_trigger_note, rec_trigger_take). */
	uint64_t trigger;               /* REC_NO_THRESHOLD: none */
	struct rec_trigger {
		uint64_t value, at_ns, from_ns;
	} trig;
	_Atomic unsigned trig_ready;
	_Atomic uint64_t trig_count;    /* samples above the trigger: the writer's, read any time */
	/* REC_KEEP_LIN: cyclictest's histogram of metric 0, the recorder's for the run.
	 * Its running figures are read while measuring: a line of their own. */
	_Alignas(64) struct lin_hist lin;
	_Alignas(64) unsigned ri;       /* reader's next slot: apart from the writer's lines */
	struct rec_slot slots[REC_SLOTS];
};

/* Allocate and pre-fault every slot.  thresholds may be NULL (none).  -ENOMEM. */
int rec_init(struct recorder *r, unsigned nmetrics, const uint64_t *thresholds, uint64_t window_ns);
void rec_free(struct recorder *r);
/* Keep every sample's span, up to cap of them (allocated and pre-faulted now). -ENOMEM. */
int rec_log_init(struct recorder *r, size_t cap);
/*
 * Before the run: count metric 0 in h the way cyclictest does.  The recorder
 * takes h's bins (h keeps its unit and figures, and has no bins) so
 * that the measuring thread writes only its own memory; rec_lin_figures
 * brings h's figures up to date while measuring, rec_lin_give hands
 * everything back after the run.  Allocated by the result beforehand: the
 * run allocates nothing.
 */
void rec_lin_take(struct recorder *r, struct lin_hist *h);
/* Reader, while measuring: h's running figures become the recorder's (no bins). */
void rec_lin_figures(const struct recorder *r, struct lin_hist *h);
/* After the writer has been joined: h gets the bins and figures back.  A no-op
 * when nothing was taken. */
void rec_lin_give(struct recorder *r, struct lin_hist *h);
/*
 * Light recording of metric m, for values recorded tens of millions of times
 * a second (the noise probe's gaps): they go through a batch (below) and the
 * reader derives the mean exactly and the variance from the histogram
 * (within its error), sparing the writer a division per value.
 */
void rec_set_light(struct recorder *r, unsigned metric);

/* Writer: open window 0 at origin (call once, on the measuring thread). */
void rec_start(struct recorder *r, uint64_t origin_ns);
/* Writer, at the end: the current window ends at now.  The reader takes it after join. */
void rec_finish(struct recorder *r, uint64_t now_ns);

/* ---- the steps a sample is recorded in: rec_sample's and the batch's, not a probe's ---- */

void rec_rotate(struct recorder *r, uint64_t now_ns);
void rec_top_insert(struct recorder *r, uint64_t v, uint64_t now_ns);

/* Close the window that contains now if its span has passed. */
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

/* A sample above the trigger for the main thread: the first since it took the
 * last note, the later ones only counted until it does.  No system call: the
 * main thread looks at its next tick. */
static inline void rec_trigger_note(struct recorder *r, uint64_t v, uint64_t at_ns, uint64_t from_ns)
{
	/* One writer: a plain load and store, no locked instruction. */
	atomic_store_explicit(&r->trig_count, atomic_load_explicit(&r->trig_count, memory_order_relaxed) + 1u,
			      memory_order_relaxed);
	if (atomic_load_explicit(&r->trig_ready, memory_order_acquire))
		return;                 /* the last note is still the reader's */
	r->trig = (struct rec_trigger){ v, at_ns, from_ns };
	atomic_store_explicit(&r->trig_ready, 1u, memory_order_release);
}

static inline void rec_trigger(struct recorder *r, uint64_t v, uint64_t at_ns, uint64_t from_ns)
{
	if (__builtin_expect(v > r->trigger, 0))
		rec_trigger_note(r, v, at_ns, from_ns);
}

/* Keep v among the run's largest values of metric 0 when it is one of them. */
static inline void rec_top(struct recorder *r, uint64_t v, uint64_t now_ns)
{
	if (__builtin_expect(v > r->top_floor, 0))
		rec_top_insert(r, v, now_ns);
}

/* A spike is a run of consecutive samples above the threshold: one stall
 * that makes several wakeups late is one spike, counted where it begins. */
static inline void rec_spike(struct recorder *r, uint64_t v)
{
	bool above = v > r->threshold[0];
	if (__builtin_expect(above && !r->was_above, 0))
		r->cur->spikes++;
	r->was_above = above;
}

/* REC_KEEP_SPANS only. */
static inline void rec_log(struct recorder *r, uint64_t from_ns, uint64_t to_ns)
{
	struct rec_log *l = &r->log;
	if (l->n < l->cap)
		l->spans[l->n++] = (struct rec_span){ from_ns, to_ns };
	else
		l->dropped++;
}

/* The span for the trace and cyclictest's count of metric 0: keep, nonzero, says which. */
static inline void rec_keep(struct recorder *r, unsigned keep, uint64_t v, uint64_t from_ns, uint64_t to_ns)
{
	if (keep & REC_KEEP_SPANS) {
		rec_log(r, from_ns, to_ns);
		if (!(keep & REC_KEEP_LIN))
			return;
	}
	lin_hist_record(&r->lin, v);    /* the only other: no test of its own */
}

static inline void rec_missed(struct recorder *r, uint64_t n)
{
	r->cur->missed += n;
}

static inline void rec_overhead(struct recorder *r, uint64_t ns)
{
	stats_add(&r->cur->overhead, ns);
}

/* ---- what probes call ---- */

/* A value that is no sample of its metric (rec_sample's gaps). */
#define REC_NO_VALUE UINT64_MAX

/* One sample as a probe hands it over; what a probe leaves out is 0. */
struct rec_sample {
	uint64_t now_ns;                /* the clock read that completed it: picks its window, starts its overhead */
	uint64_t v[REC_MAX_METRICS];    /* its value of each metric, metric 0 first */
	unsigned nv;                    /* how many: the probe's nmetrics, a constant so the loop unrolls */
	uint64_t at_ns;                 /* when metric 0's value happened, for the run's largest values */
	unsigned keeps;                 /* REC_KEEP_*: what else the probe's samples may go to, a constant:
					 * without, step 4 is compiled out */
	uint64_t from_ns;               /* where metric 0's span began: the trace matches [from_ns, now_ns] */
	uint64_t missed;                /* periods that passed without a sample, this one's lateness */
	uint64_t period_ns;             /* nonzero: each missed period also gets the value it would have had */
	bool gaps;                      /* a constant: a value may be REC_NO_VALUE, left out of its metric
					 * (and of the largest values); without, that test is compiled out.
					 * Not with keeps or missed, which take metric 0's value as given */
	bool untimed;                   /* a constant: no wakeup to time the recording from (a spinning
					 * probe), so no overhead and no clock read for it */
};

/*
 * Record one sample, in the one order every probe shares:
 *  1. rotate: the sample belongs to the window that contains now_ns, so a
 *     sample whose span straddles a boundary counts in the later window,
 *     and everything below (missed periods too) goes to that window;
 *  2. every metric's value: statistics, histogram, count and sum above the
 *     metric's threshold (with gaps, a REC_NO_VALUE is left out);
 *  3. metric 0 among the run's largest values, at at_ns, and in the spike count;
 *  4. when asked for (and among keeps), metric 0's span [from_ns, now_ns]
 *     for the trace and metric 0 in cyclictest's histogram;
 *  5. the missed periods, and with period_ns the values they would have had
 *     (in the statistics and histogram only: cyclictest never saw them);
 *  6. last, unless untimed, the overhead: from now_ns to here, what recording cost.
 */
static inline __attribute__((always_inline)) void rec_sample(struct recorder *r, const struct rec_sample *s)
{
	const uint64_t v = s->v[0];

	rec_tick(r, s->now_ns);
	for (unsigned m = 0; m < s->nv; m++)
		if (!s->gaps || __builtin_expect(s->v[m] != REC_NO_VALUE, 1))
			rec_value(r, m, s->v[m]);
	if (!s->gaps || __builtin_expect(v != REC_NO_VALUE, 1)) {
		rec_top(r, v, s->at_ns);
		rec_spike(r, v);
		rec_trigger(r, v, s->at_ns, s->from_ns);
	}
	if (__builtin_expect(r->keep & s->keeps, 0))
		rec_keep(r, r->keep & s->keeps, v, s->from_ns, s->now_ns);
	if (__builtin_expect(s->missed != 0, 0)) {
		rec_missed(r, s->missed);
		for (uint64_t j = 1; s->period_ns && j <= s->missed && v > j * s->period_ns; j++)
			rec_value(r, 0, v - j * s->period_ns);
	}
	if (!s->untimed)
		rec_overhead(r, mono_ns() - s->now_ns);
}

/*
 * A light batch of metric 0 (see rec_set_light), kept by the probe in locals:
 * each value goes to the current window's histogram and to the batch's
 * running n, sum, min and max; rec_batch_end adds those to the window.
 * Times are given from base_ns, as the probe reads them: the absolute time
 * is only worked out for the rare value above the threshold.
 */
struct rec_batch {
	uint64_t *counts;               /* the current window's histogram of metric 0 */
	uint64_t threshold;             /* metric 0's or the trigger, the lower, copied: no load a
					 * histogram store might alias */
	uint64_t base_ns;
	uint64_t n, sum, min, max;
};

static inline struct rec_batch rec_batch_begin(const struct recorder *r, uint64_t base_ns)
{
	const uint64_t t = r->threshold[0] < r->trigger ? r->threshold[0] : r->trigger;
	return (struct rec_batch){ .counts = r->cur_hist[0].counts, .threshold = t, .base_ns = base_ns,
				   .min = UINT64_MAX };
}

/* A value above the threshold goes to the window's above count, the run's
 * largest values and the trace log at once.  A light value is a gap between
 * two reads: each one above the threshold is a spike of its own. */
static inline void rec_light_above(struct recorder *r, uint64_t v, uint64_t end_ns)
{
	rec_trigger(r, v, end_ns, end_ns - v);
	if (v <= r->threshold[0])
		return;         /* above the trigger only (the batch tests the lower of the two) */
	r->cur->spikes++;
	r->cur->m[0].above++;
	r->cur->m[0].above_ns += v;
	rec_top(r, v, end_ns);
	if (r->keep & REC_KEEP_SPANS)
		rec_log(r, end_ns - v, end_ns);
}

/* One value: the span [base_ns + end_rel - v, base_ns + end_rel]. */
static inline __attribute__((always_inline)) void rec_light(struct recorder *r, struct rec_batch *b, uint64_t v,
							    uint64_t end_rel)
{
	b->counts[hist_index(v)]++;
	b->n++;
	b->sum += v;
	b->min = v < b->min ? v : b->min;
	b->max = v > b->max ? v : b->max;
	if (__builtin_expect(v > b->threshold, 0))
		rec_light_above(r, v, b->base_ns + end_rel);
}

/* rec_light, and the value in the linear histogram too (REC_KEEP_LIN): for a
 * probe whose front end keeps one (oslat's buckets).  The probe tests keep
 * once per batch, so that a run without it has rec_light's loop unchanged. */
static inline __attribute__((always_inline)) void rec_light_lin(struct recorder *r, struct rec_batch *b, uint64_t v,
								uint64_t end_rel)
{
	rec_light(r, b, v, end_rel);
	lin_hist_record(&r->lin, v);
}

/*
 * The batch into the current window, then rotate at base_ns + now_rel, then
 * a new batch: the batch's values count in the window they were taken in, up
 * to now, which the probe reads often enough (a millisecond) for that.
 */
static inline __attribute__((always_inline)) void rec_batch_end(struct recorder *r, struct rec_batch *b,
								uint64_t now_rel)
{
	struct rec_metric *m = &r->cur->m[0];

	r->cur_hist[0].total += b->n;   /* the batch counted buckets only */
	m->st.n += b->n;
	m->sum += b->sum;
	if (b->min < m->st.min)
		m->st.min = b->min;
	if (b->max > m->st.max)
		m->st.max = b->max;
	rec_tick(r, b->base_ns + now_rel);
	*b = rec_batch_begin(r, b->base_ns);    /* a new window may have begun */
}

/* ---- the reader: the main thread ---- */

/* The oldest window handed over, or NULL.  hist points at nmetrics histograms. */
const struct rec_window *rec_peek(struct recorder *r, const struct hist **ret_hist);
/* Give the slot returned by rec_peek back to the writer. */
void rec_release(struct recorder *r);
/* After the writer thread has been joined: the writer's last window. */
const struct rec_window *rec_last(struct recorder *r, const struct hist **ret_hist);
/* After join: the run's largest values of metric 0, *ret_n of them, in no order. */
const struct rec_event *rec_largest(const struct recorder *r, unsigned *ret_n);
/* Before the run: note metric 0 above trigger_ns for rec_trigger_take (0: never). */
void rec_set_trigger(struct recorder *r, uint64_t trigger_ns);
/* Reader, while measuring or after join: the sample noted, if any (true), and the
 * writer may note the next. */
bool rec_trigger_take(struct recorder *r, struct rec_trigger *ret);
/* Reader: how many samples were above the trigger so far. */
static inline uint64_t rec_trigger_count(const struct recorder *r)
{
	return atomic_load_explicit(&r->trig_count, memory_order_relaxed);
}

/* After join: the spans logged for the trace. */
const struct rec_log *rec_spans(const struct recorder *r);

#endif
