#include "core/hist.h"

#include <errno.h>
#include <float.h>
#include <string.h>

#include "core/count.h"

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

void hist_record_n(struct hist *h, uint64_t v, uint64_t n)
{
	h->counts[hist_index(v)] += n;
	h->total += n;
}

int hist_add(struct hist *dst, const struct hist *src)
{
	uint64_t total = dst->total;
	/* No bucket holds more than its total: when the totals fit, so does every bucket. */
	if (!count_add(&total, src->total))
		return -EOVERFLOW;
	if (src->total)
		for (unsigned i = 0; i < HIST_BUCKETS; i++)
			dst->counts[i] += src->counts[i];
	dst->total = total;
	return 0;
}

uint64_t hist_bucket_low(unsigned i)
{
	if (i < HIST_LINEAR)
		return i;
	unsigned octave = (i - HIST_LINEAR) / HIST_SUB;     /* 0 for msb == HIST_LINEAR_BITS */
	unsigned sub = (i - HIST_LINEAR) % HIST_SUB;
	unsigned shift = octave + 1u;                        /* msb - HIST_SUB_BITS */
	return (uint64_t)(HIST_SUB + sub) << shift;
}

uint64_t hist_bucket_high(unsigned i)
{
	if (i < HIST_LINEAR)
		return i;
	unsigned shift = (i - HIST_LINEAR) / HIST_SUB + 1u;
	return hist_bucket_low(i) + ((UINT64_C(1) << shift) - 1u);
}

uint64_t hist_bucket_value(unsigned i)
{
	uint64_t lo = hist_bucket_low(i);
	return lo + (hist_bucket_high(i) - lo) / 2u;
}

uint64_t hist_rank(double p, uint64_t total)
{
	/*
	 * ceil(p/100 * total), forgiving the rounding of p/100 (99.9/100*1000 is not
	 * 999 in binary).  A double holds p within a relative 2^-53, so only a
	 * fraction below a few ulps of the product is rounding; a fixed 1e-9 of it
	 * would swallow real fractions once total passes 1e9 (p50 of 1e10 + 1).
	 */
	long double exact = (long double)p / 100.0L * (long double)total;
	if (!(exact > 0.0L))                    /* p <= 0 or NaN */
		return 0;
	if (exact >= 0x1p64L)                   /* p > 100 on a huge total */
		return UINT64_MAX;
	uint64_t rank = (uint64_t)exact;
	if (exact - (long double)rank > 16.0L * (long double)DBL_EPSILON * exact)
		rank++;
	return rank;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	if (h->total == 0)
		return 0;
	if (!(p > 0.0))         /* also catches NaN */
		p = 0.0;
	if (p > 100.0)
		p = 100.0;

	uint64_t rank = hist_rank(p, h->total);
	if (rank == 0)
		rank = 1;
	if (rank > h->total)
		rank = h->total;

	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			return hist_bucket_value(i);
	}
	return hist_bucket_value(HIST_BUCKETS - 1u);   /* total disagrees with counts */
}

unsigned hist_next(const struct hist *h, unsigned from)
{
	for (unsigned i = from; i < HIST_BUCKETS; i++)
		if (h->counts[i])
			return i;
	return HIST_BUCKETS;
}

uint64_t hist_count_buckets(const struct hist *h)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		n += h->counts[i];
	return n;
}
