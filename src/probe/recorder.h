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

struct recorder {
	/* the writer's per-sample state, in one cache line */
	_Alignas(64) struct rec_window *cur;    /* writer's window and histograms */
	struct hist *cur_hist;
	uint64_t next_boundary;         /* absolute: when the current window ends */
	uint64_t threshold[REC_MAX_METRICS];
	unsigned nmetrics;
	unsigned wi;                    /* writer's slot */
	uint64_t origin_ns;             /* absolute CLOCK_MONOTONIC (or the probe's clock in ns) */
	uint64_t window_ns;
	_Alignas(64) unsigned ri;       /* reader's next slot: apart from the writer's line */
	struct rec_slot slots[REC_SLOTS];
};

/* Allocate and pre-fault every slot.  thresholds may be NULL (none).  -ENOMEM. */
int rec_init(struct recorder *r, unsigned nmetrics, const uint64_t *thresholds, uint64_t window_ns);
void rec_free(struct recorder *r);

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
	stats_add(&r->cur->m[metric].st, v);
	hist_record(&r->cur_hist[metric], v);
	r->cur->m[metric].above += v > r->threshold[metric];
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
const struct rec_window *rec_last(const struct recorder *r, const struct hist **ret_hist);

#endif
