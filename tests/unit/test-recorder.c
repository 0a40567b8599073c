/*
 * Unit tests for the per-thread window recorder (src/probe/recorder.c).
 *
 * Time is a fake clock passed to rec_tick, so every window cut is exact.  The
 * origin is deliberately not a multiple of the window: windows are cut at
 * origin + k * window, not at multiples of the window on the clock.
 *
 * rec_sample times its own overhead on the real clock; its tests put the fake
 * clock a second behind it.
 *
 * The concurrent tests run a writer thread against a draining reader, as the
 * runner does; they are also meant to be run under ThreadSanitizer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/hist.h"
#include "core/linhist.h"
#include "core/nstime.h"
#include "core/stats.h"
#include "probe/recorder.h"

#include "rng.h"

#define WIN    UINT64_C(1000)
#define ORIGIN (UINT64_C(5000000000) + 123u)

/* Absolute time of offset ns after the origin. */
static uint64_t at(uint64_t offset)
{
	return ORIGIN + offset;
}

static void open_rec(struct recorder *r, unsigned nmetrics, const uint64_t *thresholds)
{
	assert_int_equal(rec_init(r, nmetrics, thresholds, WIN), 0);
	rec_start(r, ORIGIN);
}

/* What the probe does for each wakeup: tick the clock, then record. */
static void sample(struct recorder *r, uint64_t offset, uint64_t v)
{
	rec_tick(r, at(offset));
	rec_value(r, 0, v);
}

/* The oldest handed-over window, which must exist; the caller releases it. */
static const struct rec_window *must_peek(struct recorder *r, const struct hist **ret_hist)
{
	const struct rec_window *w = rec_peek(r, ret_hist);
	if (!w) {
		print_error("no window was handed over\n");
		fail();
	}
	return w;
}

static void assert_window(const struct rec_window *w, uint64_t index, uint64_t start, uint64_t end, uint64_t n)
{
	if (w->index != index || w->start_ns != start || w->end_ns != end || w->m[0].st.n != n) {
		print_error("window: index %" PRIu64 " [%" PRIu64 ", %" PRIu64 ") n %" PRIu64
			    "; want index %" PRIu64 " [%" PRIu64 ", %" PRIu64 ") n %" PRIu64 "\n",
			    w->index, w->start_ns, w->end_ns, w->m[0].st.n, index, start, end, n);
		fail();
	}
}

/* ---- set-up ---- */

static void test_rec_init_rejects_no_metrics_too_many_metrics_and_a_zero_window(void **state)
{
	(void)state;
	struct recorder r;

	assert_int_equal(rec_init(&r, 0, NULL, WIN), -EINVAL);
	assert_int_equal(rec_init(&r, REC_MAX_METRICS + 1u, NULL, WIN), -EINVAL);
	assert_int_equal(rec_init(&r, 1, NULL, 0), -EINVAL);
	assert_int_equal(rec_init(&r, REC_MAX_METRICS, NULL, 1), 0);
	rec_free(&r);
	rec_free(&r);           /* twice is harmless */
}

static void test_a_fresh_recorder_hands_over_nothing_and_its_current_window_is_empty(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h = NULL;

	open_rec(&r, 2, NULL);
	assert_null(rec_peek(&r, &h));
	rec_tick(&r, at(WIN - 1u));
	assert_null(rec_peek(&r, &h));

	const struct rec_window *w = rec_last(&r, &h);
	assert_non_null(w);
	assert_non_null(h);
	assert_window(w, 0, 0, 0, 0);
	assert_int_equal(w->missed, 0);
	assert_int_equal(w->overhead.n, 0);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++) {
		assert_int_equal(w->m[m].st.n, 0);
		assert_int_equal(w->m[m].st.min, UINT64_MAX);
		assert_int_equal(w->m[m].above, 0);
	}
	assert_int_equal(h[0].total, 0);
	assert_int_equal(h[1].total, 0);
	rec_free(&r);
}

static void test_thresholds_default_to_none_beyond_the_given_metrics(void **state)
{
	(void)state;
	struct recorder r;
	const uint64_t thr[] = { 10, 20 };

	assert_int_equal(rec_init(&r, 2, thr, WIN), 0);
	assert_int_equal(r.threshold[0], 10);
	assert_int_equal(r.threshold[1], 20);
	assert_int_equal(r.threshold[2], REC_NO_THRESHOLD);
	assert_int_equal(r.threshold[3], REC_NO_THRESHOLD);
	rec_free(&r);
	assert_int_equal(rec_init(&r, 3, NULL, WIN), 0);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		assert_int_equal(r.threshold[m], REC_NO_THRESHOLD);
	rec_free(&r);
}

/* ---- window cuts ---- */

static void test_windows_are_cut_at_origin_plus_multiples_of_the_window(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	/* A multiple of the window on the clock inside window 0 does not cut it. */
	uint64_t clock_multiple = (ORIGIN / WIN + 1u) * WIN - ORIGIN;
	assert_true(clock_multiple > 0 && clock_multiple < WIN);

	sample(&r, 0, 1);
	sample(&r, clock_multiple, 2);
	sample(&r, WIN - 1u, 3);
	assert_null(rec_peek(&r, &h));

	for (uint64_t k = 1; k <= 12; k++) {
		/* Two samples in window k: its first and last nanosecond. */
		sample(&r, k * WIN, 10u * k);
		const struct rec_window *w = must_peek(&r, &h);
		assert_window(w, k - 1u, (k - 1u) * WIN, k * WIN, k == 1 ? 3u : 2u);
		assert_int_equal(h[0].total, w->m[0].st.n);
		rec_release(&r);
		assert_null(rec_peek(&r, &h));
		sample(&r, (k + 1u) * WIN - 1u, 10u * k + 1u);
		assert_null(rec_peek(&r, &h));
	}
	const struct rec_window *last = rec_last(&r, &h);
	assert_window(last, 12, 12u * WIN, 0, 2);
	assert_int_equal(last->m[0].st.min, 120);
	assert_int_equal(last->m[0].st.max, 121);
	rec_free(&r);
}

