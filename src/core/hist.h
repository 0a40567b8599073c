/*
 * Log-linear histogram of nanosecond values (HdrHistogram-style).
 *
 * Values below HIST_LINEAR have a bucket each.  Above, every power of two is cut
 * into HIST_SUB sub-buckets, so a bucket [low, low + width) has width/low <= 1/64.
 * Queries report the bucket midpoint, hence the error bound:
 *
 *     |reported - true| <= true / 128   (0.78 %), and exact below 128 ns.
 *
 * The buckets cover the whole uint64_t range, so no value can overflow.  The
 * layout is fixed at compile time: a histogram is HIST_BUCKETS counters.
 */
#ifndef LATSCOPE_CORE_HIST_H
#define LATSCOPE_CORE_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_SUB      (1u << HIST_SUB_BITS)          /* sub-buckets per power of two */
#define HIST_LINEAR   (2u * HIST_SUB)                /* values with a bucket of their own */
#define HIST_LINEAR_BITS (HIST_SUB_BITS + 1)
#define HIST_BUCKETS  (HIST_LINEAR + (64u - HIST_LINEAR_BITS) * HIST_SUB)
/* Worst relative error of a reported value, as a fraction of the true value. */
#define HIST_REL_ERROR (1.0 / (2.0 * HIST_SUB))

struct hist {
	uint64_t total;
	uint64_t counts[HIST_BUCKETS];
};

static inline unsigned hist_index(uint64_t v)
{
	if (v < HIST_LINEAR)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - HIST_SUB_BITS;
	unsigned sub = (unsigned)(v >> shift) & (HIST_SUB - 1u);
	return HIST_LINEAR + (msb - HIST_LINEAR_BITS) * HIST_SUB + sub;
}

static inline void hist_record(struct hist *h, uint64_t v)
{
	h->counts[hist_index(v)]++;
	h->total++;
}

void hist_reset(struct hist *h);
void hist_record_n(struct hist *h, uint64_t v, uint64_t n);
/* dst += src.  Both must be valid histograms (each count at most the total).
 * -EOVERFLOW, dst unchanged, when the total would pass COUNT_MAX (core/count.h). */
int hist_add(struct hist *dst, const struct hist *src);

/* Smallest and largest value that land in bucket i (inclusive). */
uint64_t hist_bucket_low(unsigned i);
uint64_t hist_bucket_high(unsigned i);
/* The value reported for bucket i: its midpoint. */
uint64_t hist_bucket_value(unsigned i);

/*
 * Nearest-rank percentile: the value of rank ceil(p/100 * total), 1-based, with
 * p = 0 meaning the smallest value.  Returns 0 on an empty histogram.  p is
 * clamped to [0, 100].
 */
uint64_t hist_percentile(const struct hist *h, double p);
/* The 1-based rank hist_percentile uses for p over total values (0 when p is 0). */
uint64_t hist_rank(double p, uint64_t total);

/* Next non-empty bucket at index >= from, or HIST_BUCKETS when none is left. */
unsigned hist_next(const struct hist *h, unsigned from);

/* Sum of all bucket counts, recomputed (for consistency checks). */
uint64_t hist_count_buckets(const struct hist *h);

#endif
