/*
 * cyclictest's histogram: one counter per unit (a microsecond, or a nanosecond
 * with -N) below nbins, and the values at or above counted as overflows, with
 * the cycle numbers of the first nbins of them.  Values are truncated to whole
 * units before they are counted, summed or compared, as cyclictest does, so a
 * tool reading it sees cyclictest's figures.
 *
 * One measuring thread writes it.  The running figures are relaxed atomics
 * (plain loads and stores on the hardware we run on) so that another thread
 * may copy them while the run goes on (lin_hist_copy_figures); the bins are
 * read after the join.
 */
#ifndef LATSCOPE_CORE_LINHIST_H
#define LATSCOPE_CORE_LINHIST_H

#include <stdatomic.h>
#include <stdint.h>

/* cyclictest starts its minimum here; a run without a sample still prints it. */
#define LINHIST_NO_MIN UINT64_C(1000000)
/* cyclictest's own cap on -h. */
#define LINHIST_MAX_BINS 1000000u

struct lin_hist {
	uint64_t unit_ns;
	uint32_t nbins;                 /* 0: the running figures only */
	uint64_t *bins;
	uint64_t *outliers;             /* cycle numbers (from 0) of the first nbins overflows */
	uint64_t noutliers;
	uint64_t overflow;
	_Atomic uint64_t cycles;
	_Atomic uint64_t min, max, last;        /* in units */
	_Atomic uint64_t sum;                   /* of the truncated values */
};

/* Allocate and touch every page now, so the run never faults them in.  -ENOMEM. */
int lin_hist_init(struct lin_hist *h, uint64_t unit_ns, uint32_t nbins);
void lin_hist_free(struct lin_hist *h);

/* dst, which has no bins, takes src's bins and overflows and copies its
 * figures; src keeps its unit and figures and has no bins (nbins 0) after. */
void lin_hist_move(struct lin_hist *dst, struct lin_hist *src);
/* dst's running figures (cycles, min, max, last, sum) become src's. */
void lin_hist_copy_figures(struct lin_hist *dst, const struct lin_hist *src);

/* The mean as cyclictest computes it: the sum of truncated values over the cycles. */
double lin_hist_mean(const struct lin_hist *h);

static inline uint64_t lin_load(const _Atomic uint64_t *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

static inline void lin_hist_record(struct lin_hist *h, uint64_t v_ns)
{
	const uint64_t u = v_ns / h->unit_ns;
	const uint64_t cycle = lin_load(&h->cycles);

	if (h->nbins) {
		if (u < h->nbins) {
			h->bins[u]++;
		} else {
			h->overflow++;
			if (h->noutliers < h->nbins)
				h->outliers[h->noutliers++] = cycle;
		}
	}
	if (u < lin_load(&h->min))
		atomic_store_explicit(&h->min, u, memory_order_relaxed);
	if (u > lin_load(&h->max))
		atomic_store_explicit(&h->max, u, memory_order_relaxed);
	atomic_store_explicit(&h->last, u, memory_order_relaxed);
	atomic_store_explicit(&h->sum, lin_load(&h->sum) + u, memory_order_relaxed);
	atomic_store_explicit(&h->cycles, cycle + 1u, memory_order_relaxed);
}

#endif