static void test_a_sample_at_exactly_the_boundary_lands_in_the_next_window(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	sample(&r, WIN - 1u, 111);
	sample(&r, WIN, 222);

	const struct rec_window *w = must_peek(&r, &h);
	assert_window(w, 0, 0, WIN, 1);
	assert_int_equal(w->m[0].st.max, 111);
	assert_int_equal(h[0].counts[hist_index(111)], 1);
	assert_int_equal(h[0].counts[hist_index(222)], 0);
	rec_release(&r);

	w = rec_last(&r, &h);
	assert_window(w, 1, WIN, 0, 1);
	assert_int_equal(w->m[0].st.min, 222);
	assert_int_equal(h[0].counts[hist_index(222)], 1);
	assert_int_equal(h[0].total, 1);
	rec_free(&r);
}

static void test_rec_tick_alone_cuts_a_window_with_no_sample_after_it(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	sample(&r, 5, 1);
	rec_tick(&r, at(WIN));
	const struct rec_window *w = must_peek(&r, &h);
	assert_window(w, 0, 0, WIN, 1);
	rec_release(&r);
	/* An empty window in which the clock was seen is handed over too. */
	rec_tick(&r, at(2u * WIN));
	w = must_peek(&r, &h);
	assert_window(w, 1, WIN, 2u * WIN, 0);
	assert_int_equal(h[0].total, 0);
	rec_release(&r);
	rec_free(&r);
}

/* ---- what a window holds ---- */

static void test_rec_value_updates_stats_histogram_and_counts_above_strictly_greater(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t thr[] = { 50, 7 };
	static const uint64_t v0[] = { 49, 50, 51, 1000, 50 };

	open_rec(&r, 2, thr);
	for (size_t i = 0; i < ARRAY_SIZE(v0); i++)
		rec_value(&r, 0, v0[i]);
	rec_value(&r, 1, 7);
	rec_value(&r, 1, 8);
	rec_value(&r, 1, 0);

	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->m[0].st.n, 5);
	assert_int_equal(w->m[0].st.min, 49);
	assert_int_equal(w->m[0].st.max, 1000);
	assert_true(w->m[0].st.mean == 1200.0 / 5.0);
	assert_int_equal(w->m[0].above, 2);          /* 51 and 1000; 50 is not above 50 */
	assert_int_equal(h[0].total, 5);
	assert_int_equal(hist_count_buckets(&h[0]), 5);
	assert_int_equal(h[0].counts[hist_index(50)], 2);
	assert_int_equal(h[0].counts[hist_index(1000)], 1);

	assert_int_equal(w->m[1].st.n, 3);
	assert_int_equal(w->m[1].st.min, 0);
	assert_int_equal(w->m[1].st.max, 8);
	assert_int_equal(w->m[1].above, 1);          /* 8 only */
	assert_int_equal(h[1].total, 3);
	assert_int_equal(h[1].counts[0], 1);

	/* Metrics beyond nmetrics are untouched. */
	assert_int_equal(w->m[2].st.n, 0);
	assert_int_equal(w->m[2].above, 0);

	/* The values are in the window as handed over, too. */
	rec_tick(&r, at(WIN));
	w = must_peek(&r, &h);
	assert_int_equal(w->m[0].st.n, 5);
	assert_int_equal(w->m[0].above, 2);
	assert_int_equal(w->m[1].above, 1);
	assert_int_equal(h[0].counts[hist_index(49)], 1);
	assert_int_equal(h[1].counts[hist_index(8)], 1);
	rec_release(&r);
	rec_free(&r);
}

static void test_without_a_threshold_nothing_is_above_even_the_largest_value(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t zero[] = { 0 };

	open_rec(&r, 1, NULL);
	rec_value(&r, 0, UINT64_MAX);
	rec_value(&r, 0, UINT64_MAX - 1u);
	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->m[0].above, 0);
	assert_int_equal(w->m[0].st.max, UINT64_MAX);
	assert_int_equal(h[0].counts[HIST_BUCKETS - 1u], 2);
	rec_free(&r);

	/* A threshold of 0: everything but 0 is above. */
	open_rec(&r, 1, zero);
	rec_value(&r, 0, 0);
	rec_value(&r, 0, 1);
	rec_value(&r, 0, UINT64_MAX);
	assert_int_equal(rec_last(&r, &h)->m[0].above, 2);
	rec_free(&r);
}

static void test_missed_periods_and_overhead_go_to_the_current_window_only(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	rec_missed(&r, 3);
	rec_missed(&r, 0);
	rec_missed(&r, 4);
	rec_overhead(&r, 10);
	rec_overhead(&r, 30);
	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->missed, 7);
	assert_int_equal(w->overhead.n, 2);
	assert_int_equal(w->overhead.min, 10);
	assert_int_equal(w->overhead.max, 30);
	assert_true(w->overhead.mean == 20.0);
	/* Neither is a sample. */
	assert_int_equal(w->m[0].st.n, 0);
	assert_int_equal(h[0].total, 0);

	rec_tick(&r, at(WIN));
	rec_missed(&r, 1);
	w = must_peek(&r, &h);
	assert_int_equal(w->missed, 7);
	assert_int_equal(w->overhead.n, 2);
	rec_release(&r);
	w = rec_last(&r, &h);
	assert_int_equal(w->missed, 1);
	assert_int_equal(w->overhead.n, 0);
	rec_free(&r);
}

/* ---- the hand-over ---- */

static void test_a_stalled_reader_makes_the_writer_extend_its_window_without_losing_samples(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const struct rec_window *w;

	open_rec(&r, 1, NULL);
	/* Windows 0..REC_SLOTS-2 fill every slot but the writer's. */
	for (uint64_t k = 0; k + 1u < REC_SLOTS; k++)
		sample(&r, k * WIN + 1u, k);
	const uint64_t cur = REC_SLOTS - 1u;        /* the writer's window when the ring is full */
	for (uint64_t i = 0; i < 5; i++)
		sample(&r, cur * WIN + i, 10u + i);
	assert_int_equal(rec_last(&r, &h)->index, cur);

	/* The next two windows find no free slot: window cur keeps growing. */
	for (uint64_t i = 0; i < 3; i++)
		sample(&r, (cur + 1u) * WIN + i, 20u + i);
	for (uint64_t i = 0; i < 2; i++)
		sample(&r, (cur + 2u) * WIN + 500u + i, 30u + i);
	w = rec_last(&r, &h);
	assert_window(w, cur, cur * WIN, 0, 10);
	assert_int_equal(h[0].total, 10);
	assert_int_equal(w->m[0].st.min, 10);
	assert_int_equal(w->m[0].st.max, 31);

	/* Peeking is not taking: the same oldest window until it is released. */
	w = must_peek(&r, &h);
	assert_window(w, 0, 0, WIN, 1);
	assert_ptr_equal(rec_peek(&r, &h), w);
	rec_release(&r);

	/* One slot free: the grown window is handed over, ending at its last boundary. */
	sample(&r, (cur + 3u) * WIN + 17u, 400);
	for (uint64_t k = 1; k + 1u < REC_SLOTS; k++) {
		w = must_peek(&r, &h);
		assert_window(w, k, k * WIN, (k + 1u) * WIN, 1);
		rec_release(&r);
	}
	w = must_peek(&r, &h);
	assert_window(w, cur, cur * WIN, (cur + 3u) * WIN, 10);
	assert_int_equal(h[0].total, 10);
	assert_int_equal(h[0].counts[22], 1);
	assert_int_equal(h[0].counts[31], 1);
	rec_release(&r);
	assert_null(rec_peek(&r, &h));

	w = rec_last(&r, &h);
	assert_window(w, cur + 3u, (cur + 3u) * WIN, 0, 1);

	/* Hand-over resumes at every boundary. */
	for (uint64_t k = cur + 4u; k < cur + 4u + 2u * REC_SLOTS; k++) {
		sample(&r, k * WIN, k);
		w = must_peek(&r, &h);
		assert_window(w, k - 1u, (k - 1u) * WIN, k * WIN, 1);
		rec_release(&r);
	}
	rec_free(&r);
}

static void test_a_reader_releasing_one_slot_at_a_time_sees_every_sample_once(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	uint64_t recorded = 0, seen = 0, next_index = 0, prev_end = 0;

	rng_seed(7);
	open_rec(&r, 1, NULL);
	/* Random steps, sometimes over several windows; the reader takes a window now and then. */
	uint64_t t = 0;
	for (int i = 0; i < 20000; i++) {
		t += rng_below(3u * WIN / 2u);
		sample(&r, t, t & 1023u);
		recorded++;
		if (rng_below(4) == 0) {
			const struct rec_window *w = rec_peek(&r, &h);
			if (w) {
				assert_true(w->index >= next_index);
				assert_int_equal(w->start_ns, w->index * WIN);
				assert_true(w->start_ns >= prev_end);
				assert_true(w->end_ns > w->start_ns);
				assert_int_equal(w->end_ns % WIN, 0);
				assert_int_equal(h[0].total, w->m[0].st.n);
				assert_true(w->m[0].st.n > 0);       /* no window is emitted empty here */
				seen += w->m[0].st.n;
				next_index = w->index + 1u;
				prev_end = w->end_ns;
				rec_release(&r);
			}
		}
	}
	const struct rec_window *w;
	while ((w = rec_peek(&r, &h))) {
		seen += w->m[0].st.n;
		rec_release(&r);
	}
	seen += rec_last(&r, &h)->m[0].st.n;
	assert_int_equal(seen, recorded);
	rec_free(&r);
}

static void test_windows_jumped_over_are_not_emitted_and_the_next_one_starts_where_time_is(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const struct rec_window *w;

	open_rec(&r, 1, NULL);
	sample(&r, 10, 1);
	sample(&r, 20, 2);
	/* Nothing for four whole windows. */
	sample(&r, 5u * WIN + 3u, 3);
	w = must_peek(&r, &h);
	assert_window(w, 0, 0, WIN, 2);             /* ends at its own boundary, not at the gap's end */
	rec_release(&r);
	assert_null(rec_peek(&r, &h));              /* no empty windows 1..4 */

	w = rec_last(&r, &h);
	assert_window(w, 5, 5u * WIN, 0, 1);

	sample(&r, 6u * WIN, 4);
	w = must_peek(&r, &h);
	assert_window(w, 5, 5u * WIN, 6u * WIN, 1);
	rec_release(&r);

	/* A huge gap: the index is computed, not counted. */
	sample(&r, 1000000u * WIN + 999u, 5);
	w = must_peek(&r, &h);
	assert_window(w, 6, 6u * WIN, 7u * WIN, 1);
	rec_release(&r);
	assert_null(rec_peek(&r, &h));
	assert_window(rec_last(&r, &h), 1000000, 1000000u * WIN, 0, 1);
	rec_free(&r);
}

static void test_a_gap_while_the_reader_is_stalled_extends_the_window_to_the_gaps_end(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	for (uint64_t k = 0; k < REC_SLOTS; k++)
		sample(&r, k * WIN, k);
	const uint64_t cur = REC_SLOTS - 1u;
	sample(&r, (cur + 7u) * WIN + 5u, 99);      /* stalled: window cur covers up to cur + 8 */
	assert_window(rec_last(&r, &h), cur, cur * WIN, 0, 2);
	for (uint64_t k = 0; k + 1u < REC_SLOTS; k++) {
		assert_window(must_peek(&r, &h), k, k * WIN, (k + 1u) * WIN, 1);
		rec_release(&r);
	}
	sample(&r, (cur + 8u) * WIN, 100);
	assert_window(must_peek(&r, &h), cur, cur * WIN, (cur + 8u) * WIN, 2);
	rec_release(&r);
	assert_window(rec_last(&r, &h), cur + 8u, (cur + 8u) * WIN, 0, 1);
	rec_free(&r);
}

static void test_released_slots_come_back_empty(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t thr[] = { 4 };

	open_rec(&r, 1, thr);
	for (uint64_t k = 0; k < 5u * REC_SLOTS; k++) {
		/* Window k: k + 1 samples of value k, k missed, one overhead of k. */
		for (uint64_t i = 0; i <= k; i++)
			sample(&r, k * WIN + i, k);
		rec_missed(&r, k);
		rec_overhead(&r, k);
		rec_tick(&r, at((k + 1u) * WIN));
		const struct rec_window *w = must_peek(&r, &h);
		assert_window(w, k, k * WIN, (k + 1u) * WIN, k + 1u);
		assert_int_equal(w->m[0].st.min, k);
		assert_int_equal(w->m[0].st.max, k);
		assert_int_equal(w->missed, k);
		assert_int_equal(w->overhead.n, 1);
		assert_int_equal(w->m[0].above, k > 4 ? k + 1u : 0u);
		assert_int_equal(h[0].total, k + 1u);
		assert_int_equal(h[0].counts[hist_index(k)], k + 1u);
		rec_release(&r);
	}
	rec_free(&r);
}

/* ---- the end ---- */

static void test_rec_finish_sets_the_end_of_the_last_window(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	sample(&r, 7u * WIN + 3u, 1);
	assert_window(must_peek(&r, &h), 0, 0, WIN, 0);    /* the first window, empty */
	rec_release(&r);

	rec_finish(&r, at(7u * WIN + 321u));
	const struct rec_window *w = rec_last(&r, &h);
	assert_window(w, 7, 7u * WIN, 7u * WIN + 321u, 1);

	/* At exactly the boundary (no tick since): a whole window. */
	rec_finish(&r, at(8u * WIN));
	assert_int_equal(rec_last(&r, &h)->end_ns, 8u * WIN);

	/* A clock before the window's start cannot make it end before it starts. */
	rec_finish(&r, at(3u));
	assert_int_equal(rec_last(&r, &h)->end_ns, 7u * WIN);
	rec_finish(&r, ORIGIN - 1u);
	assert_int_equal(rec_last(&r, &h)->end_ns, 7u * WIN);
	assert_null(rec_peek(&r, &h));
	rec_free(&r);
}

static void test_rec_finish_of_a_window_grown_by_a_stall_ends_it_at_now(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;

	open_rec(&r, 1, NULL);
	for (uint64_t k = 0; k < REC_SLOTS + 3u; k++)
		sample(&r, k * WIN, k);
	rec_finish(&r, at((REC_SLOTS + 3u) * WIN - 1u));
	assert_window(rec_last(&r, &h), REC_SLOTS - 1u, (REC_SLOTS - 1u) * WIN, (REC_SLOTS + 3u) * WIN - 1u, 4);
	rec_free(&r);
}

static void test_rec_last_returns_the_writers_current_window_and_its_histograms(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h, *hl;

	open_rec(&r, 2, NULL);
	for (uint64_t k = 0; k < 2u * REC_SLOTS + 1u; k++) {
		sample(&r, k * WIN, k + 1000u);
		rec_value(&r, 1, k);
		const struct rec_window *last = rec_last(&r, &hl);
		assert_int_equal(last->index, k);
		assert_int_equal(last->m[0].st.n, 1);
		assert_int_equal(hl[0].counts[hist_index(k + 1000u)], 1);
		assert_int_equal(hl[1].counts[hist_index(k)], 1);
		const struct rec_window *w = rec_peek(&r, &h);
		if (k > 0) {
			assert_non_null(w);
			assert_ptr_not_equal(w, last);
			assert_ptr_not_equal(h, hl);
			assert_int_equal(w->index, k - 1u);
			rec_release(&r);
		} else {
			assert_null(w);
		}
	}
	rec_free(&r);
}

/* ---- a writer thread against a draining reader ---- */

#define CONC_N   UINT64_C(4000000)
#define CONC_WIN UINT64_C(1000)

struct conc {
	struct recorder rec;
	uint64_t origin;
	atomic_bool done;
};

static struct conc conc;

/* A value below HIST_LINEAR, so the histogram holds it exactly and sums can be checked. */
static uint64_t conc_value(uint64_t i)
{
	return ((i * UINT64_C(2654435761)) >> 11) % HIST_LINEAR;
}

static void *conc_writer(void *arg)
{
	struct conc *c = arg;

	rec_start(&c->rec, c->origin);
	/* One sample per nanosecond of fake time: window k holds exactly its span. */
	for (uint64_t i = 0; i < CONC_N; i++) {
		rec_tick(&c->rec, c->origin + i);
		rec_value(&c->rec, 0, conc_value(i));
		if (i % 97u == 0)
			rec_missed(&c->rec, 1);
	}
	rec_finish(&c->rec, c->origin + CONC_N);
	atomic_store_explicit(&c->done, true, memory_order_release);
	return NULL;
}

struct tally {
	uint64_t count, sum, missed, windows, bad, prev_end, next_index;
};

static void tally_window(struct tally *t, const struct rec_window *w, const struct hist *h)
{
	uint64_t sum = 0, n = 0;

	for (unsigned i = 0; i < HIST_LINEAR; i++) {
		sum += (uint64_t)i * h[0].counts[i];
		n += h[0].counts[i];
	}
	/* Contiguous, in order, and holding exactly one sample per nanosecond of its span. */
	if (w->index < t->next_index || w->start_ns != w->index * CONC_WIN || w->start_ns != t->prev_end ||
	    w->end_ns <= w->start_ns || w->m[0].st.n != w->end_ns - w->start_ns || h[0].total != w->m[0].st.n ||
	    n != h[0].total) {
		if (!t->bad)
			print_error("window %" PRIu64 " [%" PRIu64 ", %" PRIu64 ") n %" PRIu64 " hist %" PRIu64
				    " (linear %" PRIu64 "), after index %" PRIu64 " ending %" PRIu64 "\n",
				    w->index, w->start_ns, w->end_ns, w->m[0].st.n, h[0].total, n,
				    t->next_index, t->prev_end);
		t->bad++;
	}
	t->count += w->m[0].st.n;
	t->sum += sum;
	t->missed += w->missed;
	t->windows++;
	t->prev_end = w->end_ns;
	t->next_index = w->index + 1u;
}

static void test_a_concurrent_reader_drains_every_sample_the_writer_records(void **state)
{
	(void)state;
	struct tally t = { 0 };
	pthread_t th;
	const struct hist *h;
	const struct rec_window *w;
	uint64_t want_sum = 0, want_missed = 0;

	for (uint64_t i = 0; i < CONC_N; i++) {
		want_sum += conc_value(i);
		want_missed += i % 97u == 0;
	}
	memset(&conc, 0, sizeof(conc));
	conc.origin = UINT64_C(123456789);
	atomic_init(&conc.done, false);
	assert_int_equal(rec_init(&conc.rec, 1, NULL, CONC_WIN), 0);
	assert_int_equal(pthread_create(&th, NULL, conc_writer, &conc), 0);

	for (;;) {
		bool done = atomic_load_explicit(&conc.done, memory_order_acquire);
		bool any = false;
		while ((w = rec_peek(&conc.rec, &h))) {
			tally_window(&t, w, h);
			rec_release(&conc.rec);
			any = true;
		}
		if (done)
			break;
		if (!any)
			sched_yield();
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	while ((w = rec_peek(&conc.rec, &h))) {          /* nothing should be left, but take it */
		tally_window(&t, w, h);
		rec_release(&conc.rec);
	}
	uint64_t handed = t.windows;
	w = rec_last(&conc.rec, &h);
	tally_window(&t, w, h);

	if (t.bad)
		print_error("%" PRIu64 " of %" PRIu64 " windows were out of order or miscounted\n", t.bad, t.windows);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.count, CONC_N);
	assert_int_equal(t.sum, want_sum);
	assert_int_equal(t.missed, want_missed);
	assert_int_equal(t.prev_end, CONC_N);           /* the last window ends where the writer finished */
	/* Even a reader that never ran before the end gets the first REC_SLOTS - 1 windows. */
	assert_true(handed >= REC_SLOTS - 1u);
	rec_free(&conc.rec);
}

/* ---- rec_sample: one call a sample, in the order the header gives ---- */

#define ALL_KEEPS (REC_KEEP_SPANS | REC_KEEP_LIN)

/* rec_sample times its own overhead on the real clock: the fake one runs a second behind it. */
static uint64_t past_origin(void)
{
	return mono_ns() - NS_PER_SEC;
}

static void test_rec_sample_counts_a_sample_straddling_a_boundary_in_the_window_it_ended_in(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin();

	assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
	rec_start(&r, origin);
	/* Deadline in window 0, wakeup in window 1, two periods missed on the way. */
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + WIN + 5u, .v = { 2u * WIN + 5u }, .nv = 1,
					      .at_ns = origin + WIN + 5u, .from_ns = origin + WIN - 7u, .missed = 2 });
	const struct rec_window *w = must_peek(&r, &h);
	assert_window(w, 0, 0, WIN, 0);
	assert_int_equal(w->missed, 0);
	assert_int_equal(w->overhead.n, 0);
	assert_int_equal(h[0].total, 0);
	rec_release(&r);

	w = rec_last(&r, &h);
	assert_window(w, 1, WIN, 0, 1);
	assert_int_equal(w->m[0].st.max, 2u * WIN + 5u);
	assert_int_equal(h[0].counts[hist_index(2u * WIN + 5u)], 1);
	assert_int_equal(w->missed, 2);
	assert_int_equal(w->overhead.n, 1);
	/* Timed from now_ns, which the real clock passed a second ago. */
	assert_true(w->overhead.min >= NS_PER_SEC - WIN - 5u);
	rec_free(&r);
}

static void test_rec_sample_records_every_metric_and_the_largest_at_its_own_time(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin(), thr[] = { 100, 5, 50 };
	unsigned ntop;

	assert_int_equal(rec_init(&r, 3, thr, WIN), 0);
	rec_start(&r, origin);
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 900u, .v = { 300, 6, 40 }, .nv = 3,
					      .at_ns = origin + 200u });
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 950u, .v = { 30, 5, 70 }, .nv = 3,
					      .at_ns = origin + 940u });
	const struct rec_window *w = rec_last(&r, &h);
	static const uint64_t min[] = { 30, 5, 40 }, max[] = { 300, 6, 70 }, above[] = { 1, 1, 1 };
	for (unsigned m = 0; m < 3; m++) {
		assert_int_equal(w->m[m].st.n, 2);
		assert_int_equal(w->m[m].st.min, min[m]);
		assert_int_equal(w->m[m].st.max, max[m]);
		assert_int_equal(w->m[m].above, above[m]);
		assert_int_equal(h[m].total, 2);
	}
	assert_int_equal(w->m[0].above_ns, 300);
	assert_int_equal(w->m[3].st.n, 0);
	assert_int_equal(w->overhead.n, 2);
	/* Metric 0 only, stamped with at_ns (the wake call, for the wake probe), not now_ns. */
	const struct rec_event *top = rec_largest(&r, &ntop);
	assert_int_equal(ntop, 2);
	for (unsigned i = 0; i < ntop; i++)
		assert_int_equal(top[i].at_ns, top[i].value == 300 ? 200u : 940u);
	assert_true(top[0].value + top[1].value == 330);
	rec_free(&r);
}

static void test_a_run_of_samples_above_the_threshold_is_one_spike_where_it_begins(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin(), thr[] = { 100 };
	/* above: 200 300 | 50 | 150 || (next window) 400 500 | 10 */
	static const uint64_t v[] = { 200, 300, 50, 150, 400, 500, 10 };

	assert_int_equal(rec_init(&r, 1, thr, WIN), 0);
	rec_start(&r, origin);
	for (size_t i = 0; i < 7; i++) {
		uint64_t now = origin + (i < 4 ? 10u * (i + 1u) : WIN + 10u * i);
		rec_sample(&r, &(struct rec_sample){ .now_ns = now, .v = { v[i] }, .nv = 1, .at_ns = now });
		if (i == 3) {
			/* 150 is the window's last: the spike it begins goes on into the next window */
			rec_sample(&r, &(struct rec_sample){ .now_ns = origin + WIN + 1u, .v = { 120 }, .nv = 1,
							      .at_ns = origin + WIN + 1u });
		}
	}
	const struct rec_window *first = rec_peek(&r, &h);
	assert_non_null(first);
	assert_int_equal(first->m[0].above, 3);
	assert_int_equal(first->spikes, 2);
	rec_release(&r);
	const struct rec_window *second = rec_last(&r, &h);
	assert_int_equal(second->m[0].above, 3);      /* 120, 400, 500: the spike from the first window, and none new */
	assert_int_equal(second->spikes, 0);
	rec_free(&r);
}

static void test_a_light_value_above_the_threshold_is_a_spike_of_its_own(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin(), thr[] = { 100 };

	assert_int_equal(rec_init(&r, 1, thr, WIN), 0);
	rec_set_light(&r, 0);
	rec_start(&r, origin);
	struct rec_batch b = rec_batch_begin(&r, origin);
	rec_light(&r, &b, 200, 10);
	rec_light(&r, &b, 300, 20);
	rec_light(&r, &b, 5, 30);
	rec_batch_end(&r, &b, 40);
	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->m[0].above, 2);
	assert_int_equal(w->spikes, 2);
	rec_free(&r);
}

static void test_a_sample_above_the_trigger_is_noted_once_until_the_reader_takes_it(void **state)
{
	(void)state;
	struct recorder r;
	struct rec_trigger t;
	const uint64_t origin = past_origin(), thr[] = { 100 };

	assert_int_equal(rec_init(&r, 1, thr, WIN), 0);
	rec_set_trigger(&r, 500);
	rec_start(&r, origin);
	assert_false(rec_trigger_take(&r, &t));
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 10u, .v = { 500 }, .nv = 1, .at_ns = origin + 10u });
	assert_false(rec_trigger_take(&r, &t));         /* strictly above, as the threshold */
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 20u, .v = { 600 }, .nv = 1, .at_ns = origin + 20u,
					      .from_ns = origin + 5u });
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 30u, .v = { 900 }, .nv = 1, .at_ns = origin + 30u });
	assert_true(rec_trigger_take(&r, &t));
	/* the first one, not overwritten by the second while it was the reader's */
	assert_int_equal(t.value, 600);
	assert_int_equal(t.at_ns, origin + 20u);
	assert_int_equal(t.from_ns, origin + 5u);
	assert_false(rec_trigger_take(&r, &t));
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 40u, .v = { 700 }, .nv = 1, .at_ns = origin + 40u });
	assert_true(rec_trigger_take(&r, &t));
	assert_int_equal(t.value, 700);
	assert_int_equal(rec_trigger_count(&r), 3);
	rec_free(&r);
}

static void test_a_light_value_above_a_trigger_below_the_threshold_is_noted_but_not_counted_above(void **state)
{
	(void)state;
	struct recorder r;
	struct rec_trigger t;
	const struct hist *h;
	const uint64_t origin = past_origin(), thr[] = { 1000 };

	assert_int_equal(rec_init(&r, 1, thr, WIN), 0);
	rec_set_light(&r, 0);
	rec_set_trigger(&r, 100);
	rec_start(&r, origin);
	struct rec_batch b = rec_batch_begin(&r, origin);
	rec_light(&r, &b, 50, 10);
	rec_light(&r, &b, 200, 300);
	rec_light(&r, &b, 2000, 800);
	rec_batch_end(&r, &b, 900);
	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->m[0].above, 1);
	assert_int_equal(w->spikes, 1);
	assert_int_equal(w->m[0].st.n, 3);
	assert_true(rec_trigger_take(&r, &t));
	assert_int_equal(t.value, 200);
	assert_int_equal(t.at_ns, origin + 300u);
	assert_int_equal(t.from_ns, origin + 100u);
	assert_int_equal(rec_trigger_count(&r), 2);
	rec_free(&r);
}

static void test_with_gaps_a_value_that_is_no_sample_is_left_out_of_its_metric_alone(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin();
	unsigned ntop;

	assert_int_equal(rec_init(&r, 2, NULL, WIN), 0);
	rec_start(&r, origin);
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 10u, .v = { REC_NO_VALUE, 7 }, .nv = 2,
					      .at_ns = origin + 10u, .gaps = true });
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 20u, .v = { 40, REC_NO_VALUE }, .nv = 2,
					      .at_ns = origin + 20u, .gaps = true });
	const struct rec_window *w = rec_last(&r, &h);
	for (unsigned m = 0; m < 2; m++) {
		assert_int_equal(w->m[m].st.n, 1);
		assert_int_equal(h[m].total, 1);
	}
	assert_int_equal(w->m[0].st.max, 40);
	assert_int_equal(w->m[1].st.max, 7);
	/* The round counts once each, its overhead too. */
	assert_int_equal(w->overhead.n, 2);
	const struct rec_event *top = rec_largest(&r, &ntop);
	assert_int_equal(ntop, 1);
	assert_int_equal(top[0].value, 40);
	rec_free(&r);
}

static void test_an_untimed_sample_counts_its_values_but_no_overhead(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin();

	assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
	rec_start(&r, origin);
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 10u, .v = { 5 }, .nv = 1, .at_ns = origin + 10u,
					      .untimed = true });
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 20u, .v = { 6 }, .nv = 1, .at_ns = origin + 20u });
	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->m[0].st.n, 2);
	assert_int_equal(w->overhead.n, 1);
	rec_free(&r);
}

static void test_missed_periods_get_the_values_they_would_have_had_only_with_a_period(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t origin = past_origin();
	unsigned ntop;

	for (int co = 0; co <= 1; co++) {
		assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
		rec_start(&r, origin);
		rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 10u, .v = { 3500 }, .nv = 1, .at_ns = origin + 10u,
						      .missed = 3, .period_ns = co ? 1000u : 0u });
		const struct rec_window *w = rec_last(&r, &h);
		assert_int_equal(w->missed, 3);
		assert_int_equal(w->m[0].st.n, co ? 4u : 1u);      /* 3500, then 2500, 1500, 500 */
		assert_int_equal(w->m[0].st.min, co ? 500u : 3500u);
		assert_int_equal(h[0].counts[hist_index(500)], co ? 1u : 0u);
		assert_int_equal(w->overhead.n, 1);
		/* The values it would have had are not samples anything else saw. */
		rec_largest(&r, &ntop);
		assert_int_equal(ntop, 1);
		rec_free(&r);
	}
}

static void test_spans_and_cyclictests_histogram_take_a_sample_only_when_asked_for(void **state)
{
	(void)state;
	struct recorder r;
	struct lin_hist h;
	const uint64_t origin = past_origin();

	assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
	rec_start(&r, origin);
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 10u, .v = { 1500 }, .nv = 1, .keeps = ALL_KEEPS,
					      .from_ns = origin });
	assert_int_equal(rec_spans(&r)->n, 0);
	assert_int_equal(rec_spans(&r)->dropped, 0);
	rec_free(&r);

	assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
	assert_int_equal(rec_log_init(&r, 2), 0);
	assert_int_equal(lin_hist_init(&h, 1000, 3), 0);
	rec_lin_take(&r, &h);
	rec_start(&r, origin);
	static const uint64_t v[] = { 1500, 2999, 7000 };
	for (unsigned i = 0; i < 3; i++)
		rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 100u * (i + 1u), .v = { v[i] }, .nv = 1,
						      .keeps = ALL_KEEPS, .from_ns = origin + 100u * i, .missed = i,
						      .period_ns = 1000 });
	/* A probe whose samples may go nowhere else (keeps 0) adds to neither. */
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 400u, .v = { 1500 }, .nv = 1, .from_ns = origin });
	const struct rec_log *l = rec_spans(&r);
	assert_int_equal(l->n, 2);
	assert_int_equal(l->dropped, 1);
	assert_int_equal(l->spans[1].from_ns, origin + 100u);
	assert_int_equal(l->spans[1].to_ns, origin + 200u);
	rec_lin_give(&r, &h);
	/* cyclictest's count: the samples, not the values missed periods would have had. */
	assert_int_equal(lin_load(&h.cycles), 3);
	assert_int_equal(h.nbins, 3);
	assert_int_equal(h.bins[1], 1);
	assert_int_equal(h.bins[2], 1);
	assert_int_equal(h.overflow, 1);
	assert_int_equal(h.outliers[0], 2);
	assert_int_equal(lin_load(&h.sum), 1 + 2 + 7);
	rec_free(&r);
	lin_hist_free(&h);
}

static void test_cyclictests_histogram_is_the_recorders_until_it_is_given_back(void **state)
{
	(void)state;
	struct recorder r;
	struct lin_hist h;
	const uint64_t origin = past_origin();

	assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
	assert_int_equal(lin_hist_init(&h, 1, 100), 0);
	uint64_t *bins = h.bins;
	rec_lin_take(&r, &h);
	assert_null(h.bins);
	assert_int_equal(h.nbins, 0);
	rec_start(&r, origin);
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 1u, .v = { 42 }, .nv = 1, .keeps = REC_KEEP_LIN });
	rec_sample(&r, &(struct rec_sample){ .now_ns = origin + 2u, .v = { 7 }, .nv = 1, .keeps = REC_KEEP_LIN });
	/* The measuring side wrote none of h; the reader brings its figures up to date. */
	assert_int_equal(lin_load(&h.cycles), 0);
	assert_int_equal(bins[42], 1);
	rec_lin_figures(&r, &h);
	assert_int_equal(lin_load(&h.cycles), 2);
	assert_int_equal(lin_load(&h.min), 7);
	assert_int_equal(lin_load(&h.max), 42);
	assert_int_equal(lin_load(&h.last), 7);
	assert_null(h.bins);

	rec_lin_give(&r, &h);
	assert_ptr_equal(h.bins, bins);
	assert_int_equal(h.nbins, 100);
	assert_int_equal(h.bins[7] + h.bins[42], 2);
	/* Given back once: a second give, and freeing the recorder, leave h alone. */
	rec_lin_give(&r, &h);
	assert_ptr_equal(h.bins, bins);
	rec_free(&r);
	assert_int_equal(h.bins[42], 1);
	lin_hist_free(&h);

	/* Taken and never given back: the recorder frees it (the sanitizer build checks). */
	assert_int_equal(rec_init(&r, 1, NULL, WIN), 0);
	assert_int_equal(lin_hist_init(&h, 1, 100), 0);
	rec_lin_take(&r, &h);
	rec_free(&r);
	lin_hist_free(&h);
}

/* ---- the light batch ---- */

static void test_a_light_batch_counts_in_the_window_it_was_taken_in_and_values_above_go_at_once(void **state)
{
	(void)state;
	struct recorder r;
	const struct hist *h;
	const uint64_t thr[] = { 100 };
	unsigned ntop;

	assert_int_equal(rec_init(&r, 1, thr, WIN), 0);
	rec_set_light(&r, 0);
	assert_int_equal(rec_log_init(&r, 4), 0);
	rec_start(&r, ORIGIN);
	struct rec_batch b = rec_batch_begin(&r, ORIGIN);
	rec_light(&r, &b, 10, 10);
	rec_light(&r, &b, 200, 210);
	rec_light(&r, &b, 20, 230);
	/* Above the threshold: already in the window, the largest and the log. */
	const struct rec_window *w = rec_last(&r, &h);
	assert_int_equal(w->m[0].above, 1);
	assert_int_equal(w->m[0].above_ns, 200);
	assert_int_equal(w->m[0].st.n, 0);
	assert_int_equal(rec_largest(&r, &ntop)[0].at_ns, 210);
	assert_int_equal(rec_spans(&r)->n, 1);
	assert_int_equal(rec_spans(&r)->spans[0].from_ns, at(10));
	assert_int_equal(rec_spans(&r)->spans[0].to_ns, at(210));

	/* Ended past the boundary: the batch is window 0's, then window 1 begins. */
	rec_batch_end(&r, &b, WIN + 3u);
	rec_light(&r, &b, 30, WIN + 33u);
	w = must_peek(&r, &h);
	assert_window(w, 0, 0, WIN, 3);
	assert_int_equal(h[0].total, 3);
	assert_int_equal(h[0].counts[hist_index(200)], 1);
	assert_int_equal(w->m[0].st.min, 10);
	assert_int_equal(w->m[0].st.max, 200);
	assert_true(w->m[0].st.mean == 230.0 / 3.0);
	assert_int_equal(w->m[0].above, 1);
	rec_release(&r);
	rec_batch_end(&r, &b, WIN + 40u);
	w = rec_last(&r, &h);
	assert_window(w, 1, WIN, 0, 1);
	assert_int_equal(h[0].counts[hist_index(30)], 1);
	assert_int_equal(w->m[0].above, 0);
	rec_free(&r);
}

/* ---- cyclictest's figures read while the writer counts ---- */

#define LIN_N (UINT64_C(64) * 5000u)    /* whole turns of the values 0..63 */

struct lin_conc {
	struct recorder rec;
	uint64_t origin;
	atomic_bool done;
};

static struct lin_conc lconc;

static void *lin_writer(void *arg)
{
	struct lin_conc *c = arg;

	rec_start(&c->rec, c->origin);
	for (uint64_t i = 0; i < LIN_N; i++)
		rec_sample(&c->rec, &(struct rec_sample){ .now_ns = c->origin + i, .v = { i % 64u }, .nv = 1,
							   .keeps = REC_KEEP_LIN });
	atomic_store_explicit(&c->done, true, memory_order_release);
	return NULL;
}

static void test_cyclictests_figures_copied_while_measuring_only_grow_and_end_exact(void **state)
{
	(void)state;
	struct lin_hist h;
	pthread_t th;
	const struct hist *hh;
	uint64_t prev = 0, copies = 0, want_sum = 0;

	for (uint64_t i = 0; i < LIN_N; i++)
		want_sum += i % 64u;
	memset(&lconc, 0, sizeof(lconc));
	lconc.origin = past_origin();
	atomic_init(&lconc.done, false);
	assert_int_equal(rec_init(&lconc.rec, 1, NULL, CONC_WIN * 1000u), 0);
	assert_int_equal(lin_hist_init(&h, 1, 32), 0);
	rec_lin_take(&lconc.rec, &h);
	assert_int_equal(pthread_create(&th, NULL, lin_writer, &lconc), 0);
	while (!atomic_load_explicit(&lconc.done, memory_order_acquire)) {
		rec_lin_figures(&lconc.rec, &h);
		uint64_t n = lin_load(&h.cycles);
		assert_true(n >= prev);
		prev = n;
		copies++;
		while (rec_peek(&lconc.rec, &hh))
			rec_release(&lconc.rec);
		sched_yield();
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(copies > 0);
	rec_lin_give(&lconc.rec, &h);
	uint64_t in_bins = 0;
	for (uint32_t i = 0; i < h.nbins; i++)
		in_bins += h.bins[i];
	assert_int_equal(lin_load(&h.cycles), LIN_N);
	assert_int_equal(in_bins + h.overflow, LIN_N);
	assert_int_equal(h.overflow, LIN_N / 2u);
	assert_int_equal(lin_load(&h.sum), want_sum);
	assert_int_equal(lin_load(&h.max), 63);
	rec_free(&lconc.rec);
	lin_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rec_init_rejects_no_metrics_too_many_metrics_and_a_zero_window),
		cmocka_unit_test(test_a_fresh_recorder_hands_over_nothing_and_its_current_window_is_empty),
		cmocka_unit_test(test_thresholds_default_to_none_beyond_the_given_metrics),
		cmocka_unit_test(test_windows_are_cut_at_origin_plus_multiples_of_the_window),
		cmocka_unit_test(test_a_sample_at_exactly_the_boundary_lands_in_the_next_window),
		cmocka_unit_test(test_rec_tick_alone_cuts_a_window_with_no_sample_after_it),
		cmocka_unit_test(test_rec_value_updates_stats_histogram_and_counts_above_strictly_greater),
		cmocka_unit_test(test_without_a_threshold_nothing_is_above_even_the_largest_value),
		cmocka_unit_test(test_missed_periods_and_overhead_go_to_the_current_window_only),
		cmocka_unit_test(test_a_stalled_reader_makes_the_writer_extend_its_window_without_losing_samples),
		cmocka_unit_test(test_a_reader_releasing_one_slot_at_a_time_sees_every_sample_once),
		cmocka_unit_test(test_windows_jumped_over_are_not_emitted_and_the_next_one_starts_where_time_is),
		cmocka_unit_test(test_a_gap_while_the_reader_is_stalled_extends_the_window_to_the_gaps_end),
		cmocka_unit_test(test_released_slots_come_back_empty),
		cmocka_unit_test(test_rec_finish_sets_the_end_of_the_last_window),
		cmocka_unit_test(test_rec_finish_of_a_window_grown_by_a_stall_ends_it_at_now),
		cmocka_unit_test(test_rec_last_returns_the_writers_current_window_and_its_histograms),
		cmocka_unit_test(test_a_concurrent_reader_drains_every_sample_the_writer_records),
		cmocka_unit_test(test_rec_sample_counts_a_sample_straddling_a_boundary_in_the_window_it_ended_in),
		cmocka_unit_test(test_rec_sample_records_every_metric_and_the_largest_at_its_own_time),
		cmocka_unit_test(test_a_run_of_samples_above_the_threshold_is_one_spike_where_it_begins),
		cmocka_unit_test(test_a_light_value_above_the_threshold_is_a_spike_of_its_own),
		cmocka_unit_test(test_a_sample_above_the_trigger_is_noted_once_until_the_reader_takes_it),
		cmocka_unit_test(test_a_light_value_above_a_trigger_below_the_threshold_is_noted_but_not_counted_above),
		cmocka_unit_test(test_with_gaps_a_value_that_is_no_sample_is_left_out_of_its_metric_alone),
		cmocka_unit_test(test_an_untimed_sample_counts_its_values_but_no_overhead),
		cmocka_unit_test(test_missed_periods_get_the_values_they_would_have_had_only_with_a_period),
		cmocka_unit_test(test_spans_and_cyclictests_histogram_take_a_sample_only_when_asked_for),
		cmocka_unit_test(test_cyclictests_histogram_is_the_recorders_until_it_is_given_back),
		cmocka_unit_test(test_a_light_batch_counts_in_the_window_it_was_taken_in_and_values_above_go_at_once),
		cmocka_unit_test(test_cyclictests_figures_copied_while_measuring_only_grow_and_end_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
